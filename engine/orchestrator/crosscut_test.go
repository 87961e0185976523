package orchestrator

import (
	"strings"
	"testing"

	"github.com/set-engine/set/engine/journal"
)

// TestCrossCuttingFileSerialisesDispatch: three changes whose scopes hold
// routes.txt, which set.cue declares cross-cutting, each add a route in
// the middle of it, where any two would conflict; with four slots they
// are still at work one at a time, each dispatched only after the one
// before it merged, so none conflicts. A fourth change, scoped elsewhere,
// works alongside them.
func TestCrossCuttingFileSerialisesDispatch(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: four changes on a cross-cutting file run one at a time; plan_cross_cutting covers cross-cutting files")
	}
	t.Parallel()
	f := newFixture(t)
	f.project.MaxParallel = 4
	f.project.CrossCutting = map[string]bool{"routes.txt": true}
	f.write("routes.txt", "begin\nend\n")
	f.git("add", "-A")
	f.git("commit", "-q", "-m", "routes")
	routed := []string{"alpha", "bravo", "charlie"}
	for _, n := range append(routed, "docs") {
		f.change(n)
	}
	for i := range f.plan.Changes {
		c := &f.plan.Changes[i]
		c.Scope = []string{"routes.txt", c.Name + ".txt"}
		if c.Name == "docs" {
			c.Scope = []string{"docs/**"}
		}
	}
	a := f.agentScript(`if [ "$change" = docs ]; then
	mkdir -p docs && echo "notes" > docs/notes.md
	exit 0
fi
sed -i "s/^begin$/begin\n$change/" routes.txt
echo "$change" > "$change.txt"
`)
	f.applySucceeds(a)

	ev := f.events()
	seq := func(typ journal.Type, change string) int64 {
		for _, e := range ev {
			if e.Type == typ && e.Change == change {
				return e.Seq
			}
		}
		t.Fatalf("no %s of %s", typ, change)
		return 0
	}
	for _, n := range append(routed, "docs") {
		if c := count(ev, journal.ChangeIntegrationFailed, n); c != 0 {
			t.Errorf("%s conflicted %d times", n, c)
		}
	}
	// Each routed change is dispatched after the one before it merged.
	for i := 1; i < len(routed); i++ {
		if d, m := seq(journal.Dispatch, routed[i]), seq(journal.Merged, routed[i-1]); d < m {
			t.Errorf("%s dispatched (event %d) before %s merged (event %d)", routed[i], d, routed[i-1], m)
		}
	}
	if d, m := seq(journal.Dispatch, "docs"), seq(journal.Merged, routed[0]); d > m {
		t.Errorf("docs dispatched (event %d) after %s merged (event %d): it touches no cross-cutting file", d, routed[0], m)
	}
	if got := f.git("show", "main:routes.txt"); got != "begin\ncharlie\nbravo\nalpha\nend" {
		t.Errorf("main:routes.txt = %q", got)
	}
	if got := f.git("rev-list", "--merges", "main"); got != "" {
		t.Errorf("main has merge commits:\n%s", strings.TrimSpace(got))
	}
}

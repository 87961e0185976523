package orchestrator

import (
	"slices"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/journal"
)

// TestAppendOnlyFileMergesWithoutTheAgent: four changes at work at once
// each append a line to CHANGELOG.md, which set.cue declares append-only
// (mergeUnion). Every one after the first conflicts with main there; each
// conflict merges as a union, so all four land with one agent iteration
// each, no integration retry, and main stays linear.
func TestAppendOnlyFileMergesWithoutTheAgent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.project.MaxParallel = 4 // all four start from the same main
	f.project.MergeUnion = map[string]bool{"CHANGELOG.md": true}
	f.write("CHANGELOG.md", "# Changelog\n")
	f.git("add", "-A")
	f.git("commit", "-q", "-m", "changelog")
	base := f.git("rev-parse", "main")
	names := []string{"alpha", "bravo", "charlie", "delta"}
	for _, n := range names {
		f.change(n)
	}
	a := f.agentScript(`echo "- $change" >> CHANGELOG.md
echo "$change" > "$change.txt"
`)
	f.applySucceeds(a)

	ev := f.events()
	unioned := 0
	for _, n := range names {
		if c := count(ev, journal.ChangeIntegrationFailed, n); c != 0 {
			t.Errorf("%s went back to its agent %d times after integrating", n, c)
		}
		if c := count(ev, journal.AgentIteration, n); c != 1 {
			t.Errorf("%s ran %d agent iterations, want 1", n, c)
		}
		for _, e := range ev {
			if e.Type == journal.Merged && e.Change == n {
				d, _ := journal.Decode[journal.MergedData](e)
				if slices.Equal(d.Union, []string{"CHANGELOG.md"}) {
					unioned++
				}
			}
		}
	}
	if unioned != 3 {
		t.Errorf("%d MERGED name CHANGELOG.md as a union, want 3 (every change but the first)", unioned)
	}
	// main is linear: one commit per change on top of base, no merge.
	if got := f.git("rev-list", "--count", base+"..main"); got != "4" {
		t.Errorf("main has %s commits since the changelog, want 4", got)
	}
	if got := f.git("rev-list", "--merges", "main"); got != "" {
		t.Errorf("main has merge commits:\n%s", got)
	}
	log := f.git("show", "main:CHANGELOG.md")
	for _, n := range names {
		if !strings.Contains(log+"\n", "- "+n+"\n") {
			t.Errorf("main:CHANGELOG.md lacks %s:\n%s", n, log)
		}
	}
	if lines := strings.Split(log, "\n"); len(lines) != 5 {
		t.Errorf("main:CHANGELOG.md has %d lines, want the title and four entries:\n%s", len(lines), log)
	}
}

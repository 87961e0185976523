package orchestrator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
)

// stackedGate is an integration gate for the speculative queue's tests:
// every attempt waits until the shell condition until holds (at most 30
// s), fails on a tree holding b.txt, and records the tree it passed on in
// marks/passed. Each attempt leaves a file marks/started.* first. On
// main (the baseline) it passes at once.
func stackedGate(marks, until string) config.Gate {
	script := fmt.Sprintf(`
case "$(git rev-parse --abbrev-ref HEAD)" in set/*) # a change's attempt, not main's baseline
	mktemp %[1]q/started.XXXXXX >/dev/null
	i=0
	until %[2]s; do
		i=$((i+1)); [ $i -lt 3000 ] || { echo "waited 30 s for the attempts"; exit 3; }
		sleep 0.01
	done
esac
if [ -e b.txt ]; then echo "b breaks the integration"; exit 1; fi
git rev-parse 'HEAD^{tree}' >> %[1]q/passed
`, marks, until)
	return config.Gate{Kind: "exec", Mode: "run", Order: 20, Run: []string{"sh", "-c", script}}
}

// attemptsStarted is stackedGate's condition that n attempts started.
func attemptsStarted(marks string, n int) string {
	return fmt.Sprintf(`[ "$(ls %q | grep -c '^started\.')" -ge %d ]`, marks, n)
}

// TestSpeculativeQueue: with mergeQueue.speculative 4, four queued
// changes are integrated at once as a stack (a on main, b on a, c on a+b,
// d on a+b+c). b fails its integration stack: main never holds it, c and
// d are integrated again without it and merge, and every commit main
// took passed the integration stack on exactly its tree.
func TestSpeculativeQueue(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// One change at a time, so that they queue in the plan's order.
	f.project.MaxParallel = 1
	f.project.MergeQueue.Speculative = 4
	f.project.Budgets.Retries.Integration = 0
	marks := t.TempDir()
	f.project.Gates["stacked"] = stackedGate(marks, attemptsStarted(marks, 4))
	f.project.Integration = config.Stack{"stacked": {}}
	for _, name := range []string{"a", "b", "c", "d"} {
		f.change(name)
	}
	initial := f.git("rev-parse", "main")
	sum, err := f.apply(context.Background(), f.agentScript(`echo "$change" > "$change.txt"`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]state.Status{"a": state.Archived, "b": state.FailedRetryBudget, "c": state.Archived, "d": state.Archived}
	if diff := cmp.Diff(want, sum.Statuses); diff != "" {
		t.Fatalf("statuses (-want +got):\n%s", diff)
	}

	ev := f.events()
	type try struct {
		change string
		ahead  []string
	}
	var tries []try
	for _, e := range ev {
		if e.Type == journal.IntegrationAttempt {
			d, err := journal.Decode[journal.IntegrationAttemptData](e)
			if err != nil {
				t.Fatal(err)
			}
			tries = append(tries, try{e.Change, d.Ahead})
		}
	}
	// The first four are stacked; after b's failure, c goes onto main
	// (with a) and d onto c.
	wantTries := []try{{"a", nil}, {"b", []string{"a"}}, {"c", []string{"a", "b"}}, {"d", []string{"a", "b", "c"}},
		{"c", nil}, {"d", []string{"c"}}}
	if diff := cmp.Diff(wantTries, tries, cmp.AllowUnexported(try{})); diff != "" {
		t.Errorf("integration attempts (-want +got):\n%s", diff)
	}
	// c fails on a+b+c too, and may stop d before b's failure does.
	for name, causes := range map[string][]string{"c": {"b"}, "d": {"b", "c"}} {
		var requeued []string
		for _, e := range ev {
			if e.Type != journal.StateChange || e.Change != name {
				continue
			}
			if d, _ := journal.Decode[journal.StateChangeData](e); d.From == string(state.Integrating) && d.To == string(state.Queued) {
				requeued = append(requeued, d.Reason)
			}
		}
		if len(requeued) != 1 || !slices.ContainsFunc(causes, func(c string) bool {
			return requeued[0] == c+", ahead of it, failed its integration stack"
		}) {
			t.Errorf("%s went back to the queue: %q, want once, for one of %v failing", name, requeued, causes)
		}
	}

	// main: a, c, d, one commit each, linear, never b.
	log := strings.Fields(f.git("log", "--format=%H", "--first-parent", initial+"..main"))
	if len(log) != 3 {
		t.Fatalf("main has %d commits since the start, want 3", len(log))
	}
	if merges := f.git("rev-list", "--merges", "main"); merges != "" {
		t.Errorf("main has merge commits: %s", merges)
	}
	var subjects []string
	for _, c := range slices.Backward(log) {
		subjects = append(subjects, strings.SplitN(f.git("log", "-1", "--format=%s", c), ":", 2)[0])
		if out := f.git("ls-tree", "--name-only", c, "b.txt"); out != "" {
			t.Errorf("main's commit %s holds b.txt", c)
		}
	}
	if want := []string{"a", "c", "d"}; !slices.Equal(subjects, want) {
		t.Errorf("main's commits are of %v, want %v", subjects, want)
	}
	// Every commit main took: its tree passed the integration stack.
	passed, err := os.ReadFile(filepath.Join(marks, "passed"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range log {
		if tree := f.git("rev-parse", c+"^{tree}"); !slices.Contains(strings.Fields(string(passed)), tree) {
			t.Errorf("main's commit %s has tree %s, on which no integration stack passed (passed: %s)", c, tree, passed)
		}
	}
	// MERGED names the attempt main took: a's first, c's and d's second.
	for name, attempt := range map[string]int{"a": 1, "c": 2, "d": 2} {
		for _, e := range ev {
			if e.Type == journal.Merged && e.Change == name {
				if d, _ := journal.Decode[journal.MergedData](e); d.Attempt != attempt {
					t.Errorf("%s merged from attempt %d, want %d", name, d.Attempt, attempt)
				}
			}
		}
	}
}

// TestSpeculativeConflictWaits: a change that conflicts with the change
// ahead of it in the train is not failed for it: it goes back to the
// queue and, once the train ahead of it is on main, is merged onto main,
// where its conflict is its own (here: its agent resolves it, and it
// merges).
func TestSpeculativeConflictWaits(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a speculative train whose conflicting change waits and then merges; TestSpeculativeQueue covers the speculative queue")
	}
	t.Parallel()
	f := newFixture(t)
	f.project.MaxParallel = 1
	f.project.MergeQueue.Speculative = 2
	marks := t.TempDir()
	// first's stack waits until second's attempt onto it started.
	f.project.Gates["stacked"] = stackedGate(marks, fmt.Sprintf(`grep -q '"type":"INTEGRATION_ATTEMPT","run":"[^"]*","change":"second"' %q`,
		filepath.Join(f.root, ".set", "events.jsonl")))
	f.project.Integration = config.Stack{"stacked": {}}
	f.change("first")
	f.change("second")
	// Both rewrite notes.txt's second line; second's agent, told of the
	// conflict, keeps both lines.
	a := f.agentScript(`
if grep -q '^<<<<<<<' notes.txt 2>/dev/null; then
	printf 'line 1\nfirst\nsecond\nline 3\n' > notes.txt
else
	printf 'line 1\n%s\nline 3\n' "$change" > notes.txt
fi
`)
	f.applySucceeds(a)
	ev := f.events()
	var reasons []string
	for _, e := range ev {
		if e.Type == journal.StateChange && e.Change == "second" {
			if d, _ := journal.Decode[journal.StateChangeData](e); d.From == string(state.Integrating) {
				reasons = append(reasons, d.To+": "+d.Reason)
			}
		}
	}
	want := []string{
		"queued: merging onto first conflicts in notes.txt; integrated again once first are on main",
		"integration-failed: conflict",
		"merged: ",
	}
	if diff := cmp.Diff(want, reasons); diff != "" {
		t.Errorf("second, from integrating (-want +got):\n%s", diff)
	}
	if got := f.git("show", "main:notes.txt"); got != "line 1\nfirst\nsecond\nline 3" {
		t.Errorf("main:notes.txt = %q", got)
	}
}

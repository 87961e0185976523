package orchestrator

import (
	"context"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
)

// TestChangeFolderAtDispatch: set commits the change's OpenSpec folder on
// its branch before the agent runs (an agent that writes no delta), and
// the merge queue folds it into main's living specs.
func TestChangeFolderAtDispatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.change("greet")
	sum, err := f.apply(context.Background(), f.agentScript(
		`test -f openspec/changes/greet/proposal.md
test -f openspec/changes/greet/tasks.md
git log -1 --format=%B | grep -qx 'Set-Folder: greet'
echo hello > greet.txt
`))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Statuses["greet"] != state.Archived {
		t.Fatalf("greet = %s", sum.Statuses["greet"])
	}
	if got := f.git("show", "main:openspec/specs/greet/spec.md"); !strings.Contains(got, "\n### Requirement: REQ-GREET-01: greet\n") {
		t.Errorf("main's living spec:\n%s", got)
	}
	if got := f.git("ls-tree", "-r", "--name-only", "main", "openspec/changes/archive/"); !strings.Contains(got, "-greet/specs/greet/spec.md") || !strings.Contains(got, "-greet/tasks.md") {
		t.Errorf("main's archived change folders:\n%s", got)
	}
}

// TestJournalIsNotTheRecord: a journal that says a change is archived,
// when main does not have it (main was reset), does not make its work look
// done: the run starts anew and does the work again.
func TestJournalIsNotTheRecord(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	initial := f.git("rev-parse", "main")
	f.change("greet")
	agent := f.agentScript("echo hello > greet.txt\n")
	if sum, err := f.apply(context.Background(), agent); err != nil || sum.Statuses["greet"] != state.Archived {
		t.Fatalf("first run: %v, %v", sum, err)
	}
	f.git("reset", "-q", "--hard", initial)
	sum, err := f.apply(context.Background(), agent)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Resumed || sum.Statuses["greet"] != state.Archived {
		t.Errorf("second run: resumed %v, greet %s; want a new run that archives greet", sum.Resumed, sum.Statuses["greet"])
	}
	if n := count(f.events(), journal.Merged, "greet"); n != 2 {
		t.Errorf("greet merged %d times, want twice (once on each main)", n)
	}
	if got := f.git("show", "main:greet.txt"); got != "hello" {
		t.Errorf("main's greet.txt = %q", got)
	}
}

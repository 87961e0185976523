package orchestrator

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/state"
)

// TestWorktreesReused: the worktree of an archived change is parked and
// the next dispatch reuses it (its git directory is the first change's),
// each change still starts from main as it is then, with nothing of the
// change before, and the run ends with no worktree left but the root.
func TestWorktreesReused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.project.MaxParallel = 1
	f.change("alpha")
	f.change("beta", "alpha")
	f.change("gamma", "beta")
	// A spare a killed run left: discarded before anything starts.
	stale := filepath.Join(f.root, ".set", "worktrees", ".spare-1")
	f.git("worktree", "add", "-q", "--detach", stale, "main")
	// And the files of a removed worktree it had yet to delete.
	f.write(".set/worktrees/.trash-2/a.txt", "a\n")

	gitDirs := map[string]string{}
	f.checkpoint = func(point, change string) {
		if point != "dispatched" {
			return
		}
		wt := filepath.Join(f.root, ".set", "worktrees", change)
		data, err := os.ReadFile(filepath.Join(wt, ".git"))
		if err != nil {
			t.Error(err)
			return
		}
		gitDirs[change] = filepath.Base(strings.TrimSpace(string(data)))
		// Nothing of the change before: not its files, not what its agent
		// left ignored.
		if got := f.git("-C", wt, "status", "--porcelain", "--ignored", "--untracked-files=all"); got != "" {
			t.Errorf("%s's worktree holds what was left before it:\n%s", change, got)
		}
		if head, base := f.git("-C", wt, "rev-parse", "HEAD~1"), f.git("rev-parse", "main"); head != base {
			t.Errorf("%s starts at %s, not at main %s", change, head, base)
		}
	}
	// The agent leaves an ignored file behind; a reused worktree must not
	// show it to the next change.
	f.write(".gitignore", "left-over\n")
	f.git("add", ".gitignore")
	f.git("commit", "-q", "-m", "ignore left-over")
	sum, err := f.apply(context.Background(), f.agentScript("echo $change > $change.txt\ntouch left-over\n"))
	if err != nil || sum.Result != "success" {
		t.Fatalf("apply = %+v, %v", sum, err)
	}
	for _, c := range []string{"alpha", "beta", "gamma"} {
		if sum.Statuses[c] != state.Archived {
			t.Errorf("%s is %s", c, sum.Statuses[c])
		}
		if got := f.git("show", "main:"+c+".txt"); got != c {
			t.Errorf("main's %s.txt = %q", c, got)
		}
	}
	if gitDirs["beta"] != gitDirs["alpha"] || gitDirs["gamma"] != gitDirs["alpha"] {
		t.Errorf("git directories of the worktrees = %v, want alpha's reused by beta and gamma", gitDirs)
	}
	list, err := git.Worktrees(context.Background(), f.root)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Errorf("worktrees left after the run: %+v", list)
	}
	if entries, _ := os.ReadDir(filepath.Join(f.root, ".set", "worktrees")); len(entries) != 0 {
		t.Errorf(".set/worktrees holds %v after the run", entries)
	}
	if got := f.branches(); len(got) != 0 {
		t.Errorf("branches left: %v", got)
	}
}

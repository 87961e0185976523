package orchestrator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/proc"
	"github.com/set-engine/set/engine/state"
)

// The tests of this file build what a killed run leaves in the repository
// directly, on the state of a run stopped at a checkpoint, and check that
// the resumed run repairs it and finishes as an uninterrupted run does.

// goodAgent writes its change's file (no OpenSpec delta).
const goodAgent = `echo "good $change" > "$change.txt"` + "\n"

// stopAfterDispatch runs the plan until change is dispatched (its
// worktree made, on its branch) and stops the run there, as Ctrl-C would:
// the change is left implementing, before its first iteration.
func stopAfterDispatch(t *testing.T, f *fixture, change string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.checkpoint = func(point, c string) {
		if point == "dispatched" && c == change {
			cancel()
		}
	}
	sum, err := f.apply(ctx, f.agentScript(goodAgent))
	f.checkpoint = nil
	if err != nil {
		t.Fatal(err)
	}
	if sum.Result != "interrupted" || sum.Statuses[change] != state.Implementing {
		t.Fatalf("the stopped run: %+v", sum)
	}
}

// resumeToSuccess resumes the run and checks it archives every change.
func resumeToSuccess(t *testing.T, f *fixture) {
	t.Helper()
	sum, err := f.apply(context.Background(), f.agentScript(goodAgent))
	if err != nil {
		t.Fatalf("resumed run: %v", err)
	}
	if !sum.Resumed || sum.Result != "success" {
		t.Fatalf("resumed run: %+v", sum)
	}
	if out := f.git("worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Errorf("worktrees left after the resumed run:\n%s", out)
	}
}

// repairs are the REPAIRED events of the journal.
func repairs(t *testing.T, f *fixture) (changes []string, data []journal.RepairedData) {
	t.Helper()
	for _, e := range f.events() {
		if e.Type == journal.Repaired {
			d, err := journal.Decode[journal.RepairedData](e)
			if err != nil {
				t.Fatal(err)
			}
			changes, data = append(changes, e.Change), append(data, d)
		}
	}
	return changes, data
}

// TestResumeCommitsLeftoverEdits: an iteration killed after the agent
// edited a file, when main has changed that same file since, used to fail
// every resume: git refused to merge main into the dirty worktree. The
// edits are committed first, and main merged.
func TestResumeCommitsLeftoverEdits(t *testing.T) {
	f := newFixture(t)
	f.change("edit")
	stopAfterDispatch(t, f, "edit")
	wt := filepath.Join(f.root, ".set", "worktrees", "edit")
	if err := os.WriteFile(filepath.Join(wt, "notes.txt"), []byte("line 1 (edit)\nline 2\nline 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.write("notes.txt", "line 1\nline 2\nline 3 (main)\n")
	f.git("commit", "-q", "-am", "main moves on")

	resumeToSuccess(t, f)
	if got := f.git("show", "main:notes.txt"); got != "line 1 (edit)\nline 2\nline 3 (main)" {
		t.Errorf("main:notes.txt = %q, want both edits", got)
	}
	if got := f.git("show", "main:edit.txt"); got != "good edit" {
		t.Errorf("main:edit.txt = %q", got)
	}
}

// TestResumeRemovesStaleLocks: the lock files of a git killed with the
// run, in the repository and in a change's worktree, are removed and
// journaled; with HEAD.lock left, main could not move.
func TestResumeRemovesStaleLocks(t *testing.T) {
	f := newFixture(t)
	f.change("locked")
	stopAfterDispatch(t, f, "locked")
	locks := []string{".git/HEAD.lock", ".git/ORIG_HEAD.lock", ".git/index.lock",
		".git/worktrees/locked/HEAD.lock", ".git/worktrees/locked/index.lock"}
	for _, l := range locks {
		f.write(l, "")
	}

	resumeToSuccess(t, f)
	changes, data := repairs(t, f)
	want := []journal.RepairedData{{Problem: "stale git locks", Removed: []string{
		".git/HEAD.lock", ".git/ORIG_HEAD.lock", ".git/index.lock", ".git/worktrees/locked/HEAD.lock", ".git/worktrees/locked/index.lock"}}}
	if !reflect.DeepEqual(data, want) || !reflect.DeepEqual(changes, []string{""}) {
		t.Errorf("REPAIRED events = %q %+v, want %+v of no change", changes, data, want)
	}
	if got := f.git("show", "main:locked.txt"); got != "good locked" {
		t.Errorf("main:locked.txt = %q", got)
	}
}

// TestResumeKillsOrphans: an agent that a killed run left running, started
// through #!/usr/bin/env as the npm codex is (so that it runs as its
// interpreter), is killed by the resumed run and journaled.
func TestResumeKillsOrphans(t *testing.T) {
	f := newFixture(t)
	f.change("orphaned")
	stopAfterDispatch(t, f, "orphaned")
	// What the killed run left: its agent, still running, and its PID
	// file.
	agentCLI := filepath.Join(t.TempDir(), "codex")
	if err := os.WriteFile(agentCLI, []byte("#!/usr/bin/env sh\nsleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	procs := filepath.Join(f.root, ".set", "procs")
	ended := make(chan proc.Outcome, 1)
	go func() {
		o, _ := proc.Run(proc.WithPIDDir(context.Background(), procs), proc.Spec{Argv: []string{agentCLI, "exec", "--json"}})
		ended <- o
	}()
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if entries, _ := os.ReadDir(procs); len(entries) == 1 {
			pid, _ = strconv.Atoi(entries[0].Name())
		}
	}
	if pid == 0 {
		t.Fatal("the agent left running wrote no PID file")
	}
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })

	resumeToSuccess(t, f)
	changes, data := repairs(t, f)
	want := []journal.RepairedData{{Problem: "processes of the interrupted run left running",
		Removed: []string{fmt.Sprintf("process group %d (%s exec --json)", pid, agentCLI)}}}
	if !reflect.DeepEqual(data, want) || !reflect.DeepEqual(changes, []string{""}) {
		t.Errorf("REPAIRED events = %q %+v, want %+v of no change", changes, data, want)
	}
	select {
	case o := <-ended:
		if o.ExitCode != -1 {
			t.Errorf("the agent left running ended with %+v, want killed", o)
		}
	case <-time.After(10 * time.Second):
		t.Error("the agent left running is still running after the resumed run")
	}
}

// TestResumeRepairsHalfMadeWorktrees: a worktree that a killed git
// worktree add or remove left half-way is removed and made again from the
// change's branch, keeping the branch's commits.
func TestResumeRepairsHalfMadeWorktrees(t *testing.T) {
	for _, tc := range []struct {
		name string
		// damage breaks the worktree wt of change "half" in f.
		damage func(t *testing.T, f *fixture, wt string)
		// repaired is the REPAIRED event's problem, "" for none.
		repaired string
		removed  []string
	}{
		{"a directory without .git", func(t *testing.T, f *fixture, wt string) {
			rm(t, filepath.Join(wt, ".git"))
		}, "worktree .set/worktrees/half: a directory without .git", []string{".set/worktrees/half"}},
		{"a directory git does not know", func(t *testing.T, f *fixture, wt string) {
			rm(t, wt)
			f.git("worktree", "prune")
			f.write(".set/worktrees/half/half.txt", "half\n")
		}, "worktree .set/worktrees/half: a directory without .git", []string{".set/worktrees/half"}},
		{".git without its git directory", func(t *testing.T, f *fixture, wt string) {
			rm(t, filepath.Join(f.root, ".git", "worktrees", "half"))
		}, "worktree .set/worktrees/half: .git names a git directory that is missing", []string{".set/worktrees/half"}},
		{"git's record of a worktree without its directory", func(t *testing.T, f *fixture, wt string) {
			rm(t, wt)
		}, "", nil},
		{"a worktree git worktree add did not finish", func(t *testing.T, f *fixture, wt string) {
			rm(t, wt)
			f.write(".git/worktrees/half/locked", "initializing")
		}, "worktree .set/worktrees/half: no directory", []string{".git/worktrees/half"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.change("half")
			stopAfterDispatch(t, f, "half")
			// The branch holds work of an earlier iteration, which the
			// worktree made again must have.
			wt := filepath.Join(f.root, ".set", "worktrees", "half")
			f.git("-C", wt, "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "--allow-empty", "-m", "earlier work")
			earlier := f.git("rev-parse", "set/half")
			tc.damage(t, f, wt)

			resumeToSuccess(t, f)
			changes, data := repairs(t, f)
			var want []journal.RepairedData
			var wantChanges []string
			if tc.repaired != "" {
				want, wantChanges = []journal.RepairedData{{Problem: tc.repaired, Removed: tc.removed}}, []string{"half"}
			}
			if !reflect.DeepEqual(data, want) || !reflect.DeepEqual(changes, wantChanges) {
				t.Errorf("REPAIRED events = %q %+v, want %q %+v", changes, data, wantChanges, want)
			}
			if n := count(f.events(), journal.AgentIteration, "half"); n != 1 {
				t.Errorf("%d iterations, want 1", n)
			}
			if got := f.git("show", "main:half.txt"); got != "good half" {
				t.Errorf("main:half.txt = %q", got)
			}
			if got := f.git("log", "--format=%H", "-1", "--grep=^earlier work$", earlier); got != earlier {
				t.Errorf("the branch's earlier work is lost")
			}
		})
	}
}

func rm(t *testing.T, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
}

// TestResumeArchivesOnce: a run killed after it journaled MERGED, or
// MERGED and ARCHIVED, but before the change's state changed, is resumed
// to one MERGED and one ARCHIVED, equal to an uninterrupted run's (a
// second, empty ARCHIVED was once journaled). The killed run is made by
// cutting an uninterrupted run's journal after the event.
func TestResumeArchivesOnce(t *testing.T) {
	for _, cut := range []journal.Type{journal.Merged, journal.Archived} {
		t.Run("after "+string(cut), func(t *testing.T) {
			f := newFixture(t)
			f.change("solo")
			sum, err := f.apply(context.Background(), f.agentScript(goodAgent))
			if err != nil || sum.Result != "success" {
				t.Fatalf("first run: %v, %+v", err, sum)
			}
			ev := f.events()
			var merged, archived journal.Event
			kept := -1
			for i, e := range ev {
				switch e.Type {
				case journal.Merged:
					merged = e
				case journal.Archived:
					archived = e
				}
				if e.Type == cut && kept < 0 {
					kept = i + 1
				}
			}
			events := filepath.Join(f.root, ".set", journal.EventsFile)
			data, err := os.ReadFile(events)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(data), "\n")
			if err := os.WriteFile(events, []byte(strings.Join(lines[:kept], "")), 0o644); err != nil {
				t.Fatal(err)
			}

			resumeToSuccess(t, f)
			ev = f.events()
			for _, want := range []journal.Event{merged, archived} {
				var got []string
				for _, e := range ev {
					if e.Type == want.Type && e.Change == "solo" {
						got = append(got, string(e.Data))
					}
				}
				if len(got) != 1 || got[0] != string(want.Data) {
					t.Errorf("%s events = %q, want one, %s", want.Type, got, want.Data)
				}
			}
		})
	}
}

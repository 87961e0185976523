package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/set-engine/set/engine/git"
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
	// The cancel may reach the worker before or after it starts the agent.
	if s := sum.Statuses[change]; sum.Result != "interrupted" || (s != state.Dispatched && s != state.Implementing) {
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	if testing.Short() {
		t.Skip("-short: resumes over worktrees a killed git left half-made; TestResumeCommitsLeftoverEdits covers resume's repairs")
	}
	t.Parallel()
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
	if testing.Short() {
		t.Skip("-short: two runs cut after MERGED and ARCHIVED and resumed; TestResumeCommitsLeftoverEdits covers resuming")
	}
	t.Parallel()
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

// ffAgent writes its change's file and adds a line to notes.txt, which
// main has: moving main to a change's commit edits a file and adds one.
const ffAgent = `echo "good $change" > "$change.txt"
echo "$change was here" >> notes.txt
`

// ffScenario is alpha, then beta on top of it.
func ffScenario(f *fixture) {
	f.change("alpha")
	f.change("beta", "alpha")
}

// stopInFastForward runs ffScenario until git has moved the files and
// the index of main's checkout to beta's commit but not main itself: a
// lock on main's ref (as a git killed while moving it leaves) stops the
// move there, and the run with it. It returns the record of the move.
func stopInFastForward(t *testing.T, f *fixture) git.FastForwardRecord {
	t.Helper()
	f.checkpoint = func(point, change string) {
		if point == "before-fast-forward" && change == "beta" {
			f.write(".git/refs/heads/main.lock", "")
		}
	}
	sum, err := f.apply(context.Background(), f.agentScript(ffAgent))
	f.checkpoint = nil
	if err == nil || sum.Statuses["beta"] != state.Integrating {
		t.Fatalf("the stopped run: %v, %+v; want beta's fast-forward failed", err, sum)
	}
	data, err := os.ReadFile(filepath.Join(f.root, ".set", "fast-forward.json"))
	if err != nil {
		t.Fatalf("no record of the move of main's checkout: %v", err)
	}
	var rec git.FastForwardRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if got := f.git("rev-parse", "main"); got != rec.From {
		t.Fatalf("main = %s, want still at %s", got, rec.From)
	}
	return rec
}

// TestResumeFinishesAHalfMadeFastForward: a run killed while git moved
// main's checkout to a change's commit left the checkout's files, or its
// files and its index, half-way with main where it was. The resumed run
// used to refuse it as the user's uncommitted changes; it removes the
// stale locks, finishes the move, journals both before RUN_STARTED, and
// records the change merged and archived once, main as an uninterrupted
// run leaves it.
func TestResumeFinishesAHalfMadeFastForward(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: resumes over two half-made fast-forwards; TestResumeRefusesAnEditInAHalfMadeFastForward covers a half-made fast-forward")
	}
	t.Parallel()
	ref := newFixture(t)
	ffScenario(ref)
	if sum, err := ref.apply(context.Background(), ref.agentScript(ffAgent)); err != nil || sum.Result != "success" {
		t.Fatalf("uninterrupted run: %v, %+v", err, sum)
	}
	wantTree := ref.git("rev-parse", "main^{tree}")

	for _, tc := range []struct {
		name string
		// leave turns the stopped move into what the kill left.
		leave func(t *testing.T, f *fixture, rec git.FastForwardRecord)
		locks []string
		// unwritten are the paths of the move that the kill left as they
		// were; the REPAIRED event names every other path of the move.
		unwritten []string
	}{
		{"index and files written", func(t *testing.T, f *fixture, rec git.FastForwardRecord) {},
			[]string{".git/refs/heads/main.lock"}, nil},
		{"files half written", func(t *testing.T, f *fixture, rec git.FastForwardRecord) {
			rm(t, filepath.Join(f.root, ".git", "refs", "heads", "main.lock"))
			f.git("read-tree", rec.From)                                    // the index as it was
			f.write("notes.txt", f.git("show", rec.From+":notes.txt")+"\n") // not written yet
			f.write("beta.txt", "goo")                                      // being written
			f.write(".git/index.lock", "")
		}, []string{".git/index.lock"}, []string{"notes.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			ffScenario(f)
			rec := stopInFastForward(t, f)
			tc.leave(t, f, rec)

			resumeToSuccess(t, f)
			if got := f.git("rev-parse", "main^{tree}"); got != wantTree {
				t.Errorf("main's tree differs from an uninterrupted run's:\n%s", f.git("diff", "--stat", wantTree, "main^{tree}"))
			}
			if got := f.git("status", "--porcelain", "--untracked-files=all"); got != "" {
				t.Errorf("main's checkout after the resumed run:\n%s", got)
			}
			if got := f.git("log", "--format=%H", "--grep=^Set-Change: beta$", "main"); got != rec.To {
				t.Errorf("beta's commit on main = %q, want the recorded %s", got, rec.To)
			}
			if _, err := os.Stat(filepath.Join(f.root, ".set", "fast-forward.json")); !os.IsNotExist(err) {
				t.Errorf("the record is left: %v", err)
			}
			var written []string
			for _, p := range strings.Fields(f.git("diff", "--name-only", rec.From, rec.To)) {
				if !slices.Contains(tc.unwritten, p) {
					written = append(written, p)
				}
			}
			if len(written) > 5 {
				written = append(written[:5:5], fmt.Sprintf("and %d more", len(written)-5))
			}
			changes, data := repairs(t, f)
			want := []journal.RepairedData{
				{Problem: "stale git locks", Removed: tc.locks},
				{Problem: "the fast-forward of main from " + rec.From[:12] + " to " + rec.To[:12] + " was interrupted with its checkout half-way (" + strings.Join(written, ", ") + ")",
					Done: "finished it: main is at " + rec.To[:12]},
			}
			if !reflect.DeepEqual(data, want) || !reflect.DeepEqual(changes, []string{"", ""}) {
				t.Errorf("REPAIRED events = %q %+v, want %+v of no change", changes, data, want)
			}
			ev := f.events()
			lastStart := 0
			for i, e := range ev {
				if e.Type == journal.RunStarted {
					lastStart = i
				}
			}
			for _, e := range ev[lastStart:] {
				if e.Type == journal.Repaired {
					t.Errorf("REPAIRED after the resumed run's RUN_STARTED: %s", e.Data)
				}
			}
			for _, c := range []string{"alpha", "beta"} {
				if n := count(ev, journal.Merged, c); n != 1 {
					t.Errorf("%s merged %d times", c, n)
				}
				if n := count(ev, journal.Archived, c); n != 1 {
					t.Errorf("%s archived %d times", c, n)
				}
			}
			for _, e := range ev {
				if e.Type == journal.Merged && e.Change == "beta" {
					if d, _ := journal.Decode[journal.MergedData](e); !reflect.DeepEqual(d, journal.MergedData{Commit: rec.To, Previous: rec.From}) {
						t.Errorf("beta's MERGED = %+v, want %s from %s", d, rec.To, rec.From)
					}
				}
			}
			if n := count(ev, journal.AgentIteration, "beta"); n != 1 {
				t.Errorf("beta ran %d iterations, want 1: its integration is not done again", n)
			}
		})
	}
}

// TestResumeRefusesAnEditInAHalfMadeFastForward: a user's edit in main's
// checkout left half-way by a killed fast-forward is not written over:
// the resumed run stops, names it, changes nothing and journals nothing;
// once the user put it aside, the next resume finishes the move.
func TestResumeRefusesAnEditInAHalfMadeFastForward(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ffScenario(f)
	rec := stopInFastForward(t, f)
	f.write("notes.txt", "my own words\n")
	before := len(f.events())

	_, err := f.apply(context.Background(), f.agentScript(ffAgent))
	var half *git.HalfMovedError
	if !errors.As(err, &half) || !reflect.DeepEqual(half.Paths, []string{"notes.txt"}) {
		t.Fatalf("resume over a user's edit = %v, want a *git.HalfMovedError naming notes.txt", err)
	}
	if got, err := os.ReadFile(filepath.Join(f.root, "notes.txt")); string(got) != "my own words\n" {
		t.Errorf("notes.txt = %q (%v), want the user's edit", got, err)
	}
	if got := f.git("rev-parse", "main"); got != rec.From {
		t.Errorf("main = %s, want still %s", got, rec.From)
	}
	// The stale lock is removed (journaled), and nothing else happens.
	ev := f.events()[before:]
	if len(ev) != 1 || ev[0].Type != journal.Repaired {
		t.Errorf("events of the refused run: %+v, want the lock's REPAIRED only", ev)
	}

	f.git("checkout", "HEAD", "--", "notes.txt")
	resumeToSuccess(t, f)
	if got := f.git("log", "--format=%H", "--grep=^Set-Change: beta$", "main"); got != rec.To {
		t.Errorf("beta's commit on main = %q, want the recorded %s", got, rec.To)
	}
}

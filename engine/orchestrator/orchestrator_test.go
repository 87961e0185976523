package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/agent"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/report"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/state"
	"github.com/set-engine/set/internal/gittest"
)

// TestRetryThenPass: the first iteration writes content the gate rejects;
// the retry fixes it; every change merges, main moves linearly.
func TestRetryThenPass(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.change("alpha")
	f.change("beta", "alpha")
	a := f.agentScript(`
if [ "$change" = alpha ] && [ "$iteration" = 1 ]; then echo bad > alpha.txt; else echo "good $iteration" > "$change.txt"; fi
echo "test for REQ" > "${change}_test.txt"
`)
	f.applySucceeds(a)
	ev := f.events()
	if n := count(ev, journal.RetryScheduled, "alpha"); n != 1 {
		t.Errorf("alpha retries = %d, want 1", n)
	}
	if n := count(ev, journal.Merged, "alpha") + count(ev, journal.Merged, "beta"); n != 2 {
		t.Errorf("merges = %d, want 2", n)
	}
	// main's history is linear: one commit per change.
	if merges := f.git("rev-list", "--merges", "main"); merges != "" {
		t.Errorf("main has merge commits: %s", merges)
	}
	if n := f.git("rev-list", "--count", "main"); n != "3" {
		t.Errorf("main has %s commits, want 3 (initial, then one per change)", n)
	}
	for _, file := range []string{"alpha.txt", "beta.txt"} {
		if out := f.git("show", "main:"+file); !strings.HasPrefix(out, "good") {
			t.Errorf("main:%s = %q", file, out)
		}
	}
	if st := f.state(); st.Changes["alpha"].Status != state.Archived {
		t.Errorf("alpha = %s", st.Changes["alpha"].Status)
	}
}

// TestBudgetExhaustedBlocksDependents: a change that never passes fails
// with its budget spent; its dependent is dep-blocked; an independent
// sibling still merges.
func TestBudgetExhaustedBlocksDependents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.change("broken")
	f.change("after-broken", "broken")
	f.change("sibling")
	a := f.agentScript(`
if [ "$change" = broken ]; then echo "bad $iteration" > broken.txt; else echo good > "$change.txt"; fi
`)
	sum, err := f.apply(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]state.Status{
		"broken":       state.FailedRetryBudget,
		"after-broken": state.DepBlocked,
		"sibling":      state.Archived,
	}
	for name, s := range want {
		if sum.Statuses[name] != s {
			t.Errorf("%s = %s, want %s", name, sum.Statuses[name], s)
		}
	}
	if sum.Result != "failed" {
		t.Errorf("result = %s", sum.Result)
	}
	if n := count(f.events(), journal.RetryScheduled, "broken"); n != 2 {
		t.Errorf("broken retries = %d, want the budget of 2", n)
	}
	// The retry's prompt counts the verify retries against their budget,
	// as the console does.
	if prompt := readFile(t, f.root, ".set/changes/broken/prompt-2.md"); !strings.Contains(prompt, "\n## The last attempt failed: retry 1 of 2 (verify)\n") {
		t.Errorf("prompt-2 of broken does not count the verify retry:\n%s", prompt)
	}
	// The run ends with its report: the projection of the whole journal,
	// as a finished run.
	st, err := state.Read(filepath.Join(f.root, ".set"))
	if err != nil {
		t.Fatal(err)
	}
	var rep bytes.Buffer
	if err := report.Markdown(&rep, report.Build(st, report.Liveness{}, time.Now())); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, f.root, ".set/report.md")
	if got != rep.String() {
		t.Errorf(".set/report.md is not the report of the journal:\n%s\nwant:\n%s", got, rep.String())
	}
	// The run's own copy of its report and plan stay when a later run
	// writes its own (rundir.Layout.Run).
	if own := readFile(t, f.root, ".set/runs/"+st.Run+"/report.md"); own != got {
		t.Errorf(".set/runs/%s/report.md is not the run's report:\n%s", st.Run, own)
	}
	if own, latest := readFile(t, f.root, ".set/runs/"+st.Run+"/plan.json"), readFile(t, f.root, ".set/plan.json"); own != latest {
		t.Errorf(".set/runs/%s/plan.json is not the run's plan:\n%s", st.Run, own)
	}
	for _, line := range []string{
		": finished: failed\n",
		"\n| sibling | on main at ",
		"\n| broken | failed:retry_budget_exhausted | 3 | 3 (0 / 3 / 0) | 2/2, 0/2 | - | - |\n", // its agent reported no usage
		"\n- **broken** (failed:retry_budget_exhausted): verify failed with its retry budget spent (budgets.retries.verify: 2)\n",
		"\n- **after-broken** (dep-blocked): dependency broken is failed:retry_budget_exhausted\n",
		"\n| REQ-SIBLING-01 | sibling | archived | ",
	} {
		if !strings.Contains(got, line) {
			t.Errorf(".set/report.md lacks %q:\n%s", line, got)
		}
	}
}

// TestConflictResolvedByAgent: two independent changes edit the same line;
// the second to integrate conflicts, goes back to its agent with the
// conflicting hunk, the agent resolves the markers, and both merge.
func TestConflictResolvedByAgent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.project.MaxParallel = 2 // both start from the same main
	f.change("left")
	f.change("right")
	a := f.agentScript(`
if git rev-parse -q --verify MERGE_HEAD >/dev/null; then
	# The retry after the conflict: keep both sides.
	printf 'line 1\nline 2 (left)\nline 2 (right)\nline 3\n' > notes.txt
	exit 0
fi
sed -i "s/^line 2$/line 2 ($change)/" notes.txt
`)
	sum, err := f.apply(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Result != "success" {
		for _, e := range f.events() {
			t.Logf("%s %s %s", e.Type, e.Change, e.Data)
		}
		t.Fatalf("result = %s: %v", sum.Result, sum.Statuses)
	}
	ev := f.events()
	var conflict journal.ChangeIntegrationFailedData
	second := ""
	for _, e := range ev {
		if e.Type == journal.ChangeIntegrationFailed {
			conflict, _ = journal.Decode[journal.ChangeIntegrationFailedData](e)
			second = e.Change
		}
	}
	if conflict.Reason != "conflict" || len(conflict.Paths) != 1 || conflict.Paths[0] != "notes.txt" {
		t.Fatalf("integration failure = %+v", conflict)
	}
	if !strings.Contains(conflict.RetryContext, "<<<<<<<") || !strings.Contains(conflict.RetryContext, "line 2 ("+second+")") {
		t.Errorf("retry context does not show the hunk:\n%s", conflict.RetryContext)
	}
	if got := f.git("show", "main:notes.txt"); got != "line 1\nline 2 (left)\nline 2 (right)\nline 3" {
		t.Errorf("main:notes.txt = %q", got)
	}
	// The agent's next prompt carried the conflict.
	prompt := readFile(t, f.root, ".set/changes/"+second+"/prompt-2.md")
	if !strings.Contains(prompt, "Merging main into your branch conflicts in 1 file(s): notes.txt") {
		t.Errorf("prompt-2 of %s lacks the conflict:\n%s", second, prompt)
	}
	if !strings.Contains(prompt, "\n## main moved under your change: merge conflict 1 of at most 2\n") {
		t.Errorf("prompt-2 of %s does not count the conflict retry:\n%s", second, prompt)
	}
	// The conflict sent it back for a second verify round, which has a
	// number and a log of its own.
	if n := verifyRounds(t, ev, second); n != 2 {
		t.Errorf("%s had %d verify rounds, want 2", second, n)
	}
}

// verifyRounds checks that no two verify verdicts of change's gate share
// an attempt number or a log, and returns how many rounds there were.
func verifyRounds(t *testing.T, events []journal.Event, change string) int {
	t.Helper()
	attempts, logs := map[string]bool{}, map[string]bool{}
	rounds := map[int]bool{}
	for _, e := range events {
		if e.Type != journal.VerifyGate || e.Change != change {
			continue
		}
		d, _ := journal.Decode[journal.VerifyGateData](e)
		if d.Stage != state.StageVerify {
			continue
		}
		key := fmt.Sprintf("%s/%s attempt %d", d.Stage, d.Gate, d.Attempt)
		if attempts[key] {
			t.Errorf("%s: two verify rounds recorded %s", change, key)
		}
		if d.Log != "" && logs[d.Log] {
			t.Errorf("%s: two verify rounds wrote %s", change, d.Log)
		}
		attempts[key], logs[d.Log], rounds[d.Attempt] = true, true, true
	}
	return len(rounds)
}

// TestGeneratedConflictRegenerated: two changes each add a dependency and
// regenerate the lockfile; their lockfiles conflict, and the merge queue
// resolves that by regenerating it, without going back to an agent.
func TestGeneratedConflictRegenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two changes whose lockfiles conflict and are regenerated; TestConflictResolvedByAgent covers conflicts")
	}
	t.Parallel()
	f := newFixture(t)
	f.project.MaxParallel = 2 // both start from the same main
	regen := []string{"sh", "-c", "cat deps/* | sort > deps.lock"}
	f.project.Generated["deps.lock"] = config.Generated{Regenerate: regen}
	f.write("deps/base", "base\n")
	f.write("deps.lock", "base\n")
	f.git("add", "-A")
	f.git("commit", "-q", "-m", "deps")
	f.change("add-zlib")
	f.change("add-yaml")
	f.keepBranches = true // to look at the regeneration on the branch
	a := f.agentScript(`
name=${change#add-}
echo "$name" > "deps/$name"
cat deps/* | sort > deps.lock
`)
	f.applySucceeds(a)
	if got := f.git("show", "main:deps.lock"); got != "base\nyaml\nzlib" {
		t.Errorf("main:deps.lock = %q", got)
	}
	ev := f.events()
	if n := count(ev, journal.ChangeIntegrationFailed, "add-yaml") + count(ev, journal.ChangeIntegrationFailed, "add-zlib"); n != 0 {
		t.Errorf("a generated-file conflict went back to the agent %d times", n)
	}
	if log := f.git("log", "--format=%s", "set/add-yaml", "set/add-zlib"); !strings.Contains(log, "(regenerated deps.lock)") {
		t.Errorf("no regeneration merge on the second change's branch:\n%s", log)
	}
}

// TestSecondApplyRefused: while one apply holds the lock, another fails at
// once naming the PID.
func TestSecondApplyRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.change("alpha")
	if err := os.MkdirAll(filepath.Join(f.root, ".set"), 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := state.AcquireLock(filepath.Join(f.root, ".set"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	_, err = f.apply(context.Background(), f.agentScript("echo good > a.txt\n"))
	var locked *state.LockedError
	if !errors.As(err, &locked) || locked.PID != os.Getpid() {
		t.Fatalf("second apply = %v, want a LockedError naming PID %d", err, os.Getpid())
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("another setctl apply (PID %d) is running", os.Getpid())) {
		t.Errorf("message = %q", err)
	}
}

// TestDirtyMainRefused: a checkout of main with uncommitted edits is not
// touched, and the refused run journals nothing.
func TestDirtyMainRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.change("alpha")
	f.write("notes.txt", "edited by hand\n")
	_, err := f.apply(context.Background(), f.agentScript("echo good > a.txt\n"))
	if err == nil || !strings.Contains(err.Error(), "uncommitted changes (notes.txt)") {
		t.Fatalf("apply on a dirty main = %v", err)
	}
	if ev := f.events(); len(ev) != 0 {
		t.Errorf("the refused run journaled %d events, want none: %+v", len(ev), ev)
	}
}

// TestMissingMainBranchRefused: a repository without the main branch is a
// *git.NoBranchError listing its branches, for the CLI to word; a tag of
// the main branch's name does not stand in for it.
func TestMissingMainBranchRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.change("alpha")
	f.git("branch", "-m", "main", "master")
	f.git("tag", "main")
	_, err := f.apply(context.Background(), f.agentScript("echo good > a.txt\n"))
	var nb *git.NoBranchError
	if !errors.As(err, &nb) || nb.Branch != "main" || !slices.Equal(nb.Branches, []string{"master"}) {
		t.Fatalf("apply without a main branch = %v, want a *git.NoBranchError", err)
	}
}

// TestNotARepositoryRefusedBeforeRunDir: a project directory outside any
// git repository gets its error before .set/ is created there.
func TestNotARepositoryRefusedBeforeRunDir(t *testing.T) {
	gittest.Hermetic(t, "")
	f := fixtureAt(t, t.TempDir())
	f.write("README.md", "# not a repository\n")
	f.change("alpha")
	_, err := f.apply(context.Background(), f.agentScript("echo good > a.txt\n"))
	want := f.root + " is not in a git repository; setctl apply needs one with a commit on main"
	if err == nil || err.Error() != want {
		t.Fatalf("apply outside a repository = %v, want %q", err, want)
	}
	if _, err := os.Stat(filepath.Join(f.root, ".set")); !os.IsNotExist(err) {
		t.Fatalf(".set/ was created outside a repository (stat: %v)", err)
	}
}

// TestPlainDirectoryAsWorktreeRefused: once dispatched, the change's
// worktree becomes a plain directory holding files (its .git file gone).
// It lies inside the root checkout, where git would commit onto main: the
// run stops with an error naming it before the agent runs, and main does
// not move.
func TestPlainDirectoryAsWorktreeRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.change("alpha")
	wt := filepath.Join(f.root, ".set", "worktrees", "alpha")
	f.checkpoint = func(point, change string) {
		if point == "dispatched" {
			if err := os.Remove(filepath.Join(wt, ".git")); err != nil {
				t.Error(err)
			}
		}
	}
	oldMain := f.git("rev-parse", "main")
	ran := filepath.Join(t.TempDir(), "ran")
	_, err := f.apply(context.Background(), f.agentScript("touch "+ran+"\necho good > a.txt\n"))
	var nw *git.NotWorktreeError
	if !errors.As(err, &nw) || !strings.HasPrefix(err.Error(), "alpha: "+wt+" is not the worktree of branch set/alpha (it lies inside the checkout at ") {
		t.Errorf("apply = %v, want a *git.NotWorktreeError", err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the agent ran in a directory that is not the change's worktree")
	}
	if got := f.git("rev-parse", "main"); got != oldMain {
		t.Errorf("main moved to %s:\n%s", got, f.git("log", "--stat", "-2", "main"))
	}
}

// TestWorktreeBrokenByAVerifyGateRefused: a verify gate (running the
// change's code) that removes the worktree's .git file and fails leaves a
// directory inside the root checkout; the run stops before cleaning it
// (git reset --hard there would undo the user's edit in the root
// checkout), and main does not move.
func TestWorktreeBrokenByAVerifyGateRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.change("alpha")
	f.project.Gates["check"] = gateConfig{Kind: "exec", Mode: "run", Order: 10, Run: []string{"sh", "-c",
		// The user edits notes.txt in their checkout meanwhile.
		"test -f a.txt || exit 0; echo edited by hand > ../../../notes.txt; rm .git; exit 1"}}
	oldMain := f.git("rev-parse", "main")
	_, err := f.apply(context.Background(), f.agentScript("echo good > a.txt\n"))
	var nw *git.NotWorktreeError
	if !errors.As(err, &nw) {
		t.Errorf("apply = %v, want a *git.NotWorktreeError", err)
	}
	if got := f.git("rev-parse", "main"); got != oldMain {
		t.Errorf("main moved to %s:\n%s", got, f.git("log", "--stat", "-2", "main"))
	}
	if got := readFile(t, f.root, "notes.txt"); got != "edited by hand\n" {
		t.Errorf("the root checkout's notes.txt = %q, want the user's edit kept", got)
	}
}

// TestPanicFailsTheChange: a panicking adapter fails its change with the
// stack in the journal; the run goes on.
func TestPanicFailsTheChange(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.change("alpha")
	sum, err := f.apply(context.Background(), panicAdapter{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Statuses["alpha"] != state.FailedAgentError {
		t.Fatalf("alpha = %s", sum.Statuses["alpha"])
	}
	st := f.state()
	if !strings.Contains(st.Changes["alpha"].Error, "internal error") || !strings.Contains(st.Changes["alpha"].Error, "boom") {
		t.Errorf("error = %q", st.Changes["alpha"].Error)
	}
}

type panicAdapter struct{}

func (panicAdapter) Name() string { return "panic" }
func (panicAdapter) Run(context.Context, agent.Request) (agent.Result, error) {
	panic("boom")
}

func readFile(t *testing.T, root, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestIterationBudget: an agent that never finishes (no commits) fails
// its change with the iteration budget exhausted, its own status, once
// budgets.iterations are spent.
func TestIterationBudget(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.project.Budgets.Iterations = 2
	f.change("idle")
	sum, err := f.apply(context.Background(), f.agentScript("true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Statuses["idle"] != state.FailedIterationBudget {
		t.Fatalf("idle = %s", sum.Statuses["idle"])
	}
	st, err := state.Read(rundir.New(f.root).Dir())
	if err != nil {
		t.Fatal(err)
	}
	if c := st.Changes["idle"]; c.Iteration != 2 || c.Error != "2 iterations without finishing" {
		t.Errorf("idle: iteration %d, error %q", c.Iteration, c.Error)
	}
}

// TestInterruptAndResume: Ctrl-C (the context ending) stops the agent,
// records the run as interrupted with the change still in flight, and the
// next apply finishes it.
func TestInterruptAndResume(t *testing.T) {
	f := newFixture(t)
	f.change("slow")
	marker := filepath.Join(t.TempDir(), "started")
	a := f.agentScript(`
if [ ! -f "` + marker + `" ]; then echo $$ > "` + marker + `.pid"; touch "` + marker + `"; sleep 30; fi
echo good > slow.txt
`)
	sum := f.applyEnds(interruptedAt(t, marker), a, "interrupted")
	if sum.Statuses["slow"] != state.Implementing {
		t.Fatalf("after Ctrl-C: %+v", sum)
	}
	data, _ := os.ReadFile(marker + ".pid")
	if pid, _ := strconv.Atoi(strings.TrimSpace(string(data))); pid == 0 || !gone(pid) {
		t.Errorf("the agent (pid %q) outlived the interrupted run", data)
	}
	sum = f.applySucceeds(a)
	if !sum.Resumed || sum.Statuses["slow"] != state.Archived {
		t.Fatalf("resumed run: %+v", sum)
	}
}

// TestNewApplyRetriesFailures: a change that failed (and its blocked
// dependent) are retried by the next apply, with fresh budgets, once the
// cause is fixed.
func TestNewApplyRetriesFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two runs, the second retrying the first's failures; TestRetryThenPass covers retries")
	}
	t.Parallel()
	f := newFixture(t)
	f.project.Budgets.Retries.Verify = 0
	f.change("flaky")
	f.change("after", "flaky")
	sum, err := f.apply(context.Background(), f.agentScript(`echo "bad $change" > "$change.txt"`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Statuses["flaky"] != state.FailedRetryBudget || sum.Statuses["after"] != state.DepBlocked {
		t.Fatalf("first run: %v", sum.Statuses)
	}
	sum, err = f.apply(context.Background(), f.agentScript(`echo "good $change" > "$change.txt"`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Result != "success" {
		t.Fatalf("second run: %v", sum.Statuses)
	}
	if got := f.git("show", "main:flaky.txt"); got != "good flaky" {
		t.Errorf("main:flaky.txt = %q", got)
	}
	// The retry's verify round has a number and a log of its own.
	if n := verifyRounds(t, f.events(), "flaky"); n != 2 {
		t.Errorf("flaky had %d verify rounds, want 2", n)
	}
}

// TestUnresolvedMarkersAreNeverCommitted: an agent that reports success
// while conflict markers remain does not conclude the merge; the next
// iteration is told which files still hold markers.
func TestUnresolvedMarkersAreNeverCommitted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.project.MaxParallel = 2
	f.change("left")
	f.change("right")
	lazy := filepath.Join(t.TempDir(), "lazy")
	a := f.agentScript(`
if git rev-parse -q --verify MERGE_HEAD >/dev/null; then
	if [ ! -f "` + lazy + `" ]; then touch "` + lazy + `"; exit 0; fi
	printf 'line 1\nline 2 (left)\nline 2 (right)\nline 3\n' > notes.txt
	exit 0
fi
sed -i "s/^line 2$/line 2 ($change)/" notes.txt
`)
	f.applySucceeds(a)
	if got := f.git("show", "main:notes.txt"); strings.Contains(got, "<<<<<<<") {
		t.Fatalf("conflict markers reached main:\n%s", got)
	}
	var notDone journal.AgentIterationData
	for _, e := range f.events() {
		if e.Type == journal.AgentIteration {
			if d, _ := journal.Decode[journal.AgentIterationData](e); d.Result == "not-done" {
				notDone = d
			}
		}
	}
	if notDone.Iteration == 0 {
		t.Fatal("the lazy iteration was not recorded as not-done")
	}
}

// TestWallTimeBudget: a change still at work when its wall time is spent
// is stopped and fails, recording the budget.
func TestWallTimeBudget(t *testing.T) {
	f := newFixture(t)
	f.project.Budgets.WallTime = config.Duration(300 * time.Millisecond)
	f.change("slow")
	sum, err := f.apply(context.Background(), f.agentScript("sleep 30\n"))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Statuses["slow"] != state.FailedWallTime {
		t.Fatalf("slow = %s", sum.Statuses["slow"])
	}
	var spent journal.BudgetExceededData
	for _, e := range f.events() {
		if e.Type == journal.BudgetExceeded {
			spent, _ = journal.Decode[journal.BudgetExceededData](e)
		}
	}
	if spent.Budget != "wallTime" {
		t.Errorf("budget event = %+v", spent)
	}
}

// TestWallTimeSpentDuringGit: a wall-time budget that ends while git
// works for the change (here: adding its worktree) lets the git call
// finish and fails only that change, with failed:wall_time_exhausted; the
// run goes on and merges the other change.
func TestWallTimeSpentDuringGit(t *testing.T) {
	f := newFixture(t)
	f.project.Budgets.WallTime = config.Duration(time.Hour)
	f.change("fine")
	f.change("slow")
	// git, for `worktree add` of set/slow, says it started and waits to be
	// released; the slow change's budget ends in between.
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin, marks := t.TempDir(), t.TempDir()
	started, release := filepath.Join(marks, "started"), filepath.Join(marks, "release")
	script := fmt.Sprintf(`#!/bin/sh
case " $* " in
*" worktree add "*" set/slow "*)
	: > %q
	while [ ! -e %q ]; do sleep 0.01; done ;;
esac
exec %q "$@"
`, started, release, realGit)
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	f.wallBudget = func(ctx context.Context, change string) (context.Context, context.CancelFunc) {
		if change != "slow" {
			return context.WithCancel(ctx)
		}
		budget, cancel := context.WithCancelCause(ctx)
		go func() {
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				if _, err := os.Stat(started); err == nil {
					cancel(errWallTime)
					_ = os.WriteFile(release, nil, 0o644)
					return
				}
				select {
				case <-budget.Done():
					return
				case <-tick.C:
				}
			}
		}()
		return budget, func() { cancel(context.Canceled) }
	}
	sum, err := f.apply(context.Background(), f.agentScript(`echo "good $change" > "$change.txt"`+"\n"))
	if err != nil {
		t.Fatalf("run error: %v", err)
	}
	if sum.Statuses["slow"] != state.FailedWallTime || sum.Statuses["fine"] != state.Archived {
		t.Fatalf("statuses = %v", sum.Statuses)
	}
	if _, err := os.Stat(release); err != nil {
		t.Fatal("the budget did not end during git worktree add")
	}
	var dispatched, spent bool
	for _, e := range f.events() {
		if e.Change != "slow" {
			continue
		}
		switch e.Type {
		case journal.Dispatch:
			dispatched = true
		case journal.BudgetExceeded:
			d, _ := journal.Decode[journal.BudgetExceededData](e)
			spent = d.Budget == "wallTime"
		case journal.AgentIteration:
			t.Errorf("slow ran its agent after its budget ended")
		}
	}
	if !dispatched || !spent {
		t.Errorf("slow: dispatched %v, wall-time budget recorded %v", dispatched, spent)
	}
}

// TestBranchesDeletedOnceOnMain: a change's branch and worktree are gone
// once main holds its work; resuming the finished run deletes nothing
// twice and does not fail.
func TestBranchesDeletedOnceOnMain(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.change("alpha")
	f.change("beta", "alpha")
	a := f.agentScript(`echo "good $change" > "$change.txt"` + "\n")
	for run := 1; run <= 2; run++ {
		sum, err := f.apply(context.Background(), a)
		if err != nil || sum.Result != "success" {
			t.Fatalf("run %d: %v, %+v", run, err, sum)
		}
		if got := f.branches(); len(got) > 0 {
			t.Errorf("run %d left branches %v", run, got)
		}
		if entries, _ := os.ReadDir(filepath.Join(f.root, ".set", "worktrees")); len(entries) > 0 {
			t.Errorf("run %d left worktrees %v", run, entries)
		}
	}
	if got := f.git("show", "main:beta.txt"); got != "good beta" {
		t.Errorf("main:beta.txt = %q", got)
	}
}

// TestKeepBranches: with KeepBranches every branch stays; a later run
// without it deletes those whose work main holds, and keeps a branch
// checked out in a worktree and one with work main does not have.
func TestKeepBranches(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two runs, with and without KeepBranches; TestBranchesDeletedOnceOnMain covers branch deletion")
	}
	t.Parallel()
	f := newFixture(t)
	f.change("alpha")
	f.change("beta", "alpha")
	f.change("gamma")
	a := f.agentScript(`echo "good $change" > "$change.txt"` + "\n")
	f.keepBranches = true
	sum, err := f.apply(context.Background(), a)
	if err != nil || sum.Result != "success" {
		t.Fatalf("run: %v, %+v", err, sum)
	}
	if got := f.branches(); !slices.Equal(got, []string{"set/alpha", "set/beta", "set/gamma"}) {
		t.Fatalf("kept branches = %v", got)
	}
	if entries, _ := os.ReadDir(filepath.Join(f.root, ".set", "worktrees")); len(entries) > 0 {
		t.Errorf("worktrees left after the run: %v", entries)
	}

	// beta is checked out by hand; gamma gets a commit after it merged.
	f.git("worktree", "add", "-q", filepath.Join(t.TempDir(), "beta"), "set/beta")
	gamma := filepath.Join(t.TempDir(), "gamma")
	f.git("worktree", "add", "-q", gamma, "set/gamma")
	if err := os.WriteFile(filepath.Join(gamma, "more.txt"), []byte("more\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.git("-C", gamma, "add", "more.txt")
	f.git("-C", gamma, "commit", "-q", "-m", "more work")
	f.git("worktree", "remove", gamma)

	f.keepBranches = false
	sum, err = f.apply(context.Background(), a)
	if err != nil || !sum.Resumed || sum.Result != "success" {
		t.Fatalf("resumed run: %v, %+v", err, sum)
	}
	if got := f.branches(); !slices.Equal(got, []string{"set/beta", "set/gamma"}) {
		t.Errorf("branches after the resumed run = %v, want set/beta (checked out) and set/gamma (more work)", got)
	}
}

// TestBranchDeletionIsBestEffort: a branch git cannot delete (a lock file
// left by a killed git) is kept, and the archive does not fail for it; the
// next run removes the stale lock (journaled) and deletes the branch.
func TestBranchDeletionIsBestEffort(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two runs over a branch git cannot delete; TestBranchesDeletedOnceOnMain covers branch deletion")
	}
	t.Parallel()
	f := newFixture(t)
	f.change("alpha")
	f.change("beta", "alpha")
	a := f.agentScript(`echo "good $change" > "$change.txt"` + "\n")
	lock := filepath.Join(f.root, ".git", "refs", "heads", "set", "alpha.lock")
	f.checkpoint = func(point, change string) {
		if point == "archived" && change == "alpha" {
			if err := os.WriteFile(lock, nil, 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	sum, err := f.apply(context.Background(), a)
	if err != nil || sum.Result != "success" {
		t.Fatalf("run with a stale lock: %v, %+v", err, sum)
	}
	if got := f.branches(); !slices.Equal(got, []string{"set/alpha"}) {
		t.Errorf("branches = %v, want set/alpha kept", got)
	}
	f.checkpoint = nil
	sum, err = f.apply(context.Background(), a)
	if err != nil || sum.Result != "success" {
		t.Fatalf("resumed run with the lock still there: %v, %+v", err, sum)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("the stale lock is left: %v", err)
	}
	if got := f.branches(); len(got) > 0 {
		t.Errorf("branches after the resumed run = %v, want none", got)
	}
	_, data := repairs(t, f)
	if want := []journal.RepairedData{{Problem: "stale git locks", Removed: []string{".git/refs/heads/set/alpha.lock"}}}; !reflect.DeepEqual(data, want) {
		t.Errorf("REPAIRED = %+v, want %+v", data, want)
	}
}

// TestInterruptedRetryResumesWithItsContext: a change fails verify, its
// retry (iteration 2) is interrupted, and the resumed iteration's prompt
// is the one the interrupted iteration had, with the failure it retries:
// one verify retry in all, merged.
func TestInterruptedRetryResumesWithItsContext(t *testing.T) {
	f := newFixture(t)
	f.change("alpha")
	marker := filepath.Join(t.TempDir(), "started")
	a := f.agentScript(`
echo "test for REQ" > alpha_test.txt
if [ "$iteration" = 1 ]; then echo bad > alpha.txt; exit 0; fi
if [ ! -f "` + marker + `" ]; then touch "` + marker + `"; sleep 30; fi
echo good > alpha.txt
`)
	sum := f.applyEnds(interruptedAt(t, marker), a, "interrupted")
	if sum.Statuses["alpha"] != state.Implementing {
		t.Fatalf("after Ctrl-C: %+v", sum)
	}
	const retried = "\n## The last attempt failed: retry 1 of 2 (verify)\n\nGate check ("
	if prompt := readFile(t, f.root, ".set/changes/alpha/prompt-2.md"); !strings.Contains(prompt, retried) {
		t.Fatalf("the interrupted iteration's prompt lacks the retry context:\n%s", prompt)
	}
	sum = f.applySucceeds(a)
	if !sum.Resumed {
		t.Fatalf("not resumed: %+v", sum)
	}
	if prompt := readFile(t, f.root, ".set/changes/alpha/prompt-2.md"); !strings.Contains(prompt, retried) {
		t.Errorf("the resumed iteration's prompt lacks the retry context:\n%s", prompt)
	}
	if n := count(f.events(), journal.RetryScheduled, "alpha"); n != 1 {
		t.Errorf("verify retries = %d, want 1", n)
	}
	if n := verifyRounds(t, f.events(), "alpha"); n != 2 {
		t.Errorf("alpha had %d verify rounds, want 2", n)
	}
}

// TestInterruptedConflictRetryResumesWithItsContext: a change that
// conflicts goes back to its agent; Ctrl-C while the agent resolves the
// conflict; the resumed iteration's prompt is the interrupted one's, with
// the conflict and its conflict retry count.
func TestInterruptedConflictRetryResumesWithItsContext(t *testing.T) {
	f := newFixture(t)
	f.project.MaxParallel = 2 // both start from the same main
	f.change("left")
	f.change("right")
	marker := filepath.Join(t.TempDir(), "started")
	a := f.agentScript(`
if git rev-parse -q --verify MERGE_HEAD >/dev/null; then
	if [ ! -f "` + marker + `" ]; then touch "` + marker + `"; sleep 30; fi
	printf 'line 1\nline 2 (left)\nline 2 (right)\nline 3\n' > notes.txt
	exit 0
fi
sed -i "s/^line 2$/line 2 ($change)/" notes.txt
`)
	sum := f.applyEnds(interruptedAt(t, marker), a, "interrupted")
	second := ""
	for _, e := range f.events() {
		if e.Type == journal.ChangeIntegrationFailed {
			second = e.Change
		}
	}
	if second == "" || sum.Statuses[second] != state.Implementing {
		t.Fatalf("after Ctrl-C: %+v (conflicted: %q)", sum, second)
	}
	prompt := ".set/changes/" + second + "/prompt-2.md"
	interrupted := readFile(t, f.root, prompt)
	if !strings.Contains(interrupted, "\n## main moved under your change: merge conflict 1 of at most 2\n") {
		t.Fatalf("the interrupted iteration's prompt lacks the conflict:\n%s", interrupted)
	}
	resumesWithPrompt(t, f, a, second, prompt, interrupted)
}

// TestInterruptedIterationResumesWithItsContext: within a verify retry,
// an iteration fails to finish and the next one is interrupted; the
// resumed iteration is told what the interrupted one was told (where the
// last iteration stopped, under the retry's heading).
func TestInterruptedIterationResumesWithItsContext(t *testing.T) {
	f := newFixture(t)
	f.change("alpha")
	marker := filepath.Join(t.TempDir(), "started")
	a := f.agentScript(`
echo "test for REQ" > alpha_test.txt
if [ "$iteration" = 1 ]; then echo bad > alpha.txt; exit 0; fi
if [ "$iteration" = 2 ]; then echo "half-way there"; exit 3; fi
if [ ! -f "` + marker + `" ]; then touch "` + marker + `"; sleep 30; fi
echo good > alpha.txt
`)
	sum := f.applyEnds(interruptedAt(t, marker), a, "interrupted")
	if sum.Statuses["alpha"] != state.Implementing {
		t.Fatalf("after Ctrl-C: %+v", sum)
	}
	interrupted := readFile(t, f.root, ".set/changes/alpha/prompt-3.md")
	if !strings.Contains(interrupted, "\n## The last attempt failed: retry 1 of 2 (verify)\n\nThe previous iteration ended before the agent reported success: half-way there") {
		t.Fatalf("the interrupted iteration's prompt does not say where the last one stopped:\n%s", interrupted)
	}
	resumesWithPrompt(t, f, a, "alpha", ".set/changes/alpha/prompt-3.md", interrupted)
}

// resumesWithPrompt resumes the interrupted run of f with agent a and
// checks that it succeeds, that change's resumed iteration was given
// interrupted, the prompt (file prompt) the interrupted iteration had,
// and that the change was retried once in all.
func resumesWithPrompt(t *testing.T, f *fixture, a agent.Adapter, change, prompt, interrupted string) {
	t.Helper()
	f.applySucceeds(a)
	if resumed := readFile(t, f.root, prompt); resumed != interrupted {
		t.Errorf("the resumed iteration's prompt differs from the interrupted one's:\n%s\nwant:\n%s", resumed, interrupted)
	}
	if n := count(f.events(), journal.RetryScheduled, change); n != 1 {
		t.Errorf("%s's retries = %d, want 1", change, n)
	}
}

// interruptedAt is a context that is cancelled, as Ctrl-C cancels setctl
// apply's, once the file marker exists (an agent script touches it where
// the test interrupts the run), and at the latest when t ends.
func interruptedAt(t *testing.T, marker string) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(marker); err == nil {
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return ctx
}

package merge

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/runner"
	"github.com/set-engine/set/engine/runner/host"
	"github.com/set-engine/set/engine/spec"
	"github.com/set-engine/set/internal/gittest"
)

// archiveDate is the Now of every Input.
var archiveDate = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

// fixture is a project in a real git repository in a temp dir, with main
// checked out in root and the change "feat" in a worktree on branch
// set/feat under root/.set/worktrees, as the orchestrator lays them out.
type fixture struct {
	t       *testing.T
	root    string
	setDir  string
	wt      string
	project *config.Project
	// events are the payloads Integrate emitted, in order, but for its
	// INTEGRATION_ATTEMPT records, which are attempts.
	events   []journal.Payload
	attempts []journal.IntegrationAttemptData
	// checkpoints are the points Integrate passed, with main at each.
	checkpoints []string
}

// TestMain makes git hermetic for every test of the package, so that the
// tests can run in parallel (gittest.Main). The user's global git
// config asks for diff3 conflict markers, which set must not use.
func TestMain(m *testing.M) {
	gittest.Main(m, "[merge]\n\tconflictStyle = diff3\n")
}

// newFixture commits README.md, notes.txt and files on main, then starts
// the change's worktree there. Git is hermetic, with a global config that
// asks for diff3 conflict markers (TestMain).
func newFixture(t *testing.T, files map[string]string) *fixture {
	t.Helper()

	root := t.TempDir()
	f := &fixture{t: t, root: root, setDir: filepath.Join(root, ".set")}
	f.wt = filepath.Join(f.setDir, "worktrees", "feat")
	f.git(root, "init", "-q", "-b", "main")
	f.write(root, "README.md", "# fixture\n")
	f.write(root, "notes.txt", "line 1\nline 2\nline 3\n")
	for name, content := range files {
		f.write(root, name, content)
	}
	f.commit(root, "initial")

	ctx := context.Background()
	if err := git.Exclude(ctx, root, "/.set/"); err != nil {
		t.Fatal(err)
	}
	if err := git.AddWorktree(ctx, root, f.wt, "set/feat", "main"); err != nil {
		t.Fatal(err)
	}
	f.project = &config.Project{
		Name:         "fixture",
		MainBranch:   "main",
		TestPatterns: map[string]string{"txt": "**/*_test.txt"},
		Generated:    map[string]config.Generated{},
		Gates: map[string]config.Gate{
			"ok":     {Kind: config.KindExec, Mode: config.ModeRun, Run: []string{"true"}},
			"broken": {Kind: config.KindExec, Mode: config.ModeRun, Run: []string{"sh", "-c", "echo integration broke; exit 3"}},
			// tree records the tree it ran on, to prove gates see the merge.
			"tree": {Kind: config.KindExec, Mode: config.ModeRun,
				Run: []string{"sh", "-c", "git add -A && git write-tree > \"$TREE_OUT\" && git reset -q"}},
		},
		Runner: config.Runner{Kind: "host"},
		// The test's own variables: gates see nothing else of its
		// environment but PATH and the like.
		PassEnv: map[string]bool{"TREE_OUT": true, "REGEN_COUNT": true},
	}
	return f
}

// input integrates change feat with the named exec gates as its
// integration stack, in order.
func (f *fixture) input(gates ...string) Input {
	steps := make([]graph.GateStep, len(gates))
	for i, g := range gates {
		steps[i] = graph.GateStep{Gate: g, Kind: config.KindExec, Mode: config.ModeRun, Order: i,
			Runner: host.Name, Timeout: config.Duration(time.Minute)}
	}
	return Input{
		Project: f.project,
		Layout:  rundir.New(f.root),
		Change: plan.Change{Name: "feat", Type: "feature", Size: "S", Description: "add the feature",
			Requirements: []string{"REQ-FEAT-01"}},
		Reqs:     []spec.Requirement{{ID: "REQ-FEAT-01", Title: "Feature works", Domain: "feat"}},
		Steps:    steps,
		Worktree: f.wt,
		Attempt:  1,
		Runners:  map[string]runner.Runner{host.Name: host.New()},
		Emit: func(p journal.Payload) error {
			if a, ok := p.(journal.IntegrationAttemptData); ok {
				f.attempts = append(f.attempts, a)
				return nil
			}
			f.events = append(f.events, p)
			return nil
		},
		Now: func() time.Time { return archiveDate },
		Checkpoint: func(point string) {
			f.checkpoints = append(f.checkpoints, point+" "+f.git(f.root, "rev-parse", "main"))
		},
	}
}

func (f *fixture) git(dir string, args ...string) string {
	f.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (f *fixture) write(dir, name, content string) {
	f.t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) read(dir, name string) string {
	f.t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		f.t.Fatal(err)
	}
	return string(data)
}

// commit commits everything in dir and returns the new HEAD.
func (f *fixture) commit(dir, msg string) string {
	f.t.Helper()
	f.git(dir, "add", "-A")
	f.git(dir, "commit", "-q", "-m", msg)
	return f.git(dir, "rev-parse", "HEAD")
}

// mainAt is main's commit.
func (f *fixture) mainAt() string {
	f.t.Helper()
	return f.git(f.root, "rev-parse", "main")
}

// onMain is a file of main's tree, or "" with ok false when absent.
func (f *fixture) onMain(name string) (content string, ok bool) {
	f.t.Helper()
	out, err := exec.Command("git", "-C", f.root, "show", "main:"+name).Output()
	if err != nil {
		return "", false
	}
	return string(out), true
}

// gateEvents are the VERIFY_GATE payloads emitted, with the fields that
// vary between runs cleared.
func (f *fixture) gateEvents() []journal.VerifyGateData {
	var out []journal.VerifyGateData
	for _, p := range f.events {
		if g, ok := p.(journal.VerifyGateData); ok {
			g.DurationMS = 0
			out = append(out, g)
		}
	}
	return out
}

func (f *fixture) hasEvent(match func(journal.Payload) bool) bool {
	for _, p := range f.events {
		if match(p) {
			return true
		}
	}
	return false
}

func TestIntegrateCleanMergeWithPassingGate(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	treeOut := filepath.Join(t.TempDir(), "tree")
	t.Setenv("TREE_OUT", treeOut)

	// The change edits notes.txt and adds a file; main meanwhile gains
	// another file: the merge is clean but not a fast-forward.
	f.write(f.wt, "notes.txt", "line 1 (feat)\nline 2\nline 3\n")
	f.write(f.wt, "feat.txt", "feat\n")
	branch := f.commit(f.wt, "feat work")
	f.write(f.root, "main.txt", "main\n")
	oldMain := f.commit(f.root, "main work")

	out, err := integrate(ctx, f.input("ok", "tree"))
	if err != nil {
		t.Fatal(err)
	}
	newMain := f.mainAt()
	if diff := cmp.Diff(Outcome{Merged: true, Commit: newMain}, out); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}

	// main: one new commit, only parent the old main, the worktree's tree.
	if got := f.git(f.root, "rev-list", "--parents", oldMain+"..main"); got != newMain+" "+oldMain {
		t.Errorf("new commits on main with parents = %q, want %q", got, newMain+" "+oldMain)
	}
	wtTree := f.git(f.wt, "rev-parse", "HEAD^{tree}")
	if got := f.git(f.root, "rev-parse", "main^{tree}"); got != wtTree {
		t.Errorf("main's tree = %s, want the worktree's %s", got, wtTree)
	}
	gateTree, err := os.ReadFile(treeOut)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(gateTree)); got != wtTree {
		t.Errorf("the gate ran on tree %s, main moved to %s", got, wtTree)
	}
	wantMsg := "feat: add the feature\n\n- REQ-FEAT-01: Feature works\n\nSet-Change: feat"
	if got := f.git(f.root, "log", "-1", "--format=%B", "main"); got != wantMsg {
		t.Errorf("main's message = %q, want %q", got, wantMsg)
	}
	if got, err := git.FindTrailer(ctx, f.root, "main", ChangeTrailer, "feat"); err != nil || got != newMain {
		t.Errorf("FindTrailer(Set-Change: feat) = %q, %v; want %s", got, err, newMain)
	}

	// The branch keeps its own history, now with main merged in.
	if got, want := f.git(f.wt, "rev-parse", "HEAD^1", "HEAD^2"), branch+"\n"+oldMain; got != want {
		t.Errorf("worktree merge parents = %q, want %q", got, want)
	}
	if got := f.git(f.wt, "log", "-1", "--format=%s"); got != "Merge main into feat" {
		t.Errorf("worktree merge message = %q", got)
	}

	// main is checked out in root: its files moved with it.
	for name, want := range map[string]string{"feat.txt": "feat\n", "main.txt": "main\n", "notes.txt": "line 1 (feat)\nline 2\nline 3\n"} {
		if got := f.read(f.root, name); got != want {
			t.Errorf("root %s = %q, want %q", name, got, want)
		}
	}
	if got := f.git(f.root, "status", "--porcelain"); got != "" {
		t.Errorf("root status:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(f.setDir, "fast-forward.json")); !os.IsNotExist(err) {
		t.Errorf("the record of the move of main's checkout is left: %v", err)
	}

	wantGates := []journal.VerifyGateData{
		{Stage: "integration", Gate: "ok", Kind: "exec", Mode: "run", Runner: "host", Base: "host", Result: "pass",
			Log: ".set/logs/feat/integration-ok-1.log", Attempt: 1},
		{Stage: "integration", Gate: "tree", Kind: "exec", Mode: "run", Runner: "host", Base: "host", Result: "pass",
			Log: ".set/logs/feat/integration-tree-1.log", Attempt: 1},
	}
	if diff := cmp.Diff(wantGates, f.gateEvents()); diff != "" {
		t.Errorf("gate events (-want +got):\n%s", diff)
	}
	if n := len(f.events); n != 6 {
		t.Fatalf("%d events, want 2 gates (started and judged), MERGED and ARCHIVED: %#v", n, f.events)
	}
	if want := []journal.IntegrationAttemptData{{Attempt: 1, Onto: oldMain}}; !cmp.Equal(want, f.attempts) {
		t.Errorf("attempts = %+v, want %+v", f.attempts, want)
	}
	wantLanded := []journal.Payload{
		journal.MergedData{Commit: newMain, Previous: oldMain, Attempt: 1},
		journal.ArchivedData{Commit: newMain, Skipped: "no OpenSpec delta (openspec/changes/feat)"},
	}
	if diff := cmp.Diff(wantLanded, f.events[4:]); diff != "" {
		t.Errorf("MERGED and ARCHIVED (-want +got):\n%s", diff)
	}
	if got, err := Archived(ctx, f.root, "feat", newMain); err != nil || !cmp.Equal(got, wantLanded[1]) {
		t.Errorf("Archived read back = %+v, %v; want %+v", got, err, wantLanded[1])
	}
	for _, e := range wantGates {
		if _, err := os.Stat(filepath.Join(f.root, e.Log)); err != nil {
			t.Errorf("gate log: %v", err)
		}
	}
	if diff := cmp.Diff([]string{"before-fast-forward " + oldMain, "fast-forwarded " + newMain}, f.checkpoints); diff != "" {
		t.Errorf("checkpoints (-want +got):\n%s", diff)
	}
}

// TestIntegrateRecordsTheMoveOfMainsCheckout: main's checkout moved
// half-way (git wrote its files and index, then could not move the ref)
// is recorded in the run directory, for a resumed run to finish; MERGED
// and ARCHIVED are not journaled.
func TestIntegrateRecordsTheMoveOfMainsCheckout(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	oldMain := f.mainAt()
	f.write(f.wt, "feat.txt", "feat\n")
	f.commit(f.wt, "feat work")
	in := f.input("ok")
	in.Checkpoint = func(point string) {
		if point == "before-fast-forward" {
			f.write(f.root, ".git/refs/heads/main.lock", "")
		}
	}
	if out, err := integrate(context.Background(), in); err == nil {
		t.Fatalf("Integrate with main's ref locked = %+v, want an error", out)
	}
	data, err := os.ReadFile(filepath.Join(f.setDir, "fast-forward.json"))
	if err != nil {
		t.Fatalf("no record of the half-made move: %v", err)
	}
	var rec git.FastForwardRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Branch != "main" || rec.From != oldMain || rec.To == "" || f.git(f.root, "rev-parse", rec.To+"^{tree}") != f.git(f.wt, "rev-parse", "HEAD^{tree}") {
		t.Errorf("record = %+v, want main from %s to a commit of the worktree's tree", rec, oldMain)
	}
	if got := f.git(f.root, "status", "--porcelain"); got != "A  feat.txt" {
		t.Errorf("main's checkout: status = %q, want the move staged", got)
	}
	if len(f.events) != 2 {
		t.Errorf("events = %#v, want the gate's only (started and judged)", f.events)
	}
}

func TestIntegrateWithMainUnmoved(t *testing.T) {
	t.Parallel()
	// main did not move since the branch started: the merge has nothing to
	// do, and main still gets one squashed commit on top of itself.
	f := newFixture(t, nil)
	oldMain := f.mainAt()
	f.write(f.wt, "a.txt", "a\n")
	f.commit(f.wt, "one")
	f.write(f.wt, "b.txt", "b\n")
	f.commit(f.wt, "two")

	out, err := integrate(context.Background(), f.input("ok"))
	if err != nil {
		t.Fatal(err)
	}
	if !out.Merged {
		t.Fatalf("outcome = %+v, want merged", out)
	}
	if got := f.git(f.root, "rev-list", "--parents", oldMain+"..main"); got != out.Commit+" "+oldMain {
		t.Errorf("new commits on main with parents = %q, want one on %s", got, oldMain)
	}
	if got, want := f.git(f.root, "rev-parse", "main^{tree}"), f.git(f.wt, "rev-parse", "HEAD^{tree}"); got != want {
		t.Errorf("main's tree = %s, want %s", got, want)
	}
}

func TestIntegrateFailingGate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.write(f.wt, "feat.txt", "feat\n")
	f.commit(f.wt, "feat work")
	f.write(f.root, "main.txt", "main\n")
	oldMain := f.commit(f.root, "main work")

	out, err := integrate(context.Background(), f.input("ok", "broken", "tree"))
	if err != nil {
		t.Fatal(err)
	}
	if !out.Failed || out.Merged || out.Reason != "gate" || out.Commit != "" {
		t.Errorf("outcome = %+v, want failed with reason gate", out)
	}
	for _, want := range []string{
		"After merging main into your branch, the integration gate broken failed.\n",
		"Gate broken (`sh -c 'echo integration broke; exit 3'`) failed with exit code 3.",
		"integration broke",
		"Full log: .set/logs/feat/integration-broken-1.log",
	} {
		if !strings.Contains(out.RetryContext, want) {
			t.Errorf("retry context lacks %q:\n%s", want, out.RetryContext)
		}
	}
	if got := f.mainAt(); got != oldMain {
		t.Errorf("main = %s, want unchanged %s", got, oldMain)
	}
	if _, ok := f.onMain("feat.txt"); ok {
		t.Error("feat.txt reached main")
	}

	// The gates after the failing one do not run; nothing is merged.
	var results []string
	for _, g := range f.gateEvents() {
		results = append(results, g.Gate+"="+g.Result)
	}
	if diff := cmp.Diff([]string{"ok=pass", "broken=fail"}, results); diff != "" {
		t.Errorf("gate results (-want +got):\n%s", diff)
	}
	if f.hasEvent(func(p journal.Payload) bool { _, ok := p.(journal.MergedData); return ok }) {
		t.Error("MERGED emitted for a failed integration")
	}
	if len(f.checkpoints) != 0 {
		t.Errorf("checkpoints = %q, want none", f.checkpoints)
	}
	// The worktree keeps the merge for the agent to build on.
	if got := f.git(f.wt, "rev-parse", "HEAD^2"); got != oldMain {
		t.Errorf("worktree HEAD^2 = %s, want main %s", got, oldMain)
	}
}

func TestIntegrateGateThatCannotRunIsARunError(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	oldMain := f.mainAt()
	f.write(f.wt, "feat.txt", "feat\n")
	f.commit(f.wt, "feat work")

	in := f.input("ok")
	in.Runners = map[string]runner.Runner{} // no host runner
	out, err := integrate(context.Background(), in)
	if err == nil {
		t.Fatalf("Integrate = %+v, want an error", out)
	}
	if want := "integration gate ok of feat could not run"; !strings.Contains(err.Error(), want) {
		t.Errorf("error = %v, want it to contain %q", err, want)
	}
	if !reflect.DeepEqual(out, Outcome{}) {
		t.Errorf("outcome = %+v, want zero with an error", out)
	}
	if got := f.mainAt(); got != oldMain {
		t.Errorf("main = %s, want unchanged %s", got, oldMain)
	}
}

func TestIntegrateEmitErrorStopsIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	oldMain := f.mainAt()
	f.write(f.wt, "feat.txt", "feat\n")
	f.commit(f.wt, "feat work")

	in := f.input("ok")
	full := errors.New("journal full")
	in.Emit = func(journal.Payload) error { return full }
	if _, err := integrate(context.Background(), in); !errors.Is(err, full) {
		t.Errorf("error = %v, want %v", err, full)
	}
	if got := f.mainAt(); got != oldMain {
		t.Errorf("main = %s, want unchanged %s", got, oldMain)
	}
}

// conflictOnNotes makes the change and main edit line 2 of notes.txt
// differently; it returns main's commit.
func (f *fixture) conflictOnNotes() string {
	f.t.Helper()
	f.write(f.wt, "notes.txt", "line 1\nfeat 2\nline 3\n")
	f.commit(f.wt, "feat edit")
	f.write(f.root, "notes.txt", "line 1\nmain 2\nline 3\n")
	return f.commit(f.root, "main edit")
}

func TestIntegrateConflict(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx := context.Background()
	oldMain := f.conflictOnNotes()
	branch := f.git(f.wt, "rev-parse", "HEAD")

	out, err := integrate(ctx, f.input("ok"))
	if err != nil {
		t.Fatal(err)
	}
	if !out.Failed || out.Merged || out.Reason != "conflict" {
		t.Errorf("outcome = %+v, want failed with reason conflict", out)
	}
	wantHunk := "\nnotes.txt:2:\n```\n<<<<<<< HEAD\nfeat 2\n=======\nmain 2\n>>>>>>> main\n```\n"
	for _, want := range []string{
		"Merging main into your branch conflicts in 1 file(s): notes.txt.\n",
		"Do not abort the merge.",
		wantHunk,
	} {
		if !strings.Contains(out.RetryContext, want) {
			t.Errorf("retry context lacks %q:\n%s", want, out.RetryContext)
		}
	}
	if strings.Contains(out.RetryContext, "|||||||") {
		t.Errorf("retry context has diff3 markers from the user's config:\n%s", out.RetryContext)
	}

	// The merge stays in progress in the worktree for the agent.
	if !git.InMerge(ctx, f.wt) {
		t.Error("merge not left in progress in the worktree")
	}
	if got := f.git(f.wt, "rev-parse", "HEAD"); got != branch {
		t.Errorf("worktree HEAD = %s, want %s", got, branch)
	}
	if got := f.git(f.root, "rev-parse", "main"); got != oldMain {
		t.Errorf("main = %s, want unchanged %s", got, oldMain)
	}

	want := []journal.Payload{journal.ChangeIntegrationFailedData{
		Reason: "conflict", Paths: []string{"notes.txt"}, RetryContext: out.RetryContext, Attempt: 1,
	}}
	if diff := cmp.Diff(want, f.events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if len(f.checkpoints) != 0 {
		t.Errorf("checkpoints = %q, want none", f.checkpoints)
	}
}

func TestIntegrateAfterTheAgentResolvedTheConflict(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx := context.Background()
	oldMain := f.conflictOnNotes()
	if out, err := integrate(ctx, f.input("ok")); err != nil || out.Reason != "conflict" {
		t.Fatalf("first Integrate = %+v, %v; want a conflict", out, err)
	}

	// The agent resolves the markers; its loop commits, concluding the
	// merge.
	f.write(f.wt, "notes.txt", "line 1\nmain 2\nfeat 2\nline 3\n")
	if _, err := git.CommitAll(ctx, f.wt, "resolve"); err != nil {
		t.Fatal(err)
	}
	in := f.input("ok")
	in.Attempt = 2
	out, err := integrate(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Merged {
		t.Fatalf("outcome = %+v, want merged", out)
	}
	if got, _ := f.onMain("notes.txt"); got != "line 1\nmain 2\nfeat 2\nline 3\n" {
		t.Errorf("notes.txt on main = %q", got)
	}
	if got := f.git(f.root, "rev-parse", "main^"); got != oldMain {
		t.Errorf("main^ = %s, want %s", got, oldMain)
	}
	if got := f.gateEvents(); len(got) != 1 || got[0].Attempt != 2 {
		t.Errorf("gate events = %+v, want one of attempt 2", got)
	}
}

func TestIntegrateRestartsAnInterruptedMerge(t *testing.T) {
	t.Parallel()
	// A merge left in progress (a crash, or an agent that never committed)
	// is aborted and done again from the branch's last commit.
	f := newFixture(t, nil)
	ctx := context.Background()
	f.conflictOnNotes()
	branch := f.git(f.wt, "rev-parse", "HEAD")
	if _, err := integrate(ctx, f.input("ok")); err != nil {
		t.Fatal(err)
	}
	f.write(f.wt, "notes.txt", "half edited\n")
	f.write(f.wt, "scratch.txt", "untracked\n")

	out, err := integrate(ctx, f.input("ok"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != "conflict" {
		t.Fatalf("outcome = %+v, want a conflict again", out)
	}
	if !git.InMerge(ctx, f.wt) {
		t.Error("merge not in progress")
	}
	if got := f.git(f.wt, "rev-parse", "HEAD"); got != branch {
		t.Errorf("worktree HEAD = %s, want %s", got, branch)
	}
	if got := f.read(f.wt, "notes.txt"); !strings.Contains(got, "<<<<<<< HEAD\nfeat 2\n") {
		t.Errorf("notes.txt = %q, want fresh conflict markers", got)
	}
	if n := len(f.events); n != 2 {
		t.Errorf("%d events, want a CHANGE_INTEGRATION_FAILED per attempt", n)
	}
}

func TestIntegrateConflictInSeveralFiles(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"other.txt": "a\nb\nc\nd\ne\nf\n"})
	ctx := context.Background()
	f.write(f.wt, "other.txt", "A feat\nb\nc\nd\ne\nF feat\n")
	f.write(f.wt, "notes.txt", "line 1\nfeat 2\nline 3\n")
	f.commit(f.wt, "feat")
	f.write(f.root, "other.txt", "A main\nb\nc\nd\ne\nF main\n")
	f.write(f.root, "notes.txt", "line 1\nmain 2\nline 3\n")
	f.commit(f.root, "main")

	out, err := integrate(ctx, f.input("ok"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != "conflict" {
		t.Fatalf("outcome = %+v, want a conflict", out)
	}
	for _, want := range []string{
		"conflicts in 2 file(s): notes.txt, other.txt.",
		"\nnotes.txt:2:\n```\n<<<<<<< HEAD\nfeat 2\n=======\nmain 2\n>>>>>>> main\n```\n",
		"\nother.txt:1:\n```\n<<<<<<< HEAD\nA feat\n=======\nA main\n>>>>>>> main\n```\n",
		"\nother.txt:10:\n```\n<<<<<<< HEAD\nF feat\n=======\nF main\n>>>>>>> main\n```\n",
	} {
		if !strings.Contains(out.RetryContext, want) {
			t.Errorf("retry context lacks %q:\n%s", want, out.RetryContext)
		}
	}
}

// generatedFixture has gen.txt and gen2.txt generated from parts/*.txt by
// one command, which also counts its runs in $REGEN_COUNT.
func generatedFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	f := newFixture(t, map[string]string{
		"parts/a.txt": "a\n",
		"gen.txt":     "a\n",
		"gen2.txt":    "a\n",
	})
	count := filepath.Join(t.TempDir(), "count")
	t.Setenv("REGEN_COUNT", count)
	regen := []string{"sh", "-c", `echo run >> "$REGEN_COUNT"; cat parts/*.txt > gen.txt; cat parts/*.txt > gen2.txt`}
	f.project.Generated = map[string]config.Generated{
		"gen.txt":  {Regenerate: regen},
		"gen2.txt": {Regenerate: regen},
	}
	// Each side adds a part and regenerates: both generated files conflict.
	f.write(f.wt, "parts/w.txt", "w\n")
	f.write(f.wt, "gen.txt", "a\nw\n")
	f.write(f.wt, "gen2.txt", "a\nw\n")
	f.commit(f.wt, "feat adds w")
	f.write(f.root, "parts/m.txt", "m\n")
	f.write(f.root, "gen.txt", "a\nm\n")
	f.write(f.root, "gen2.txt", "a\nm\n")
	f.commit(f.root, "main adds m")
	return f, count
}

func TestIntegrateRegeneratesGeneratedFileConflicts(t *testing.T) {
	f, count := generatedFixture(t)
	ctx := context.Background()
	oldMain := f.mainAt()
	branch := f.git(f.wt, "rev-parse", "HEAD")

	out, err := integrate(ctx, f.input("ok"))
	if err != nil {
		t.Fatal(err)
	}
	if !out.Merged || out.Commit != f.mainAt() {
		t.Fatalf("outcome = %+v, want merged at main", out)
	}
	if git.InMerge(ctx, f.wt) {
		t.Error("merge still in progress in the worktree")
	}
	if got, want := f.git(f.wt, "rev-parse", "HEAD^1", "HEAD^2"), branch+"\n"+oldMain; got != want {
		t.Errorf("worktree merge parents = %q, want %q", got, want)
	}
	if got := f.git(f.wt, "log", "-1", "--format=%s"); got != "Merge main into feat (regenerated gen.txt, gen2.txt)" {
		t.Errorf("worktree merge message = %q", got)
	}
	// gen2.txt, rebuilt by the same command, is not checked here: see the
	// report on regenerate (its output is overwritten by main's side).
	if got, _ := f.onMain("gen.txt"); got != "a\nm\nw\n" {
		t.Errorf("gen.txt on main = %q, want it regenerated from every part", got)
	}
	if got := f.read(f.root, "gen.txt"); got != "a\nm\nw\n" {
		t.Errorf("gen.txt in root = %q", got)
	}
	if got := f.read(f.wt, "gen.txt"); strings.Contains(got, "<<<<<<<") {
		t.Errorf("gen.txt in the worktree has markers:\n%s", got)
	}
	if got, err := os.ReadFile(count); err != nil || string(got) != "run\n" {
		t.Errorf("regeneration ran %q (%v), want once for both files", got, err)
	}
	if _, err := os.Stat(filepath.Join(f.setDir, "logs", "feat", "regenerate-1.log")); err != nil {
		t.Errorf("regeneration log: %v", err)
	}
	if f.hasEvent(func(p journal.Payload) bool { _, ok := p.(journal.ChangeIntegrationFailedData); return ok }) {
		t.Error("CHANGE_INTEGRATION_FAILED emitted for a regenerated conflict")
	}
	if _, ok := f.events[len(f.events)-2].(journal.MergedData); !ok {
		t.Errorf("event before last = %#v, want MERGED", f.events[len(f.events)-2])
	}
}

func TestIntegrateMixedConflictGoesToTheAgent(t *testing.T) {
	f, count := generatedFixture(t)
	ctx := context.Background()
	f.write(f.wt, "notes.txt", "line 1\nfeat 2\nline 3\n")
	f.commit(f.wt, "feat edit")
	f.write(f.root, "notes.txt", "line 1\nmain 2\nline 3\n")
	oldMain := f.commit(f.root, "main edit")

	out, err := integrate(ctx, f.input("ok"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != "conflict" {
		t.Fatalf("outcome = %+v, want a conflict", out)
	}
	if !strings.Contains(out.RetryContext, "conflicts in 1 file(s): notes.txt.") {
		t.Errorf("retry context names more than notes.txt:\n%s", out.RetryContext)
	}
	if len(f.events) != 1 {
		t.Fatalf("events = %#v, want one CHANGE_INTEGRATION_FAILED", f.events)
	}
	if got := f.events[0].(journal.ChangeIntegrationFailedData).Paths; !cmp.Equal(got, []string{"notes.txt"}) {
		t.Errorf("paths = %q, want only notes.txt", got)
	}
	if _, err := os.Stat(count); err == nil {
		t.Error("regeneration ran for a conflict the agent must resolve")
	}
	if !git.InMerge(ctx, f.wt) {
		t.Error("merge not left in progress")
	}
	if got := f.mainAt(); got != oldMain {
		t.Errorf("main = %s, want unchanged %s", got, oldMain)
	}
}

func TestIntegrateRegenerationFailureIsARunError(t *testing.T) {
	f, _ := generatedFixture(t)
	oldMain := f.mainAt()
	bad := []string{"sh", "-c", "echo cannot; exit 2"}
	f.project.Generated = map[string]config.Generated{"gen.txt": {Regenerate: bad}, "gen2.txt": {Regenerate: bad}}

	out, err := integrate(context.Background(), f.input("ok"))
	if err == nil {
		t.Fatalf("Integrate = %+v, want an error", out)
	}
	log := filepath.Join(f.setDir, "logs", "feat", "regenerate-1.log")
	want := "regenerating gen.txt, gen2.txt: `sh -c echo cannot; exit 2` exited 2 (log: " + log + ")"
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if got := f.read(f.setDir, "logs/feat/regenerate-1.log"); got != "cannot\n" {
		t.Errorf("regeneration log = %q", got)
	}
	if got := f.mainAt(); got != oldMain {
		t.Errorf("main = %s, want unchanged %s", got, oldMain)
	}
}

// deltaFixture is a project whose living spec auth has Login v1, and a
// change feat that adds feat.txt with an OpenSpec delta modifying Login
// and adding billing's Invoice, while main gains main.txt. It returns
// main's commit.
func deltaFixture(t *testing.T) (*fixture, string) {
	f := newFixture(t, map[string]string{
		"openspec/specs/auth/spec.md": "# auth Specification\n\n## Purpose\nP.\n\n## Requirements\n\n" + loginV1,
	})
	f.write(f.wt, "feat.txt", "feat\n")
	f.write(f.wt, "openspec/changes/feat/proposal.md", "## Why\nFeat.\n")
	f.write(f.wt, "openspec/changes/feat/specs/auth/spec.md", "## MODIFIED Requirements\n"+loginV2)
	f.write(f.wt, "openspec/changes/feat/specs/billing/spec.md", "## ADDED Requirements\n"+invoice)
	f.commit(f.wt, "feat with a delta")
	f.write(f.root, "main.txt", "main\n")
	return f, f.commit(f.root, "main work")
}

// Requirement blocks of the fixtures: OpenSpec requires a statement and a
// scenario.
const (
	loginV1 = "### Requirement: Login\nThe system SHALL log in, v1.\n\n#### Scenario: ok\n- WHEN valid\n- THEN in\n"
	loginV2 = "### Requirement: Login\nThe system SHALL log in, v2.\n\n#### Scenario: ok\n- WHEN valid\n- THEN in\n"
	invoice = "### Requirement: Invoice\nThe system SHALL send invoices.\n\n#### Scenario: month\n- WHEN a month ends\n- THEN an invoice is sent\n"
)

// archivedFeat lists openspec/changes on main once feat's delta folded.
var archivedFeat = strings.Join([]string{
	"openspec/changes/archive/2026-03-04-feat/proposal.md",
	"openspec/changes/archive/2026-03-04-feat/specs/auth/spec.md",
	"openspec/changes/archive/2026-03-04-feat/specs/billing/spec.md",
}, "\n")

// TestIntegrateFoldsTheDelta: main moves by one commit, whose tree is the
// merge with the delta folded, the very tree the integration stack ran on.
func TestIntegrateFoldsTheDelta(t *testing.T) {
	f, oldMain := deltaFixture(t)
	ctx := context.Background()
	treeOut := filepath.Join(t.TempDir(), "tree")
	t.Setenv("TREE_OUT", treeOut)

	out, err := integrate(ctx, f.input("ok", "tree"))
	if err != nil || !out.Merged {
		t.Fatalf("Integrate = %+v, %v; want merged", out, err)
	}
	newMain := f.mainAt()
	if got := f.git(f.root, "rev-list", "--parents", oldMain+"..main"); got != newMain+" "+oldMain {
		t.Errorf("new commits on main with parents = %q, want one on %s", got, oldMain)
	}
	if got := f.git(f.root, "log", "--format=%(trailers:only,unfold)", oldMain+"..main"); got != "Set-Change: feat" {
		t.Errorf("trailers on main = %q, want only Set-Change: feat", got)
	}
	gateTree, err := os.ReadFile(treeOut)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(gateTree)), f.git(f.root, "rev-parse", "main^{tree}"); got != want {
		t.Errorf("the gate ran on tree %s, main moved to %s", got, want)
	}

	if got, ok := f.onMain("openspec/specs/auth/spec.md"); !ok || !strings.Contains(got, loginV2) {
		t.Errorf("auth spec on main = %q, want Login v2", got)
	}
	if got, ok := f.onMain("openspec/specs/billing/spec.md"); !ok || !strings.Contains(got, invoice) {
		t.Errorf("billing spec on main = %q, want Invoice", got)
	}
	if files := f.git(f.root, "ls-tree", "-r", "--name-only", "main", "openspec/changes/"); files != archivedFeat {
		t.Errorf("openspec/changes on main:\n%s", files)
	}
	for name, want := range map[string]string{"feat.txt": "feat\n", "main.txt": "main\n"} {
		if got, _ := f.onMain(name); got != want {
			t.Errorf("%s on main = %q, want %q", name, got, want)
		}
	}
	// main is checked out in root: the files followed.
	if _, err := os.Stat(filepath.Join(f.root, "openspec", "changes", "archive", "2026-03-04-feat", "proposal.md")); err != nil {
		t.Errorf("root checkout: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.root, "openspec", "changes", "feat")); !os.IsNotExist(err) {
		t.Errorf("root still has openspec/changes/feat: %v", err)
	}

	// The branch holds the fold as its own commit on the merge, marked
	// with the archive trailer, and ends at main's tree.
	wantFold := "Archive feat: update openspec/specs (auth, billing)\n\nSet-Archive: feat"
	if got := f.git(f.wt, "log", "-1", "--format=%B"); got != wantFold {
		t.Errorf("branch tip message = %q, want %q", got, wantFold)
	}
	if got := f.git(f.wt, "rev-parse", "HEAD^^2"); got != oldMain {
		t.Errorf("the fold's parent does not merge main: HEAD^^2 = %s", got)
	}
	if got, want := f.git(f.wt, "rev-parse", "HEAD^{tree}"), f.git(f.root, "rev-parse", "main^{tree}"); got != want {
		t.Errorf("branch tip tree = %s, main's = %s", got, want)
	}

	archived := journal.ArchivedData{Commit: newMain, Capabilities: []string{"auth", "billing"}, ArchiveDir: "openspec/changes/archive/2026-03-04-feat"}
	if diff := cmp.Diff([]journal.Payload{journal.MergedData{Commit: newMain, Previous: oldMain, Attempt: 1}, archived}, f.events[len(f.events)-2:]); diff != "" {
		t.Errorf("MERGED and ARCHIVED (-want +got):\n%s", diff)
	}
	if got, err := Archived(ctx, f.root, "feat", newMain); err != nil || !cmp.Equal(got, archived) {
		t.Errorf("Archived read back = %+v, %v; want %+v", got, err, archived)
	}
}

// TestIntegrateBadDeltaIsRecorded: a delta that does not fold does not
// keep the change off main; main gets the change without a fold, the
// delta stays in openspec/changes/ for a person to fix, and ARCHIVED says
// why.
func TestIntegrateBadDeltaIsRecorded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx := context.Background()
	f.write(f.wt, "openspec/changes/feat/specs/auth/spec.md", "## CHANGED\n### Requirement: Login\nv2\n")
	f.commit(f.wt, "feat with a bad delta")

	out, err := integrate(ctx, f.input("ok"))
	if err != nil || !out.Merged {
		t.Fatalf("Integrate = %+v, %v; want merged", out, err)
	}
	if _, ok := f.onMain("openspec/changes/feat/specs/auth/spec.md"); !ok {
		t.Error("the delta is not left in openspec/changes/feat on main")
	}
	if files := f.git(f.root, "ls-tree", "-r", "--name-only", "main", "openspec/"); files != "openspec/changes/feat/specs/auth/spec.md" {
		t.Errorf("openspec on main:\n%s", files)
	}
	d, ok := f.events[len(f.events)-1].(journal.ArchivedData)
	if !ok || d.Commit != out.Commit || !strings.HasPrefix(d.Skipped, "the OpenSpec delta does not fold, left in openspec/changes/feat: ") ||
		!strings.Contains(d.Skipped, "openspec/changes/feat/specs/auth/spec.md") {
		t.Errorf("last event = %#v", f.events[len(f.events)-1])
	}
	want := journal.ArchivedData{Commit: out.Commit, Skipped: "the OpenSpec delta does not fold, left in openspec/changes/feat"}
	if got, err := Archived(ctx, f.root, "feat", out.Commit); err != nil || !cmp.Equal(got, want) {
		t.Errorf("Archived read back = %+v, %v; want %+v", got, err, want)
	}
}

// TestIntegrateSymlinksInTheChangeAreNotFollowed: a change that commits
// openspec/specs/x as a link to a directory outside the repository, and a
// delta that links to a file outside, is merged without a fold: nothing is
// written outside, the outside file's content never reaches main, and
// ARCHIVED names the links.
func TestIntegrateSymlinksInTheChangeAreNotFollowed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx := context.Background()
	outside := t.TempDir()
	host := filepath.Join(outside, "host.md")
	if err := os.WriteFile(host, []byte("## ADDED Requirements\n### Requirement: Host\nOUTSIDE-MARKER\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.write(f.wt, "openspec/changes/feat/specs/x/spec.md", "## ADDED Requirements\n"+invoice)
	for link, target := range map[string]string{
		"openspec/changes/feat/specs/auth/spec.md": host,
		"openspec/specs/x":                         outside,
	} {
		p := filepath.Join(f.wt, filepath.FromSlash(link))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	f.commit(f.wt, "feat with links out of the repository")

	out, err := integrate(ctx, f.input("ok"))
	if err != nil || !out.Merged {
		t.Fatalf("Integrate = %+v, %v; want merged", out, err)
	}
	entries, err := os.ReadDir(outside)
	if err != nil || len(entries) != 1 {
		t.Errorf("outside the repository: %v, %v; want only host.md", entries, err)
	}
	for _, name := range strings.Fields(f.git(f.root, "ls-tree", "-r", "--name-only", "main")) {
		if got, _ := f.onMain(name); strings.Contains(got, "OUTSIDE-MARKER") {
			t.Errorf("the outside file's content reached %s on main", name)
		}
	}
	d, ok := f.events[len(f.events)-1].(journal.ArchivedData)
	if !ok || !strings.HasPrefix(d.Skipped, "the OpenSpec delta does not fold, left in openspec/changes/feat: ") ||
		!strings.Contains(d.Skipped, "openspec/changes/feat/specs/auth/spec.md is a symbolic link; set does not follow links a change adds") ||
		!strings.Contains(d.Skipped, "openspec/specs/x is a symbolic link") {
		t.Errorf("last event = %#v", f.events[len(f.events)-1])
	}
}

// TestIntegrateFailingGateDropsTheFold: a change sent back to its agent
// keeps the merge but not the fold: the agent works on its delta, and
// the next integration folds it again.
func TestIntegrateFailingGateDropsTheFold(t *testing.T) {
	t.Parallel()
	f, oldMain := deltaFixture(t)
	ctx := context.Background()
	out, err := integrate(ctx, f.input("ok", "broken"))
	if err != nil || out.Reason != "gate" {
		t.Fatalf("Integrate = %+v, %v; want a failed gate", out, err)
	}
	if got := f.mainAt(); got != oldMain {
		t.Errorf("main = %s, want unchanged %s", got, oldMain)
	}
	if got := f.git(f.wt, "rev-parse", "HEAD^2"); got != oldMain {
		t.Errorf("worktree HEAD^2 = %s, want the merge of main %s", got, oldMain)
	}
	if got := f.read(f.wt, "openspec/changes/feat/specs/auth/spec.md"); !strings.Contains(got, "## MODIFIED") {
		t.Errorf("the delta is not back in the worktree: %q", got)
	}
	if _, err := os.Stat(filepath.Join(f.wt, "openspec", "changes", "archive")); !os.IsNotExist(err) {
		t.Errorf("the archive is left in the worktree: %v", err)
	}
	if got := f.git(f.wt, "status", "--porcelain"); got != "" {
		t.Errorf("worktree status:\n%s", got)
	}

	out, err = integrate(ctx, f.input("ok"))
	if err != nil || !out.Merged {
		t.Fatalf("second Integrate = %+v, %v; want merged", out, err)
	}
	if files := f.git(f.root, "ls-tree", "-r", "--name-only", "main", "openspec/changes/"); files != archivedFeat {
		t.Errorf("openspec/changes on main:\n%s", files)
	}
}

// TestIntegrateDropsAnInterruptedFold: a fold committed by an integration
// that stopped before main moved (a crash) is made again on a fresh merge,
// never folded twice or kept from the earlier day.
func TestIntegrateDropsAnInterruptedFold(t *testing.T) {
	t.Parallel()
	f, oldMain := deltaFixture(t)
	ctx := context.Background()
	in := f.input("ok")
	in.Now = func() time.Time { return archiveDate.AddDate(0, 0, -1) }
	in.Checkpoint = func(point string) {
		if point == "before-fast-forward" {
			panic(point) // the crash
		}
	}
	func() {
		defer func() { _ = recover() }()
		_, _ = integrate(ctx, in)
	}()
	if got := f.git(f.wt, "log", "-1", "--format=%s"); got != "Archive feat: update openspec/specs (auth, billing)" {
		t.Fatalf("the interrupted integration left %q at the branch tip, want its fold", got)
	}
	f.write(f.wt, "openspec/specs/auth/spec.md", "half written\n")
	f.events = nil

	out, err := integrate(ctx, f.input("ok"))
	if err != nil || !out.Merged {
		t.Fatalf("Integrate = %+v, %v; want merged", out, err)
	}
	if got := f.git(f.root, "rev-list", "--count", oldMain+"..main"); got != "1" {
		t.Errorf("main moved by %s commits, want 1", got)
	}
	if files := f.git(f.root, "ls-tree", "-r", "--name-only", "main", "openspec/changes/"); files != archivedFeat {
		t.Errorf("openspec/changes on main:\n%s", files)
	}
	if got, _ := f.onMain("openspec/specs/auth/spec.md"); !strings.Contains(got, loginV2) {
		t.Errorf("auth spec on main = %q, want Login v2", got)
	}
	if got := f.git(f.wt, "rev-list", "--count", "--grep=^Set-Archive: feat$", "HEAD"); got != "1" {
		t.Errorf("the branch has %s fold commits, want 1", got)
	}
}

func TestArchivedNames(t *testing.T) {
	t.Parallel()
	for dir, want := range map[string]bool{
		"2026-03-04-feat":    true,
		"2026-03-04-03":      false, // the change "03" is below
		"2026-03-04-x-feat":  false,
		"2026-3-4-feat":      false,
		"feat":               false,
		"2026-03-04-feature": false,
	} {
		if got := archivedAs(dir, "feat"); got != want {
			t.Errorf("archivedAs(%q, feat) = %v, want %v", dir, got, want)
		}
	}
	if !archivedAs("2026-03-04-03", "03") {
		t.Error(`archivedAs("2026-03-04-03", "03") = false`)
	}
	// A change named with a date is archived under its own name.
	for dir, want := range map[string]bool{
		"2025-01-15-feat":            true,
		"2026-03-04-2025-01-15-feat": false,
	} {
		if got := archivedAs(dir, "2025-01-15-feat"); got != want {
			t.Errorf("archivedAs(%q, 2025-01-15-feat) = %v, want %v", dir, got, want)
		}
	}
}

// TestIntegrateFoldsNestedAndRetired: a nested capability
// (openspec/specs/search/full-text) is created and a capability whose last
// requirement the change removes is retired; the fold commit says both, and
// Archived reads the record back from main.
func TestIntegrateFoldsNestedAndRetired(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{
		"openspec/specs/billing/spec.md": "# billing Specification\n\n## Purpose\nP.\n\n## Requirements\n\n" + invoice,
	})
	ctx := context.Background()
	f.write(f.wt, "openspec/changes/feat/.openspec.yaml", "schema: spec-driven\nretire_capabilities: true\n")
	f.write(f.wt, "openspec/changes/feat/specs/billing/spec.md", "## REMOVED Requirements\n- `### Requirement: Invoice`\n")
	f.write(f.wt, "openspec/changes/feat/specs/search/full-text/spec.md", "## ADDED Requirements\n"+loginV1)
	f.commit(f.wt, "feat retires billing, adds full-text search")

	out, err := integrate(ctx, f.input("ok"))
	if err != nil || !out.Merged {
		t.Fatalf("Integrate = %+v, %v; want merged", out, err)
	}
	if got := f.git(f.root, "ls-tree", "-r", "--name-only", "main", "openspec/specs/"); got != "openspec/specs/search/full-text/spec.md" {
		t.Errorf("openspec/specs on main:\n%s", got)
	}
	if got, want := f.git(f.wt, "log", "-1", "--format=%s"), "Archive feat: update openspec/specs (search/full-text); retire billing"; got != want {
		t.Errorf("fold commit = %q, want %q", got, want)
	}
	archived := journal.ArchivedData{Commit: out.Commit, Capabilities: []string{"search/full-text"}, ArchiveDir: "openspec/changes/archive/2026-03-04-feat"}
	if diff := cmp.Diff(archived, f.events[len(f.events)-1]); diff != "" {
		t.Errorf("ARCHIVED (-want +got):\n%s", diff)
	}
	if got, err := Archived(ctx, f.root, "feat", out.Commit); err != nil || !cmp.Equal(got, archived) {
		t.Errorf("Archived read back = %+v, %v; want %+v", got, err, archived)
	}
}

func TestConflictHunks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		want    []hunk
	}{
		{name: "no markers", content: "a\nb\n"},
		{name: "empty"},
		{
			name:    "one hunk",
			content: "a\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> main\nb\n",
			want:    []hunk{{line: 2, text: "<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> main\n"}},
		},
		{
			name: "several hunks with their first lines",
			content: "<<<<<<< HEAD\n1\n=======\n2\n>>>>>>> main\n" +
				"keep\nkeep\n" +
				"<<<<<<< HEAD\n=======\nadded\n>>>>>>> main\n" +
				"<<<<<<< HEAD\nx\n||||||| base\no\n=======\ny\n>>>>>>> main\nend",
			want: []hunk{
				{line: 1, text: "<<<<<<< HEAD\n1\n=======\n2\n>>>>>>> main\n"},
				{line: 8, text: "<<<<<<< HEAD\n=======\nadded\n>>>>>>> main\n"},
				{line: 12, text: "<<<<<<< HEAD\nx\n||||||| base\no\n=======\ny\n>>>>>>> main\n"},
			},
		},
		{
			name:    "an unterminated hunk is dropped",
			content: "<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> main\n<<<<<<< HEAD\nno end\n",
			want:    []hunk{{line: 1, text: "<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> main\n"}},
		},
		{
			name:    "markers need their space",
			content: "<<<<<<<\nx\n>>>>>>>\n",
		},
		{
			name:    "last line without a newline",
			content: "<<<<<<< HEAD\na\n=======\nb\n>>>>>>> main",
			want:    []hunk{{line: 1, text: "<<<<<<< HEAD\na\n=======\nb\n>>>>>>> main"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := conflictHunks(tc.content)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(hunk{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("conflictHunks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConflictContext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("hunks per file, missing files named", func(t *testing.T) {
		write("a/x.txt", "1\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> trunk\n")
		got := conflictContext(dir, "trunk", []string{"a/x.txt", "gone.txt"}, "")
		if !strings.HasPrefix(got, "Merging trunk into your branch conflicts in 2 file(s): a/x.txt, gone.txt.\n") {
			t.Errorf("headline:\n%s", got)
		}
		if want := "\na/x.txt:2:\n```\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> trunk\n```\n"; !strings.Contains(got, want) {
			t.Errorf("context lacks %q:\n%s", want, got)
		}
		if !strings.Contains(got, " the work already on trunk are kept") || strings.Contains(got, "main") {
			t.Errorf("context does not name trunk alone:\n%s", got)
		}
		if !strings.Contains(got, "\ngone.txt: open ") {
			t.Errorf("context does not name the unreadable file:\n%s", got)
		}
	})

	t.Run("capped", func(t *testing.T) {
		var b strings.Builder
		one := "<<<<<<< HEAD\n" + strings.Repeat("o", 1000) + "\n=======\n" + strings.Repeat("t", 1000) + "\n>>>>>>> main\n"
		for range 20 {
			b.WriteString(one)
		}
		write("big.txt", b.String())
		got := conflictContext(dir, "main", []string{"big.txt"}, "")
		if !strings.HasSuffix(got, "\n(more conflicts not shown)\n") {
			t.Errorf("context does not say it was cut:\n%s", got[len(got)-200:])
		}
		if len(got) > 12<<10+len("\n(more conflicts not shown)\n") {
			t.Errorf("context is %d bytes, want at most about 12 KiB", len(got))
		}
		if n := strings.Count(got, "<<<<<<< HEAD"); n == 0 || n >= 20 {
			t.Errorf("%d hunks shown, want some but not all 20", n)
		}
	})
}

func TestSquashMessage(t *testing.T) {
	t.Parallel()
	reqs := []spec.Requirement{{ID: "REQ-A-01", Title: "Login"}, {ID: "REQ-A-02", Title: "Logout"}}
	tests := []struct {
		name        string
		description string
		reqs        []spec.Requirement
		want        string
	}{
		{
			name:        "description as title",
			description: "add auth",
			reqs:        reqs,
			want:        "auth: add auth\n\n- REQ-A-01: Login\n- REQ-A-02: Logout\n\nSet-Change: auth\n",
		},
		{
			name: "requirement titles without a description",
			reqs: reqs,
			want: "auth: Login; Logout\n\n- REQ-A-01: Login\n- REQ-A-02: Logout\n\nSet-Change: auth\n",
		},
		{
			name:        "long title cut at 72",
			description: strings.Repeat("x", 73),
			want:        "auth: " + strings.Repeat("x", 69) + "...\n\n\nSet-Change: auth\n",
		},
		{
			name:        "72 is not cut",
			description: strings.Repeat("x", 72),
			want:        "auth: " + strings.Repeat("x", 72) + "\n\n\nSet-Change: auth\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := squashMessage(Input{Change: plan.Change{Name: "auth", Description: tc.description}, Reqs: tc.reqs})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("squashMessage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRegenerateKeepsTheOutputOfASharedCommand(t *testing.T) {
	f, _ := generatedFixture(t)
	out, err := integrate(context.Background(), f.input("ok"))
	if err != nil || !out.Merged {
		t.Fatalf("Integrate = %+v, %v", out, err)
	}
	for _, name := range []string{"gen.txt", "gen2.txt"} {
		if got, _ := f.onMain(name); got != "a\nm\nw\n" {
			t.Errorf("%s on main = %q", name, got)
		}
	}
}

func TestSquashMessageCutsTitleOnRunes(t *testing.T) {
	t.Parallel()
	got := squashMessage(Input{Change: plan.Change{Name: "i18n", Description: strings.Repeat("é", 40)}})
	title, _, _ := strings.Cut(got, "\n")
	if want := "i18n: " + strings.Repeat("é", 40); title != want || !utf8.ValidString(title) {
		t.Errorf("title = %q", title)
	}
}

// A plain directory where the change's worktree should be lies inside the
// root checkout: cleaning it, merging in it or taking its tree would act on
// main. Integrate refuses before any of that; main and the checkout's
// untracked files stay.
func TestIntegrateRefusesAPlainDirectory(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx := context.Background()
	if err := git.RemoveWorktree(ctx, f.root, f.wt); err != nil {
		t.Fatal(err)
	}
	f.write(f.wt, "feat.txt", "not a worktree\n")
	f.write(f.root, "precious.txt", "the user's untracked file\n")
	oldMain := f.mainAt()

	_, err := integrate(ctx, f.input("ok"))
	var nw *git.NotWorktreeError
	if !errors.As(err, &nw) {
		t.Errorf("Integrate = %v, want a *git.NotWorktreeError", err)
	}
	if got := f.mainAt(); got != oldMain {
		t.Errorf("main moved to %s, want unchanged %s", got, oldMain)
	}
	if got := f.read(f.root, "precious.txt"); got != "the user's untracked file\n" {
		t.Errorf("precious.txt = %q", got)
	}
}

// A gate that removes the worktree's .git file (the change's own tests
// run in the gates) leaves a directory inside the root checkout: its tree
// is main's, and must not become main's next commit.
func TestIntegrateRefusesAWorktreeAGateBroke(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.project.Gates["rm-git"] = config.Gate{Kind: config.KindExec, Mode: config.ModeRun, Run: []string{"rm", ".git"}}
	f.write(f.wt, "feat.txt", "feat\n")
	f.commit(f.wt, "feat work")
	oldMain := f.mainAt()

	_, err := integrate(context.Background(), f.input("rm-git"))
	var nw *git.NotWorktreeError
	if !errors.As(err, &nw) {
		t.Errorf("Integrate = %v, want a *git.NotWorktreeError", err)
	}
	if got := f.mainAt(); got != oldMain {
		t.Errorf("main moved to %s, want unchanged %s", got, oldMain)
	}
}

// TestIntegrateGateThatCommits: main gets the tree the gates checked. A
// gate that commits a change to the branch fails the integration; one
// whose commit leaves the tree as it was does not.
func TestIntegrateGateThatCommits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, script string
		fails        bool
	}{
		{"a new file", "echo gate > gate.txt && git add gate.txt && git -c user.name=g -c user.email=g@g commit -qm gate", true},
		{"the same tree", "git -c user.name=g -c user.email=g@g commit -q --allow-empty -m empty", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.project.Gates["commits"] = config.Gate{Kind: config.KindExec, Mode: config.ModeRun, Run: []string{"sh", "-c", tc.script}}
			f.write(f.wt, "feat.txt", "feat\n")
			f.commit(f.wt, "feat work")
			oldMain := f.mainAt()
			out, err := integrate(context.Background(), f.input("commits"))
			if err != nil {
				t.Fatal(err)
			}
			if !tc.fails {
				if !out.Merged {
					t.Fatalf("outcome = %+v, want merged", out)
				}
				if _, ok := f.onMain("gate.txt"); ok {
					t.Error("gate.txt reached main")
				}
				return
			}
			if !out.Failed || out.Gate != "commits" || !strings.Contains(out.RetryContext, "committed to your branch while they ran") {
				t.Errorf("outcome = %+v, want failed by the gates' commit", out)
			}
			if got := f.mainAt(); got != oldMain {
				t.Errorf("main = %s, want unchanged %s", got, oldMain)
			}
		})
	}
}

// integrate integrates the change onto main in one go, as the merge queue
// does with one change at a time: Prepare on main's head, Check, then
// Land or Reject.
func integrate(ctx context.Context, in Input) (Outcome, error) {
	head, err := git.BranchHead(ctx, in.Layout.Root(), in.Project.MainBranch)
	if err != nil {
		return Outcome{}, err
	}
	cand, out, err := Prepare(ctx, in, Onto{Commit: head})
	if err != nil || out.Failed {
		return out, err
	}
	if out, err = Check(ctx, in, cand); err != nil {
		return Outcome{}, err
	}
	if out.Failed {
		return Reject(ctx, in, cand, out)
	}
	return Land(ctx, in, cand)
}

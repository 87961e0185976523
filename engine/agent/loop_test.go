package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/rundir"
)

// loopRepo is a fresh repository on main (see replayRepo), with change x's
// worktree on branch set/x at .set/worktrees/x, as the orchestrator makes
// it.
func loopRepo(t *testing.T) (root, worktree string) {
	t.Helper()
	root, _ = replayRepo(t)
	worktree = rundir.New(root).Worktree("x")
	gitT(t, root, "worktree", "add", "-q", "-b", "set/x", worktree, "main")
	return root, worktree
}

// loopWith runs Loop for change x on a branch of a fresh repository with
// an exec agent running script in sh, at most max iterations, and returns
// the result and the AGENT_ITERATION events.
func loopWith(t *testing.T, script string, max int) (LoopResult, []journal.AgentIterationData) {
	t.Helper()
	root, wt := loopRepo(t)
	a, err := New(config.Agent{Adapter: "exec", Argv: []string{"sh", "-c", script}}, root)
	if err != nil {
		t.Fatal(err)
	}
	var its []journal.AgentIterationData
	res, err := Loop(context.Background(), LoopInput{
		Adapter:  a,
		Prompt:   PromptInput{Project: &config.Project{}, Change: plan.Change{Name: "x"}},
		Layout:   rundir.New(root),
		Worktree: wt, MainBranch: "main", MaxIterations: max,
		Emit: func(p journal.Payload) error {
			if it, ok := p.(journal.AgentIterationData); ok {
				its = append(its, it)
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, its
}

// An agent that fails at once, the same way each time, ends the change
// after three iterations with its exit code and its last words, not after
// the whole iteration budget with "not finishing".
func TestLoopStopsOnTheSameFailure(t *testing.T) {
	res, its := loopWith(t, `echo starting; echo "sh: 0: cannot open agent.sh: No such file" >&2; echo; exit 2`, 10)
	if res.Ending != EndAgentError || res.Iterations != 3 {
		t.Errorf("ending %s after %d iterations, want %s after 3", res.Ending, res.Iterations, EndAgentError)
	}
	if want := "the agent exited 2 in 3 iterations in a row without a commit: sh: 0: cannot open agent.sh: No such file"; res.Reason != want {
		t.Errorf("reason %q\nwant   %q", res.Reason, want)
	}
	if len(its) != 3 {
		t.Fatalf("%d AGENT_ITERATION events, want 3", len(its))
	}
	for _, it := range its {
		if it.Result != "not-done" || it.ExitCode != 2 || it.Error != "exit 2: sh: 0: cannot open agent.sh: No such file" {
			t.Errorf("iteration %d: result %q, exit %d, error %q", it.Iteration, it.Result, it.ExitCode, it.Error)
		}
	}
}

// The last line is bounded.
func TestLoopBoundsTheLastLine(t *testing.T) {
	_, its := loopWith(t, `printf '%0300d\n' 0; exit 1`, 1)
	if len(its) != 1 {
		t.Fatalf("%d AGENT_ITERATION events, want 1", len(its))
	}
	if want := "exit 1: " + strings.Repeat("0", maxLastLine-len("…")) + "…"; its[0].Error != want {
		t.Errorf("error %q\nwant  %q", its[0].Error, want)
	}
}

// Failures that differ, or that leave commits, are the agent at work: the
// iteration budget decides.
func TestLoopRetriesFailuresThatChange(t *testing.T) {
	for name, script := range map[string]string{
		"another line each time": `echo "attempt {iteration} failed"; exit 1`,
		"a commit each time":     `echo more >> greet.txt; echo "tests fail"; exit 1`,
		"finishing cleanly":      `exit 0`,
	} {
		t.Run(name, func(t *testing.T) {
			res, its := loopWith(t, script, 4)
			if res.Ending != EndIterations || len(its) != 4 {
				t.Errorf("ending %s after %d iterations (%s), want %s after 4", res.Ending, len(its), res.Reason, EndIterations)
			}
		})
	}
}

// A budget that ends while the agent runs stops it and ends the loop as
// interrupted, without a run error and without recording the iteration;
// the loop's own context (git, the journal) is untouched.
func TestLoopBudgetEnds(t *testing.T) {
	root, wt := loopRepo(t)
	ran := filepath.Join(t.TempDir(), "ran")
	a, err := New(config.Agent{Adapter: "exec", Argv: []string{"sh", "-c", "sleep 2; touch " + ran}}, root)
	if err != nil {
		t.Fatal(err)
	}
	budget, spend := context.WithCancel(context.Background())
	defer spend()
	var its int
	var started journal.AgentSessionDecisionData
	res, err := Loop(context.Background(), LoopInput{
		Adapter: a,
		Prompt: PromptInput{Project: &config.Project{Learnings: map[string]config.Learning{
			"doc-comment": {Kind: config.LearningConvention, Text: "Every file starts with a comment.", Enabled: true},
		}}, Change: plan.Change{Name: "x"}},
		Layout:   rundir.New(root),
		Worktree: wt, MainBranch: "main", MaxIterations: 3, Model: "m1",
		Emit: func(p journal.Payload) error {
			switch d := p.(type) {
			case journal.AgentSessionDecisionData:
				started = d
				spend() // the agent starts next
			case journal.AgentIterationData:
				its++
			}
			return nil
		},
		Budget: budget,
	})
	if err != nil || res.Ending != EndInterrupted || its != 0 {
		t.Errorf("Loop = %+v, %v; %d iterations recorded", res, err, its)
	}
	// The decision that opened the iteration says which one runs, with
	// what, where its output goes, and the learnings its prompt carries.
	want := journal.AgentSessionDecisionData{Decision: "new", Reason: "first iteration",
		Iteration: 1, Adapter: "exec", Model: "m1", Log: ".set/logs/x/agent-1.log", Learnings: []string{"doc-comment"}}
	if !reflect.DeepEqual(started, want) {
		t.Errorf("session decision = %+v\nwant %+v", started, want)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the agent ran to its end after the budget ended")
	}
}

// loopIn runs Loop for change x of the repository at root, in wt, with an
// exec agent running script in sh, after done iterations, for at most two
// more, and returns its error.
func loopIn(t *testing.T, root, wt, script string, done int) error {
	t.Helper()
	a, err := New(config.Agent{Adapter: "exec", Argv: []string{"sh", "-c", script}}, root)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Loop(context.Background(), LoopInput{
		Adapter:  a,
		Prompt:   PromptInput{Project: &config.Project{}, Change: plan.Change{Name: "x"}},
		Layout:   rundir.New(root),
		Worktree: wt, MainBranch: "main", Done: done, MaxIterations: done + 2,
		Emit: func(journal.Payload) error { return nil },
	})
	return err
}

// checkMainUntouched fails the test when main moved from mainHead, or the
// root checkout's edit of greet.txt was committed.
func checkMainUntouched(t *testing.T, root, mainHead string) {
	t.Helper()
	if got := gitT(t, root, "rev-parse", "main"); got != mainHead {
		t.Errorf("main moved to %s:\n%s", got, gitT(t, root, "log", "--stat", "-3", "main"))
	}
	if got := gitT(t, root, "status", "--porcelain", "--untracked-files=no"); got != "M greet.txt" {
		t.Errorf("root checkout's status = %q, want its edit of greet.txt uncommitted", got)
	}
}

// A plain directory where the change's worktree should be lies inside the
// root checkout: git there would commit onto main. The loop ends with a
// run error before the agent runs, and main does not move.
func TestLoopRefusesAPlainDirectory(t *testing.T) {
	root, _ := replayRepo(t)
	mainHead := gitT(t, root, "rev-parse", "main")
	writeFileT(t, filepath.Join(root, "greet.txt"), "edited in the root checkout\n")
	wt := rundir.New(root).Worktree("x")
	writeFileT(t, filepath.Join(wt, "file.txt"), "not a worktree\n")
	ran := filepath.Join(t.TempDir(), "ran")

	err := loopIn(t, root, wt, "touch "+ran+"; echo more >> file.txt", 0)
	var nw *git.NotWorktreeError
	if !errors.As(err, &nw) || !strings.Contains(err.Error(), wt+" is not the worktree of branch set/x (it lies inside the checkout at ") {
		t.Errorf("Loop = %v, want a *git.NotWorktreeError", err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the agent ran in a directory that is not the change's worktree")
	}
	checkMainUntouched(t, root, mainHead)
}

// An agent that removes its worktree's .git file leaves a directory inside
// the root checkout: what it left is not committed there.
func TestLoopRefusesAWorktreeTheAgentBroke(t *testing.T) {
	root, wt := loopRepo(t)
	mainHead := gitT(t, root, "rev-parse", "main")
	writeFileT(t, filepath.Join(root, "greet.txt"), "edited in the root checkout\n")

	err := loopIn(t, root, wt, "rm .git; echo agent > agent.txt", 0)
	var nw *git.NotWorktreeError
	if !errors.As(err, &nw) {
		t.Errorf("Loop = %v, want a *git.NotWorktreeError", err)
	}
	checkMainUntouched(t, root, mainHead)
	if got := gitT(t, root, "rev-parse", "set/x"); got != mainHead {
		t.Errorf("set/x moved to %s", got)
	}
}

// TestLoopCommitsAnInterruptedIterationsLeftovers: a worktree left with
// uncommitted edits by an interrupted iteration, of a file main changed
// since, is committed before main is merged at the iteration boundary;
// the merge used to fail ("Your local changes … would be overwritten")
// and end every resumed run with an error.
func TestLoopCommitsAnInterruptedIterationsLeftovers(t *testing.T) {
	root, _ := replayRepo(t)
	writeFileT(t, filepath.Join(root, "greet.txt"), "hello\n1\n2\n3\n")
	gitT(t, root, "commit", "-q", "-am", "four lines")
	wt := rundir.New(root).Worktree("x")
	gitT(t, root, "worktree", "add", "-q", "-b", "set/x", wt, "main")
	writeFileT(t, filepath.Join(wt, "greet.txt"), "hello x\n1\n2\n3\n") // the interrupted iteration's edit
	// main moves on the same file, in the root checkout.
	writeFileT(t, filepath.Join(root, "other.txt"), "main moved\n")
	writeFileT(t, filepath.Join(root, "greet.txt"), "hello\n1\n2\n3 main\n")
	gitT(t, root, "add", "-A")
	gitT(t, root, "commit", "-q", "-m", "main moves greet.txt and adds other.txt")

	err := loopIn(t, root, wt, "exit 0", 2)
	if err != nil {
		t.Fatalf("resumed loop: %v", err)
	}
	if got := gitT(t, wt, "status", "--porcelain"); got != "" {
		t.Errorf("worktree left dirty:\n%s", got)
	}
	if got := gitT(t, wt, "log", "--format=%s", "main..HEAD"); !strings.Contains(got, "x: uncommitted work of interrupted iteration 3") {
		t.Errorf("the leftovers were not committed as iteration 3's work:\n%s", got)
	}
	if got := gitT(t, wt, "show", "HEAD:greet.txt"); got != "hello x\n1\n2\n3 main" {
		t.Errorf("greet.txt after the merge of main = %q", got)
	}
	if _, err := gitTErr(wt, "merge-base", "--is-ancestor", "main", "HEAD"); err != nil {
		t.Errorf("main was not merged into the branch")
	}
}

// fakeLoop runs Loop for change x with the claude or codex adapter
// running testdata/fake-agent.sh on stream, at most max iterations, and
// returns the result and the events.
func fakeLoop(t *testing.T, adapter, stream string, max int, extraEnv ...string) (LoopResult, []journal.Payload, string) {
	t.Helper()
	isolateGit(t)
	root, wt := loopRepo(t)
	a, err := New(config.Agent{Adapter: adapter, Argv: fakePrefix(t)}, root)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := a.(*Claude); ok {
		c.Euid = func() int { return 1000 }
	}
	f := newFake(t, stream, extraEnv...)
	var events []journal.Payload
	res, err := Loop(context.Background(), LoopInput{
		Adapter:  a,
		Prompt:   PromptInput{Project: &config.Project{}, Change: plan.Change{Name: "x"}},
		Layout:   rundir.New(root),
		Worktree: wt, MainBranch: "main", MaxIterations: max, Env: f.env, Steer: &silenceSteer{after: 500 * time.Millisecond},
		Emit: func(p journal.Payload) error {
			events = append(events, p)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, events, root
}

func iterations(events []journal.Payload) []journal.AgentIterationData {
	var its []journal.AgentIterationData
	for _, p := range events {
		if it, ok := p.(journal.AgentIterationData); ok {
			its = append(its, it)
		}
	}
	return its
}

// A model API failure is an "api-error" iteration with the provider's
// message, and the next prompt says so. What it does to the change is
// the sentinel's (the stdlib's api_error rule retries it with backoff,
// then fails the change): the loop alone only spends its iterations.
func TestLoopAPIError(t *testing.T) {
	for _, tt := range []struct{ adapter, stream, msg string }{
		{"claude", "claude-api-error.jsonl", `API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		{"codex", "codex-failed.jsonl", "stream disconnected before completion: connection refused"},
	} {
		t.Run(tt.adapter, func(t *testing.T) {
			res, events, root := fakeLoop(t, tt.adapter, tt.stream, 3, "FAKE_EXIT=1")
			if res.Ending != EndIterations || res.Iterations != 3 {
				t.Errorf("ending %s after %d iterations: %q", res.Ending, res.Iterations, res.Reason)
			}
			for _, it := range iterations(events) {
				if it.Result != "api-error" || it.Error != tt.msg || it.ExitCode != 1 {
					t.Errorf("iteration %d: result %q, exit %d, error %q", it.Iteration, it.Result, it.ExitCode, it.Error)
				}
			}
			prompt, err := os.ReadFile(filepath.Join(root, ".set", "changes", "x", "prompt-2.md"))
			if err != nil {
				t.Fatal(err)
			}
			if want := "The previous iteration stopped because the model API failed: " + tt.msg + ". Continue where it stopped."; !strings.Contains(string(prompt), want) || strings.Contains(string(prompt), "without any change") {
				t.Errorf("prompt-2:\n%s\nwant: %s", prompt, want)
			}
		})
	}
}

// Permission denials end the change at once with what to set.
func TestLoopPermissionDenials(t *testing.T) {
	res, events, _ := fakeLoop(t, "claude", "claude-denials.jsonl", 10)
	if res.Ending != EndAgentError || res.Iterations != 1 || !strings.HasPrefix(res.Reason, "claude was denied Write (1 permission denial) with permissions bypass") {
		t.Errorf("ending %s after %d iterations: %s", res.Ending, res.Iterations, res.Reason)
	}
	if its := iterations(events); len(its) != 1 || its[0].Result != "error" {
		t.Errorf("iterations %+v", its)
	}
}

// A success the agent reported is kept when its process then goes silent
// and is stopped for it; the first iteration records the permission mode.
func TestLoopSuccessThenStall(t *testing.T) {
	res, events, _ := fakeLoop(t, "claude", "claude-success.jsonl", 3, "FAKE_SLEEP=30", "FAKE_WRITE=work.txt")
	if res.Ending != EndDone || res.Iterations != 1 {
		t.Errorf("ending %s after %d iterations: %s", res.Ending, res.Iterations, res.Reason)
	}
	its := iterations(events)
	if len(its) != 1 || its[0].Result != "done" || its[0].Signal != "SIGTERM" || its[0].Tokens.Input != 1200 {
		t.Errorf("iterations %+v", its)
	}
	opened, _ := events[0].(journal.AgentSessionDecisionData)
	if opened.Permissions != "bypass (not running as root)" {
		t.Errorf("first session decision = %+v, want the permissions", events[0])
	}
}

// silenceSteer is a sentinel of one rule: an iteration silent for after
// is stopped, and the loop restarts it.
type silenceSteer struct {
	after time.Duration
	mu    sync.Mutex
	timer *time.Timer
	stop  *Stop
}

func (s *silenceSteer) Iteration(ctx context.Context, _ int) (context.Context, func()) {
	run, cancel := context.WithCancelCause(ctx)
	s.mu.Lock()
	s.timer = time.AfterFunc(s.after, func() {
		s.mu.Lock()
		s.stop = &Stop{Action: "restart", Rule: "silence", Reason: "no output"}
		s.mu.Unlock()
		cancel(s.stop)
	})
	s.mu.Unlock()
	return run, func() {
		s.mu.Lock()
		s.timer.Stop()
		s.mu.Unlock()
		cancel(nil)
	}
}

func (s *silenceSteer) Take() *Stop {
	s.mu.Lock()
	defer s.mu.Unlock()
	stop := s.stop
	s.stop = nil
	return stop
}

func (s *silenceSteer) Output() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil {
		s.timer.Reset(s.after)
	}
}

func (s *silenceSteer) Command(string) {}

// Each iteration records the branch's head after it: what its agent and
// the commit of its leftovers left, from which the dashboard diffs a
// round.
func TestLoopRecordsTheHead(t *testing.T) {
	root, wt := loopRepo(t)
	a, err := New(config.Agent{Adapter: "exec", Argv: []string{"sh", "-c", `echo "more {iteration}" >> greet.txt; exit 1`}}, root)
	if err != nil {
		t.Fatal(err)
	}
	var heads []string
	_, err = Loop(context.Background(), LoopInput{
		Adapter: a, Prompt: PromptInput{Project: &config.Project{}, Change: plan.Change{Name: "x"}},
		Layout: rundir.New(root), Worktree: wt, MainBranch: "main", MaxIterations: 2,
		Emit: func(p journal.Payload) error {
			if it, ok := p.(journal.AgentIterationData); ok {
				heads = append(heads, it.Head)
				if now := gitT(t, wt, "rev-parse", "HEAD"); it.Head != now {
					t.Errorf("iteration %d: head %q, the branch is at %q", it.Iteration, it.Head, now)
				}
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(heads) != 2 || heads[0] == heads[1] || heads[0] == "" {
		t.Errorf("heads %q: want two different commits", heads)
	}
}

package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/internal/modeltest"
)

// configErrAdapter fails every run with a model the endpoint does not
// serve, as claude and codex report it.
type configErrAdapter struct{ runs int }

func (a *configErrAdapter) Name() string { return "claude" }

func (a *configErrAdapter) Run(_ context.Context, req Request) (Result, error) {
	a.runs++
	return Result{ExitCode: 1}, llm.ModelNotServed(req.Model, "", "model: "+req.Model)
}

// A model the endpoint does not serve ends the loop after one iteration
// with an error naming the model and the field to change.
func TestLoopEndsOnAModelNotServed(t *testing.T) {
	root, wt := loopRepo(t)
	a := &configErrAdapter{}
	var its []journal.AgentIterationData
	res, err := Loop(context.Background(), LoopInput{
		Adapter: a, Prompt: PromptInput{Project: &config.Project{}, Change: plan.Change{Name: "x"}},
		Layout: rundir.New(root), Worktree: wt, MainBranch: "main", MaxIterations: 10,
		Model: "claude-opus-4-1", ModelField: "project.agent.models.implement (set.cue:9:22)",
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
	want := "the endpoint does not serve model claude-opus-4-1 (unknown or retired): model: claude-opus-4-1: set project.agent.models.implement (set.cue:9:22) to a model the endpoint serves"
	if res.Ending != EndAgentError || res.Reason != want || a.runs != 1 {
		t.Errorf("ending %s after %d runs: %q\nwant %s after 1: %q", res.Ending, a.runs, res.Reason, EndAgentError, want)
	}
	if len(its) != 1 || its[0].Result != "error" || its[0].Error != want {
		t.Errorf("iterations %+v", its)
	}
}

// realLoop runs one change's loop with the real CLI of adapter against
// srv, in a fresh repository, and returns the loop's result.
func realLoop(t *testing.T, adapter string, argv, env []string, model string, max int) (LoopResult, string) {
	t.Helper()
	isolateGit(t)
	root, wt := loopRepo(t)
	a, err := New(config.Agent{Adapter: adapter, Argv: argv}, root)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Loop(context.Background(), LoopInput{
		Adapter: a, Prompt: PromptInput{Project: &config.Project{}, Change: plan.Change{Name: "x"}},
		Layout: rundir.New(root), Worktree: wt, MainBranch: "main", MaxIterations: max,
		Model: model, Env: env, Emit: func(journal.Payload) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, wt
}

// The real Claude Code writes a file with its Write tool, as the script
// says, and the iteration is done; a model the endpoint does not serve
// ends the loop at once.
func TestRealClaudeIteration(t *testing.T) {
	cli := modeltest.ClaudeCLI(t)
	srv := modeltest.New(t)
	env := append(srv.ClaudeEnv(t), "IS_SANDBOX=1")
	srv.Add(modeltest.Step{Tools: []modeltest.ToolCall{{Name: "Write", Input: `{"file_path":"hello.txt","content":"hello\n"}`}}},
		modeltest.Step{Text: "Wrote hello.txt."})
	res, wt := realLoop(t, "claude", []string{cli}, env, "claude-sonnet-5-5", 1)
	if res.Ending != EndDone {
		t.Fatalf("ending %s: %s (server: %v)", res.Ending, res.Reason, srv.Err())
	}
	if b, err := os.ReadFile(filepath.Join(wt, "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("hello.txt: %q, %v", b, err)
	}

	srv.Add(modeltest.ModelNotFound(), modeltest.ModelNotFound())
	res, _ = realLoop(t, "claude", []string{cli}, env, "claude-opus-9-9", 5)
	if res.Ending != EndAgentError || res.Iterations != 1 ||
		!strings.HasPrefix(res.Reason, "the endpoint does not serve model claude-opus-9-9 (unknown or retired): There's an issue with the selected model") ||
		!strings.HasSuffix(res.Reason, ": set project.agent.models.implement to a model the endpoint serves") {
		t.Errorf("ending %s after %d iterations: %s", res.Ending, res.Iterations, res.Reason)
	}
}

// The real Codex applies a patch, as the script says, and the iteration
// is done; a model the endpoint does not serve ends the loop at once.
func TestRealCodexIteration(t *testing.T) {
	cli := modeltest.CodexCLI(t)
	srv := modeltest.New(t,
		modeltest.Step{Tools: []modeltest.ToolCall{{Name: "apply_patch", Patch: "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n"}}},
		modeltest.Step{Text: "Added hello.txt."})
	argv := append([]string{cli}, srv.CodexFlags()...)
	env := srv.CodexEnv(t)
	res, wt := realLoop(t, "codex", argv, env, "gpt-6.1-sol", 1)
	if res.Ending != EndDone {
		t.Fatalf("ending %s: %s (server: %v)", res.Ending, res.Reason, srv.Err())
	}
	if b, err := os.ReadFile(filepath.Join(wt, "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("hello.txt: %q, %v", b, err)
	}

	srv.Add(modeltest.ModelNotFound())
	res, _ = realLoop(t, "codex", argv, env, "gpt-4.5", 5)
	want := "the endpoint does not serve model gpt-4.5 (unknown or retired): The model `gpt-4.5` does not exist or you do not have access to it: set project.agent.models.implement to a model the endpoint serves"
	if res.Ending != EndAgentError || res.Iterations != 1 || res.Reason != want {
		t.Errorf("ending %s after %d iterations: %s", res.Ending, res.Iterations, res.Reason)
	}
}

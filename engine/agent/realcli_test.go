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
	return realLoopWith(t, config.Agent{Adapter: adapter, Argv: argv}, env, model, max)
}

// realLoopWith is realLoop with the agent configuration cfg.
func realLoopWith(t *testing.T, cfg config.Agent, env []string, model string, max int) (LoopResult, string) {
	t.Helper()
	res, wt, _ := realLoopEvents(t, cfg, env, model, max)
	return res, wt
}

// realLoopEvents is realLoopWith that also returns the iterations the
// loop recorded.
func realLoopEvents(t *testing.T, cfg config.Agent, env []string, model string, max int) (LoopResult, string, []journal.AgentIterationData) {
	t.Helper()
	var its []journal.AgentIterationData
	isolateGit(t)
	root, wt := loopRepo(t)
	a, err := New(cfg, root)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Loop(context.Background(), LoopInput{
		Adapter: a, Prompt: PromptInput{Project: &config.Project{}, Change: plan.Change{Name: "x"}},
		Layout: rundir.New(root), Worktree: wt, MainBranch: "main", MaxIterations: max,
		Model: model, Env: env, Emit: func(p journal.Payload) error {
			if it, ok := p.(journal.AgentIterationData); ok {
				its = append(its, it)
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, wt, its
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

// The real Codex commits its own work in the change's worktree, whose git
// directory lies outside the workspace: set adds the git directories as
// writable roots, on a new session (--add-dir) and on a resumed one (-c
// sandbox_workspace_write.writable_roots).
func TestRealCodexCommitsInItsWorktree(t *testing.T) {
	cli := modeltest.CodexCLI(t)
	commit := func(file, msg string) []modeltest.Step {
		return []modeltest.Step{
			{Tools: []modeltest.ToolCall{{Name: "apply_patch", Patch: "*** Begin Patch\n*** Add File: " + file + "\n+hello\n*** End Patch\n"}}},
			{Tools: []modeltest.ToolCall{{Name: "exec_command", Input: `{"cmd":"git add -A && git -c user.name=agent -c user.email=agent@example.com commit -qm '` + msg + `'"}`}}},
			{Text: "Committed."},
		}
	}
	// A new session commits at once; a resumed one, after an iteration
	// that did nothing.
	srv := modeltest.New(t, commit("a.txt", "agent commit")...)
	argv := append([]string{cli}, srv.CodexFlags()...)
	res, wt := realLoop(t, "codex", argv, srv.CodexEnv(t), "gpt-6.1-sol", 1)
	if got := gitT(t, wt, "log", "-1", "--format=%s"); res.Ending != EndDone || got != "agent commit" {
		t.Errorf("new session: ending %s (%s), last commit %q (server: %v)", res.Ending, res.Reason, got, srv.Err())
	}

	srv = modeltest.New(t, append([]modeltest.Step{{Text: "Looking around."}}, commit("b.txt", "agent commit on resume")...)...)
	argv = append([]string{cli}, srv.CodexFlags()...)
	res, wt = realLoop(t, "codex", argv, srv.CodexEnv(t), "gpt-6.1-sol", 2)
	if got := gitT(t, wt, "log", "-1", "--format=%s"); res.Ending != EndDone || res.Iterations != 2 || got != "agent commit on resume" {
		t.Errorf("resumed session: ending %s after %d iterations (%s), last commit %q (server: %v)", res.Ending, res.Iterations, res.Reason, got, srv.Err())
	}
}

// The real CLIs' model API failures are "api-error" iterations with the
// provider's message (what the sentinel's api_error rule retries and,
// in the end, fails the change on); the loop alone only spends its
// iterations on them.
func TestRealAPIErrors(t *testing.T) {
	check := func(t *testing.T, res LoopResult, its []journal.AgentIterationData, msg string) {
		t.Helper()
		if res.Ending != EndIterations || len(its) != 2 {
			t.Fatalf("ending %s after %d iterations: %s", res.Ending, len(its), res.Reason)
		}
		for _, it := range its {
			if it.Result != "api-error" || !strings.Contains(it.Error, msg) {
				t.Errorf("iteration %d: %s, %q; want api-error with %q", it.Iteration, it.Result, it.Error, msg)
			}
		}
		t.Logf("the provider's message: %s", its[0].Error)
	}
	t.Run("claude", func(t *testing.T) {
		cli := modeltest.ClaudeCLI(t)
		srv := modeltest.New(t)
		for range 8 {
			srv.Add(modeltest.Overloaded())
		}
		env := append(srv.ClaudeEnv(t), "IS_SANDBOX=1")
		res, _, its := realLoopEvents(t, config.Agent{Adapter: "claude", Argv: []string{cli}}, env, "claude-sonnet-5-5", 2)
		check(t, res, its, "Overloaded")
	})
	t.Run("codex", func(t *testing.T) {
		cli := modeltest.CodexCLI(t)
		srv := modeltest.New(t)
		for range 8 {
			srv.Add(modeltest.Step{Status: 500, ErrorType: "server_error", ErrorMessage: "the model broke"})
		}
		argv := append([]string{cli}, srv.CodexFlags()...)
		res, _, its := realLoopEvents(t, config.Agent{Adapter: "codex", Argv: argv}, srv.CodexEnv(t), "gpt-6.1-sol", 2)
		check(t, res, its, "")
	})
}

// With permissions "acceptEdits", the real Claude Code is denied Bash:
// the change ends at once with what to set.
func TestRealClaudePermissionDenied(t *testing.T) {
	cli := modeltest.ClaudeCLI(t)
	srv := modeltest.New(t,
		modeltest.Step{Tools: []modeltest.ToolCall{{Name: "Bash", Input: `{"command":"go test ./..."}`}}},
		modeltest.Step{Text: "I could not run the tests."})
	res, _ := realLoopWith(t, config.Agent{Adapter: "claude", Argv: []string{cli}, Permissions: "acceptEdits"}, srv.ClaudeEnv(t), "claude-sonnet-5-5", 5)
	want := "claude was denied Bash (1 permission denial) with permissions acceptEdits (set by agent.permissions; Bash is denied): "
	if res.Ending != EndAgentError || res.Iterations != 1 || !strings.HasPrefix(res.Reason, want) {
		t.Errorf("ending %s after %d iterations: %s\nwant %s after 1: %s…", res.Ending, res.Iterations, res.Reason, EndAgentError, want)
	}
}

// The real CLIs' streams report the shell commands the agent runs, as
// they start and end.
func TestRealCommands(t *testing.T) {
	run := func(t *testing.T, cfg config.Agent, env []string, model string) []string {
		t.Helper()
		a, err := New(cfg, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		var commands []string
		res, err := a.Run(context.Background(), Request{Worktree: t.TempDir(), Prompt: "go", Model: model, Env: env,
			OnCommand: func(c string) { commands = append(commands, c) }})
		if err != nil || !res.Done {
			t.Fatalf("result %+v, %v", res, err)
		}
		return commands
	}
	t.Run("claude", func(t *testing.T) {
		cli := modeltest.ClaudeCLI(t)
		srv := modeltest.New(t, modeltest.Step{Tools: []modeltest.ToolCall{{Name: "Bash", Input: `{"command":"echo hi"}`}}}, modeltest.Step{Text: "Done."})
		got := run(t, config.Agent{Adapter: "claude", Argv: []string{cli}}, append(srv.ClaudeEnv(t), "IS_SANDBOX=1"), "claude-sonnet-5-5")
		if strings.Join(got, "|") != "echo hi|" {
			t.Errorf("commands %q", got)
		}
	})
	t.Run("codex", func(t *testing.T) {
		cli := modeltest.CodexCLI(t)
		srv := modeltest.New(t, modeltest.Step{Tools: []modeltest.ToolCall{{Name: "exec_command", Input: `{"cmd":"echo hi"}`}}}, modeltest.Step{Text: "Done."})
		got := run(t, config.Agent{Adapter: "codex", Argv: append([]string{cli}, srv.CodexFlags()...)}, srv.CodexEnv(t), "gpt-6.1-sol")
		if len(got) != 2 || !strings.Contains(got[0], "echo hi") || got[1] != "" {
			t.Errorf("commands %q", got)
		}
	})
}

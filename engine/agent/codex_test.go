package agent

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/llm"
	"github.com/set-engine/set/engine/llm/usage"
)

const codexThread = "0199a213-81c0-7800-8aa1-bbab2a035a53"

func newCodex(t *testing.T) Adapter {
	t.Helper()
	a, err := New(config.Agent{Adapter: "codex", Argv: fakePrefix(t)}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestCodexTwoTurns(t *testing.T) {
	f := newFake(t, "codex-success.jsonl")
	req := f.request("implement add-links")
	req.Model = "gpt-5.5"
	res, err := newCodex(t).Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	equalArgs(t, f.args(t), []string{"exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write",
		"-m", "gpt-5.5", "implement add-links"})
	if !res.Done || res.SessionID != codexThread || res.ExitCode != 0 {
		t.Errorf("result = %+v", res)
	}
	want := []CallUsage{
		{Model: "gpt-5.5", Tokens: usage.Tokens{Input: 800, CacheRead: 200, Output: 100}},
		{Model: "gpt-5.5", Tokens: usage.Tokens{Input: 500, CacheRead: 1000, Output: 80}},
	}
	if len(res.Calls) != 2 || res.Calls[0] != want[0] || res.Calls[1] != want[1] {
		t.Errorf("calls = %+v, want %+v", res.Calls, want)
	}
	if res.Summary != "All done: a.go edited and tested." {
		t.Errorf("summary = %q", res.Summary)
	}
	if got := f.file(t, "stdin"); got != "devnull" {
		t.Errorf("stdin = %q, want /dev/null", got)
	}
	if got := f.file(t, "pwd"); got != f.worktree {
		t.Errorf("cwd = %q", got)
	}
}

// TestCodexResume: resume uses `exec resume` with the sandbox as a -c
// override, and the usage of the resumed thread continues from the last
// total seen for it, also by a new adapter of the same project (a
// restarted run).
func TestCodexResume(t *testing.T) {
	root := t.TempDir()
	newAt := func(root string) Adapter {
		a, err := New(config.Agent{Adapter: "codex", Argv: fakePrefix(t)}, root)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	resume := func(a Adapter) Result {
		t.Helper()
		f := newFake(t, "codex-resumed.jsonl")
		req := f.request("fix the test")
		req.SessionID = codexThread
		res, err := a.Run(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		equalArgs(t, f.args(t), []string{"exec", "resume", codexThread, "--json", "--skip-git-repo-check",
			"-c", `sandbox_mode="workspace-write"`, "fix the test"})
		return res
	}
	first := newFake(t, "codex-success.jsonl")
	if _, err := newAt(root).Run(context.Background(), first.request("go")); err != nil {
		t.Fatal(err)
	}
	res := resume(newAt(root))
	want := CallUsage{Tokens: usage.Tokens{Input: 200, CacheRead: 300, Output: 70}}
	if !res.Done || len(res.Calls) != 1 || res.Calls[0] != want {
		t.Errorf("result = %+v, want one call %+v", res, want)
	}

	// Another project has no previous total: the whole cumulative count.
	res = resume(newAt(t.TempDir()))
	want = CallUsage{Tokens: usage.Tokens{Input: 1500, CacheRead: 1500, Output: 250}}
	if len(res.Calls) != 1 || res.Calls[0] != want {
		t.Errorf("calls = %+v, want %+v", res.Calls, want)
	}
}

// TestCodexCountReset: a total below the remembered one is a new count.
func TestCodexCountReset(t *testing.T) {
	a := newCodex(t)
	for i := range 2 {
		f := newFake(t, "codex-success.jsonl")
		req := f.request("go")
		if i == 1 {
			req.SessionID = codexThread
		}
		res, err := a.Run(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Calls) != 2 || res.Calls[0].Tokens.Input != 800 {
			t.Errorf("run %d: calls = %+v", i, res.Calls)
		}
	}
}

func TestCodexTurnFailed(t *testing.T) {
	f := newFake(t, "codex-failed.jsonl", "FAKE_EXIT=1")
	res, err := newCodex(t).Run(context.Background(), f.request("go"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Done || res.ExitCode != 1 || res.SessionID != codexThread || len(res.Calls) != 0 {
		t.Errorf("result = %+v", res)
	}
	if res.Summary != "turn failed: stream disconnected before completion: connection refused" {
		t.Errorf("summary = %q", res.Summary)
	}
	if res.APIError != "stream disconnected before completion: connection refused" {
		t.Errorf("api error = %q", res.APIError)
	}
}

func TestCodexMalformed(t *testing.T) {
	f := newFake(t, "codex-malformed.jsonl")
	_, err := newCodex(t).Run(context.Background(), f.request("go"))
	want := `codex stream line 3: invalid JSON: {"type":"item.completed"`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err = %v, want %q…", err, want)
	}
}

// Error events and no turn are the provider failing; a stream with
// neither a turn nor an error is an error of the run.
func TestCodexNoTurn(t *testing.T) {
	f := newFake(t, "codex-error-only.jsonl", "FAKE_EXIT=1")
	res, err := newCodex(t).Run(context.Background(), f.request("go"))
	if err != nil || res.Done || res.APIError != "unexpected status 401 Unauthorized" {
		t.Fatalf("result = %+v, err = %v", res, err)
	}
	f = newFake(t, "codex-thread-only.jsonl", "FAKE_EXIT=1")
	_, err = newCodex(t).Run(context.Background(), f.request("go"))
	if want := "codex stream ended without turn.completed, turn.failed or an error (exit code 1)"; err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

// The commands the agent runs are reported as they start and end.
func TestCodexCommands(t *testing.T) {
	f := newFake(t, "codex-success.jsonl")
	req := f.request("go")
	var commands []string
	req.OnCommand = func(c string) { commands = append(commands, c) }
	if _, err := newCodex(t).Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(commands, "|"), "bash -lc ls|"; got != want {
		t.Errorf("commands = %q, want %q", got, want)
	}
}

// In a worktree, the sandbox's writable roots include the worktree's git
// directory and the repository's common one, so that the agent's own git
// commit works; agent.permissions "bypass" drops the sandbox.
func TestCodexWritableGitDirs(t *testing.T) {
	isolateGit(t)
	root, wt := loopRepo(t)
	gitDir, common := filepath.Join(root, ".git", "worktrees", "x"), filepath.Join(root, ".git")
	for _, tt := range []struct {
		permissions, session string
		want                 []string
	}{
		{"auto", "", []string{"exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write",
			"--add-dir", gitDir, "--add-dir", common, "go"}},
		{"acceptEdits", codexThread, []string{"exec", "resume", codexThread, "--json", "--skip-git-repo-check",
			"-c", `sandbox_mode="workspace-write"`, "-c", `sandbox_workspace_write.writable_roots=["` + gitDir + `","` + common + `"]`, "go"}},
		{"bypass", "", []string{"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "go"}},
		{"bypass", codexThread, []string{"exec", "resume", codexThread, "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "go"}},
	} {
		f := newFake(t, "codex-success.jsonl")
		req := f.request("go")
		req.Worktree, req.SessionID = wt, tt.session
		a := newCodex(t)
		a.(*Codex).Permissions = tt.permissions
		if _, err := a.Run(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		equalArgs(t, f.args(t), tt.want)
	}
}

func TestCodexModelNotFound(t *testing.T) {
	f := newFake(t, "codex-model-not-found.jsonl", "FAKE_EXIT=1")
	req := f.request("go")
	req.Model = "gpt-4.5"
	res, err := newCodex(t).Run(context.Background(), req)
	want := "the endpoint does not serve model gpt-4.5 (unknown or retired): The model `gpt-4.5` does not exist or you do not have access to it"
	var ce *llm.ConfigError
	if !errors.As(err, &ce) || err.Error() != want {
		t.Fatalf("err:\n got %v\nwant %s", err, want)
	}
	if res.Done || res.ExitCode != 1 {
		t.Errorf("result = %+v", res)
	}
}

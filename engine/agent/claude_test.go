package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/llm"
	"github.com/set-engine/set/engine/llm/usage"
)

const claudeSession = "11111111-2222-3333-4444-555555555555"

// testUIDs holds, per test, the effective uid newClaude's adapters report.
var testUIDs sync.Map

// asUser makes the test's adapters believe they run with effective uid uid.
func asUser(t *testing.T, uid int) {
	t.Helper()
	testUIDs.Store(t.Name(), uid)
	t.Cleanup(func() { testUIDs.Delete(t.Name()) })
}

func newClaude(t *testing.T) Adapter {
	t.Helper()
	a, err := New(config.Agent{Adapter: "claude", Argv: fakePrefix(t)}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if uid, ok := testUIDs.Load(t.Name()); ok {
		a.(*Claude).Euid = func() int { return uid.(int) }
	}
	return a
}

func TestClaudeSuccess(t *testing.T) {
	asUser(t, 1000)
	f := newFake(t, "claude-success.jsonl")
	req := f.request("# Change add-links\nimplement it")
	req.Model = "claude-sonnet-4-5"
	activity := 0
	req.OnActivity = func() { activity++ }
	res, err := newClaude(t).Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	equalArgs(t, f.args(t), []string{"-p", req.Prompt, "--output-format", "stream-json", "--verbose",
		"--model", "claude-sonnet-4-5", "--dangerously-skip-permissions"})
	if !res.Done || res.ExitCode != 0 {
		t.Errorf("result = %+v, want done", res)
	}
	if res.SessionID != claudeSession {
		t.Errorf("session = %q", res.SessionID)
	}
	want := CallUsage{
		Model:   "claude-sonnet-4-5-20250929",
		Tokens:  usage.Tokens{Input: 1200, Output: 250, CacheRead: 4000, CacheWrite: 300},
		CostUSD: 0.0421,
	}
	if len(res.Calls) != 1 || res.Calls[0] != want {
		t.Errorf("calls = %+v, want [%+v]", res.Calls, want)
	}
	if res.Summary != "Added a.go with the handler." {
		t.Errorf("summary = %q", res.Summary)
	}
	if res.Duration <= 0 {
		t.Error("duration not measured")
	}
	if activity == 0 {
		t.Error("OnActivity never called")
	}
	if got := f.file(t, "pwd"); got != f.worktree {
		t.Errorf("cwd = %q, want %q", got, f.worktree)
	}
	if got := f.file(t, "stdin"); got != "devnull" {
		t.Errorf("stdin = %q, want /dev/null", got)
	}
	env := f.file(t, "env")
	for _, kv := range []string{"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_AUTO_MEMORY=1", "FAKE_DIR="} {
		if !strings.Contains(env, kv) {
			t.Errorf("env lacks %s", kv)
		}
	}
	if log := req.Log.(*lockedBuffer).String(); !strings.Contains(log, `"type":"result"`) {
		t.Errorf("log lacks the stream: %q", log)
	}
}

func TestClaudeArgv(t *testing.T) {
	skip := []string{"-p", "go", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"}
	edits := []string{"-p", "go", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits"}
	tests := []struct {
		name        string
		uid         int
		sandbox     string // an environment entry
		permissions string // agent.permissions
		session     string
		model       string
		want        []string
	}{
		{"user", 1000, "", "", "", "", skip},
		{"root", 0, "", "", "", "", edits},
		{"root sandbox", 0, "IS_SANDBOX=1", "", "", "", skip},
		{"root sandbox yes", 0, "IS_SANDBOX=yes", "auto", "", "", edits},
		{"root bubblewrap", 0, "CLAUDE_CODE_BUBBLEWRAP=1", "auto", "", "", skip},
		{"user acceptEdits", 1000, "", "acceptEdits", "", "", edits},
		{"root sandbox bypass", 0, "IS_SANDBOX=1", "bypass", "", "", skip},
		{"resume", 1000, "", "", "sess-1", "opus", []string{"-p", "go", "--output-format", "stream-json", "--verbose",
			"--model", "opus", "--resume", "sess-1", "--dangerously-skip-permissions"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asUser(t, tt.uid)
			t.Setenv("IS_SANDBOX", "")
			t.Setenv("CLAUDE_CODE_BUBBLEWRAP", "")
			f := newFake(t, "claude-success.jsonl", tt.sandbox)
			req := f.request("go")
			req.SessionID, req.Model = tt.session, tt.model
			a := newClaude(t)
			a.(*Claude).Permissions = tt.permissions
			if _, err := a.Run(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			equalArgs(t, f.args(t), tt.want)
		})
	}
}

// "bypass" as root outside a sandbox is refused before claude runs, with
// what to set.
func TestClaudeBypassRefusedAsRoot(t *testing.T) {
	asUser(t, 0)
	t.Setenv("IS_SANDBOX", "")
	t.Setenv("CLAUDE_CODE_BUBBLEWRAP", "")
	f := newFake(t, "claude-success.jsonl")
	a := newClaude(t)
	a.(*Claude).Permissions = "bypass"
	_, err := a.Run(context.Background(), f.request("go"))
	var ce *llm.ConfigError
	want := `agent.permissions is "bypass", but claude refuses --dangerously-skip-permissions as root without IS_SANDBOX=1 (or CLAUDE_CODE_BUBBLEWRAP=1) in the agent's environment: set agent: env: IS_SANDBOX: "1" when this machine is a sandbox, or agent: permissions: "acceptEdits"`
	if !errors.As(err, &ce) || err.Error() != want {
		t.Fatalf("err = %v\nwant a ConfigError: %s", err, want)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "args")); err == nil {
		t.Error("claude ran")
	}
}

// ClaudePermissions says which mode is in force and why.
func TestClaudePermissions(t *testing.T) {
	for _, tt := range []struct {
		setting string
		euid    int
		env     []string
		want    string
	}{
		{"auto", 1000, nil, "bypass (not running as root)"},
		{"", 0, []string{"IS_SANDBOX=1"}, "bypass (running as root with IS_SANDBOX=1)"},
		{"auto", 0, []string{"CLAUDE_CODE_BUBBLEWRAP=1"}, "bypass (running as root with CLAUDE_CODE_BUBBLEWRAP=1)"},
		{"auto", 0, []string{"IS_SANDBOX=1", "IS_SANDBOX=0"}, `acceptEdits (running as root without IS_SANDBOX=1; Bash is denied: set agent: env: IS_SANDBOX: "1" in a sandbox, or agent: permissions: "acceptEdits" to accept it)`},
		{"acceptEdits", 1000, nil, "acceptEdits (set by agent.permissions; Bash is denied)"},
		{"bypass", 1000, nil, "bypass (set by agent.permissions)"},
	} {
		p, err := ClaudePermissions(tt.setting, tt.euid, tt.env)
		if err != nil || p.String() != tt.want {
			t.Errorf("ClaudePermissions(%q, %d, %q) = %s, %v\nwant %s", tt.setting, tt.euid, tt.env, p, err, tt.want)
		}
	}
}

// TestClaudeResumeCost: total_cost_usd of a resumed session covers the
// whole session; the CallUsage gets this run's part.
func TestClaudeResumeCost(t *testing.T) {
	root := t.TempDir()
	a, err := New(config.Agent{Adapter: "claude", Argv: fakePrefix(t)}, root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), newFake(t, "claude-success.jsonl").request("go")); err != nil {
		t.Fatal(err)
	}
	resume := func(a Adapter) CallUsage {
		t.Helper()
		req := newFake(t, "claude-resumed.jsonl").request("fix it")
		req.SessionID = claudeSession
		res, err := a.Run(context.Background(), req)
		if err != nil || len(res.Calls) != 1 || !res.Done {
			t.Fatalf("res = %+v, err = %v", res, err)
		}
		return res.Calls[0]
	}
	// A new adapter of the same project (a restarted run) knows the
	// session's previous total.
	b, _ := New(config.Agent{Adapter: "claude", Argv: fakePrefix(t)}, root)
	c := resume(b)
	if c.Tokens != (usage.Tokens{Input: 100, Output: 20, CacheRead: 880}) {
		t.Errorf("tokens = %+v", c.Tokens)
	}
	if d := c.CostUSD - (0.05 - 0.0421); d > 1e-12 || d < -1e-12 {
		t.Errorf("cost = %v, want 0.0079", c.CostUSD)
	}
	// Unknown session total: the session cost scaled by this run's tokens.
	other, _ := New(config.Agent{Adapter: "claude", Argv: fakePrefix(t)}, t.TempDir())
	c = resume(other)
	if want := 0.05 * 1000 / 6860; c.CostUSD-want > 1e-12 || want-c.CostUSD > 1e-12 {
		t.Errorf("cost = %v, want %v", c.CostUSD, want)
	}
}

func TestClaudeIsError(t *testing.T) {
	f := newFake(t, "claude-is-error.jsonl", "FAKE_EXIT=1")
	res, err := newClaude(t).Run(context.Background(), f.request("go"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Done || res.ExitCode != 1 {
		t.Errorf("result = %+v, want not done, exit 1", res)
	}
	if !strings.Contains(res.Summary, "API Error: 500") {
		t.Errorf("summary = %q", res.Summary)
	}
	if want := `API Error: 500 {"type":"error","error":{"type":"api_error","message":"Internal server error"}}`; res.APIError != want {
		t.Errorf("api error = %q, want %q", res.APIError, want)
	}
}

// An API failure, as Claude Code reports it (is_error, terminal_reason
// api_error, exit 1), is the provider's message, not an error of the run.
func TestClaudeAPIError(t *testing.T) {
	f := newFake(t, "claude-api-error.jsonl", "FAKE_EXIT=1")
	res, err := newClaude(t).Run(context.Background(), f.request("go"))
	if err != nil {
		t.Fatal(err)
	}
	want := `API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	if res.Done || res.ExitCode != 1 || res.Signal != "" || res.APIError != want {
		t.Errorf("result = %+v\nwant not done, exit 1, api error %s", res, want)
	}
}

// A Bash command that outlasts the tool timeout moves to the background:
// the run has two result events, the second one's usage covering only
// the calls since the first. Every token is counted; the outcome is the
// last result's; the commands are reported as they start and end.
func TestClaudeBackgroundTask(t *testing.T) {
	f := newFake(t, "claude-background.jsonl")
	req := f.request("go")
	var commands []string
	req.OnCommand = func(c string) { commands = append(commands, c) }
	res, err := newClaude(t).Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := CallUsage{
		Model:   "claude-sonnet-5-5",
		Tokens:  usage.Tokens{Input: 300 + 1200, Output: 80 + 300, CacheRead: 1000 + 5400, CacheWrite: 200 + 100},
		CostUSD: 0.0634, // total_cost_usd covers the session so far
	}
	if len(res.Calls) != 1 || res.Calls[0] != want {
		t.Errorf("calls = %+v, want [%+v]", res.Calls, want)
	}
	if !res.Done || res.Summary != "The tests pass: the change is done." || res.SessionID != claudeSession {
		t.Errorf("result = %+v", res)
	}
	if got, want := strings.Join(commands, "|"), "npm install||npm test|"; got != want {
		t.Errorf("commands = %q, want %q", got, want)
	}
}

// Costs reported per result (a last modelUsage that covers less than the
// results' summed usage) are added up.
func TestClaudeCostPerResult(t *testing.T) {
	var st claudeStream
	for i, line := range []string{
		`{"type":"result","subtype":"success","total_cost_usd":0.01,"usage":{"input_tokens":100,"output_tokens":10},"modelUsage":{"m":{"inputTokens":100,"outputTokens":10}}}`,
		`{"type":"result","subtype":"success","total_cost_usd":0.02,"usage":{"input_tokens":200,"output_tokens":20},"modelUsage":{"m":{"inputTokens":200,"outputTokens":20}}}`,
	} {
		if err := st.line(i+1, []byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	res := st.result(Request{}, nil)
	if c := res.Calls[0]; c.Tokens.Total() != 330 || c.CostUSD < 0.03-1e-12 || c.CostUSD > 0.03+1e-12 {
		t.Errorf("call = %+v, want 330 tokens, $0.03", c)
	}
}

// A success already reported is kept when the process then goes silent
// and is stopped (by the sentinel, or whoever cancels), with its calls.
func TestClaudeSuccessKept(t *testing.T) {
	f := newFake(t, "claude-success.jsonl", "FAKE_SLEEP=30")
	ctx, cancel := context.WithCancel(context.Background())
	req := f.request("go")
	req.OnActivity = sync.OnceFunc(func() { time.AfterFunc(300*time.Millisecond, cancel) })
	res, err := newClaude(t).Run(ctx, req)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if !res.Done || res.SessionID != claudeSession || res.Signal != "SIGTERM" || len(res.Calls) != 1 || res.Calls[0].Tokens.Input != 1200 {
		t.Errorf("cancelled after success: result = %+v", res)
	}
}

// Denials are a configuration error naming the fix: every iteration
// would meet them.
func TestClaudePermissionDenials(t *testing.T) {
	asUser(t, 0)
	t.Setenv("IS_SANDBOX", "")
	t.Setenv("CLAUDE_CODE_BUBBLEWRAP", "")
	f := newFake(t, "claude-denials.jsonl")
	res, err := newClaude(t).Run(context.Background(), f.request("go"))
	var ce *llm.ConfigError
	want := `claude was denied Write (1 permission denial) with permissions acceptEdits (running as root without IS_SANDBOX=1; Bash is denied): set agent: permissions: "auto" or "bypass" (as root, in a sandbox, with agent: env: IS_SANDBOX: "1"), or allow the tools with agent: argv: ["claude", "--allowedTools", "Write"]`
	if !errors.As(err, &ce) || err.Error() != want {
		t.Fatalf("err = %v\nwant a ConfigError: %s", err, want)
	}
	if res.Done || res.ExitCode != 0 {
		t.Errorf("result = %+v, want not done, exit 0", res)
	}
	if !strings.Contains(res.Summary, "permission denial") || !strings.Contains(res.Summary, "Write") {
		t.Errorf("summary = %q, want the denials", res.Summary)
	}
	if len(res.Calls) != 1 || res.Calls[0].Tokens.Input != 500 {
		t.Errorf("calls = %+v", res.Calls)
	}
}

func TestClaudeMalformedLine(t *testing.T) {
	f := newFake(t, "claude-malformed.jsonl")
	res, err := newClaude(t).Run(context.Background(), f.request("go"))
	want := "claude stream line 2: invalid JSON: Error: something printed this"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err = %v, want %q…", err, want)
	}
	if res.Done {
		t.Error("done despite the error")
	}
}

func TestClaudeNoResult(t *testing.T) {
	f := newFake(t, "claude-init-only.jsonl", "FAKE_EXIT=3")
	res, err := newClaude(t).Run(context.Background(), f.request("go"))
	if err == nil || !strings.Contains(err.Error(), "without a result") || !strings.Contains(err.Error(), "exit code 3") {
		t.Fatalf("err = %v", err)
	}
	if res.SessionID != claudeSession || res.Done {
		t.Errorf("result = %+v", res)
	}
}

func TestClaudeCancel(t *testing.T) {
	f := newFake(t, "claude-init-only.jsonl", "FAKE_SLEEP=30")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	res, err := newClaude(t).Run(ctx, f.request("go"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res.Done || res.ExitCode != -1 {
		t.Errorf("result = %+v", res)
	}
}

func TestClaudeCannotStart(t *testing.T) {
	a, err := New(config.Agent{Adapter: "claude", Argv: []string{"/no/such/claude"}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), Request{Worktree: t.TempDir(), Prompt: "go"}); err == nil {
		t.Fatal("no error for a missing binary")
	}
}

// A model the endpoint does not serve is a configuration error naming
// the model: no iteration can pass it.
func TestClaudeModelNotFound(t *testing.T) {
	f := newFake(t, "claude-model-not-found.jsonl", "FAKE_EXIT=1")
	req := f.request("go")
	req.Model = "claude-opus-4-1"
	res, err := newClaude(t).Run(context.Background(), req)
	var ce *llm.ConfigError
	if !errors.As(err, &ce) || ce.Model != "claude-opus-4-1" {
		t.Fatalf("err = %v, want a ConfigError about claude-opus-4-1", err)
	}
	if res.Done || res.ExitCode != 1 || res.SessionID != claudeSession {
		t.Errorf("result = %+v", res)
	}
}

// Claude Code's auto-memory is off in every iteration, also when the
// agent's environment (agent.env) turns it on: nothing machine-local
// carries between iterations or runs unseen.
func TestClaudeAutoMemoryOff(t *testing.T) {
	asUser(t, 1000)
	f := newFake(t, "claude-success.jsonl", "CLAUDE_CODE_DISABLE_AUTO_MEMORY=0")
	if _, err := newClaude(t).Run(context.Background(), f.request("go")); err != nil {
		t.Fatal(err)
	}
	env := "\n" + f.file(t, "env") + "\n"
	if !strings.Contains(env, "\nCLAUDE_CODE_DISABLE_AUTO_MEMORY=1\n") || strings.Contains(env, "\nCLAUDE_CODE_DISABLE_AUTO_MEMORY=0\n") {
		t.Errorf("env does not turn auto-memory off:%s", env)
	}
}

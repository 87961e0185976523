package llm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm/usage"
)

// fakeCLI is a directory of scripted runs of testdata/fake-cli.sh.
type fakeCLI struct {
	t   *testing.T
	dir string
}

func newFakeCLI(t *testing.T) *fakeCLI {
	return &fakeCLI{t: t, dir: t.TempDir()}
}

// run scripts run n: what it prints and its exit status.
func (f *fakeCLI) run(n int, out string, exit int) {
	f.t.Helper()
	must(f.t, os.WriteFile(filepath.Join(f.dir, fmt.Sprintf("out-%d", n)), []byte(out), 0o644))
	must(f.t, os.WriteFile(filepath.Join(f.dir, fmt.Sprintf("exit-%d", n)), []byte(fmt.Sprint(exit)), 0o644))
}

// args is the argv of run n, without the command.
func (f *fakeCLI) args(n int) []string {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, fmt.Sprintf("args-%d", n)))
	must(f.t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

func (f *fakeCLI) command() []string {
	p, err := filepath.Abs(filepath.Join("testdata", "fake-cli.sh"))
	must(f.t, err)
	return []string{"sh", p}
}

func (f *fakeCLI) client(rec *recorder, route ...Target) *Client {
	return New(Config{
		Routes: map[Role]Route{Plan: route}, Env: append(os.Environ(), "FAKE_DIR="+f.dir),
		ClaudeCommand: f.command(), CodexCommand: f.command(), Retries: -1, OnCall: rec.add,
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// claudeResult is a result line of `claude -p --output-format json`, as
// Claude Code 2.1.330 prints it (trimmed of fields set does not read).
func claudeResult(isError bool, status int, kind, text, structured string) string {
	so := ""
	if structured != "" {
		so = `,"structured_output":` + structured
	}
	apiErr := `"api_error_status":null`
	if status != 0 {
		apiErr = fmt.Sprintf(`"api_error_status":%d,"api_error_type":%q`, status, kind)
	}
	return fmt.Sprintf(`{"type":"result","subtype":"success","is_error":%v,%s,"result":%q%s,"session_id":"s1","total_cost_usd":0.0125,`+
		`"usage":{"input_tokens":100,"cache_creation_input_tokens":3,"cache_read_input_tokens":7,"output_tokens":20},`+
		`"modelUsage":{"claude-opus-5-5":{"inputTokens":100,"outputTokens":20,"costUSD":0.0125}},"permission_denials":[]}`+"\n",
		isError, apiErr, text, so)
}

func TestClaudeCLIFake(t *testing.T) {
	f := newFakeCLI(t)
	f.run(1, claudeResult(false, 0, "", `{"changes":["a"]}`, `{"changes":["a"]}`), 0)
	rec := &recorder{}
	c := f.client(rec, Target{Transport: TransportClaude, Model: "claude-opus-5-5"})
	ans, err := c.Ask(context.Background(), planRequest())
	if err != nil {
		t.Fatal(err)
	}
	if ans.Text != `{"changes":["a"]}` {
		t.Errorf("answer %q", ans.Text)
	}
	equalArgs(t, f.args(1), []string{"-p", "Plan the spec.", "--output-format", "json", "--model", "claude-opus-5-5",
		"--tools", "", "--no-session-persistence", "--system-prompt", "You plan.", "--json-schema", planSchema})
	want := []journal.LLMCallData{{Role: "plan", Model: "claude-opus-5-5", Transport: "claude", CostUSD: 0.0125,
		Tokens: usage.Tokens{Input: 100, Output: 20, CacheRead: 7, CacheWrite: 3}}}
	if got := rec.events(); !equalEvents(got, want) {
		t.Errorf("events:\n got %+v\nwant %+v", got, want)
	}
}

// Claude Code ends an API failure with is_error, the API's status and
// type, and exit status 1: a 529 falls back, a 404 not_found_error is a
// configuration error.
func TestClaudeCLIFakeErrors(t *testing.T) {
	f := newFakeCLI(t)
	f.run(1, claudeResult(true, 529, "overloaded_error", "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment.", ""), 1)
	f.run(2, claudeResult(true, 404, "not_found_error", "There's an issue with the selected model (claude-sonnet-5-5). It may not exist or you may not have access to it. Run --model to pick a different model.", ""), 1)
	f.run(3, claudeResult(false, 0, "", "{}", `{}`), 0)
	rec := &recorder{}
	c := f.client(rec,
		Target{Transport: TransportClaude, Model: "claude-opus-5-5"},
		Target{Transport: TransportClaude, Model: "claude-sonnet-5-5", Field: "project.agent.fallbacks.plan[0]"},
		Target{Transport: TransportClaude, Model: "claude-haiku-5-5"})
	_, err := c.Ask(context.Background(), planRequest())
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Model != "claude-sonnet-5-5" || ce.Field != "project.agent.fallbacks.plan[0]" {
		t.Fatalf("err = %v, want a ConfigError about claude-sonnet-5-5", err)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "args-3")); err == nil {
		t.Error("the model after a configuration error was asked")
	}
	ev := rec.events()
	if len(ev) != 2 || !strings.HasPrefix(ev[0].Error, "claude: API error 529 overloaded_error") {
		t.Errorf("events %+v", ev)
	}
}

// A run that gives no structured answer fails (it is not transient).
func TestClaudeCLIFakeNoStructuredOutput(t *testing.T) {
	f := newFakeCLI(t)
	f.run(1, claudeResult(false, 0, "", "I could not do it.", ""), 0)
	c := f.client(&recorder{}, Target{Transport: TransportClaude, Model: "m"})
	_, err := c.Ask(context.Background(), planRequest())
	if err == nil || err.Error() != "claude gave no structured answer: I could not do it." {
		t.Fatalf("err = %v", err)
	}
}

func TestCLIMissing(t *testing.T) {
	for _, transport := range []string{TransportClaude, TransportCodex} {
		c := New(Config{
			Routes:        map[Role]Route{Plan: {{Transport: transport, Model: "m"}, {Transport: TransportAnthropic, Model: "b"}}},
			ClaudeCommand: []string{"/no/such/claude"}, CodexCommand: []string{"/no/such/codex"},
			Env: []string{"ANTHROPIC_API_KEY=x", "ANTHROPIC_BASE_URL=http://127.0.0.1:9"},
		})
		_, err := c.Ask(context.Background(), planRequest())
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "the "+transport+" transport cannot run /no/such/"+transport+": cannot start") {
			t.Errorf("%s: err = %v", transport, err)
		}
	}
}

func codexStream(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

func TestCodexCLIFake(t *testing.T) {
	f := newFakeCLI(t)
	f.run(1, codexStream(
		`{"type":"thread.started","thread_id":"t1"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"{\"changes\":[\"a\"]}"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":107,"cached_input_tokens":7,"cache_write_input_tokens":0,"output_tokens":20,"reasoning_output_tokens":0}}`,
	), 0)
	rec := &recorder{}
	c := f.client(rec, Target{Transport: TransportCodex, Model: "gpt-6.1-sol"})
	ans, err := c.Ask(context.Background(), planRequest())
	if err != nil {
		t.Fatal(err)
	}
	if ans.Text != `{"changes":["a"]}` {
		t.Errorf("answer %q", ans.Text)
	}
	args := f.args(1)
	if len(args) != 11 || args[8] != "--output-schema" {
		t.Fatalf("argv %q", args)
	}
	equalArgs(t, append(args[:9:9], args[10]), []string{"exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only",
		"--ephemeral", "-m", "gpt-6.1-sol", "--output-schema", "You plan.\n\nPlan the spec."})
	schema, err := os.ReadFile(filepath.Join(f.dir, "schema-1"))
	if err != nil || string(schema) != planSchema {
		t.Errorf("schema file %q, %v", schema, err)
	}
	if _, err := os.Stat(args[9]); !os.IsNotExist(err) {
		t.Errorf("the schema file %s is left behind", args[9])
	}
	want := []journal.LLMCallData{{Role: "plan", Model: "gpt-6.1-sol", Transport: "codex", Tokens: usage.Tokens{Input: 100, Output: 20, CacheRead: 7}}}
	if got := rec.events(); !equalEvents(got, want) {
		t.Errorf("events:\n got %+v\nwant %+v", got, want)
	}
}

// Codex reports an API failure only by its message: its words for an
// overloaded endpoint fall back, a model the endpoint does not know is a
// configuration error.
func TestCodexCLIFakeErrors(t *testing.T) {
	failed := func(msg string) string {
		return codexStream(`{"type":"thread.started","thread_id":"t"}`, `{"type":"turn.started"}`,
			fmt.Sprintf(`{"type":"error","message":%q}`, msg), fmt.Sprintf(`{"type":"turn.failed","error":{"message":%q}}`, msg))
	}
	f := newFakeCLI(t)
	f.run(1, failed("We’re currently experiencing high demand, which may cause temporary errors."), 1)
	f.run(2, failed("The model `gpt-4.5` does not exist or you do not have access to it."), 1)
	rec := &recorder{}
	c := f.client(rec, Target{Transport: TransportCodex, Model: "gpt-6.1-sol"}, Target{Transport: TransportCodex, Model: "gpt-4.5", Field: "F"})
	_, err := c.Ask(context.Background(), planRequest())
	want := "the endpoint does not serve model gpt-4.5 (unknown or retired): The model `gpt-4.5` does not exist or you do not have access to it: set F to a model the endpoint serves"
	if err == nil || err.Error() != want {
		t.Fatalf("err:\n got %v\nwant %s", err, want)
	}
}

// A CLI that never answers is killed at the timeout and the next model
// asked.
func TestCLITimeout(t *testing.T) {
	dir := t.TempDir()
	slow := filepath.Join(dir, "slow.sh")
	must(t, os.WriteFile(slow, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755))
	f := newFakeCLI(t)
	f.run(1, claudeResult(false, 0, "", "{}", `{}`), 0)
	rec := &recorder{}
	c := New(Config{
		Routes: map[Role]Route{Plan: {{Transport: TransportCodex, Model: "slow"}, {Transport: TransportClaude, Model: "fast"}}},
		Env:    append(os.Environ(), "FAKE_DIR="+f.dir), CodexCommand: []string{slow}, ClaudeCommand: f.command(),
		Timeout: 300 * time.Millisecond, Retries: -1, OnCall: rec.add,
	})
	ans, err := c.Ask(context.Background(), planRequest())
	if err != nil {
		t.Fatal(err)
	}
	if ans.Call.Model != "claude-opus-5-5" || ans.Call.Transport != "claude" {
		t.Errorf("answered by %+v", ans.Call)
	}
	if ev := rec.events(); len(ev) != 2 || !strings.HasPrefix(ev[0].Error, "no answer within 300ms") {
		t.Errorf("events %+v", ev)
	}
}

func equalArgs(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("argv:\n got %q\nwant %q", got, want)
	}
}

func TestPromptArg(t *testing.T) {
	if p, _ := PromptArg("--help"); p != "\n--help" {
		t.Errorf("PromptArg(--help) = %q", p)
	}
	if _, err := PromptArg(strings.Repeat("x", maxArg+1)); err == nil {
		t.Error("no error for an oversized prompt")
	}
}

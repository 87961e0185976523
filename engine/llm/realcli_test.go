package llm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/llm/usage"
	"github.com/set-engine/set/internal/modeltest"
)

// The real CLIs, at the pinned versions, against the scripted endpoint
// (skipped when they are not installed, failing under CI=true).

func realClaude(t *testing.T, srv *modeltest.Server, rec *recorder, route ...Target) *Client {
	cli := modeltest.ClaudeCLI(t)
	return New(Config{
		Routes: map[Role]Route{Plan: route}, Env: srv.ClaudeEnv(t), Dir: t.TempDir(),
		ClaudeCommand: []string{cli}, Retries: -1, OnCall: rec.add,
	})
}

func realCodex(t *testing.T, srv *modeltest.Server, rec *recorder, route ...Target) *Client {
	cli := modeltest.CodexCLI(t)
	return New(Config{
		Routes: map[Role]Route{Plan: route}, Env: srv.CodexEnv(t), Dir: t.TempDir(),
		CodexCommand: append([]string{cli}, srv.CodexFlags()...), Retries: -1, OnCall: rec.add,
	})
}

func TestRealClaudeStructuredAnswer(t *testing.T) {
	srv := modeltest.New(t, modeltest.Answer(`{"changes":["add-links"]}`, modeltest.Usage{Input: 100, Output: 20, CacheRead: 7, CacheWrite: 3}))
	rec := &recorder{}
	c := realClaude(t, srv, rec, Target{Transport: TransportClaude, Model: "claude-sonnet-5-5"})
	ans, err := c.Ask(context.Background(), planRequest())
	if err != nil {
		t.Fatal(err)
	}
	if ans.Text != `{"changes":["add-links"]}` {
		t.Errorf("answer %q", ans.Text)
	}
	ev := rec.events()
	if len(ev) != 1 || ev[0].Model != "claude-sonnet-5-5" || ev[0].Tokens != (usage.Tokens{Input: 100, Output: 20, CacheRead: 7, CacheWrite: 3}) || ev[0].CostUSD <= 0 {
		t.Errorf("events %+v", ev)
	}
	// The instructions replace Claude Code's own, and its answer tool
	// carries the schema.
	body := string(srv.Requests()[0].Body)
	if !strings.Contains(body, "You plan.") || !strings.Contains(body, `"name":"StructuredOutput"`) || !strings.Contains(body, `"required":["changes"]`) {
		t.Errorf("request:\n%.3000s", body)
	}
	if err := srv.Err(); err != nil {
		t.Error(err)
	}
}

// Claude Code with CLAUDE_CODE_MAX_RETRIES=0 reports a 529 at once; the
// client falls back. A model the endpoint does not serve is a
// configuration error (Claude Code retries it once without streaming).
func TestRealClaudeErrors(t *testing.T) {
	srv := modeltest.New(t, modeltest.Overloaded(), modeltest.ModelNotFound(), modeltest.ModelNotFound())
	rec := &recorder{}
	c := realClaude(t, srv, rec,
		Target{Transport: TransportClaude, Model: "claude-opus-5-5"},
		Target{Transport: TransportClaude, Model: "claude-sonnet-5-5", Field: "project.agent.models.plan"})
	_, err := c.Ask(context.Background(), planRequest())
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Model != "claude-sonnet-5-5" {
		t.Fatalf("err = %v, want a ConfigError about claude-sonnet-5-5", err)
	}
	if !strings.HasSuffix(err.Error(), ": set project.agent.models.plan to a model the endpoint serves") {
		t.Errorf("err = %v", err)
	}
	if got := srv.Models(); len(got) < 2 || got[0] != "claude-opus-5-5" || got[1] != "claude-sonnet-5-5" {
		t.Errorf("models asked: %v", got)
	}
}

func TestRealCodexStructuredAnswer(t *testing.T) {
	srv := modeltest.New(t, modeltest.Answer(`{"changes":["add-links"]}`, modeltest.Usage{Input: 100, Output: 20, CacheRead: 7}))
	rec := &recorder{}
	c := realCodex(t, srv, rec, Target{Transport: TransportCodex, Model: "gpt-6.1-sol"})
	ans, err := c.Ask(context.Background(), planRequest())
	if err != nil {
		t.Fatal(err)
	}
	if ans.Text != `{"changes":["add-links"]}` {
		t.Errorf("answer %q", ans.Text)
	}
	ev := rec.events()
	if len(ev) != 1 || ev[0].Tokens != (usage.Tokens{Input: 100, Output: 20, CacheRead: 7}) {
		t.Errorf("events %+v", ev)
	}
	body := string(srv.Requests()[0].Body)
	if !strings.Contains(body, `"type":"json_schema"`) || !strings.Contains(body, `"required":["changes"]`) {
		t.Errorf("request:\n%.3000s", body)
	}
}

func TestRealCodexModelNotFound(t *testing.T) {
	srv := modeltest.New(t, modeltest.ModelNotFound())
	rec := &recorder{}
	c := realCodex(t, srv, rec, Target{Transport: TransportCodex, Model: "gpt-6.1-sol", Field: "project.agent.models.plan"})
	_, err := c.Ask(context.Background(), planRequest())
	want := "the endpoint does not serve model gpt-6.1-sol (unknown or retired): The model `gpt-6.1-sol` does not exist or you do not have access to it: set project.agent.models.plan to a model the endpoint serves"
	if err == nil || err.Error() != want {
		t.Fatalf("err:\n got %v\nwant %s", err, want)
	}
}

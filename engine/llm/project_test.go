package llm

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/set-engine/set/engine/config"
)

// A project's roles route to agent.models.<role> on the agent's CLI (with
// its argv) or on agent.transport, then to agent.fallbacks.<role>, on the
// role's transport or on the one a fallback names.
func TestForProjectRoutes(t *testing.T) {
	p := &config.Project{Agent: config.Agent{
		Adapter: "claude", Argv: []string{"/opt/claude", "--debug"},
		Models:    config.Models{Implement: "i", Plan: "p1", Review: "r1"},
		Fallbacks: map[string][]string{"plan": {"p2", "openai:gpt-x"}},
		Env:       map[string]string{"SET_TEST_VAR": "yes"},
	}}
	cfg := ForProject(p, "/repo")
	want := Route{
		{Transport: "claude", Model: "p1", Field: "project.agent.models.plan"},
		{Transport: "claude", Model: "p2", Field: "project.agent.fallbacks.plan"},
		{Transport: "openai", Model: "gpt-x", Field: "project.agent.fallbacks.plan"},
	}
	if got := cfg.Routes[Plan]; !reflect.DeepEqual(got, want) {
		t.Errorf("plan route %+v\nwant %+v", got, want)
	}
	if got := cfg.Routes[Review]; len(got) != 1 || got[0].Model != "r1" {
		t.Errorf("review route %+v", got)
	}
	if !slices.Equal(cfg.ClaudeCommand, p.Agent.Argv) || cfg.CodexCommand != nil || cfg.Dir != "/repo" {
		t.Errorf("commands %q %q, dir %q", cfg.ClaudeCommand, cfg.CodexCommand, cfg.Dir)
	}
	if !slices.Contains(cfg.Env, "SET_TEST_VAR=yes") {
		t.Error("agent.env is not in the environment")
	}

	p.Agent.Transport = "anthropic"
	if got := ForProject(p, "/repo").Routes[Plan][1].Transport; got != "anthropic" {
		t.Errorf("a fallback without a transport uses %s, want the role's (anthropic)", got)
	}
}

// Asking a role that has no model, or whose agent has no CLI and no
// transport is set, is a configuration error that names the field to set.
func TestForProjectUnrouted(t *testing.T) {
	ask := func(a config.Agent, role Role) error {
		_, err := New(ForProject(&config.Project{Agent: a}, t.TempDir())).Ask(context.Background(), Request{Role: role, Prompt: "x"})
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Fatalf("%v: not a ConfigError", err)
		}
		return err
	}
	err := ask(config.Agent{Adapter: "claude", Models: config.Models{Plan: "p"}}, Review)
	if want := "no model is configured for the review role: set project.agent.models.review"; err.Error() != want {
		t.Errorf("got  %s\nwant %s", err, want)
	}
	err = ask(config.Agent{Adapter: "exec", Models: config.Models{Plan: "p"}}, Plan)
	if want := "the plan role has no transport: an exec agent has no CLI of its own; set project.agent.transport to claude, codex, anthropic or openai"; err.Error() != want {
		t.Errorf("got  %s\nwant %s", err, want)
	}
}

package llm

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/config"
)

// ProjectRoles are the roles a project configures under agent.models,
// agent.transport and agent.fallbacks.
var ProjectRoles = []Role{Plan, Review, Verify}

// ForProject is the Config of the model roles of p, a project rooted at
// root: each role's route is agent.models.<role> on the role's transport,
// then agent.fallbacks.<role> in order. The transport is agent.transport,
// else the agent's own CLI for a claude or codex agent. The CLI
// transports run agent.argv when the agent is that CLI (so a pinned or
// wrapped CLI is the one asked), in root, with the process's environment
// and agent.env. OnCall is left to the caller.
//
// A role without a model, or without a transport, gets no route: asking
// it is a ConfigError that names the field to set.
func ForProject(p *config.Project, root string) Config {
	a := p.Agent
	cfg := Config{Routes: map[Role]Route{}, Dir: root, Env: os.Environ()}
	for _, k := range slices.Sorted(maps.Keys(a.Env)) {
		cfg.Env = append(cfg.Env, k+"="+a.Env[k])
	}
	switch a.Adapter {
	case TransportClaude:
		cfg.ClaudeCommand = slices.Clone(a.Argv)
	case TransportCodex:
		cfg.CodexCommand = slices.Clone(a.Argv)
	}
	transport := RoleTransport(a)
	for _, role := range ProjectRoles {
		model := a.Models.Of(string(role))
		if model == "" || transport == "" {
			continue
		}
		route := Route{{Transport: transport, Model: model, Field: p.FieldName("agent", "models", string(role))}}
		fallbacks := p.FieldName("agent", "fallbacks", string(role))
		for _, f := range a.Fallbacks[string(role)] {
			t := Target{Transport: transport, Model: f, Field: fallbacks}
			if tr, m, ok := strings.Cut(f, ":"); ok {
				t.Transport, t.Model = tr, m
			}
			route = append(route, t)
		}
		cfg.Routes[role] = route
	}
	cfg.Unrouted = func(role Role) *ConfigError {
		switch {
		case a.Models.Of(string(role)) == "":
			return &ConfigError{Reason: fmt.Sprintf("no model is configured for the %s role: set %s", role, p.FieldName("agent", "models", string(role)))}
		default:
			return &ConfigError{Reason: fmt.Sprintf("the %s role has no transport: a%s %s agent has no CLI of its own; set %s to claude, codex, anthropic or openai",
				role, article(a.Adapter), a.Adapter, p.FieldName("agent", "transport"))}
		}
	}
	return cfg
}

// RoleTransport is the transport of a's plan, review and verify roles:
// agent.transport, else the agent's own CLI for a claude or codex agent,
// else "".
func RoleTransport(a config.Agent) string {
	if a.Transport != "" {
		return a.Transport
	}
	if a.Adapter == TransportClaude || a.Adapter == TransportCodex {
		return a.Adapter
	}
	return ""
}

func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "n"
	}
	return ""
}

package main

import (
	"cmp"
	"fmt"
	"os/exec"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/config/decode"
	"github.com/set-engine/set/engine/llm"
	"github.com/set-engine/set/engine/load"
)

// modelUse is one configured model: the role it serves, the set.cue
// path that names it (below project), the adapter that runs it and the
// CLI program it runs through ("" for an API transport).
type modelUse struct {
	role, model, adapter, program string
	path                          []string
}

// modelChecks reports the model configured for each role of the
// project, and warns about one that the pinned CLIs' model tables
// (stdlib.modelTables) mark deprecated, retired or superseded, or that
// a CLI listing all its models does not know: the endpoint would reject
// it, or soon will. Only the claude and codex agents take a model. A
// model whose CLI is not on PATH is not called ok: doctor says it could
// not check it (the agent's own check fails).
func modelChecks(ws *workspace) []check {
	var uses []modelUse
	a := ws.cfg.Agent
	// program is the CLI that runs adapter's models: the agent's own
	// program for its adapter.
	program := func(adapter string) string {
		if adapter == a.Adapter {
			return agentProgram(a)
		}
		return adapter
	}
	if a.Adapter == "claude" || a.Adapter == "codex" {
		if a.Models.Implement != "" {
			uses = append(uses, modelUse{"implement", a.Models.Implement, a.Adapter, program(a.Adapter), []string{"agent", "models", "implement"}})
		}
	}
	if transport := llm.RoleTransport(a); transport != "" {
		// The API transports reach the models of their vendor's CLI
		// without running it; the CLI transports run it.
		table := map[string]string{llm.TransportAnthropic: "claude", llm.TransportOpenAI: "codex"}[transport]
		via := ""
		if table == "" {
			via = program(transport)
		}
		for _, role := range llm.ProjectRoles {
			if m := a.Models.Of(string(role)); m != "" {
				uses = append(uses, modelUse{string(role), m, cmp.Or(table, transport), via, []string{"agent", "models", string(role)}})
			}
		}
	}
	if ws.cfg.Plan != nil {
		for _, name := range sortedNames(ws.cfg.Plan.Changes) {
			c := ws.cfg.Plan.Changes[name]
			adapter := a.Adapter
			if c.Agent != "" {
				adapter = c.Agent
			}
			if c.Model != "" && (adapter == "claude" || adapter == "codex") {
				uses = append(uses, modelUse{"implement (change " + name + ")", c.Model, adapter, program(adapter), []string{"plan", "changes", name, "model"}})
			}
		}
	}
	if len(uses) == 0 {
		return nil
	}
	tables, err := decode.ModelTables(load.Options{})
	if err != nil {
		return []check{{"models", statusWarn, "cannot read the model tables of the embedded stdlib: " + err.Error()}}
	}
	out := make([]check, 0, len(uses))
	for _, u := range uses {
		if u.program != "" {
			if _, err := exec.LookPath(u.program); err != nil {
				out = append(out, check{"models", statusWarn, fmt.Sprintf("%s: %s (%s) not checked: %s is not on PATH", u.role, u.model, u.adapter, u.program)})
				continue
			}
		}
		out = append(out, modelCheck(ws.cfg, tables, u))
	}
	return out
}

// modelCheck is the line of one configured model.
func modelCheck(cfg *config.Project, tables config.ModelTables, u modelUse) check {
	field := cfg.FieldName(u.path...)
	name, st, listed := tables.Lookup(u.adapter, u.model)
	table := tables[name]
	fix := func(to string) string {
		if to == "" {
			return "; set " + field + " to a current model"
		}
		return "; set " + field + " to " + to
	}
	switch {
	case !listed && tables[u.adapter].ListsAll:
		own := tables[u.adapter]
		return check{"models", statusWarn, fmt.Sprintf("%s: %s is not in the model list of %s%s",
			u.role, u.model, own.CLI, fix(own.Current["default"]))}
	case !listed || st.Status == config.ModelCurrent:
		return check{"models", statusOK, fmt.Sprintf("%s: %s (%s)", u.role, u.model, u.adapter)}
	case st.Status == config.ModelRetired:
		return check{"models", statusWarn, fmt.Sprintf("%s: %s was retired on %s (model table of %s)%s",
			u.role, u.model, st.Date, table.CLI, fix(st.Use))}
	case st.Status == config.ModelDeprecated:
		return check{"models", statusWarn, fmt.Sprintf("%s: %s is deprecated and retires on %s (model table of %s)%s",
			u.role, u.model, st.Date, table.CLI, fix(st.Use))}
	default: // superseded
		return check{"models", statusWarn, fmt.Sprintf("%s: %s is superseded by %s (model table of %s)%s",
			u.role, u.model, st.Use, table.CLI, fix(st.Use))}
	}
}

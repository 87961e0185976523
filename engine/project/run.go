package project

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/agent"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/gate"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/llm"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/runner"
	"github.com/set-engine/set/engine/runner/dagger"
	"github.com/set-engine/set/engine/runner/host"
	"github.com/set-engine/set/engine/state"
)

// SavedPlan reads the plan saved at path (shown names it in messages) and
// refuses it when its inputs changed since, compared with now, the
// fingerprint of the current inputs; unless the journal shows a run of
// exactly that plan to continue (that run moved git HEAD, folded into
// main's living specs and archived change folders itself: plan.ByRun). No plan is made to compare: a planner's model is
// not asked again.
func (p *Project) SavedPlan(ctx context.Context, path, shown string, now plan.Fingerprint) (*plan.Plan, error) {
	saved, err := plan.Read(path)
	if err != nil {
		return nil, err
	}
	changed := saved.Fingerprint.Changes(now)
	byRun := !slices.ContainsFunc(changed, func(c string) bool { return !plan.ByRun(c) })
	if len(changed) > 0 && byRun {
		st, err := state.Read(rundir.New(p.Root).Dir())
		if err == nil && st.Fingerprint == saved.Fingerprint.Sum {
			changed = nil
		}
	}
	if len(changed) > 0 {
		return nil, fmt.Errorf("the plan in %s is stale: %s since it was made; run `setctl plan --out %s` again",
			shown, strings.Join(changed, "; "), shown)
	}
	if err := plan.Validate(saved, plan.Limits{MaxRequirementsPerChange: p.Config.Planner.MaxRequirementsPerChange}); err != nil {
		return nil, err
	}
	return saved, nil
}

// Agents makes the project's agent and the agents that changes of pl ask
// for instead (plan.changes.X.agent), keyed by adapter, with the project
// agent's env and models. An exec or replay agent needs its argv or
// recordings, which only the project's agent configures.
func (p *Project) Agents(pl *plan.Plan) (agent.Adapter, map[string]agent.Adapter, error) {
	adapter, err := agent.New(p.Config.Agent, p.Root)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]agent.Adapter{}
	for _, c := range pl.Changes {
		if c.Agent == "" || c.Agent == p.Config.Agent.Adapter || out[c.Agent] != nil {
			continue
		}
		a, err := agent.New(config.Agent{Adapter: c.Agent, Env: p.Config.Agent.Env, Models: p.Config.Agent.Models, Permissions: p.Config.Agent.Permissions}, p.Root)
		if err != nil {
			return nil, nil, fmt.Errorf("change %s asks for the %s agent: %w", c.Name, c.Agent, err)
		}
		out[c.Agent] = a
	}
	return adapter, out, nil
}

// Runners makes the runners the gates and regenerations of g use, and a
// function that releases them. For dagger it first proves, within
// dagger.ProbeTimeout, that a Dagger engine answers (a session opened
// with it tells its version): no engine is a run error before anything
// starts, never a gate failure sent to an agent. With runner.dagger.hosts
// it proves each of those engines instead, and the gates run on those
// that answer (daggerPool). The versions, any
// mismatch between them, and a session that had to be killed at the end
// go to the Dagger log (.set/logs/dagger.log). getenv reads the Dagger
// variables.
func (p *Project) Runners(ctx context.Context, g *graph.Graph, getenv func(string) string) (map[string]runner.Runner, func(), error) {
	runners := map[string]runner.Runner{config.RunnerHost: host.New()}
	closeAll := func() {}
	if !UsesRunner(p.Config, g, config.RunnerDagger) {
		return runners, closeAll, nil
	}
	if d := p.Config.Runner.Dagger; d != nil && len(d.Hosts) > 0 {
		return p.daggerPool(ctx, getenv, runners)
	}
	eng, err := dagger.Preflight(ctx, getenv)
	if err != nil {
		return nil, nil, err
	}
	log, err := p.daggerLog()
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(log, "setctl: %s answers: %s\n", eng, eng.Versions())
	for _, w := range eng.Warnings() {
		fmt.Fprintf(log, "setctl: warning: %s\n", w)
	}
	r := dagger.New(p.Config.Runner.Dagger, p.Root, eng.String(), dagger.Connector(eng, log))
	runners[config.RunnerDagger] = r
	return runners, closeDagger(r, log, "closing the Dagger session"), nil
}

// daggerPool is the dagger runner over the engines of runner.dagger.hosts
// (dagger.NewPool), once at least one of them answers; the Dagger log
// names each engine and, for each gate, the engine it ran on.
func (p *Project) daggerPool(ctx context.Context, getenv func(string) string, runners map[string]runner.Runner) (map[string]runner.Runner, func(), error) {
	log, err := p.daggerLog()
	if err != nil {
		return nil, nil, err
	}
	engines, err := dagger.PoolEngines(ctx, p.Config.Runner.Dagger.Hosts, getenv, log)
	if err != nil {
		log.Close()
		return nil, nil, err
	}
	r := dagger.NewPool(p.Config.Runner.Dagger, p.Root, engines, log)
	runners[config.RunnerDagger] = r
	return runners, closeDagger(r, log, "closing the Dagger sessions"), nil
}

// closeDagger is the function that releases the dagger runner r: it
// closes r, writing an error to the Dagger log after what ("closing the
// Dagger session"), then the log.
func closeDagger(r runner.Runner, log io.WriteCloser, what string) func() {
	return func() {
		if err := r.(io.Closer).Close(); err != nil {
			fmt.Fprintf(log, "setctl: %s: %v\n", what, err)
		}
		log.Close()
	}
}

// daggerLog opens the Dagger log (.set/logs/dagger.log) for appending.
func (p *Project) daggerLog() (*os.File, error) {
	logPath := rundir.New(p.Root).DaggerLog()
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
}

// UsesRunner reports whether a gate of the graph, or a regeneration of a
// generated file, runs on the named runner.
func UsesRunner(cfg *config.Project, g *graph.Graph, name string) bool {
	for _, c := range g.Changes {
		for _, s := range append(append([]graph.GateStep{}, c.Verify...), c.Integration...) {
			if s.Kind == config.KindExec && s.Runner == name {
				return true
			}
		}
	}
	for _, gen := range cfg.Generated {
		if r := gen.Runner; r == name || (r == "" && cfg.Runner.Kind == name) {
			return true
		}
	}
	return false
}

// Models is the configuration of the model calls of the model-graded
// gates (review, spec_verify graded by "llm") that g runs: the project's
// model roles (llm.ForProject). It is nil when g runs none, so that a run
// without such gates never reaches for a model.
func (p *Project) Models(g *graph.Graph) *llm.Config {
	if len(gradedSteps(p.Config, g)) == 0 {
		return nil
	}
	cfg := llm.ForProject(p.Config, p.Root)
	return &cfg
}

// checkModels refuses a graph that runs a model-graded gate whose role
// has no model to ask (no model configured, or no transport to reach it),
// with an error at the stack entry that runs it, or at the gate when only
// the project's own files declare that.
func checkModels(cfg *config.Project, g *graph.Graph, root string) error {
	steps := gradedSteps(cfg, g)
	if len(steps) == 0 {
		return nil
	}
	routes := llm.ForProject(cfg, root)
	var errs []error
	for _, s := range steps {
		role := gate.Role(cfg.Gates[s.gate])
		if len(routes.Routes[role]) > 0 {
			continue
		}
		path := s.entry
		if !cfg.Declares(path...) && cfg.Declares("gates", s.gate) {
			path = []string{"gates", s.gate}
		}
		errs = append(errs, cfg.FieldError(path, "the %s gate asks the %s model, and %v", s.gate, role, routes.Unrouted(role)))
	}
	return errors.Join(errs...)
}

// gradedStep is a model-graded gate the graph runs, once per stack entry.
type gradedStep struct {
	gate string
	// entry is the stack entry's path below `project`: stacks.TYPE.GATE
	// or integration.GATE.
	entry []string
}

// gradedSteps are the model-graded gates g runs, each stack entry once, in
// the order of g's changes.
func gradedSteps(cfg *config.Project, g *graph.Graph) []gradedStep {
	var out []gradedStep
	seen := map[string]bool{}
	add := func(step graph.GateStep, entry ...string) {
		key := strings.Join(entry, ".")
		if cfg.Gates[step.Gate].Graded() && !seen[key] {
			seen[key] = true
			out = append(out, gradedStep{gate: step.Gate, entry: entry})
		}
	}
	for _, c := range g.Changes {
		for _, s := range c.Verify {
			add(s, "stacks", c.Type, s.Gate)
		}
		for _, s := range c.Integration {
			add(s, "integration", s.Gate)
		}
	}
	return out
}

package graph

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/set-engine/set/engine/cond"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/plan"
)

// Stages of a change that run gate stacks.
const (
	StageVerify      = "verify"
	StageIntegration = "integration"
)

// GateStep is one gate as it runs for one change: the stack entry merged
// with the gate's own defaults and the project's. Its Mode is never "skip"
// (skipped gates are SkippedGate values instead).
type GateStep struct {
	Gate  string `json:"gate"`
	Kind  string `json:"kind"`
	Mode  string `json:"mode"`
	Order int    `json:"order"`
	// Runner is where the gate runs ("host" or "dagger"); never empty when
	// the project names a runner kind.
	Runner string `json:"runner"`
	// Condition is the gate's `when` when it can only be decided at run
	// time (it reads the change's files); the gate then runs only where it
	// holds. Empty means the gate always runs.
	Condition string `json:"condition,omitempty"`
	// When is the gate's `when` as written, whether it was decided at plan
	// time (and held) or is left to run time; for display.
	When string `json:"when,omitempty"`
	// Timeout bounds one run of the gate: the gate's own timeout, else the
	// project's budgets.gateTimeout.
	Timeout config.Duration `json:"timeout"`
}

// SkippedGate is a gate of a stack that does not run for a change, and why.
type SkippedGate struct {
	Gate   string `json:"gate"`
	Reason string `json:"reason"`
	// Stage is StageVerify or StageIntegration when the gate is recorded in
	// a ChangeGraph; ResolveStack leaves it empty.
	Stage string `json:"stage,omitempty"`
}

// ResolveStack decides which gates of stack run for change, in which mode,
// order and runner. Steps are sorted by (order, name) — the order in which
// they run, fast gates first — and skipped gates by name. A gate whose
// `when` reads run-time facts is included with its Condition set; a `when`
// decidable at plan time is evaluated now and the gate is skipped when it
// does not hold. An unknown gate name or a bad condition is an error.
func ResolveStack(cfg *config.Project, stack config.Stack, change *plan.Change) (steps []GateStep, skipped []SkippedGate, err error) {
	for _, name := range slices.Sorted(maps.Keys(stack)) {
		entry := stack[name]
		gate, ok := cfg.Gates[name]
		if !ok {
			return nil, nil, fmt.Errorf("stack names unknown gate %q", name)
		}
		mode := cmp.Or(entry.Mode, gate.Mode, config.ModeRun)
		if mode == config.ModeSkip {
			skipped = append(skipped, SkippedGate{Gate: name, Reason: `mode "skip"`})
			continue
		}
		order := gate.Order
		if entry.Order != nil {
			order = *entry.Order
		}
		timeout := gate.Timeout
		if timeout == 0 {
			timeout = cfg.Budgets.GateTimeout
		}
		step := GateStep{
			Gate:    name,
			Kind:    cmp.Or(gate.Kind, config.KindExec),
			Mode:    mode,
			Order:   order,
			Runner:  cmp.Or(gate.Runner, cfg.Runner.Kind),
			Timeout: timeout,
		}
		if gate.When != "" {
			c, err := cond.CompileGate(gate.When)
			if err != nil {
				return nil, nil, fmt.Errorf("gate %q: %w", name, err)
			}
			step.When = gate.When
			if c.RunTime() {
				step.Condition = gate.When
			} else {
				hold, err := c.Eval(cond.GateEnv{Change: *change, UserFolder: cfg.Planner.FromFolders()})
				if err != nil {
					return nil, nil, fmt.Errorf("gate %q: %w", name, err)
				}
				if !hold {
					skipped = append(skipped, SkippedGate{
						Gate:   name,
						Reason: fmt.Sprintf("when: %s is false", gate.When),
					})
					continue
				}
			}
		}
		steps = append(steps, step)
	}
	slices.SortStableFunc(steps, func(a, b GateStep) int {
		return cmp.Or(cmp.Compare(a.Order, b.Order), cmp.Compare(a.Gate, b.Gate))
	})
	// skipped is already sorted by name: the stack was walked in name order.
	return steps, skipped, nil
}

// Package cond compiles the expr-lang conditions of set.cue (`when` on
// gates and on sentinel rules) against typed environments, so that a misspelled
// name is an error when the configuration is checked, not when a run
// reaches the gate.
package cond

import (
	"reflect"
	"slices"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"

	"github.com/set-engine/set/engine/config"
)

// The environments below are the whole vocabulary of conditions: every
// field carries its expr name, a field known only at run time is tagged
// known:"run", and `setctl help conditions` is generated from them (with
// the docs of names.go), so the help cannot drift from what compiles. A
// condition sees a change as config.Change, the engine's one change type,
// through its expr tags; every field of it is known when the plan is made.

// GateEnv is the environment of a gate's `when`.
type GateEnv struct {
	Change config.Change `expr:"change"`
	// UserFolder says the change implements an OpenSpec change folder the
	// project's people wrote (planner: strategy: "openspec"), which
	// spec_verify holds it to whether it has requirements or not (a folder
	// with skip_specs: true has none, but its tasks.md and .openspec.yaml
	// are still checked). Known when the plan is made.
	UserFolder bool `expr:"userFolder"`
	// Files are the paths the change's diff touches; known only once the
	// agent has worked, so a condition that reads them is decided at run
	// time.
	Files []string `expr:"files" known:"run"`
}

// SentinelEnv is the environment of a sentinel rule's `when`: the live
// facts of one running change (SENTINEL_ACTION records them as JSON,
// under the same names). Every fact is known only while the change
// runs; the sentinel keeps them from events and process output.
type SentinelEnv struct {
	// Status is the change's status, e.g. "implementing".
	Status string `expr:"status" json:"status"`
	// Activity is what the change does now: "agent", "gate:NAME",
	// or "" between activities (the merge queue is not supervised).
	Activity string `expr:"activity" json:"activity"`
	// Command is the command line the activity runs now: the agent's
	// current tool command (e.g. "npm install"), a gate's argv joined by
	// spaces; "" when none.
	Command string `expr:"command" json:"command"`
	// ActivitySeconds is how long the current activity has run.
	ActivitySeconds float64 `expr:"activitySeconds" json:"activitySeconds"`
	// SecondsSinceOutput is the time since the agent or gate last wrote
	// output, or since it started.
	SecondsSinceOutput float64 `expr:"secondsSinceOutput" json:"secondsSinceOutput"`
	// IterationSeconds is the time since the current agent iteration
	// started; 0 outside one.
	IterationSeconds float64 `expr:"iterationSeconds" json:"iterationSeconds"`
	// Iterations counts the agent iterations of the change.
	Iterations int `expr:"iterations" json:"iterations"`
	// TokensUsed and TokenBudget are the change's tokens so far and its
	// budget by size (0: none).
	TokensUsed  int64 `expr:"tokensUsed" json:"tokensUsed"`
	TokenBudget int64 `expr:"tokenBudget" json:"tokenBudget"`
	// Retries are the retries used, by stage.
	Retries Retries `expr:"retries" json:"retries"`
	// Restarts counts the sentinel's restarts and redispatches of the
	// change.
	Restarts int `expr:"restarts" json:"restarts"`
	// LastExit is how the last agent iteration ended; zero while an
	// iteration runs.
	LastExit Exit `expr:"lastExit" json:"lastExit"`
}

// Retries are the retries a change has used, by stage, under the names
// conditions use (report.Retries adds the budgets, for people).
type Retries struct {
	Verify      int `expr:"verify" json:"verify"`
	Integration int `expr:"integration" json:"integration"`
	Conflicts   int `expr:"conflicts" json:"conflicts"`
}

// Exit is how a process ended.
type Exit struct {
	// Code is the exit status; -1 when a signal ended the process.
	Code int `expr:"code" json:"code"`
	// Signal names the signal that ended it ("SIGKILL"), "" when none.
	Signal string `expr:"signal" json:"signal"`
	// APIError is set when the agent reported that the model's API failed
	// the iteration.
	APIError bool `expr:"apiError" json:"apiError"`
}

// Condition is a compiled boolean expression. It is immutable and safe for
// concurrent use.
type Condition struct {
	source  string
	program *vm.Program
	// env is the environment type the condition was compiled against.
	env reflect.Type
	// runTime is set when the expression reads a name known only at run
	// time.
	runTime bool
}

// CompileGate compiles a gate condition.
func CompileGate(source string) (*Condition, error) {
	c, err := compile[GateEnv](source)
	if err != nil {
		return nil, err
	}
	c.runTime = readsAny(c.program.Node(), runTimeNames(c.env))
	return c, nil
}

// CompileSentinel compiles the `when` of a sentinel rule.
func CompileSentinel(source string) (*Condition, error) {
	c, err := compile[SentinelEnv](source)
	if err != nil {
		return nil, err
	}
	c.runTime = true
	return c, nil
}

func compile[Env any](source string) (*Condition, error) {
	var env Env
	t := reflect.TypeFor[Env]()
	p, err := expr.Compile(source, expr.Env(env), expr.AsBool())
	if err != nil {
		return nil, newError(source, err, t)
	}
	return &Condition{source: source, program: p, env: t}, nil
}

// Source is the expression as written.
func (c *Condition) Source() string { return c.source }

// Reads reports whether the expression reads the top-level name.
func (c *Condition) Reads(name string) bool { return readsAny(c.program.Node(), []string{name}) }

// RunTime reports whether the condition can only be decided at run time.
func (c *Condition) RunTime() bool { return c.runTime }

// Eval evaluates the condition against env, which must be the type it was
// compiled for.
func (c *Condition) Eval(env any) (bool, error) {
	out, err := expr.Run(c.program, env)
	if err != nil {
		return false, newError(c.source, err, c.env)
	}
	return out.(bool), nil
}

// readsAny reports whether the expression reads one of names at its top
// level.
func readsAny(node ast.Node, names []string) bool {
	v := &identVisitor{names: names}
	ast.Walk(&node, v)
	return v.found
}

type identVisitor struct {
	names []string
	found bool
}

func (v *identVisitor) Visit(node *ast.Node) {
	if id, ok := (*node).(*ast.IdentifierNode); ok && slices.Contains(v.names, id.Value) {
		v.found = true
	}
}

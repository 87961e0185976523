// Package cond compiles the expr-lang conditions of set.cue (`when` on gates
// and on sentinel rules) against typed environments, so that a misspelled
// name is an error when the configuration is checked, not when a run
// reaches the gate.
package cond

import (
	"fmt"
	"slices"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
)

// Change is what a condition knows about a change. Every field is known
// when the plan is made.
type Change struct {
	Name         string   `expr:"name"`
	Type         string   `expr:"type"`
	Size         string   `expr:"size"`
	Domain       string   `expr:"domain"`
	Requirements []string `expr:"requirements"`
	DependsOn    []string `expr:"dependsOn"`
	Scope        []string `expr:"scope"`
}

// GateEnv is the environment of a gate's `when`.
type GateEnv struct {
	Change Change `expr:"change"`
	// Files are the paths the change's diff touches; known only once the
	// agent has worked, so a condition that reads them is decided at run
	// time.
	Files []string `expr:"files"`
}

// runTimeGateNames are the GateEnv names whose values exist only at run
// time.
var runTimeGateNames = []string{"files"}

// SentinelEnv is the environment of a sentinel rule's `when`: the live
// facts of one change.
type SentinelEnv struct {
	Change             Change  `expr:"change"`
	SecondsSinceOutput float64 `expr:"secondsSinceOutput"`
	StallAfterSeconds  float64 `expr:"stallAfterSeconds"`
	Activity           string  `expr:"activity"`
	TokensUsed         int     `expr:"tokensUsed"`
	TokenBudget        int     `expr:"tokenBudget"`
	Retries            int     `expr:"retries"`
	Iteration          int     `expr:"iteration"`
}

// Condition is a compiled boolean expression. It is immutable and safe for
// concurrent use.
type Condition struct {
	source  string
	program *vm.Program
	// runTime is set when the expression reads a name known only at run
	// time.
	runTime bool
}

// CompileGate compiles a gate condition.
func CompileGate(source string) (*Condition, error) {
	c, err := compile(source, GateEnv{})
	if err != nil {
		return nil, err
	}
	c.runTime = readsAny(c.program.Node(), runTimeGateNames)
	return c, nil
}

// CompileSentinel compiles a sentinel rule condition.
func CompileSentinel(source string) (*Condition, error) {
	return compile(source, SentinelEnv{})
}

func compile(source string, env any) (*Condition, error) {
	p, err := expr.Compile(source, expr.Env(env), expr.AsBool())
	if err != nil {
		return nil, &Error{Source: source, Err: err}
	}
	return &Condition{source: source, program: p}, nil
}

// Source is the expression as written.
func (c *Condition) Source() string { return c.source }

// RunTime reports whether the condition can only be decided at run time.
func (c *Condition) RunTime() bool { return c.runTime }

// Eval evaluates the condition against env, which must be the type it was
// compiled for.
func (c *Condition) Eval(env any) (bool, error) {
	out, err := expr.Run(c.program, env)
	if err != nil {
		return false, &Error{Source: c.source, Err: err}
	}
	return out.(bool), nil
}

// Error is a compile or evaluation error of one condition.
type Error struct {
	Source string
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("condition %q: %v", e.Source, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

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

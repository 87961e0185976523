package plan

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm/usage"
)

// Modeler makes a plan's changes with a model: the planner strategies
// other than static (engine/plan/planner implements them).
type Modeler interface {
	// Changes returns changes that cover exactly the requirements cover
	// (IDs of p.Requirements) and that Validate accepts alongside
	// existing: changes planned or merged already, whose names the new
	// changes do not take and on which they may depend. Planning records
	// the calls made; it is never nil when the error is.
	Changes(ctx context.Context, p *Plan, cover []string, existing []Change) ([]Change, *Planning, error)
}

// NeedsModelError is the error of Make for a strategy that asks a model
// when no Modeler was given (setctl vet and doctor call no model).
type NeedsModelError struct {
	Strategy string
}

func (e *NeedsModelError) Error() string {
	return fmt.Sprintf("planner strategy %q asks a model for the plan", e.Strategy)
}

// Planning is how a model made a plan's changes.
type Planning struct {
	// Strategy is the strategy that ran: "single" or "three-phase".
	Strategy string `json:"strategy"`
	// Reason says why: auto's choice, with the estimate it compared.
	Reason string `json:"reason,omitempty"`
	// Calls are the model calls, failed attempts included, in the order
	// they ended.
	Calls []PlannerCall `json:"calls"`
	// Reused is set when the changes are those of the run's plan
	// (.set/plan.json), made from the same configuration and spec: the
	// calls are that plan's, journaled by its run.
	Reused bool `json:"reused,omitempty"`
}

// PlannerCall is one model call of a planner: the LLM_CALL event it was
// journaled as, and the planner's step and repair it belongs to, which an
// llm.Call does not know.
type PlannerCall struct {
	// Step is the call's part of its strategy: "single", "brief",
	// "domain <name>" or "merge".
	Step string `json:"step"`
	// Repair is 0 for a step's first call, n for its n-th repair.
	Repair int `json:"repair,omitempty"`
	journal.LLMCallData
}

// Tokens sums the calls' tokens.
func (p *Planning) Tokens() usage.Tokens {
	var t usage.Tokens
	for _, c := range p.Calls {
		t = t.Add(c.Tokens)
	}
	return t
}

// CostUSD sums the calls' costs (0 where a transport reports none).
func (p *Planning) CostUSD() float64 {
	var sum float64
	for _, c := range p.Calls {
		sum += c.CostUSD
	}
	return sum
}

// Models are the models that answered, as "MODEL via TRANSPORT", in the
// order they first did.
func (p *Planning) Models() []string {
	var out []string
	for _, c := range p.Calls {
		if m := c.Model + " via " + c.Transport; c.Error == "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// Pending are the IDs of the requirements of p that main does not
// implement yet (new, changed or removed), in the order of p.Requirements.
func (p *Plan) Pending() []string {
	var out []string
	for _, r := range p.Requirements {
		if p.Standing(r.ID).Status.Pending() {
			out = append(out, r.ID)
		}
	}
	return out
}

// Reuse is a Modeler that takes the changes of prev, a plan a model made
// (the run's, .set/plan.json), when prev was made from the same
// configuration and spec files as fp and its changes cover every
// requirement asked for, with no existing changes to plan around;
// otherwise it asks m, or returns a *NeedsModelError when m is nil. A
// model's plan is not deterministic: reusing it keeps a run's plan from
// one setctl apply to the next (a resumed run continues its changes), and
// spares the model a question it has answered. Main moving (the run's
// merges, HEAD) does not stop the reuse: Make prunes what main has done.
func Reuse(prev *Plan, fp Fingerprint, m Modeler) Modeler {
	return reuse{prev: prev, fp: fp, m: m}
}

type reuse struct {
	prev *Plan
	fp   Fingerprint
	m    Modeler
}

func (r reuse) Changes(ctx context.Context, p *Plan, cover []string, existing []Change) ([]Change, *Planning, error) {
	if r.reusable(cover, existing) {
		planning := *r.prev.Planning
		planning.Calls = slices.Clone(planning.Calls)
		planning.Reused = true
		changes := make([]Change, len(r.prev.Changes))
		for i, c := range r.prev.Changes {
			c.Requirements, c.DependsOn, c.Scope = slices.Clone(c.Requirements), slices.Clone(c.DependsOn), slices.Clone(c.Scope)
			changes[i] = c
		}
		return changes, &planning, nil
	}
	if r.m == nil {
		return nil, nil, &NeedsModelError{Strategy: p.Strategy}
	}
	return r.m.Changes(ctx, p, cover, existing)
}

func (r reuse) reusable(cover []string, existing []Change) bool {
	prev := r.prev
	if prev == nil || prev.Planning == nil || len(existing) > 0 ||
		prev.Fingerprint.Config != r.fp.Config || !maps.Equal(prev.Fingerprint.Specs, r.fp.Specs) {
		return false
	}
	covered := map[string]bool{}
	for _, c := range prev.Changes {
		for _, id := range c.Requirements {
			covered[id] = true
		}
	}
	for _, id := range cover {
		if !covered[id] {
			return false
		}
	}
	return true
}

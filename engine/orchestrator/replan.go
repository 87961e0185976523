package orchestrator

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/spec"
	"github.com/set-engine/set/engine/state"
)

// ReplanFunc asks the planner for changes covering the requirements of
// req; it journals its model calls with req.Emit. Options.Replan is one
// when the project sets planner.replan: "auto".
type ReplanFunc func(ctx context.Context, req ReplanRequest) ([]plan.Change, error)

// ReplanRequest is one replan cycle's question.
type ReplanRequest struct {
	// Cycle counts the run's replans from 1.
	Cycle int
	// Plan is the run's plan now: the changes that reached main, and
	// those that failed for good or were blocked (Dropped), which the
	// new changes replace.
	Plan *plan.Plan
	// Uncovered are the requirements of the dropped changes, in plan
	// order.
	Uncovered []spec.Requirement
	Dropped   []string
	// Emit journals an event of the run (the planner's LLM_CALL events).
	Emit func(journal.Payload) error
}

// replan runs one replan cycle when the project replans, the run has
// cycles left, and every change is settled with some failed for good or
// blocked: it asks Options.Replan for changes covering their
// requirements, and makes the plan the one without the dropped changes
// and with the new ones (journaled as REPLANNED, then PLAN_CREATED). It
// reports whether the plan changed, so that the loop goes on. A planner
// that fails, or whose changes do not make a valid plan, ends the cycles:
// REPLANNED records why, and the run ends failed as it would have.
func (r *run) replan(ctx context.Context) (bool, error) {
	if r.opts.Replan == nil {
		return false, nil
	}
	cycle := r.rec.replans() + 1
	if cycle > r.opts.Project.Planner.MaxReplanCycles {
		return false, nil
	}
	var dropped []string
	var uncovered []spec.Requirement
	for _, c := range r.opts.Plan.Changes {
		switch s := r.rec.status(c.Name); {
		case s.Failed() || s == state.DepBlocked:
			dropped = append(dropped, c.Name)
			for _, id := range c.Requirements {
				if req, ok := r.reqs[id]; ok {
					uncovered = append(uncovered, req)
				}
			}
		case s != state.Archived:
			return false, nil // paused, or not yet settled
		}
	}
	if len(uncovered) == 0 {
		return false, nil
	}
	ids := make([]string, len(uncovered))
	for i, req := range uncovered {
		ids[i] = req.ID
	}
	event := journal.ReplannedData{Cycle: cycle, Uncovered: ids, Dropped: dropped}
	added, err := r.opts.Replan(ctx, ReplanRequest{
		Cycle: cycle, Plan: r.opts.Plan, Uncovered: uncovered, Dropped: dropped,
		Emit: func(p journal.Payload) error { return r.rec.emit("", p) },
	})
	var next *plan.Plan
	var g *graph.Graph
	if err == nil {
		next, g, err = r.extendPlan(dropped, added)
	}
	if err != nil {
		event.Error = err.Error()
		return false, r.rec.emit("", event)
	}
	for _, c := range next.Changes {
		event.Added = append(event.Added, c.Name)
	}
	if err := r.rec.emit("", event); err != nil {
		return false, err
	}
	data, err := plan.Encode(next)
	if err != nil {
		return false, err
	}
	if err := r.writeRunPlan(next); err != nil {
		return false, err
	}
	names := make([]string, len(next.Changes))
	for i, c := range next.Changes {
		names[i] = c.Name
	}
	if err := r.rec.emit("", journal.PlanCreatedData{
		Strategy: next.Strategy, Fingerprint: next.Fingerprint.Sum, Changes: names,
		Requirements: len(next.Requirements), Plan: data, Learnings: next.Learnings,
	}); err != nil {
		return false, err
	}
	r.opts.Plan, r.opts.Graph = next, g
	r.replaced = append(r.replaced, dropped...)
	return true, nil
}

// extendPlan is the run's next plan: the added changes, which replace
// the dropped ones, validated together with the changes that reached
// main (so that every requirement is covered once), then without those:
// a plan names only work main does not have, and a dependency on a change
// main holds is met. An added change named like one the run already has
// is renamed to the first free "<name>-<n>", as a plan renames a change
// named like one that landed, and the added changes' dependencies follow
// it. The added changes run on the project's agent and model.
func (r *run) extendPlan(dropped []string, added []plan.Change) (*plan.Plan, *graph.Graph, error) {
	if len(added) == 0 {
		return nil, nil, fmt.Errorf("the planner added no change")
	}
	used := map[string]bool{}
	for _, name := range r.rec.names() {
		used[name] = true
	}
	for _, c := range r.opts.Plan.Changes {
		used[c.Name] = true
	}
	renamed := map[string]string{}
	for _, c := range added {
		if !used[c.Name] {
			continue
		}
		for n := 2; ; n++ {
			if alt := c.Name + "-" + strconv.Itoa(n); !used[alt] {
				renamed[c.Name], used[alt] = alt, true
				break
			}
		}
	}
	var landed, fresh []plan.Change
	for _, c := range r.opts.Plan.Changes {
		if !slices.Contains(dropped, c.Name) {
			landed = append(landed, c)
		}
	}
	for _, c := range added {
		c.Name = renamedOr(renamed, c.Name)
		c.DependsOn = slices.Clone(c.DependsOn)
		for i, d := range c.DependsOn {
			c.DependsOn[i] = renamedOr(renamed, d)
		}
		c.Agent, c.Model = "", ""
		fresh = append(fresh, c)
	}
	next := *r.opts.Plan
	next.Changes = append(slices.Clone(landed), fresh...)
	// The added changes are the model planner's, given its learnings.
	next.Learnings = plan.Used(r.opts.Project, true)
	if err := plan.Validate(&next, plan.Limits{MaxRequirementsPerChange: r.opts.Project.Planner.MaxRequirementsPerChange}); err != nil {
		return nil, nil, err
	}
	onMain := map[string]bool{}
	for _, c := range landed {
		onMain[c.Name] = true
	}
	for i := range fresh {
		fresh[i].DependsOn = slices.DeleteFunc(fresh[i].DependsOn, func(d string) bool { return onMain[d] })
	}
	sorted, err := plan.TopoSort(fresh)
	if err != nil {
		return nil, nil, err
	}
	next.Changes = sorted
	g, err := graph.Build(&next, r.opts.Project)
	if err != nil {
		return nil, nil, err
	}
	return &next, g, nil
}

func renamedOr(renamed map[string]string, name string) string {
	if to, ok := renamed[name]; ok {
		return to
	}
	return name
}

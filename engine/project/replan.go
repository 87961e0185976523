package project

import (
	"context"
	"slices"

	"github.com/set-engine/set/engine/orchestrator"
	"github.com/set-engine/set/engine/plan"
)

// Replanner is the replan function of a run of p (planner.replan:
// "auto"): it asks p's model planner for changes covering a replan's
// uncovered requirements, next to the changes that stay in the run, and
// journals its model calls (failed attempts too) as LLM_CALL events of
// the run.
func (p *Project) Replanner() orchestrator.ReplanFunc {
	return func(ctx context.Context, req orchestrator.ReplanRequest) ([]plan.Change, error) {
		m, err := p.Planner(ctx)
		if err != nil {
			return nil, err
		}
		ids := make([]string, len(req.Uncovered))
		for i, r := range req.Uncovered {
			ids[i] = r.ID
		}
		existing := slices.DeleteFunc(slices.Clone(req.Plan.Changes), func(c plan.Change) bool { return slices.Contains(req.Dropped, c.Name) })
		changes, planning, err := m.Changes(ctx, req.Plan, ids, existing)
		if planning != nil {
			for _, c := range planning.Calls {
				if eerr := req.Emit(c.LLMCallData); eerr != nil {
					return nil, eerr
				}
			}
		}
		return changes, err
	}
}

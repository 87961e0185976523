package report

import (
	"fmt"
	"strings"

	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/state"
)

// crossCuttingHolder says which change at work holds c back from dispatch
// because both may touch a crossCutting file of the run, as Waiting words
// it: "alpha to merge or fail: both touch internal/routes.go"; "" when
// none does. It asks plan.Holder with the waits dispatch uses: those of
// the latest plan's changes (every change the state knows when no plan
// named them) in the graph's dispatch order (plan.TopoSort), over the
// run's crossCutting globs.
func crossCuttingHolder(s *state.State, c *state.Change) string {
	if len(s.CrossCutting) == 0 {
		return ""
	}
	names := s.Plan.Changes
	if len(names) == 0 {
		names = s.Order
	}
	changes := make([]plan.Change, 0, len(names))
	for _, name := range names {
		if sc := s.Changes[name]; sc != nil {
			changes = append(changes, plan.Change{Name: name, DependsOn: sc.DependsOn, Size: sc.Size, Scope: sc.Scope})
		}
	}
	changes, err := plan.TopoSort(changes)
	if err != nil {
		return ""
	}
	order := make([]string, len(changes))
	for i, pc := range changes {
		order[i] = pc.Name
	}
	atWork := func(name string) bool {
		st := s.Changes[name].Status
		return st != state.Pending && st != state.Merged && !st.Terminal()
	}
	w, ok := plan.Holder(order, plan.Waits(changes, s.CrossCutting), c.Name, atWork)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s to merge or fail: both touch %s", w.Change, strings.Join(w.Files, ", "))
}

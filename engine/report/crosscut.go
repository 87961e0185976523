package report

import (
	"fmt"
	"strings"

	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/state"
)

// crossCuttingHolder says which change at work holds c back from dispatch
// because both may touch a crossCutting file of the run (see plan.Waits
// and the orchestrator's dispatch), as Waiting words it: "alpha to merge
// or fail: both touch internal/routes.go"; "" when none does.
func crossCuttingHolder(s *state.State, c *state.Change) string {
	if len(s.CrossCutting) == 0 {
		return ""
	}
	changes := make([]plan.Change, 0, len(s.Order))
	index := -1
	for _, name := range s.Order {
		sc := s.Changes[name]
		if sc == nil {
			continue
		}
		if name == c.Name {
			index = len(changes)
		}
		changes = append(changes, plan.Change{Name: name, DependsOn: sc.DependsOn, Scope: sc.Scope})
	}
	if index < 0 {
		return ""
	}
	atWork := func(name string) bool {
		st := s.Changes[name].Status
		return st != state.Pending && st != state.Merged && !st.Terminal()
	}
	waits := plan.Waits(changes, s.CrossCutting)
	if waits == nil {
		return ""
	}
	for i, ws := range waits {
		for _, w := range ws {
			other := ""
			switch {
			case i == index:
				other = w.Change
			case w.Change == c.Name:
				other = changes[i].Name
			}
			if other != "" && atWork(other) {
				return fmt.Sprintf("%s to merge or fail: both touch %s", other, strings.Join(w.Files, ", "))
			}
		}
	}
	return ""
}

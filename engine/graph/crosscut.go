package graph

import "github.com/set-engine/set/engine/plan"

// Wait is a change another waits for before dispatch (see plan.Wait).
type Wait = plan.Wait

// addWaits gives every change of g, in g.Order, the changes before it it
// waits for because both may touch a crossCutting file (plan.Waits).
func addWaits(g *Graph, globs []string) {
	changes := make([]plan.Change, len(g.Changes))
	for i, c := range g.Changes {
		changes[i] = c.Change
	}
	for i, w := range plan.Waits(changes, globs) {
		g.Changes[i].Waits = w
	}
}

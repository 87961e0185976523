package graph

import (
	"slices"

	"github.com/set-engine/set/engine/plan"
)

// dag is the dependency structure of an acyclic plan: its plan.DAG, and
// what the graph adds to it.
type dag struct {
	*plan.DAG
	level          map[string]int
	critical       []string
	criticalWeight int
}

// analyse computes the dispatch order and priorities (plan.NewDAG), the
// levels and the critical path. Every dependency must name a change of the
// plan; a cycle is an error naming it.
func analyse(p *plan.Plan) (*dag, error) {
	pd, err := plan.NewDAG(p.Changes)
	if err != nil {
		return nil, err
	}
	d := &dag{DAG: pd, level: map[string]int{}}
	// Levels, top down: a change's dependencies come before it in Order.
	for _, n := range d.Order {
		l := 0
		for _, dep := range d.Deps[n] {
			l = max(l, d.level[dep]+1)
		}
		d.level[n] = l
	}

	// The critical path starts at the change of highest priority (always a
	// root: a dependency outweighs its dependents) and follows the
	// heaviest dependent down to a leaf.
	if len(d.Order) > 0 {
		n := slices.MinFunc(d.Order, d.Before)
		d.criticalWeight = d.Priority[n]
		for {
			d.critical = append(d.critical, n)
			if len(d.Dependents[n]) == 0 {
				break
			}
			n = slices.MinFunc(d.Dependents[n], d.Before)
		}
	}
	return d, nil
}

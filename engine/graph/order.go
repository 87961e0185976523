package graph

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/plan"
)

// dag is the dependency structure of an acyclic plan.
type dag struct {
	order          []string
	dependents     map[string][]string // sorted by name
	level          map[string]int
	priority       map[string]int
	critical       []string
	criticalWeight int
}

// analyse computes the dispatch order, levels, priorities and the critical
// path. Every dependency must name a change of the plan; a cycle is an
// error naming it, found before anything recurses along dependencies.
func analyse(p *plan.Plan) (*dag, error) {
	d := &dag{
		dependents: map[string][]string{},
		level:      map[string]int{},
		priority:   map[string]int{},
	}
	deps := map[string][]string{}
	weight := map[string]int{}
	var names []string
	for _, c := range p.Changes {
		names = append(names, c.Name)
		weight[c.Name] = plan.SizeWeight(c.Size)
		ds := slices.Compact(slices.Sorted(slices.Values(c.DependsOn)))
		deps[c.Name] = ds
		for _, dep := range ds {
			d.dependents[dep] = append(d.dependents[dep], c.Name)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		slices.Sort(d.dependents[n])
	}

	if cycle := plan.FindCycle(p); cycle != nil {
		return nil, fmt.Errorf("dependency cycle: %s", strings.Join(cycle, " → "))
	}

	// Levels, top down, and priorities, bottom up, by memoised recursion:
	// the graph is acyclic so both terminate.
	var level func(n string) int
	level = func(n string) int {
		if l, ok := d.level[n]; ok {
			return l
		}
		l := 0
		for _, dep := range deps[n] {
			l = max(l, level(dep)+1)
		}
		d.level[n] = l
		return l
	}
	var priority func(n string) int
	priority = func(n string) int {
		if w, ok := d.priority[n]; ok {
			return w
		}
		below := 0
		for _, m := range d.dependents[n] {
			below = max(below, priority(m))
		}
		d.priority[n] = weight[n] + below
		return d.priority[n]
	}
	for _, n := range names {
		level(n)
		priority(n)
	}

	// before reports whether a is dispatched before b when both are ready.
	before := func(a, b string) int {
		return cmp.Or(cmp.Compare(d.priority[b], d.priority[a]), cmp.Compare(a, b))
	}

	// The dispatch order: Kahn's algorithm, picking the best ready change.
	indegree := map[string]int{}
	var ready []string
	for _, n := range names {
		indegree[n] = len(deps[n])
		if indegree[n] == 0 {
			ready = append(ready, n)
		}
	}
	for len(ready) > 0 {
		slices.SortFunc(ready, before)
		n := ready[0]
		ready = ready[1:]
		d.order = append(d.order, n)
		for _, m := range d.dependents[n] {
			if indegree[m]--; indegree[m] == 0 {
				ready = append(ready, m)
			}
		}
	}

	// The critical path starts at the change of highest priority (always a
	// root: a dependency outweighs its dependents) and follows the
	// heaviest dependent down to a leaf.
	if len(names) > 0 {
		n := slices.MinFunc(names, before)
		d.criticalWeight = d.priority[n]
		for {
			d.critical = append(d.critical, n)
			if len(d.dependents[n]) == 0 {
				break
			}
			n = slices.MinFunc(d.dependents[n], before)
		}
	}
	return d, nil
}

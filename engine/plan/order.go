package plan

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// DAG is the dependency structure of a plan's changes, and the one
// topological order of the engine: plan files list their changes in it and
// changes are dispatched in it.
//
// Invariants: Order lists every change once, each after its dependencies;
// of the changes whose dependencies are all placed, the one of higher
// Priority comes first, then the smaller name. Deps and Dependents are
// sorted by name, without duplicates and without names that are not
// changes.
type DAG struct {
	Order      []string
	Deps       map[string][]string
	Dependents map[string][]string
	// Priority is the weight (SizeWeight) of the heaviest path from a
	// change (included) down to a change nothing depends on, so the
	// critical path starts first.
	Priority map[string]int
}

// NewDAG orders changes whose names are unique. A dependency cycle is an
// error naming it as FindCycle does ("dependency cycle: a → b → a");
// dependencies on unknown changes are ignored.
func NewDAG(changes []Change) (*DAG, error) {
	names, deps, dependents := edges(changes)
	d := &DAG{Deps: deps, Dependents: dependents, Priority: map[string]int{}}
	weight := map[string]int{}
	for _, c := range changes {
		weight[c.Name] = SizeWeight(c.Size)
	}

	// A first pass by name finds a cycle and gives the order in which
	// priorities are summed, dependents first.
	byName, left := peel(d.Deps, d.Dependents, names, strings.Compare)
	if len(left) > 0 {
		return nil, fmt.Errorf("dependency cycle: %s", strings.Join(cycleIn(d.Deps, left), " → "))
	}
	for _, n := range slices.Backward(byName) {
		below := 0
		for _, m := range d.Dependents[n] {
			below = max(below, d.Priority[m])
		}
		d.Priority[n] = weight[n] + below
	}
	d.Order, _ = peel(d.Deps, d.Dependents, names, d.Before)
	return d, nil
}

// Before orders two changes that are ready at once: the higher Priority
// first, then the smaller name. It returns a negative number when a comes
// first.
func (d *DAG) Before(a, b string) int {
	return cmp.Or(cmp.Compare(d.Priority[b], d.Priority[a]), cmp.Compare(a, b))
}

// FindCycle returns a dependency cycle as a path that starts and ends with
// the same change (a → b → a, or a → a for a change that depends on
// itself), starting at the cycle's smallest name, or nil when the changes
// form a DAG. Unknown dependencies are ignored.
func FindCycle(p *Plan) []string {
	names, deps, dependents := edges(p.Changes)
	_, left := peel(deps, dependents, names, strings.Compare)
	if len(left) == 0 {
		return nil
	}
	return cycleIn(deps, left)
}

// TopoSort returns the changes in the order of their DAG, or the error of
// a dependency cycle.
func TopoSort(changes []Change) ([]Change, error) {
	d, err := NewDAG(changes)
	if err != nil {
		return nil, err
	}
	at := make(map[string]int, len(d.Order))
	for i, n := range d.Order {
		at[n] = i
	}
	out := slices.Clone(changes)
	slices.SortStableFunc(out, func(a, b Change) int { return cmp.Compare(at[a.Name], at[b.Name]) })
	return out, nil
}

// edges are the sorted names of the changes and their dependency edges:
// deps and dependents sorted by name, without duplicates and unknown
// names.
func edges(changes []Change) (names []string, deps, dependents map[string][]string) {
	deps = map[string][]string{}
	dependents = map[string][]string{}
	for _, c := range changes {
		deps[c.Name] = append(deps[c.Name], c.DependsOn...)
	}
	names = slices.Sorted(maps.Keys(deps))
	for _, n := range names {
		ds := slices.Compact(slices.Sorted(slices.Values(deps[n])))
		deps[n] = slices.DeleteFunc(ds, func(x string) bool { _, known := deps[x]; return !known })
		for _, dep := range deps[n] {
			dependents[dep] = append(dependents[dep], n) // names are sorted
		}
	}
	return names, deps, dependents
}

// peel is Kahn's algorithm, the engine's one topological sort: it places
// the changes of names (whose deps and dependents must be sorted, known
// names) leaves first, taking among the ready ones the first by before,
// without recursion. It returns the order and the changes it could not
// place: those on a cycle or after one.
func peel(deps, dependents map[string][]string, names []string, before func(a, b string) int) (order []string, left map[string]bool) {
	indegree := map[string]int{}
	left = map[string]bool{}
	var ready []string
	for _, n := range names {
		indegree[n] = len(deps[n])
		left[n] = true
		if indegree[n] == 0 {
			ready = append(ready, n)
		}
	}
	for len(ready) > 0 {
		slices.SortFunc(ready, before)
		n := ready[0]
		ready = ready[1:]
		order = append(order, n)
		delete(left, n)
		for _, m := range dependents[n] {
			if indegree[m]--; indegree[m] == 0 {
				ready = append(ready, m)
			}
		}
	}
	return order, left
}

// cycleIn walks from the smallest change peel left over along its
// smallest left-over dependency until it closes a loop (every change left
// over has a dependency left over), and returns the loop rotated to start
// at its smallest name.
func cycleIn(deps map[string][]string, left map[string]bool) []string {
	n := slices.Min(slices.Collect(maps.Keys(left)))
	var path []string
	seen := map[string]int{}
	for {
		if i, ok := seen[n]; ok {
			cycle := path[i:]
			start := slices.Index(cycle, slices.Min(cycle))
			cycle = append(slices.Clone(cycle[start:]), cycle[:start]...)
			return append(cycle, cycle[0])
		}
		seen[n] = len(path)
		path = append(path, n)
		for _, d := range deps[n] { // sorted
			if left[d] {
				n = d
				break
			}
		}
	}
}

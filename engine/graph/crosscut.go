package graph

import (
	"github.com/set-engine/set/engine/pathglob"
)

// Wait is a change that another change waits for before it is
// dispatched: one earlier in the dispatch order whose scope, like the
// waiting change's, may touch the cross-cutting files Files (the
// project's crossCutting globs). The waiting change is dispatched once
// that change has merged or failed.
type Wait struct {
	Change string   `json:"change"`
	Files  []string `json:"files"`
}

// crossCuttingOf is the crossCutting globs (sorted) that a change with
// scope may touch: every one when scope is empty, since such a change may
// touch any file.
func crossCuttingOf(scope, globs []string) []string {
	if len(scope) == 0 {
		return globs
	}
	var out []string
	for _, g := range globs {
		for _, s := range scope {
			if pathglob.Overlap(s, g) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// addWaits gives every change of g the changes before it in g.Order that
// may touch a cross-cutting file it may touch (see Wait), leaving out
// those it depends on, directly or not, which it waits for anyway. The
// waits follow the dispatch order, a topological one, so they never
// make a cycle with the dependencies.
func addWaits(g *Graph, globs []string) {
	if len(globs) == 0 {
		return
	}
	touches := make([][]string, len(g.Changes))
	index := map[string]int{}
	for i := range g.Changes {
		touches[i] = crossCuttingOf(g.Changes[i].Scope, globs)
		index[g.Changes[i].Name] = i
	}
	for i := range g.Changes {
		if len(touches[i]) == 0 {
			continue
		}
		above := ancestors(g, index, i)
		for j := range i {
			if above[g.Changes[j].Name] {
				continue
			}
			if shared := intersect(touches[i], touches[j]); len(shared) > 0 {
				g.Changes[i].Waits = append(g.Changes[i].Waits, Wait{Change: g.Changes[j].Name, Files: shared})
			}
		}
	}
}

// ancestors are the changes change i depends on, directly or not.
func ancestors(g *Graph, index map[string]int, i int) map[string]bool {
	seen := map[string]bool{}
	stack := []int{i}
	for len(stack) > 0 {
		c := g.Changes[stack[len(stack)-1]]
		stack = stack[:len(stack)-1]
		for _, d := range c.DependsOn {
			if !seen[d] {
				seen[d] = true
				stack = append(stack, index[d])
			}
		}
	}
	return seen
}

// intersect is the elements of a that b holds, in a's order.
func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		for _, y := range b {
			if x == y {
				out = append(out, x)
				break
			}
		}
	}
	return out
}

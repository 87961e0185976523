package plan

import (
	"slices"

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

// Waits gives each of changes, given in dispatch order, the changes
// before it that may touch a crossCutting file (globs) it may touch too,
// in that order, leaving out those it depends on, directly or not, which
// it waits for anyway: Waits(changes, globs)[i] are changes[i]'s. A change
// without a scope may touch any file. The waits follow the dispatch
// order, a topological one, so they never make a cycle with the
// dependencies. Nil when no change waits.
func Waits(changes []Change, globs []string) [][]Wait {
	if len(globs) == 0 {
		return nil
	}
	touches := make([][]string, len(changes))
	byName := map[string]*Change{}
	for i := range changes {
		touches[i] = crossCuttingOf(changes[i].Scope, globs)
		byName[changes[i].Name] = &changes[i]
	}
	var out [][]Wait
	for i := range changes {
		if len(touches[i]) == 0 {
			continue
		}
		above := ancestors(byName, changes[i])
		for j := range i {
			if above[changes[j].Name] {
				continue
			}
			if shared := intersect(touches[i], touches[j]); len(shared) > 0 {
				if out == nil {
					out = make([][]Wait, len(changes))
				}
				out[i] = append(out[i], Wait{Change: changes[j].Name, Files: shared})
			}
		}
	}
	return out
}

// crossCuttingOf is the crossCutting globs (in the order of globs) that a
// change with scope may touch: every one when scope is empty.
func crossCuttingOf(scope, globs []string) []string { return pathglob.Touching(scope, globs) }

// ancestors are the changes c depends on, directly or not, of those
// byName holds.
func ancestors(byName map[string]*Change, c Change) map[string]bool {
	seen := map[string]bool{}
	stack := slices.Clone(c.DependsOn)
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[d] {
			continue
		}
		seen[d] = true
		if dc := byName[d]; dc != nil {
			stack = append(stack, dc.DependsOn...)
		}
	}
	return seen
}

// intersect is the elements of a that b holds, in a's order.
func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// Holder is the change at work that holds name back from dispatch
// because both may touch a crossCutting file, with the files they share;
// ok is false when none does. order is the changes in dispatch order and
// waits their Waits (waits[i] are order[i]'s; nil when no change waits);
// atWork says whether a change is at work: from its dispatch until it has
// merged or failed. The relation is symmetric: a change is held by the
// changes it waits for and by those that wait for it, whichever started
// first; its own waits are looked at first, then the later changes', each
// in dispatch order. Dispatch (engine/orchestrator) and what status and
// explain say a change waits for (engine/report) both ask it, so they
// name the same holder.
func Holder(order []string, waits [][]Wait, name string, atWork func(string) bool) (w Wait, ok bool) {
	index := slices.Index(order, name)
	if index < 0 || waits == nil {
		return Wait{}, false
	}
	for _, w := range waits[index] {
		if atWork(w.Change) {
			return w, true
		}
	}
	for i, ws := range waits {
		for _, w := range ws {
			if w.Change == name && atWork(order[i]) {
				return Wait{Change: order[i], Files: w.Files}, true
			}
		}
	}
	return Wait{}, false
}

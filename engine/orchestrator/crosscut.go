package orchestrator

import (
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/state"
)

// crossCuttingHolder is a change at work that may touch a crossCutting
// file the change name may touch too (see graph.Wait), and so holds name
// back from dispatch; "" when there is none. A change is at work from its
// dispatch until it has merged or failed (a paused one still is: its
// worktree holds its work). The relation is symmetric: whichever of two
// such changes starts first holds the other, and when both are ready the
// earlier in the dispatch order starts first, as `setctl plan` shows.
func (r *run) crossCuttingHolder(name string) (holder string, w graph.Wait) {
	g := r.opts.Graph
	cg, ok := g.Change(name)
	if !ok {
		return "", graph.Wait{}
	}
	atWork := func(other string) bool {
		if r.active[other] || r.mq.holds(other) {
			return true
		}
		s := r.rec.status(other)
		return s != state.Pending && s != state.Merged && !s.Terminal()
	}
	for _, w := range cg.Waits {
		if atWork(w.Change) {
			return w.Change, w
		}
	}
	// The later changes that wait for this one (their Waits name it).
	for _, other := range g.Changes {
		for _, w := range other.Waits {
			if w.Change == name && atWork(other.Name) {
				return other.Name, graph.Wait{Change: other.Name, Files: w.Files}
			}
		}
	}
	return "", graph.Wait{}
}

package orchestrator

import (
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/state"
)

// crossCuttingHolder is a change at work that may touch a crossCutting
// file the change name may touch too, and so holds name back from
// dispatch; "" when there is none (plan.Holder over the graph's order and
// Waits). A change is at work from its dispatch until it has merged or
// failed (a paused one still is: its worktree holds its work); a worker's
// or the merge queue's change counts before its status says so. When both
// are ready the earlier in the dispatch order starts first, as `setctl
// plan` shows.
func (r *run) crossCuttingHolder(name string) (holder string, w graph.Wait) {
	g := r.opts.Graph
	order := make([]string, len(g.Changes))
	waits := make([][]graph.Wait, len(g.Changes))
	for i, c := range g.Changes {
		order[i], waits[i] = c.Name, c.Waits
	}
	atWork := func(other string) bool {
		if r.active[other] || r.mq.holds(other) {
			return true
		}
		s := r.rec.status(other)
		return s != state.Pending && s != state.Merged && !s.Terminal()
	}
	w, ok := plan.Holder(order, waits, name, atWork)
	if !ok {
		return "", graph.Wait{}
	}
	return w.Change, w
}

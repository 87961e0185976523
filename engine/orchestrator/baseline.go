package orchestrator

import (
	"context"
	"maps"
	"slices"

	"github.com/set-engine/set/engine/baseline"
	"github.com/set-engine/set/engine/gate"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
)

// checkBaseline judges main before the first dispatch of the run: the
// exec gates of the stacks the unfinished changes use run on main's tree
// (or their cached verdicts are taken; see package baseline), each
// recorded as BASELINE_GATE, after a BASELINE_GATE_STARTED when it runs:
// while one runs, the views say the run waits for its baseline. A blocking gate red on main stops the run
// with a *baseline.RedError, unless the run accepted those very failures
// already, or accepts them now (Options.AcceptBaseline); either way the
// failures the run goes on with are recorded as BASELINE_ACCEPTED. A gate
// every stack runs in mode "warn" is reported and never stops the run.
//
// The accepted failures are the ones main had when they were accepted,
// and they hold for the rest of the run (a resumed run included): main is
// not judged again as the merge queue moves it, because every change
// that moves main passed its verify and integration stacks judged against
// those same failures. A resumed run judges main again only when main is at a tree
// not judged before, and then stops only on failures beyond the accepted
// ones. A change that fixes an accepted failure simply reports fewer.
func (r *run) checkBaseline(ctx context.Context) error {
	var changes []*graph.ChangeGraph
	for _, name := range r.opts.Graph.Order {
		if r.rec.status(name) == state.Archived {
			continue // on main: no gate of it runs again
		}
		cg, _ := r.opts.Graph.Change(name)
		changes = append(changes, cg)
	}
	checks := baseline.Checks(changes)
	if len(checks) == 0 {
		return nil
	}
	verdicts, err := baseline.Judge(ctx, baseline.Input{
		Layout: r.layout, Run: r.rec.runID(), MainBranch: r.opts.Project.MainBranch,
		Project: r.opts.Project, Checks: checks, Runners: r.opts.Runners, Env: r.env, Redact: r.redact, Now: r.opts.Now,
		Start:  func(d journal.BaselineGateStartedData) error { return r.rec.emit("", d) },
		Emit:   func(v baseline.Verdict) error { return r.rec.emit("", v.Event()) },
		Judged: func() { r.checkpoint("baseline-judged", "") },
	})
	if err != nil {
		return err
	}
	accepted := r.rec.accepted()
	var red []baseline.Verdict
	// Each red blocking gate the run goes on with is recorded as
	// accepted, also when an earlier apply of the run accepted its
	// failures already: that is why the run goes on.
	var accepts []journal.BaselineAcceptedData
	for _, v := range verdicts {
		if !v.Red() || !v.Blocking {
			continue
		}
		if acc, ok := accepted[v.Gate]; ok && len(v.Failures) > 0 && len(gate.NewFailures(v.Failures, acc)) == 0 {
			accepts = append(accepts, journal.BaselineAcceptedData{Gate: v.Gate, Tree: v.Tree, Failures: acc})
			continue
		}
		red = append(red, v)
	}
	if len(red) > 0 && !r.opts.AcceptBaseline {
		return &baseline.RedError{Gates: red, Apply: r.opts.Invocation}
	}
	for _, v := range red {
		if !v.Comparable() {
			return &baseline.RedError{Gates: red, Accepting: true, Apply: r.opts.Invocation}
		}
		all := slices.Compact(slices.Sorted(slices.Values(slices.Concat(accepted[v.Gate], v.Failures))))
		accepts = append(accepts, journal.BaselineAcceptedData{Gate: v.Gate, Tree: v.Tree, Failures: all})
	}
	for _, a := range accepts {
		if err := r.rec.emit("", a); err != nil {
			return err
		}
	}
	return nil
}

// accepted is the run's accepted failures of main, by gate (a copy).
func (r *recorder) accepted() map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][]string, len(r.st.Accepted))
	for g, f := range maps.All(r.st.Accepted) {
		out[g] = slices.Clone(f)
	}
	return out
}

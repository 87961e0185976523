package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/sourcegraph/conc/panics"
	"github.com/sourcegraph/conc/pool"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/state"
)

// ending is how the loop is ending: the first run error, and whether the
// run was interrupted. The loop's own.
type ending struct {
	err         error
	interrupted bool
}

// running reports whether the loop still starts work.
func (e *ending) running() bool { return e.err == nil && !e.interrupted }

// fail records err as the run error, unless there is one already.
func (e *ending) fail(err error) {
	if err != nil && e.err == nil {
		e.err = err
	}
}

// failRunning records err as the run error while the run is running: a
// worker's or an attempt's error after an interrupt is its interruption.
func (e *ending) failRunning(err error) {
	if e.running() {
		e.fail(err)
	}
}

// result is the loop's result for a run that ended with e, with settled
// the result of a run that ended neither failed nor interrupted.
func (e *ending) result(settled func() string) (string, error) {
	switch {
	case e.err != nil:
		return "failed", e.err
	case e.interrupted:
		return "interrupted", nil
	}
	return settled(), nil
}

// loop is the event loop: it dispatches, feeds the merge queue, and
// reacts to workers, merges, retirements, the sentinel and the requests
// of setctl pause and resume (and the dashboard's stop, which ends it as
// an interrupt does) until nothing can make progress. The only timers
// are the heartbeat and the sentinel's tick, which also reads the
// control file for new requests (see takeRequests).
func (r *run) loop(ctx context.Context) (string, error) {
	// work is the context of workers and merges: canceled on Ctrl-C and
	// on a run error, so that agents and gates stop and report back.
	work, stop := context.WithCancel(context.WithoutCancel(ctx))
	// The pool never blocks dispatch: dispatch itself keeps at most
	// maxParallel workers. On the way out, stop everything first, then
	// wait (defers run last first).
	workers := pool.New().WithMaxGoroutines(max(r.project.MaxParallel, 1))
	defer workers.Wait()
	defer stop()
	heartbeat := time.NewTicker(heartbeat(r.project))
	defer heartbeat.Stop()
	tick := time.NewTicker(r.opts.sentinelTick)
	defer tick.Stop()

	var end ending
	interrupt := ctx.Done()
	for {
		if end.running() {
			end.fail(r.blockDependents())
		}
		if end.running() {
			end.fail(r.dispatch(work, workers))
			// A merged pull request lands (main follows the remote's)
			// while no attempt merges onto main, and none starts then.
			r.landMerged(work)
			if !r.reviews.landingNow() {
				r.mq.advance(work, r.opts.Plan, r.opts.Graph)
			}
			r.watchReviews(work, false)
		}
		if r.idle(&end) {
			if !end.running() {
				break
			}
			replanned, err := r.replan(work)
			end.fail(err)
			if !replanned {
				break
			}
			r.blockedAt = -1 // new changes may depend on failed ones
			continue
		}
		select {
		case d := <-r.workerDone:
			end.failRunning(r.workerEnded(d))
		case res := <-r.mq.done:
			end.failRunning(r.attemptReported(work, res))
		case <-r.reviews.next():
			r.watchReviews(work, true)
		case looks := <-r.reviews.looked():
			end.failRunning(r.reviewed(work, looks))
		case d := <-r.reviews.landedOne():
			end.failRunning(r.landedPullRequest(work, d))
		case d := <-r.retired:
			r.retiring--
			end.failRunning(d.runError())
		case <-heartbeat.C:
			end.fail(r.rec.emit("", journal.MonitorHeartbeatData{Active: slices.Sorted(maps.Keys(r.active)), Queued: slices.Clone(r.mq.waiting)}))
		case <-tick.C:
			r.watches.tick()
			stopAsked, err := r.takeRequests()
			end.fail(err)
			if stopAsked {
				// A stop from the dashboard ends the run as Ctrl-C does.
				end.interrupted = true
			}
		case err := <-r.watches.errs:
			end.fail(err)
		case <-interrupt:
			end.interrupted, interrupt = true, nil
		}
		end.fail(r.watches.failed())
		if !end.running() {
			// Stop everything in flight; their results still arrive above.
			stop()
		}
	}
	return end.result(r.result)
}

// idle reports whether nothing is under way that the loop waits for: no
// worker, no attempt at work, no retirement; and, unless the run is
// ending, nothing left in the merge queue, no change paused by setctl
// pause (see waitingForResume) and no pull request in review still
// waited for (see waitForReviews).
func (r *run) idle(end *ending) bool {
	if len(r.active) > 0 || r.mq.busy() || r.retiring > 0 || r.reviews.landingNow() {
		r.reviews.stopWaiting()
		return false
	}
	if !end.running() {
		return true
	}
	if !r.mq.empty() || r.waitingForResume() {
		r.reviews.stopWaiting()
		return false
	}
	return !r.waitForReviews()
}

// workerEnded takes the report of a worker: a change it queued joins the
// merge queue.
func (r *run) workerEnded(d workerResult) error {
	delete(r.active, d.change)
	if s := r.rec.status(d.change); s == state.Queued {
		r.mq.enqueue(d.change)
	}
	return d.runError()
}

// attemptReported takes the report of a merge queue attempt's step: a
// change that landed is retired.
func (r *run) attemptReported(ctx context.Context, res attemptResult) error {
	landed, err := r.mq.afterAttempt(ctx, res)
	if landed != "" {
		r.retireLater(ctx, landed)
	}
	if res.proposed {
		r.reviews.entered()
	}
	return err
}

// runError is the worker's run error, naming its change; nil when none.
func (d workerResult) runError() error {
	if d.err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", d.change, d.err)
}

// result is how a run that ended without an error or an interrupt
// ended: "success" when every change is archived, "failed" when one
// failed or is blocked, "paused" when the others are paused or were
// never started (the run-wide token budget), else "open" when the others
// are in review, their pull requests left open (pull-request mode), or
// pending on a change in review (its dependents wait for its merge).
func (r *run) result() string {
	result := "success"
	review := map[string]bool{} // in review, or waiting for one that is
	for _, name := range r.opts.Graph.Order {
		c, ok := r.opts.Plan.Change(name)
		if !ok {
			continue
		}
		switch s := r.rec.status(name); {
		case s == state.Archived:
		case s.Failed() || s == state.DepBlocked:
			return "failed"
		case s == state.InReview || (s == state.Pending && slices.ContainsFunc(c.DependsOn, func(d string) bool { return review[d] })):
			review[name] = true
			if result == "success" {
				result = "open"
			}
		case s == state.Paused || s == state.Pending:
			result = "paused"
		default:
			return "failed"
		}
	}
	return result
}

// ready reports whether every dependency of the change is on main.
func (r *run) ready(c plan.Change) bool {
	for _, d := range c.DependsOn {
		if r.rec.status(d) != state.Archived {
			return false
		}
	}
	return true
}

// dispatch starts workers, up to maxParallel: first the changes a resumed
// run left in flight, then pending changes whose dependencies are merged
// and that no change at work shares a crossCutting file with
// (crossCuttingHolder), each group in the graph's order (critical path
// first).
func (r *run) dispatch(ctx context.Context, workers *pool.Pool) error {
	inFlight := func(s state.Status) bool {
		// A worker's change left by an interrupted run (queued and
		// integrating changes belong to the merge queue).
		return s.Active() && s != state.Queued && s != state.Integrating
	}
	// New changes wait while setctl pause --all holds them or the run's
	// token budget is spent (looked at once per dispatch), and a change
	// setctl pause CHANGE held waits for its resume.
	spent, err := r.runBudgetSpent()
	held := r.held || spent
	for _, pass := range []func(plan.Change, state.Status) bool{
		func(c plan.Change, s state.Status) bool {
			return inFlight(s) || (s == state.Paused && r.resumable[c.Name])
		},
		func(c plan.Change, s state.Status) bool {
			if s != state.Pending || !r.ready(c) || held || r.heldPending[c.Name] {
				return false
			}
			holder, _ := r.crossCuttingHolder(c.Name)
			return holder == ""
		},
	} {
		for _, name := range r.opts.Graph.Order {
			if len(r.active) >= r.project.MaxParallel {
				return err
			}
			if r.active[name] || r.mq.holds(name) {
				continue
			}
			// Most changes are past dispatch (or failed) in a long run:
			// they are passed over before their plan entry is looked up.
			s := r.rec.status(name)
			if s != state.Pending && s != state.Paused && !inFlight(s) {
				continue
			}
			if c, _ := r.opts.Plan.Change(name); pass(*c, s) {
				r.start(ctx, workers, *c)
			}
		}
	}
	return err
}

// start starts the worker of change c.
func (r *run) start(ctx context.Context, workers *pool.Pool, c plan.Change) {
	r.active[c.Name] = true
	delete(r.resumable, c.Name)
	delete(r.userPaused, c.Name)
	cg, _ := r.opts.Graph.Change(c.Name)
	w := &worker{services: r.services, change: c, graph: cg, plan: r.opts.Plan, wallBudget: r.opts.wallBudget}
	w.adapter, w.adapterErr = adapterOf(r.opts, c)
	workers.Go(func() {
		var err error
		var pc panics.Catcher
		pc.Try(func() { err = w.work(ctx) })
		if rec := pc.Recovered(); rec != nil {
			err = r.fail(c.Name, state.FailedAgentError, "internal error: "+rec.String())
		}
		r.workerDone <- workerResult{change: c.Name, err: err}
	})
}

// retireLater retires a change the merge queue archived (services.retire)
// in a goroutine of its own: the changes that waited for it are
// dispatched, and the queue takes its next change, while its worktree
// and branch go. The loop ends only once it is done. (A run that stops
// before it is done retires the change when it resumes, as it does after
// a crash.)
func (r *run) retireLater(ctx context.Context, change string) {
	r.retiring++
	r.pool.willPark(change)
	go func() {
		var err error
		var pc panics.Catcher
		pc.Try(func() { err = r.retire(ctx, change) })
		if rec := pc.Recovered(); rec != nil {
			err = errors.New("internal error retiring the change: " + rec.String())
		}
		r.pool.doneParking(change)
		r.retired <- workerResult{change: change, err: err}
	}()
}

// blockDependents marks every pending change that depends, directly or
// not, on a failed or blocked change as dep-blocked. It looks through the
// plan only when a change failed or was blocked since it last did (see
// recorder.failures): not on every turn of the loop.
func (r *run) blockDependents() error {
	// Read before the scan: a change that fails during it is looked at
	// again next time (as are the dep-blocks the scan itself makes).
	failures := r.rec.failures()
	if failures == r.blockedAt {
		return nil
	}
	for changed := true; changed; {
		changed = false
		for _, c := range r.opts.Plan.Changes {
			if r.rec.status(c.Name) != state.Pending {
				continue
			}
			for _, d := range c.DependsOn {
				if s := r.rec.status(d); s.Failed() || s == state.DepBlocked {
					if err := r.rec.transition(c.Name, state.DepBlocked, fmt.Sprintf("dependency %s is %s", d, s)); err != nil {
						return err
					}
					changed = true
					break
				}
			}
		}
	}
	r.blockedAt = failures
	return nil
}

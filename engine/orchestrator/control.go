package orchestrator

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/set-engine/set/engine/agent"
	"github.com/set-engine/set/engine/control"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
)

// takeRequests carries out the requests of setctl pause and resume (and
// the dashboard's) appended since the last look, each journaled as
// CONTROL. It runs in the loop goroutine, on the sentinel's tick: the
// control file is read there (one read of what was appended), so a
// request is carried out within a tick of its line being written. stop
// reports whether one of them was a stop (control.Stop): the loop then
// ends the run as it does on Ctrl-C.
func (r *run) takeRequests() (stop bool, err error) {
	// A line that is no request is skipped: it is no reason to stop a
	// run. The requests that came before the loop come first.
	next, _ := r.control.Next()
	reqs := append(r.earlyRequests, next...)
	r.earlyRequests = nil
	for _, req := range reqs {
		if req.Action == control.Stop {
			stop = true
		}
		if err := r.take(req); err != nil {
			return stop, err
		}
	}
	return stop, nil
}

// watchForStop watches the control file, until done is called, for a
// stop that comes before the loop runs (while the baseline judges main):
// that one is journaled, and stop is called, as Ctrl-C ends the apply's
// context. Other requests wait for the loop (run.earlyRequests). done
// returns once the watch ended (with the error journaling a stop met):
// the loop then reads the control file alone.
func (r *run) watchForStop(stop context.CancelFunc) (done func() error) {
	quit, ended := make(chan struct{}), make(chan error, 1)
	go func() {
		tick := time.NewTicker(r.opts.sentinelTick)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				ended <- nil
				return
			case <-tick.C:
			}
			reqs, _ := r.control.Next()
			for _, req := range reqs {
				if req.Action != control.Stop {
					r.earlyRequests = append(r.earlyRequests, req)
					continue
				}
				if err := r.take(req); err != nil {
					stop()
					ended <- err
					return
				}
				stop()
			}
		}
	}()
	return func() error {
		close(quit)
		return <-ended
	}
}

// take carries out one request; a stop is only journaled here, and
// carried out by the loop (see takeRequests).
func (r *run) take(req control.Request) error {
	if req.Action == control.Stop {
		return r.rec.emit("", journal.ControlData{Action: req.Action, By: req.By, ID: req.ID, Changes: []string{}})
	}
	names := []string{req.Change}
	if req.Change == "" {
		names = r.concerned(req.Action)
		r.held = req.Action == control.Pause
	}
	done := journal.ControlData{Action: req.Action, Change: req.Change, By: req.By, ID: req.ID, Changes: []string{}, Skipped: map[string]string{}}
	for _, name := range names {
		if why := r.request(req.Action, name, req.By); why != "" {
			done.Skipped[name] = why
			continue
		}
		done.Changes = append(done.Changes, name)
	}
	sort.Strings(done.Changes)
	if len(done.Skipped) == 0 {
		done.Skipped = nil
	}
	return r.rec.emit("", done)
}

// concerned are the changes a request for every change (--all) is about:
// for a resume the paused ones; for a pause the ones at work, and those
// in the merge queue, which it leaves to finish (and says so). The
// changes not started are held by run.held instead; a resume also lets
// go the ones setctl pause CHANGE held.
func (r *run) concerned(action string) []string {
	var names []string
	for _, c := range r.opts.Plan.Changes {
		s := r.rec.status(c.Name)
		if action == control.Resume && (s == state.Paused || r.heldPending[c.Name]) ||
			action == control.Pause && (r.active[c.Name] || s == state.Queued || s == state.Integrating) {
			names = append(names, c.Name)
		}
	}
	return names
}

// request pauses or resumes one change, as by asked, or says why it does
// not. A change not started is held (run.heldPending) rather than paused.
func (r *run) request(action, name, by string) (skipped string) {
	c, ok := r.opts.Plan.Change(name)
	if !ok {
		return "not in the run's plan"
	}
	s := r.rec.status(name)
	if action == control.Resume {
		if r.heldPending[name] {
			delete(r.heldPending, name)
			return ""
		}
		if s != state.Paused {
			return "not paused"
		}
		r.resumable[name] = true
		delete(r.userPaused, name)
		return ""
	}
	switch {
	case s == state.Paused:
		return "already paused"
	case s == state.Queued || s == state.Integrating:
		return "in the merge queue, which finishes it"
	case s == state.Pending && r.heldPending[name]:
		return "already held"
	case s == state.Pending:
		r.heldPending[name] = true
		return ""
	case s == state.Archived || s == state.Merged:
		return "merged"
	case s.Terminal():
		return string(s)
	case !r.active[name]:
		return "not at work"
	}
	r.userPaused[name] = true
	// The reason is the change's error while it is paused: it says who
	// paused it.
	reason := "paused by setctl pause"
	if by != "" {
		reason = "paused by " + by
	}
	r.watches.of(*c).stop(&agent.Stop{Action: "pause", Reason: reason})
	return ""
}

// waitingForResume reports whether the run waits for setctl resume: a
// change setctl pause paused is still paused, one it held is still
// pending, or dispatch is held.
func (r *run) waitingForResume() bool {
	if r.held {
		return true
	}
	for name := range r.userPaused {
		if r.rec.status(name) == state.Paused {
			return true
		}
	}
	for name := range r.heldPending {
		if r.rec.status(name) == state.Pending {
			return true
		}
	}
	return false
}

// runBudgetSpent reports whether the run's changes have spent the
// run-wide token budget (budgets.tokens.run); the first time, it is
// journaled as BUDGET_EXCEEDED, and an error journaling it is a run
// error. Nothing new is dispatched after.
func (r *run) runBudgetSpent() (bool, error) {
	limit := int64(r.project.Budgets.RunTokens())
	if limit <= 0 {
		return false, nil
	}
	if r.runTokens {
		return true, nil
	}
	var used int64
	for _, c := range r.opts.Plan.Changes {
		used += r.rec.change(c.Name).Tokens.Total()
	}
	if used < limit {
		return false, nil
	}
	r.runTokens = true
	if err := r.rec.emit("", journal.BudgetExceededData{Budget: "runTokens", Used: used, Limit: limit, Field: "budgets.tokens.run"}); err != nil {
		return true, fmt.Errorf("run token budget: %w", err)
	}
	return true, nil
}

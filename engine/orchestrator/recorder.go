package orchestrator

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
)

// recorder is the single writer of a run's journal and state.
//
// Invariants:
//   - The state is the journal's projection: every event is applied to it
//     once committed (fsync'd), by the journal's commit hook (apply), in
//     Seq order, before the event's emit returns. No lock of the recorder
//     is held across the journal's fsync, so the events that workers and
//     the merge queue emit at the same moment share one fsync (group
//     commit, see journal.Writer).
//   - Nobody sees an event before it is durable: not the state, not the
//     observer (which sees it after its emit's commit), not the journal's
//     subscribers.
//   - state.json is a cache of the journal, written behind by a saver
//     goroutine: a snapshot encoded from the state at most every
//     saveInterval while events arrive, and at close; each one atomically
//     and newer than the last. Since the state holds only committed
//     events, a crash can leave state.json behind the journal, never ahead
//     of it, and a restart rebuilds the state from the journal anyway. An
//     emit does no work that grows with the plan.
type recorder struct {
	w         *journal.Writer
	statePath string

	// mu guards st, dirty, saveErr, failed and pending.
	mu sync.Mutex
	st *state.State
	// failed counts the moves of a change into a failed status or
	// dep-blocked that the recorder applied: it only grows, so a reader
	// that saw it unchanged knows no change failed meanwhile.
	failed int
	// pending counts the changes of st that are pending.
	pending int
	// dirty is set when st has events that state.json lacks; wake tells
	// the saver so.
	dirty   bool
	saveErr error
	wake    chan struct{}
	stop    chan struct{}
	saved   chan struct{}

	// learned are the run's events that what a prompt hands on of the
	// run's other changes is derived from (see handOn): the ones
	// learn.SiblingEvent names and AGENT_SESSION_DECISION, in Seq order,
	// from the run's first event (a resumed run's are seeded from the
	// journal). Guarded by mu; appended to, never changed.
	learned []journal.Event

	// observe, if set, sees every event of a change once it is recorded,
	// in the goroutine that recorded it, with no lock held (the sentinel
	// evaluates its rules there).
	observe func(journal.Event)
}

// saveInterval is the least time between two snapshots the saver writes
// while a run records events. Nothing of set reads state.json during a
// run (every reader rebuilds the state from the journal); the snapshot
// costs an encoding of every change and an fsync, so it is taken rarely.
const saveInterval = time.Second

// newRecorder makes the recorder of st, the state rebuilt from the
// journal that openJournal opens (with the recorder's commit hook).
func newRecorder(st *state.State, statePath string, openJournal func(onCommit journal.Option) (*journal.Writer, error)) (*recorder, error) {
	r := &recorder{st: st, statePath: statePath,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), saved: make(chan struct{})}
	r.countPending()
	w, err := openJournal(journal.OnCommit(r.apply))
	if err != nil {
		return nil, err
	}
	r.w = w
	go r.saver()
	return r, nil
}

// apply is the journal's commit hook: it applies a committed event to the
// state and tells the saver.
func (r *recorder) apply(e journal.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var before state.Status
	if c := r.st.Changes[e.Change]; c != nil {
		before = c.Status
	}
	if err := state.Apply(r.st, e); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	if handOnReads(e) {
		r.learned = append(r.learned, e)
	}
	if e.Change == "" {
		// A run's event (PLAN_CREATED) may add changes: they are
		// counted again. Such events are few and far between.
		r.countPending()
	}
	if c := r.st.Changes[e.Change]; c != nil && c.Status != before {
		if c.Status.Failed() || c.Status == state.DepBlocked {
			r.failed++
		}
		if c.Status == state.Pending {
			r.pending++
		}
		if before == state.Pending {
			r.pending--
		}
	}
	if !r.dirty {
		r.dirty = true
		select {
		case r.wake <- struct{}{}:
		default: // a wake-up is pending already
		}
	}
	return nil
}

// saver writes a snapshot whenever the state has news, at most every
// saveInterval, until close.
func (r *recorder) saver() {
	defer close(r.saved)
	for {
		select {
		case <-r.wake:
		case <-r.stop:
			return
		}
		r.save()
		// The events of the next saveInterval go into one snapshot.
		select {
		case <-time.After(saveInterval):
		case <-r.stop:
			return
		}
	}
}

// save encodes the state, if it has news, and writes it to state.json.
// Only the saver and close (after the saver stopped) call it, so snapshots
// are written one at a time, each newer than the last.
func (r *recorder) save() {
	r.mu.Lock()
	if !r.dirty {
		r.mu.Unlock()
		return
	}
	r.dirty = false
	data, err := state.Encode(r.st)
	r.mu.Unlock()
	if err == nil {
		err = state.WriteEncoded(r.statePath, data)
	}
	if err != nil {
		r.mu.Lock()
		r.saveErr = cmp.Or(r.saveErr, err)
		r.mu.Unlock()
	}
}

// close stops the saver and writes the last snapshot.
func (r *recorder) close() error {
	close(r.stop)
	<-r.saved
	r.save()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.saveErr
}

// emit records one event of change ("" for run-level events), then shows
// an event of a change to observe.
func (r *recorder) emit(change string, p journal.Payload) error {
	e, err := r.record(change, p)
	if err == nil && change != "" && r.observe != nil {
		r.observe(e)
	}
	return err
}

// record appends one event to the journal; the journal's commit hook
// (apply) has applied it to the state when it returns.
func (r *recorder) record(change string, p journal.Payload) (journal.Event, error) {
	e, err := r.w.Append(change, p)
	if err != nil {
		if e.Seq == 0 {
			return e, fmt.Errorf("journal: %w", err)
		}
		return e, err // committed; the change journal or the state failed
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return e, r.saveErr
}

// transition moves change to status to, recording why. Moving to the
// status it already has records nothing. A move the change lifecycle does
// not allow is an error, and is not recorded: the journal holds only
// transitions its projection accepts.
func (r *recorder) transition(change string, to state.Status, reason string) error {
	from := r.status(change)
	if from == to {
		return nil
	}
	if err := state.CheckTransition(from, to); err != nil {
		return fmt.Errorf("change %s: %w", change, err)
	}
	return r.emit(change, journal.StateChangeData{From: string(from), To: string(to), Reason: reason})
}

// status is the current status of change.
func (r *recorder) status(change string) state.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.st.Changes[change]; ok {
		return c.Status
	}
	return ""
}

// countPending counts the pending changes of the state anew. r.mu is
// held, or r is not yet shared.
func (r *recorder) countPending() {
	r.pending = 0
	for _, c := range r.st.Changes {
		if c.Status == state.Pending {
			r.pending++
		}
	}
}

// pendingChanges is how many changes are pending: the dispatches to come
// (at most; some may end dep-blocked).
func (r *recorder) pendingChanges() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pending
}

// failures counts the moves of changes into a failed status or
// dep-blocked so far (see recorder.failed).
func (r *recorder) failures() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

// replans is how many replan cycles the run has had.
func (r *recorder) replans() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st.Replans
}

// names returns the changes the journal knows, in the state's order.
func (r *recorder) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.st.Order...)
}

// change returns a copy of the state of one change.
func (r *recorder) change(name string) state.Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.st.Changes[name]; ok {
		return *c
	}
	return state.Change{Name: name}
}

// runStart returns when the run started (its first RUN_STARTED) and the
// changes its plan named (PLAN_CREATED), which a resumed run keeps.
func (r *recorder) runStart() (time.Time, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st.Started, slices.Clone(r.st.Plan.Changes)
}

// state is the recorded state. The caller must not change it, nor use it
// while events are still recorded.
func (r *recorder) state() *state.State {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st
}

// runID is the ID of the run being recorded.
func (r *recorder) runID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st.Run
}

// pullRequest returns a copy of the change's pull request, if it has one
// (pull-request mode).
func (r *recorder) pullRequest(name string) (state.PullRequest, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.st.Changes[name]
	if !ok || c.PullRequest == nil {
		return state.PullRequest{}, false
	}
	pr := *c.PullRequest
	pr.Sent = slices.Clone(pr.Sent)
	pr.Sending = slices.Clone(pr.Sending)
	return pr, true
}

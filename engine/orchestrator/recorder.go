package orchestrator

import (
	"fmt"
	"sync"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
)

// recorder is the single writer of a run's journal and state. Every event
// goes to the journal first (fsync'd) and then into the in-memory state;
// state.json, a cache of the journal, is written behind by a saver
// goroutine, always atomically and always newer than the last one. A
// crash can leave state.json behind the journal, never ahead of it, and a
// restart rebuilds the state from the journal anyway.
type recorder struct {
	mu        sync.Mutex
	w         *journal.Writer
	st        *state.State
	statePath string

	// snapshot is the latest encoded state not yet written (nil when
	// none); wake tells the saver there is one.
	snapshot []byte
	wake     chan struct{}
	saved    chan struct{}
	saveErr  error

	// observe, if set, sees every event of a change once it is recorded,
	// in the goroutine that recorded it, with no lock held (the sentinel
	// evaluates its rules there).
	observe func(journal.Event)
}

func newRecorder(w *journal.Writer, st *state.State, statePath string) *recorder {
	r := &recorder{w: w, st: st, statePath: statePath, wake: make(chan struct{}, 1), saved: make(chan struct{})}
	go r.saver()
	return r
}

// saver writes the newest snapshot whenever there is one, until close.
func (r *recorder) saver() {
	defer close(r.saved)
	for range r.wake {
		r.mu.Lock()
		data := r.snapshot
		r.snapshot = nil
		r.mu.Unlock()
		if data == nil {
			continue
		}
		if err := state.WriteEncoded(r.statePath, data); err != nil {
			r.mu.Lock()
			r.saveErr = err
			r.mu.Unlock()
		}
	}
}

// close writes the last snapshot and stops the saver.
func (r *recorder) close() error {
	close(r.wake)
	<-r.saved
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.snapshot != nil {
		if err := state.WriteEncoded(r.statePath, r.snapshot); err != nil {
			return err
		}
	}
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

// record appends one event to the journal and applies it to the state.
func (r *recorder) record(change string, p journal.Payload) (journal.Event, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, err := r.w.Append(change, p)
	if err != nil {
		return e, fmt.Errorf("journal: %w", err)
	}
	if err := state.Apply(r.st, e); err != nil {
		return e, fmt.Errorf("state: %w", err)
	}
	data, err := state.Encode(r.st)
	if err != nil {
		return e, err
	}
	r.snapshot = data
	select {
	case r.wake <- struct{}{}:
	default: // the saver has a wake-up pending and will take this snapshot
	}
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

// state is the recorded state. The caller must not change it, nor use it
// while events are still recorded.
func (r *recorder) state() *state.State {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st
}

package orchestrator

import (
	"fmt"
	"sync"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
)

// recorder is the single writer of a run's journal and state. Every event
// goes to the journal first (fsync'd), then into the in-memory state, then
// into state.json (atomically); so state.json never holds what the journal
// does not, and a crash between the two is repaired by replaying the
// journal.
type recorder struct {
	mu        sync.Mutex
	w         *journal.Writer
	st        *state.State
	statePath string
}

// emit records one event of change ("" for run-level events).
func (r *recorder) emit(change string, p journal.Payload) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, err := r.w.Append(change, p)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := state.Apply(r.st, e); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	if err := state.Save(r.statePath, r.st); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	return nil
}

// transition moves change to status to, recording why. Moving to the
// status it already has records nothing.
func (r *recorder) transition(change string, to state.Status, reason string) error {
	from := r.status(change)
	if from == to {
		return nil
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

// change returns a copy of the state of one change.
func (r *recorder) change(name string) state.Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.st.Changes[name]; ok {
		return *c
	}
	return state.Change{Name: name}
}

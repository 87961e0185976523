package orchestrator

import (
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
)

// TestRecorderConcurrentEmits records events of many changes from many
// goroutines at once: each emit sees its own event in the state when it
// returns; state.json, read while events are recorded, is never ahead of
// events.jsonl; and after close it is the journal's projection.
func TestRecorderConcurrentEmits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	statePath := filepath.Join(dir, "state.json")
	rec, err := newRecorder(state.New(), statePath, func(onCommit journal.Option) (*journal.Writer, error) {
		return journal.Open(dir, "run-1", onCommit)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.w.Close()
	const changes, iterations = 8, 30
	names := make([]string, changes)
	for i := range names {
		names[i] = fmt.Sprintf("c%d", i)
	}
	if err := rec.emit("", journal.PlanCreatedData{Strategy: "explicit", Changes: names}); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var reader sync.WaitGroup
	reader.Add(1)
	go func() {
		defer reader.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			st, err := state.Load(statePath)
			if err != nil {
				continue // not written yet
			}
			// Read after the snapshot: the journal can only have grown.
			events, err := journal.ReadFile(filepath.Join(dir, journal.EventsFile))
			if err != nil {
				t.Error(err)
				return
			}
			if n := int64(len(events)); st.LastSeq > n {
				t.Errorf("state.json holds event %d, events.jsonl only %d", st.LastSeq, n)
				return
			}
		}
	}()

	var wg sync.WaitGroup
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= iterations; i++ {
				if err := rec.emit(name, journal.AgentIterationData{Iteration: i}); err != nil {
					t.Error(err)
					return
				}
				if got := rec.change(name).Iteration; got != i {
					t.Errorf("%s: iteration %d after its emit returned, want %d", name, got, i)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	reader.Wait()
	if err := rec.close(); err != nil {
		t.Fatal(err)
	}
	saved, err := state.Load(statePath)
	if err != nil {
		t.Fatal(err)
	}
	rebuilt, err := state.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if saved.LastSeq != 1+changes*iterations || !reflect.DeepEqual(saved, rebuilt) {
		t.Fatalf("state.json after close (last event %d) is not the journal's projection (last event %d)", saved.LastSeq, rebuilt.LastSeq)
	}
}

// TestRecorderCountsFailuresAndPending: failures grows with every move of
// a change into a failed status or dep-blocked, and with nothing else, so
// that the loop looks for changes to block only after one failed; pending
// follows the changes waiting for dispatch, new plans included.
func TestRecorderCountsFailuresAndPending(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec, err := newRecorder(state.New(), filepath.Join(dir, "state.json"), func(onCommit journal.Option) (*journal.Writer, error) {
		return journal.Open(dir, "run-1", onCommit)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.w.Close()
	if err := rec.emit("", journal.PlanCreatedData{Strategy: "explicit", Changes: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	if got := rec.pendingChanges(); got != 2 {
		t.Errorf("pending after the plan = %d, want 2", got)
	}
	for _, step := range []struct {
		change            string
		to                state.Status
		failures, pending int
	}{
		{"a", state.Dispatched, 0, 1},
		{"a", state.Implementing, 0, 1},
		{"a", state.FailedAgentError, 1, 1},
		{"b", state.DepBlocked, 2, 0},
		{"a", state.Pending, 2, 1}, // a new apply retries it
		{"b", state.Pending, 2, 2},
		{"a", state.Dispatched, 2, 1},
		{"a", state.Implementing, 2, 1},
		{"a", state.FailedStalled, 3, 1},
	} {
		if err := rec.transition(step.change, step.to, ""); err != nil {
			t.Fatal(err)
		}
		if got := rec.failures(); got != step.failures {
			t.Errorf("after %s → %s: failures = %d, want %d", step.change, step.to, got, step.failures)
		}
		if got := rec.pendingChanges(); got != step.pending {
			t.Errorf("after %s → %s: pending = %d, want %d", step.change, step.to, got, step.pending)
		}
	}
	// A new plan with one more change.
	if err := rec.emit("", journal.PlanCreatedData{Strategy: "explicit", Changes: []string{"a", "b", "c"}}); err != nil {
		t.Fatal(err)
	}
	if got := rec.pendingChanges(); got != 2 {
		t.Errorf("pending after a new plan adds c = %d, want 2 (b and c)", got)
	}
	if err := rec.close(); err != nil {
		t.Fatal(err)
	}
}

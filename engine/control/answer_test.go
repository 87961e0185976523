package control

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/set-engine/set/engine/journal"
)

// The answer to a request is its own CONTROL event after the sequence
// number the requester read: another request's answer, or its own from
// before, is not it; a wait that runs out says so with ctx's error.
func TestAwaitAnswer(t *testing.T) {
	setDir := t.TempDir()
	w, err := journal.Open(setDir, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	events := filepath.Join(setDir, "events.jsonl")
	if _, err := w.Append("", journal.ControlData{ID: "mine", Action: Pause, Changes: []string{"old"}}); err != nil {
		t.Fatal(err)
	}
	from := w.LastSeq()
	go func() {
		time.Sleep(50 * time.Millisecond)
		w.Append("", journal.ControlData{ID: "other", Action: Pause, Changes: []string{"farewell"}})
		w.Append("", journal.ControlData{ID: "mine", Action: Pause, Changes: []string{"greet"}})
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	answer, err := AwaitAnswer(ctx, events, from, "mine")
	if err != nil || len(answer.Changes) != 1 || answer.Changes[0] != "greet" {
		t.Fatalf("the answer: %+v, %v", answer, err)
	}

	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := AwaitAnswer(ctx, events, w.LastSeq(), "unanswered"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a wait that runs out: %v", err)
	}
}

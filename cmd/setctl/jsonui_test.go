package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/orchestrator"
	"github.com/set-engine/set/engine/state"
)

// TestJSONUIReadsBackDroppedEvents: events the journal's subscription
// dropped (a reader slower than the run) come from events.jsonl, so the
// stream holds every event of the run once, in order, and then the
// summary.
func TestJSONUIReadsBackDroppedEvents(t *testing.T) {
	setDir := t.TempDir()
	w, err := journal.Open(setDir, "r1")
	if err != nil {
		t.Fatal(err)
	}
	var events []journal.Event
	for _, a := range []struct {
		change string
		p      journal.Payload
	}{
		{"", journal.RunStartedData{Changes: []string{"greet"}, MaxParallel: 1}},
		{"greet", journal.StateChangeData{From: "pending", To: "dispatched"}},
		{"greet", journal.StateChangeData{From: "dispatched", To: "implementing"}},
		{"greet", journal.AgentIterationData{Iteration: 1, Result: "error", Error: "boom"}},
		{"greet", journal.StateChangeData{From: "implementing", To: "failed:agent_error", Reason: "boom"}},
		{"", journal.RunFinishedData{Result: "failed"}},
	} {
		e, err := w.Append(a.change, a.p)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	now := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	ui := newJSONUI(&out, now)
	ui.version()
	ui.start("main", filepath.Join(setDir, journal.EventsFile))
	// The subscription delivers 1 and 3, then nothing: 2 is read back
	// before 3, and 4 to 6 at the end.
	ui.event(events[0])
	ui.event(events[2])
	ui.end()
	ui.summary(&orchestrator.Summary{Result: "failed", Statuses: map[string]state.Status{"greet": state.FailedAgentError}}, "abc", nil)

	var types []string
	var seqs []int64
	var levels []string
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var l uiLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		types = append(types, l.Type)
		if l.Event != nil {
			seqs = append(seqs, l.Event.Seq)
			levels = append(levels, l.Level)
		}
	}
	if want := []string{"version", "event", "event", "event", "event", "event", "event", "summary"}; !slices.Equal(types, want) {
		t.Errorf("line types = %v, want %v", types, want)
	}
	if want := []int64{1, 2, 3, 4, 5, 6}; !slices.Equal(seqs, want) {
		t.Errorf("event seqs = %v, want %v", seqs, want)
	}
	if want := []string{"info", "info", "info", "error", "error", "error"}; !slices.Equal(levels, want) {
		t.Errorf("event levels = %v, want %v", levels, want)
	}
}

func TestJSONUIDiagnostic(t *testing.T) {
	var out bytes.Buffer
	ui := newJSONUI(&out, func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) })
	ui.diagnose("warning", "docs/spec.md:3: REQ-A-01 has no scenario\nadd one")
	ui.diagnose("error", "project.spec: spec file docs/missing.md: no such file: set.cue:7:8")
	want := `{"@level":"warn","@message":"docs/spec.md:3: REQ-A-01 has no scenario\nadd one","@timestamp":"2026-01-02T03:04:05Z","type":"diagnostic","diagnostic":{"severity":"warning","summary":"docs/spec.md:3: REQ-A-01 has no scenario","detail":"add one"}}
{"@level":"error","@message":"project.spec: spec file docs/missing.md: no such file: set.cue:7:8","@timestamp":"2026-01-02T03:04:05Z","type":"diagnostic","diagnostic":{"severity":"error","summary":"project.spec: spec file docs/missing.md: no such file: set.cue:7:8"}}
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

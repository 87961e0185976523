package history

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm/usage"
	"github.com/set-engine/set/engine/report"
)

// twoRuns is a journal of two runs: run-1 plans greet, calls a model once
// and merges greet; run-2, killed, plans part and calls no model.
func twoRuns(t *testing.T) []journal.Event {
	t.Helper()
	dir := t.TempDir()
	at := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	clock := func() time.Time { at = at.Add(time.Second); return at }
	write := func(run string, events func(w *journal.Writer) error) {
		w, err := journal.Open(dir, run, journal.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if err := events(w); err != nil {
			t.Fatal(err)
		}
	}
	write("run-1", func(w *journal.Writer) error {
		for _, p := range []struct {
			change string
			p      journal.Payload
		}{
			{"", journal.RunStartedData{Changes: []string{"greet"}}},
			{"", journal.PlanCreatedData{Changes: []string{"greet"}}},
			{"greet", journal.LLMCallData{Role: "implement", Tokens: usage.Tokens{Input: 100, Output: 20}, CostUSD: 0.5}},
			{"greet", journal.MergedData{Commit: "b", Previous: "a"}},
			{"", journal.RunFinishedData{Result: "success"}},
		} {
			if _, err := w.Append(p.change, p.p); err != nil {
				return err
			}
		}
		return nil
	})
	write("run-2", func(w *journal.Writer) error {
		if _, err := w.Append("", journal.RunStartedData{Changes: []string{"part"}}); err != nil {
			return err
		}
		_, err := w.Append("", journal.PlanCreatedData{Changes: []string{"part"}})
		return err
	})
	events, err := journal.ReadFile(dir + "/" + journal.EventsFile)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

func TestRuns(t *testing.T) {
	events := twoRuns(t)
	runs := Runs(events)
	if len(runs) != 2 || runs[0] != (Run{"run-1", 0, 4}) || runs[1] != (Run{"run-2", 5, 6}) {
		t.Fatalf("runs = %+v", runs)
	}
	if r, err := Find(runs, ""); err != nil || r.ID != "run-2" {
		t.Errorf(`Find("") = %+v, %v; want run-2`, r, err)
	}
	if r, err := Find(runs, "run-1"); err != nil || len(r.Through(events)) != 5 || len(r.Own(events)) != 5 {
		t.Errorf("Find(run-1) = %+v, %v", r, err)
	}
	if _, err := Find(runs, "run-3"); err == nil || !strings.Contains(err.Error(), "no run run-3 in the journal (its runs: run-1 and run-2") {
		t.Errorf("Find(run-3): %v", err)
	}
	if _, err := Find(nil, ""); err != ErrNoRun {
		t.Errorf("Find of no run: %v", err)
	}
}

func TestSummaries(t *testing.T) {
	events := twoRuns(t)
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	got, err := Summaries(events, report.Liveness{}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d summaries, want 2", len(got))
	}
	one, two := got[0], got[1]
	if one.ID != "run-1" || one.State != report.Finished || one.Result != "success" || one.Merged != 1 || one.Changes != 1 ||
		one.Usage.Calls != 1 || one.Usage.Tokens.Input != 100 || one.Usage.CostUSD != 0.5 || one.DurationMS != 4000 {
		t.Errorf("run-1: %+v", one)
	}
	if two.ID != "run-2" || two.State != report.NotRunning || two.Merged != 0 || two.Usage.Calls != 0 {
		t.Errorf("run-2: %+v", two)
	}
	// Only the latest run runs under the lock.
	got, err = Summaries(events, report.Liveness{Held: true, PID: 7}, now)
	if err != nil || got[0].State != report.Finished || got[1].State != report.Running {
		t.Errorf("with the lock held: %+v, %v", got, err)
	}
}

// TestSummariesOfAFinishedLatest: while a new apply holds the lock before
// its run is journaled, the latest run listed is the one that finished,
// with its result, not a run starting.
func TestSummariesOfAFinishedLatest(t *testing.T) {
	events := twoRuns(t)[:5] // run-1 only, finished
	got, err := Summaries(events, report.Liveness{Held: true, PID: 7}, time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	if err != nil || len(got) != 1 || got[0].State != report.Finished || got[0].Result != "success" || got[0].DurationMS != 4000 {
		t.Errorf("with the lock held by a new apply: %+v, %v", got, err)
	}
}

func TestLater(t *testing.T) {
	runs := Runs(twoRuns(t))
	if got := Later(runs, runs[0]); got != "run-2" {
		t.Errorf("Later(run-1) = %q, want run-2", got)
	}
	if got := Later(runs, runs[1]); got != "" {
		t.Errorf("Later(the latest) = %q, want none", got)
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	v, err := Read(dir, "")
	if err != nil || v.Journaled || !v.Latest || v.State == nil || len(v.Runs) != 0 {
		t.Fatalf("Read of a project that never ran: %+v, %v", v, err)
	}
	if _, err := Read(dir, "run-1"); !errors.Is(err, ErrNoRun) {
		t.Errorf("Read(run-1) of a project that never ran: %v, want ErrNoRun", err)
	}

	var lines []byte
	for _, e := range twoRuns(t) {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(append(lines, b...), '\n')
	}
	if err := os.WriteFile(filepath.Join(dir, journal.EventsFile), lines, 0o644); err != nil {
		t.Fatal(err)
	}
	v, err = Read(dir, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if !v.Journaled || v.Latest || v.Run.ID != "run-1" || v.State.Run != "run-1" || v.Live.Later != "run-2" || v.Live.Held {
		t.Errorf("Read(run-1): run %+v, latest %v, state of %s, live %+v", v.Run, v.Latest, v.State.Run, v.Live)
	}
	if err := v.Show(v.Runs[1]); err != nil || !v.Latest || v.State.Run != "run-2" || v.Live.Later != "" {
		t.Errorf("Show(run-2): latest %v, state of %s, live %+v, %v", v.Latest, v.State.Run, v.Live, err)
	}
	var unknown *UnknownRunError
	if _, err := Read(dir, "run-3"); !errors.As(err, &unknown) || unknown.ID != "run-3" {
		t.Errorf("Read(run-3): %v, want an *UnknownRunError", err)
	}
}

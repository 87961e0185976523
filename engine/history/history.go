// Package history reads the runs a project's journal keeps. Every run set
// applies in a project appends to the one journal, .set/events.jsonl, and
// every event names its run: a run is the events of one run ID. setctl
// runs lists them, the --run flags of status, events, explain and logs
// and the dashboard's ?run= pick one, and prune removes old ones.
//
// Invariants:
//   - A run's events are contiguous in the journal: one apply runs per
//     project at a time (the lock), and a resumed run goes on under its
//     own ID, so a run has ended (finished or been killed) before the
//     next one starts.
//   - A run is seen as the journal stood when its last event was written:
//     its projection is state.Rebuild of Through, so what came before it
//     (an earlier plan's changes, the numbers that name their logs) is
//     part of it as it was then, and nothing written after it is.
package history

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/report"
	"github.com/set-engine/set/engine/state"
)

// Run is one run of a journal: the events from First to Last (indexes
// into the events it was found in) are its own.
type Run struct {
	ID          string
	First, Last int
}

// Runs are the runs of events (a journal, in Seq order), oldest first.
func Runs(events []journal.Event) []Run {
	var runs []Run
	for i, e := range events {
		if n := len(runs); n > 0 && runs[n-1].ID == e.Run {
			runs[n-1].Last = i
			continue
		}
		runs = append(runs, Run{ID: e.Run, First: i, Last: i})
	}
	return runs
}

// Through is the journal as it stood at the end of r: the events up to
// r's last, which state.Rebuild turns into r's projection.
func (r Run) Through(events []journal.Event) []journal.Event { return events[:r.Last+1] }

// Own are r's own events.
func (r Run) Own(events []journal.Event) []journal.Event { return events[r.First : r.Last+1] }

// Later is the ID of the run that came after r among runs: an earlier
// run is seen as it ended, and a run that stopped before its end was not
// resumed but followed by it. "" when r is the latest.
func Later(runs []Run, r Run) string {
	for i, x := range runs {
		if x == r && i+1 < len(runs) {
			return runs[i+1].ID
		}
	}
	return ""
}

// ErrNoRun is Find's error for a journal without any run.
var ErrNoRun = errors.New("no run yet")

// Find is the run of runs with ID id; the latest when id is "". An ID
// no run has is an *UnknownRunError, which lists the IDs there are.
func Find(runs []Run, id string) (Run, error) {
	if len(runs) == 0 {
		return Run{}, ErrNoRun
	}
	if id == "" {
		return runs[len(runs)-1], nil
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		if r.ID == id {
			return r, nil
		}
		ids[i] = r.ID
	}
	return Run{}, &UnknownRunError{ID: id, Runs: ids}
}

// UnknownRunError is Find's error for an ID the journal has no run of.
type UnknownRunError struct {
	ID   string
	Runs []string // the IDs of the journal's runs, oldest first
}

func (e *UnknownRunError) Error() string {
	return fmt.Sprintf("no run %s in the journal (its runs: %s; setctl runs lists them)", e.ID, english.List(e.Runs))
}

// Summary is one run as setctl runs and the dashboard's Runs page list
// it.
type Summary struct {
	ID string `json:"id"`
	// State and Result are the run's as report.Run has them: an earlier
	// run is finished, or not running when it was stopped before its end
	// and never resumed.
	State  string `json:"state"`
	Result string `json:"result,omitempty"`
	// Started is when its first apply started; DurationMS runs to its
	// last event (to now while it runs).
	Started    time.Time `json:"started,omitzero"`
	DurationMS int64     `json:"durationMs"`
	// Changes counts the changes its plan named; Merged those it put on
	// main (a MERGED event of the run).
	Changes int `json:"changes"`
	Merged  int `json:"merged"`
	// Usage sums the run's model calls (the agents' and the planner's);
	// Calls is 0 when none was journaled, as for exec agents, which report
	// no tokens.
	Usage state.Usage `json:"usage"`
}

// Summaries are the runs of events, oldest first. live is the lock's
// word on the project, which only the latest run, unfinished, can be
// running under; now is the end of a running run's duration.
func Summaries(events []journal.Event, live report.Liveness, now time.Time) ([]Summary, error) {
	runs := Runs(events)
	out := make([]Summary, 0, len(runs))
	st := state.New()
	for i, r := range runs {
		merged := map[string]bool{}
		for _, e := range r.Own(events) {
			if err := state.Apply(st, e); err != nil {
				return nil, err
			}
			if e.Type == journal.Merged {
				merged[e.Change] = true
			}
		}
		l := report.Liveness{}
		if i == len(runs)-1 && !st.Finished {
			// A finished run stays so while a new apply, holding the
			// lock, has not journaled its own run yet.
			l = live
		}
		rr := report.Build(st, l, now).Run
		out = append(out, Summary{
			ID: r.ID, State: rr.State, Result: rr.Result, Started: rr.Started, DurationMS: rr.DurationMS,
			Changes: len(st.Plan.Changes), Merged: len(merged), Usage: st.RunUsage,
		})
	}
	return out, nil
}

// View is one run of a project's journal as the views of a run read it
// (setctl status, events, explain and logs; the dashboard's pages): the
// whole journal, its runs, the run shown, the projection of the journal
// through that run's end, and whether an apply runs it.
//
// Invariant: only the latest run can be running, so Live is the lock's
// word for the latest run; an earlier one is seen as it ended, its Live
// naming the run that came after it (Later).
type View struct {
	// Journaled: the project has a journal; Journal is all of it, Runs
	// its runs.
	Journaled bool
	Journal   []journal.Event
	Runs      []Run
	// Run is the run shown, zero when the journal has none; Latest: it
	// is the journal's latest, or the journal has none.
	Run    Run
	Latest bool
	State  *state.State
	Live   report.Liveness

	setDir string
}

// Read reads the journal of the run directory setDir (.set), and shows
// its run id: the latest when id is "". A project that never ran shows
// the state before any event; an id the journal has no run of is Find's
// error (ErrNoRun when it has none).
func Read(setDir, id string) (*View, error) {
	events, err := journal.ReadFile(filepath.Join(setDir, journal.EventsFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	v := ViewOf(setDir, events)
	v.Journaled = err == nil
	r, err := Find(v.Runs, id)
	switch {
	case errors.Is(err, ErrNoRun) && id == "":
		v.Latest, v.State = true, state.New()
		return v, v.RefreshLiveness()
	case err != nil:
		return nil, err
	}
	return v, v.Show(r)
}

// ViewOf is a View of the journal events of the run directory setDir,
// read already, that shows no run yet: Show picks one.
func ViewOf(setDir string, events []journal.Event) *View {
	return &View{Journaled: true, Journal: events, Runs: Runs(events), setDir: setDir}
}

// Show makes r, a run of v's journal, the run v shows: its projection
// through its end, and the lock's word only if it is the latest.
func (v *View) Show(r Run) error {
	st, err := state.Rebuild(r.Through(v.Journal))
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(v.setDir, journal.EventsFile), err)
	}
	v.State, v.Run, v.Latest = st, r, r.Last == len(v.Journal)-1
	if !v.Latest {
		v.Live = report.Liveness{Later: Later(v.Runs, r)}
		return nil
	}
	return v.RefreshLiveness()
}

// RefreshLiveness asks the lock again whether an apply runs; an earlier
// run than the latest is never running.
func (v *View) RefreshLiveness() error {
	if !v.Latest {
		return nil
	}
	held, pid, err := state.LockHolder(v.setDir)
	v.Live = report.Liveness{Held: held, PID: pid}
	return err
}

package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/history"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/load"
	"github.com/set-engine/set/engine/report"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/state"
)

// runView is what the views of a run (status, events, explain, logs) read:
// the project's run directory and the run of its journal they show (the
// latest, or the one --run names; see history.View). They never load
// set.cue: a run is watched with the configuration it started with,
// whatever set.cue holds now.
type runView struct {
	layout rundir.Layout
	*history.View
}

// readRun reads the run id of the project e's directory is in
// (load.FindRoot, as vet and apply find it): the latest when id is "".
// An id the journal has no run of is history.Find's error.
func readRun(e *env, id string) (*runView, error) {
	root, err := load.FindRoot(e.dir)
	if err != nil {
		return nil, err
	}
	v := &runView{layout: rundir.New(root)}
	v.View, err = history.Read(v.layout.Dir(), id)
	if errors.Is(err, history.ErrNoRun) {
		return nil, errNoRun
	}
	return v, err
}

// report is the run's report at now.
func (v *runView) report(now time.Time) report.Report {
	return report.Build(v.State, v.Live, now)
}

// errNoRun is the error of a view that needs a run in a project that has
// none.
var errNoRun = errors.New("no run in this project yet (no .set/events.jsonl): `setctl apply` starts one")

// change is the change name of the run, or an error that suggests the
// nearest name and lists the run's changes.
func (v *runView) change(name string) (*state.Change, error) {
	if !v.Journaled {
		return nil, errNoRun
	}
	if c := v.State.Changes[name]; c != nil {
		return c, nil
	}
	names := report.Names(v.State)
	msg := fmt.Sprintf("no change %q in this run", name)
	if best := english.Closest(name, names); best != "" {
		msg += fmt.Sprintf("; did you mean %s?", best)
	}
	return nil, fmt.Errorf("%s (its changes: %s)", msg, strings.Join(names, ", "))
}

// mainBranch is the branch the run moves, as its RUN_STARTED says; "main"
// for a journal that does not say.
func (v *runView) mainBranch() string {
	if v.State.MainBranch != "" {
		return v.State.MainBranch
	}
	return "main"
}

// own are the run's own events of change ("" for all of them).
func (v *runView) own(change string) []journal.Event {
	if len(v.Runs) == 0 {
		return nil
	}
	return ofChange(v.Run.Own(v.Journal), change)
}

// ofChange are the events of change among events ("" keeps them all):
// its own, and the CONTROL events that asked for it or moved it (a pause
// or resume, with who asked).
func ofChange(events []journal.Event, change string) []journal.Event {
	if change == "" {
		return events
	}
	var out []journal.Event
	for _, e := range events {
		if e.Change == change || controlOf(e, change) {
			out = append(out, e)
		}
	}
	return out
}

// controlOf reports whether e is a CONTROL event that named change or
// moved it.
func controlOf(e journal.Event, change string) bool {
	if e.Type != journal.Control {
		return false
	}
	d, err := journal.Decode[journal.ControlData](e)
	return err == nil && (d.Change == change || slices.Contains(d.Changes, change))
}

// reread reads the journal again, all of it: what a follow of the
// running apply has to catch up on once the apply is gone.
func (v *runView) reread() ([]journal.Event, error) {
	return journal.ReadFile(v.layout.Events())
}

// runLine says where the run stands, for a person at now: "running (PID
// 4242, last heartbeat 12s ago)", "not running (last heartbeat 3m ago):
// …" (an earlier run's says the run that came after it), "finished:
// failed, 2 of 4 changes on main".
func runLine(r report.Run, now time.Time) string {
	beat := "last heartbeat " + ago(now.Sub(r.LastEvent))
	switch r.State {
	case report.NoRun:
		return "no run yet: `setctl apply` starts one"
	case report.Starting:
		return fmt.Sprintf("starting (PID %d)", r.PID)
	case report.Running:
		return fmt.Sprintf("running (PID %d, %s), %d of %s on main", r.PID, beat, r.OnMain, english.Plural(r.Changes, "change"))
	case report.NotRunning:
		if r.Later != "" {
			return fmt.Sprintf("not running (%s): it stopped before its end and was not resumed; run %s came after it", beat, r.Later)
		}
		return fmt.Sprintf("not running (%s): its setctl apply is gone; `setctl apply` continues the run", beat)
	}
	return fmt.Sprintf("finished: %s in %s, %d of %s on main", r.Result, report.Duration(r.DurationMS), r.OnMain, english.Plural(r.Changes, "change"))
}

// ago is how long ago something happened that d ago: "12s ago", "3m
// ago", "2h5m ago", "3d ago".
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(max(d, 0).Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%dm ago", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// age is a duration as a status table shows it: "12s", "3m", "2h5m", "3d".
func age(d time.Duration) string { return strings.TrimSuffix(ago(d), " ago") }

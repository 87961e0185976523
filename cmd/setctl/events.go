package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/journal"
)

func eventsCommand() command {
	return command{
		name:    "events",
		summary: "print the run's journal, or follow it live",
		usage: `Usage: setctl events [--run ID] [--change CHANGE] [--type TYPE] [--since DURATION] [--follow] [--json]

Events prints the project's journal (.set/events.jsonl), every event of
every run in order, one line each: its time, its change, and what setctl
apply says about it. --run ID keeps only the events of run ID (setctl
runs lists the runs), from its RUN_STARTED to its last event; --change,
--type and --since only the events of one change, of some types
(RUN_STARTED, STATE_CHANGE, VERIFY_GATE, … in any case; several as a
list: --type verify_gate,retry_scheduled), or of the last DURATION (90s,
10m, 2h). A change's events include the pause and resume requests
(CONTROL) that named it or moved it, with who asked.

--follow prints the events as the run journals them, and ends when the
run ends: when it journals RUN_FINISHED, or when its setctl apply is gone
(the project's lock is free). Without a running apply it prints the
journal and ends. With --run, it follows only the latest run: an earlier
run is over, and is refused.

With --json, each event is printed as its line of the journal, one JSON
object per line: "seq", "time", "type", "run", "change" and the event's
"data".

Examples:
  setctl events
  setctl events --change greet
  setctl events --type verify_gate --since 10m
  setctl events --follow
  setctl events --run 20261127T075754Z --type merged
  setctl events --json | jq -r 'select(.type == "MERGED") | .change'
`,
		run: runEvents,
	}
}

// eventFilter keeps the events that events prints.
type eventFilter struct {
	// run keeps the events of one run; "" keeps every run's.
	run    string
	change string
	types  []journal.Type
	// after keeps events at or after it; zero keeps all.
	after time.Time
}

func (f eventFilter) keep(e journal.Event) bool {
	return (f.run == "" || e.Run == f.run) &&
		(f.change == "" || e.Change == f.change || controlOf(e, f.change)) &&
		(len(f.types) == 0 || slices.Contains(f.types, e.Type)) &&
		!e.Time.Before(f.after)
}

func runEvents(e *env, args []string) int {
	c := eventsCommand()
	fs := c.flagSet(e)
	var f eventFilter
	fs.StringVar(&f.change, "change", "", "print only the events of `CHANGE`")
	typeList := fs.String("type", "", "print only events of `TYPE` (a comma-separated list)")
	since := fs.Duration("since", 0, "print only the events of the last `DURATION`")
	follow := fs.Bool("follow", false, "print events as they are journaled, until the run ends")
	asJSON := fs.Bool("json", false, "print each event as its JSON line of the journal")
	runID := fs.String("run", "", "print only the events of run `ID` (default: every run's)")
	if code, done := c.parse(e, fs, args); done {
		return code
	}
	types, err := parseTypes(*typeList)
	if err != nil {
		return c.usageError(e, "%v", err)
	}
	f.types = types
	if *since < 0 {
		return c.usageError(e, "--since must be positive, not %s", *since)
	}
	if *since > 0 {
		f.after = time.Now().Add(-*since)
	}
	v, err := readRun(e, *runID)
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	if *runID != "" {
		f.run = v.Run.ID
	}
	if *follow && !v.Latest {
		return e.errorf(c.name, "run %s is over: --follow follows the latest run, %s", v.Run.ID, v.Runs[len(v.Runs)-1].ID)
	}
	if !v.Journaled && !(*follow && v.Live.Held) {
		return e.errorf(c.name, "%v", errNoRun)
	}
	if f.change != "" && v.Journaled {
		if _, err := v.change(f.change); err != nil {
			return e.errorf(c.name, "%v", err)
		}
	}
	p := &eventPrinter{w: e.stdout, json: *asJSON, width: changeWidth(v), main: v.mainBranch()}
	if !*follow || !v.Live.Held {
		// Without --follow, or with no apply running, the journal is all
		// there is.
		for _, ev := range v.Journal {
			if f.keep(ev) {
				p.print(ev)
			}
		}
		if *follow {
			now := time.Now()
			fmt.Fprintf(e.stderr, "setctl events: no setctl apply is running, so there is nothing more to follow; the run is %s\n", runLine(v.report(now).Run, now))
		}
		return exitOK
	}
	if err := followRun(v, 0, func(ev journal.Event) bool {
		if f.keep(ev) {
			p.print(ev)
		}
		return false
	}); err != nil {
		return e.errorf(c.name, "%v", err)
	}
	return exitOK
}

// parseTypes parses --type's list: event type names in any case.
func parseTypes(list string) ([]journal.Type, error) {
	if list == "" {
		return nil, nil
	}
	known := journal.Types()
	names := make([]string, len(known))
	for i, t := range known {
		names[i] = string(t)
	}
	var types []journal.Type
	for _, name := range strings.Split(list, ",") {
		t := journal.Type(strings.ToUpper(strings.TrimSpace(name)))
		if !slices.Contains(known, t) {
			msg := fmt.Sprintf("unknown event type %q", name)
			if best := english.Closest(string(t), names); best != "" {
				msg += fmt.Sprintf("; did you mean %s?", best)
			}
			return nil, fmt.Errorf("%s (the types: %s)", msg, strings.Join(names, ", "))
		}
		types = append(types, t)
	}
	return types, nil
}

// changeWidth is the width of the change column: the longest name of the
// run's changes.
func changeWidth(v *runView) int {
	w := 0
	for name := range v.State.Changes {
		w = max(w, len(name))
	}
	return w
}

// errRunEnded ends a follow at the run's RUN_FINISHED.
var errRunEnded = errors.New("the run ended")

// livenessInterval is how often a follow asks the lock whether the run's
// apply is still there.
const livenessInterval = time.Second

// followRun calls fn for every event of the project's journal after
// event fromSeq, in order, as the running apply journals them, and
// returns once the run has ended or fn says stop: on a RUN_FINISHED
// journaled after the follow started, or once no apply holds the lock
// (then after every event it journaled).
func followRun(v *runView, fromSeq int64, fn func(journal.Event) (stop bool)) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := v.State.LastSeq
	last := fromSeq
	deliver := func(ev journal.Event) error {
		last = ev.Seq
		if fn(ev) || ev.Type == journal.RunFinished && ev.Seq > started {
			return errRunEnded
		}
		return nil
	}
	gone := make(chan error, 1)
	go func() {
		t := time.NewTicker(livenessInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			held, _, err := lockHeld(v)
			if err != nil || !held {
				gone <- err
				cancel()
				return
			}
		}
	}()
	err := journal.Follow(ctx, v.layout.Events(), fromSeq, deliver)
	switch {
	case errors.Is(err, errRunEnded):
		return nil
	case !errors.Is(err, context.Canceled):
		return err
	}
	if err := <-gone; err != nil {
		return err
	}
	// The apply is gone: what it journaled before it went is all there
	// will be.
	events, err := v.reread()
	if err != nil {
		return err
	}
	for _, ev := range events {
		if ev.Seq <= last {
			continue
		}
		if err := deliver(ev); err != nil {
			break
		}
	}
	return nil
}

// lockHeld asks the lock whether an apply runs.
func lockHeld(v *runView) (bool, int, error) {
	if err := v.RefreshLiveness(); err != nil {
		return false, 0, err
	}
	return v.Live.Held, v.Live.PID, nil
}

// eventPrinter prints events as events does.
type eventPrinter struct {
	w     io.Writer
	json  bool
	width int    // of the change column
	main  string // the run's main branch
}

func (p *eventPrinter) print(e journal.Event) {
	if p.json {
		line, _ := json.Marshal(e)
		fmt.Fprintf(p.w, "%s\n", line)
		return
	}
	p.width = max(p.width, len(e.Change))
	fmt.Fprintf(p.w, "%s  %-*s  %s\n", eventTime(e.Time), p.width, e.Change, describeEvent(e, p.main, noColors).text)
}

// eventTime is an event's time as the views print it: local, to the
// second, with the date.
func eventTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") }

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/report"
	"github.com/set-engine/set/engine/state"
)

func statusCommand() command {
	return command{
		name:    "status",
		summary: "show where every change of the run stands",
		usage: `Usage: setctl status [--run ID] [--json] [--watch [--interval DURATION]]

Status shows the project's run as its journal (.set/events.jsonl) says: a
header with the run's state, then one row per change of its plan:

  STATUS       pending, implementing, verifying, queued, archived, failed:…
  ACTIVITY     what runs for it now: agent (its iteration, adapter and
               model), gate:<name> or integrate
  ITER         the agent iteration it is at: the last one started (running,
               done or interrupted)
  GATES        its gates passed/failed, each by its latest verdict in
               each stage: a gate run again counts once (warnings and
               skips aside; explain counts every run)
  RETRIES      retries used/budget, verify then integration; then, once
               it had any, the merge conflicts it went back to its agent
               for (not its agent's mistakes: they spend no retry)
  TOKENS       tokens used/budget of its size; "-" when no model call
               of it was journaled (exec agents report no tokens)
  COST         the cost its agent reported; "-" as TOKENS
  AGE          how long it has been in its status, until now; for a
               change done (archived, failed or blocked), how long it
               took: the time from its plan to its end that a run was
               going

and, under the table, why each change that is not at work or on main is
where it is: what it waits for (a dependency, the baseline, a free slot,
the merge queue), or why it failed. While the run waits for its baseline
(its gates judging the main branch before the first dispatch), the
header names the gate that runs.

A run whose setctl apply is gone (killed, or its machine went down) is
"not running", with the time of its last event, whatever its changes' last
statuses say: status asks the project's lock (.set/lock), which the kernel
releases however the apply ends.

With --json, stdout carries the run as one JSON document, the same data
as the run report .set/report.md that every run ends with: "run" (id,
state: none, starting, running, "not running" or finished; result, pid,
started, lastEvent, durationMs, changes, onMain, statuses; baseline, the
gate judging the main branch, and waiting, while one does; later, the
run after it, for an earlier run shown with --run), "changes" (each with
status, since, ageMs, activity, waiting, iteration, agent (the adapter
of its last iteration: an exec agent reports no tokens), gates, retries,
calls (its model calls journaled: 0 when none reported usage, and then
TOKENS and COST show "-"), tokens, costUsd, stages, error, dependsOn,
requirements, commit, and tasks, {done, total}, for a change folder
people wrote with OpenSpec that has a tasks.md: its tasks checked off,
read from git where the change's work is), "roles" (model calls and
tokens by role) and "coverage" (requirement → change → commit). Times
run to now while the run goes, to its last event once it is over (but
ageMs, which is AGE).

--run ID shows an earlier run of the project (setctl runs lists them) as
it ended: finished, or not running when it was stopped and never
resumed (it names the run that came after it, and its changes wait for
no apply to continue it: a later run went on); its changes are those of
its plan. Without --run, status shows the latest run.

--watch shows the run again every --interval until it is no longer
running (with --json, one document per line), or until Ctrl-C. It
watches the latest run only.

Examples:
  setctl status
  setctl status --watch
  setctl status --json | jq -r '.changes[] | .name + " " + .status'
  setctl status --json | jq '.run.state'
  setctl status --json | jq -c '.changes[] | {name, tasks}'   # task progress
  setctl status --run 20261127T075754Z
  setctl -C examples/linkshort status
`,
		run: runStatus,
	}
}

func runStatus(e *env, args []string) int {
	c := statusCommand()
	fs := c.flagSet(e)
	asJSON := fs.Bool("json", false, "write the run as one JSON document (format above)")
	watch := fs.Bool("watch", false, "show the run again every --interval while it runs")
	interval := fs.Duration("interval", 2*time.Second, "how often --watch shows the run")
	runID := fs.String("run", "", "show run `ID` (default: the latest)")
	if code, done := c.parse(e, fs, args); done {
		return code
	}
	if fs.Changed("interval") && !*watch {
		return c.usageError(e, "--interval applies to --watch")
	}
	if *interval <= 0 {
		return c.usageError(e, "--interval must be positive, not %s", *interval)
	}
	v, err := readRun(e, *runID)
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	if *watch && !v.Latest {
		return e.errorf(c.name, "run %s is over: --watch watches the latest run, %s", v.Run.ID, v.Runs[len(v.Runs)-1].ID)
	}
	// Read before --watch's follow changes v.State.
	root, main, tasks := v.layout.Root(), v.mainBranch(), v.userFolders()
	show := func(r report.Report, now time.Time) error {
		if *asJSON {
			if tasks {
				addTasks(context.Background(), root, main, &r)
			}
			return writeReportJSON(e.stdout, r, !*watch)
		}
		return writeStatus(e.stdout, r, now)
	}
	if !*watch {
		now := time.Now()
		if err := show(v.report(now), now); err != nil {
			return e.errorf(c.name, "%v", err)
		}
		return exitOK
	}
	layout := watchText
	switch {
	case *asJSON:
		layout = watchLines
	case terminalFor(e.stdout, e.getenv).live:
		layout = watchRedraw
	}
	if err := watchStatus(e, v, *interval, layout, show); err != nil {
		return e.errorf(c.name, "%v", err)
	}
	return exitOK
}

// How --watch lays its views out: each view after a blank line (text),
// one per line (JSON lines), or each replacing the last on a live
// terminal.
const (
	watchText = iota
	watchLines
	watchRedraw
)

// watchStatus shows the run every interval, keeping the projection up to
// date from the journal as it grows, until the run is no longer running;
// it shows the run once more then, from the whole journal.
func watchStatus(e *env, v *runView, interval time.Duration, layout int, show func(report.Report, time.Time) error) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	proj := newLiveProjection(v.State)
	followErr := make(chan error, 1)
	go func() {
		followErr <- journal.Follow(ctx, v.layout.Events(), v.State.LastSeq, proj.apply)
	}()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for first := true; ; first = false {
		if err := v.RefreshLiveness(); err != nil {
			return err
		}
		now := time.Now()
		r := proj.report(v.Live, now)
		over := r.Run.State != report.Running && r.Run.State != report.Starting
		if over {
			// No apply holds the lock, so the journal is whole: the last
			// view reads all of it, not what the follow has seen so far.
			cancel()
			st, err := state.Read(v.layout.Dir())
			if err != nil {
				return err
			}
			r = report.Build(st, v.Live, now)
		}
		switch {
		case layout == watchRedraw:
			fmt.Fprint(e.stdout, "\x1b[H\x1b[2J")
		case layout == watchText && !first:
			fmt.Fprintln(e.stdout)
		}
		if err := show(r, now); err != nil {
			return err
		}
		if over {
			return nil
		}
		select {
		case err := <-followErr:
			return err
		case <-tick.C:
		}
	}
}

// liveProjection is a run's projection kept up to date from its journal
// by one goroutine and read by another.
type liveProjection struct {
	mu sync.Mutex
	st *state.State
}

func newLiveProjection(st *state.State) *liveProjection {
	return &liveProjection{st: st}
}

// apply applies e; an event the projection refuses is an error that ends
// the follow.
func (p *liveProjection) apply(e journal.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return state.Apply(p.st, e)
}

// report is the projection's report at now.
func (p *liveProjection) report(live report.Liveness, now time.Time) report.Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	return report.Build(p.st, live, now)
}

// writeReportJSON writes r as JSON: indented as one document, or on one
// line (--watch writes one per line).
func writeReportJSON(w io.Writer, r report.Report, indent bool) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(r)
}

// writeStatus writes r as status's text at now.
func writeStatus(w io.Writer, r report.Report, now time.Time) error {
	if r.Run.State == report.NoRun {
		_, err := fmt.Fprintln(w, "No run in this project yet: `setctl apply` starts one.")
		return err
	}
	title := "Run " + r.Run.ID
	if r.Run.ID == "" { // an apply that has not journaled its start yet
		title = "Run"
	}
	fmt.Fprintf(w, "%s: %s\n", title, runLine(r.Run, now))
	if b := r.Run.Baseline; b != nil {
		fmt.Fprintf(w, "Waits for %s (for %s; log %s)\n", r.Run.Waiting, age(now.Sub(b.Since)), b.Log)
	}
	if len(r.Changes) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHANGE\tSTATUS\tACTIVITY\tITER\tGATES\tRETRIES\tTOKENS\tCOST\tAGE")
	for _, c := range r.Changes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d/%d\t%s+%s%s\t%s\t%s\t%s\n", c.Name, c.Status, activityCell(c.Activity),
			c.Iteration, c.Gates.Latest.Passed, c.Gates.Latest.Failed,
			report.Used(c.Retries.Verify, report.Count), report.Used(c.Retries.Integration, report.Count), conflictsCell(c.Retries.Conflicts),
			report.TokensCell(c), report.CostCell(c), ageCell(c))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var why []string
	for _, c := range r.Changes {
		if c.Status != string(state.Archived) && c.Activity == nil {
			why = append(why, fmt.Sprintf("  %s: %s", c.Name, report.Why(c)))
		}
	}
	if len(why) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(why, "\n"))
	}
	return nil
}

// ageCell is a change's AGE (report.Change.AgeMS): "-" for a change on
// its way that took no status yet.
func ageCell(c report.Change) string {
	if c.Since.IsZero() && !state.Status(c.Status).Terminal() {
		return "-"
	}
	return age(time.Duration(c.AgeMS) * time.Millisecond)
}

// activityCellMax bounds the command an activity cell shows.
const activityCellMax = 40

// activityCell is what runs for a change, in a table cell: "-" for
// nothing, else its name and, for an agent, its iteration and (cut short)
// its adapter and model. A gate is named, not shown by its command: a
// profile's command is often a shell wrapper (sh -c …) that says less
// than the gate's name (`setctl explain` and --json give the command).
func activityCell(a *report.Activity) string {
	if a == nil {
		return "-"
	}
	cell := a.Name
	if a.Iteration > 0 {
		cell += fmt.Sprintf(" #%d", a.Iteration)
	}
	if a.Command != "" && !strings.HasPrefix(a.Name, "gate:") {
		cmd := a.Command
		if r := []rune(cmd); len(r) > activityCellMax {
			cmd = string(r[:activityCellMax-1]) + "…"
		}
		cell += " (" + cmd + ")"
	}
	return cell
}

// conflictsCell follows the retries in the RETRIES column: the merge
// conflicts the change went back to its agent for, once it had any.
func conflictsCell(c report.Budgeted) string {
	if c.Used == 0 {
		return ""
	}
	return ", " + english.Plural(int(c.Used), "conflict")
}

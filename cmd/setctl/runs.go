package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/history"
	"github.com/set-engine/set/engine/report"
)

func runsCommand() command {
	return command{
		name:    "runs",
		summary: "list the runs the project's journal keeps",
		usage: `Usage: setctl runs [--json]

Runs lists the runs of the project, newest first (as gh run list does:
the latest run is the first row, and setctl runs | head shows the recent
ones). Every setctl apply journals its run in .set/events.jsonl, after
the runs before it, which it keeps; an apply that continues a run that
did not finish goes on under that run's ID. One row per run:

  RUN        its ID, which --run of status, events, explain and logs takes
  STARTED    when its first apply started
  RESULT     success, failed or interrupted once it finished; running, or
             not running when its apply is gone and it never finished
  MERGED     the changes of its plan it put on main, of them all
  TOKENS     the tokens of its model calls (agents and planner); "-"
             when it journaled none: exec agents report no tokens
  COST       their cost, "-" likewise
  DURATION   from its start to its last event (to now while it runs)

With --json, stdout carries one JSON document: "version" (1; within
it fields are only added) and "runs", newest first, each with "id",
"state" (running, "not running" or finished), "result", "started",
"durationMs", "changes" (its plan's), "merged", and "usage" ("calls";
"tokens": input, output, and cacheRead and cacheWrite when any;
"costUsd"), whose calls is 0 when the run journaled no model call.

Examples:
  setctl runs
  setctl explain greet --run "$(setctl runs --json | jq -r '.runs[-1].id')"
  setctl runs --json | jq -r '.runs[] | .id + " " + .state + " " + .result'
`,
		run: runRuns,
	}
}

// RunsFormatVersion is the version of setctl runs --json. Within a
// version fields are only added; renaming or removing one makes a new
// version, as for setctl status --json (report.FormatVersion).
const RunsFormatVersion = 1

// runList is setctl runs --json: the project's runs, newest first.
type runList struct {
	Version int               `json:"version"`
	Runs    []history.Summary `json:"runs"`
}

func runRuns(e *env, args []string) int {
	c := runsCommand()
	fs := c.flagSet(e)
	asJSON := fs.Bool("json", false, "write the runs as one JSON document (format above)")
	if code, done := c.parse(e, fs, args); done {
		return code
	}
	v, err := readRun(e, "")
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	now := time.Now()
	runs, err := history.Summaries(v.Journal, v.Live, now)
	if err != nil {
		return e.errorf(c.name, "%s: %v", v.layout.Events(), err)
	}
	slices.Reverse(runs)
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		err = enc.Encode(runList{Version: RunsFormatVersion, Runs: runs})
	} else {
		err = writeRuns(e.stdout, runs)
	}
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	return exitOK
}

// writeRuns writes runs, newest first, as setctl runs's table.
func writeRuns(w io.Writer, runs []history.Summary) error {
	if len(runs) == 0 {
		_, err := fmt.Fprintln(w, "No run in this project yet: `setctl apply` starts one.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTARTED\tRESULT\tMERGED\tTOKENS\tCOST\tDURATION")
	for _, r := range runs {
		started := "-"
		if !r.Started.IsZero() {
			started = eventTime(r.Started)
		}
		tokens, cost := "-", "-"
		if r.Usage.Calls > 0 {
			tokens, cost = english.Tokens(r.Usage.Tokens.Total()), report.Cost(r.Usage.CostUSD)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d of %d\t%s\t%s\t%s\n", r.ID, started, runResult(r), r.Merged, r.Changes, tokens, cost, report.Duration(r.DurationMS))
	}
	return tw.Flush()
}

// runResult is a run's RESULT: its result once finished, else its state.
func runResult(r history.Summary) string {
	if r.State == report.Finished {
		return r.Result
	}
	return r.State
}

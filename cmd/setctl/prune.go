package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/set-engine/set/engine/history"
	"github.com/set-engine/set/engine/load"
	"github.com/set-engine/set/engine/prune"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/state"
)

func pruneCommand() command {
	return command{
		name:    "prune",
		summary: "remove old runs from .set/: their events, reports and logs",
		usage: `Usage: setctl prune [--keep N] [--run ID]... [--dry-run] [--json]

Every run set applies is kept under .set/: its events in the journal
(.set/events.jsonl), its report, plan and baseline logs in
.set/runs/<id>/, its changes' logs and prompts in .set/logs/ and
.set/changes/. Prune removes whole runs: their events (the journal is
rewritten atomically; the events kept keep their numbers), their folder,
the logs and prompts that only their events name, and the files that
belong to them though no event names them: the regeneration logs of
their integration attempts (.set/logs/<change>/regenerate-<n>.log), the
totals of agent sessions only they used (.set/sessions/), and the logs
of the applies the dashboard started them with (.set/logs/_dashboard/,
each belonging to the first run with an event at or after its time). It
prints what it
removed and the bytes freed; --dry-run prints what it would remove and
removes nothing.

--keep N keeps the newest N runs and removes the others; --run ID removes
that run (repeat it for more). Without either, prune keeps the number of
runs set.cue's history.keep says (the retention a new setctl apply
applies before it starts).

The latest run is never removed (it may be resumed), nor a run whose
change a run kept carries on with its progress (a failed change retried,
a change stopped in flight and asked again): --keep keeps such a run and
says why, --run refuses it. No file outside .set/logs,
.set/changes, .set/runs and .set/sessions is removed, nor one an event of
a kept run names or a kept run owns (a cached baseline verdict names the
log of the run that judged main; a session a kept run resumed stays). Prune takes the project's lock, as setctl apply does: it is
refused while an apply runs.

Exit status: 0 when the runs were removed (or nothing was to be), 1
otherwise.

Examples:
  setctl prune --keep 3 --dry-run
  setctl prune --keep 1
  setctl prune --run 20260102T030405Z --json
`,
		run: runPrune,
	}
}

func runPrune(e *env, args []string) int {
	c := pruneCommand()
	fs := c.flagSet(e)
	keep := fs.Int("keep", 0, "keep the newest N runs and remove the others (default: set.cue's history.keep)")
	runs := fs.StringArray("run", nil, "remove the run with this ID (repeatable)")
	dryRun := fs.Bool("dry-run", false, "say what would be removed, and remove nothing")
	asJSON := fs.Bool("json", false, "write what was removed as JSON")
	if code, done := c.parse(e, fs, args); done {
		return code
	}
	if fs.Changed("keep") && *keep < 1 {
		return c.usageError(e, "--keep must be at least 1: the latest run is never removed")
	}
	root, err := load.FindRoot(e.dir)
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	if !fs.Changed("keep") && len(*runs) == 0 {
		ws, err := loadWorkspace(root)
		if ws.cfg == nil {
			return ws.report(e, c.name, err)
		}
		if *keep = ws.cfg.History.Keep; *keep == 0 {
			return c.usageError(e, "say which runs to remove: --keep N (keep the newest N runs), --run ID, or history: keep: N in set.cue")
		}
	}
	layout := rundir.New(root)
	if _, err := os.Stat(layout.Dir()); errors.Is(err, os.ErrNotExist) {
		// No apply ever ran here: no run to remove, and no .set/ to lock.
		if len(*runs) > 0 {
			return e.errorf(c.name, "%v", errNoRun)
		}
		return writePruneResult(e, prune.Result{DryRun: *dryRun, Runs: []prune.Run{}}, *asJSON)
	}
	lock, err := state.AcquireLock(layout.Dir())
	if err != nil {
		if le := (*state.LockedError)(nil); errors.As(err, &le) {
			return e.errorf(c.name, "%v; run setctl prune once it has ended", err)
		}
		return e.errorf(c.name, "%v", err)
	}
	defer lock.Release()
	res, err := prune.Prune(layout, prune.Options{Keep: *keep, Runs: *runs, DryRun: *dryRun})
	if errors.Is(err, history.ErrNoRun) {
		err = errNoRun
	}
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	return writePruneResult(e, res, *asJSON)
}

// writePruneResult writes res to stdout, as JSON with asJSON.
func writePruneResult(e *env, res prune.Result, asJSON bool) int {
	if asJSON {
		data, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintln(e.stdout, string(data))
		return exitOK
	}
	writePruned(e.stdout, res)
	return exitOK
}

// writePruned writes what prune removed, or would remove.
func writePruned(w io.Writer, res prune.Result) {
	verb, freed := "Removed", "Freed"
	if res.DryRun {
		verb, freed = "Would remove", "Would free"
	}
	for _, h := range res.Held {
		fmt.Fprintf(w, "Kept run %s: %s.\n", h.ID, h.Reason)
	}
	if len(res.Runs) == 0 {
		fmt.Fprintln(w, "No run to remove.")
		return
	}
	files := 0
	for _, r := range res.Runs {
		var size int64
		for _, f := range r.Files {
			size += f.Bytes
		}
		files += len(r.Files)
		fmt.Fprintf(w, "%s run %s: %s, %s (%s)\n", verb, r.ID, plural(r.Events, "event"), plural(len(r.Files), "file"), byteSize(size))
		for _, f := range r.Files {
			fmt.Fprintf(w, "  %s\n", f.Path)
		}
	}
	fmt.Fprintf(w, "%s %s: %s of journal, %s of logs, prompts and reports (%s).\n",
		freed, byteSize(res.Bytes), byteSize(res.JournalBytes), byteSize(res.Bytes-res.JournalBytes), plural(files, "file"))
}

// plural is "1 file", "2 files".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// byteSize is n bytes in the largest unit (B, kB, MB, GB: powers of
// 1000) that keeps it at 1 or more, with one decimal beyond bytes.
func byteSize(n int64) string {
	if n < 1000 {
		return fmt.Sprintf("%d B", n)
	}
	v, units := float64(n)/1000, []string{"kB", "MB", "GB"}
	i := 0
	for ; v >= 1000 && i < len(units)-1; i++ {
		v /= 1000
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0") + " " + units[i]
}

// prunedNotice is the line setctl apply shows when its new run removed
// runs beyond history.keep (keep) before it started.
func prunedNotice(res prune.Result, keep int) string {
	ids := make([]string, len(res.Runs))
	for i, r := range res.Runs {
		ids[i] = r.ID
	}
	return fmt.Sprintf("Removed %s beyond history.keep (%d) before this run: %s (%s freed).",
		plural(len(ids), "earlier run"), keep, strings.Join(ids, ", "), byteSize(res.Bytes))
}

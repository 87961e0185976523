package main

import (
	"context"
	"fmt"
	"time"

	"github.com/set-engine/set/engine/coverage"
	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/orchestrator"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/prune"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/state"
)

// applyView is how setctl apply shows itself: applyHuman, the plain text
// (a live block of rows on a terminal), or applyJSON, the --json stream.
// apply calls the same methods at the same points whichever view it has;
// only what they write differs. Its errors and warnings go through
// env.present, which the JSON view routes into its stream.
type applyView interface {
	// confirm shows the plan p, made now with its graph g, and asks
	// whether to run it: true to run it. When false it has said why and
	// code is the exit status.
	confirm(ctx context.Context, p *plan.Plan, g *graph.Graph, mainBranch string) (yes bool, code int)
	// upToDate shows that the plan has no change, and why (main, at
	// commit head, implements the whole spec: noChangesReason): no run;
	// rows is where every requirement stands. An error is the output's.
	upToDate(why, head string, rows []coverage.Row) error
	// runStarts shows the run of opts from now on: it sets opts.OnEvent
	// to show each event, and where interrupt notices go.
	runStarts(opts *orchestrator.Options, layout rundir.Layout)
	// runEnds is called when the orchestrator returned: every event of
	// the run has been shown.
	runEnds()
	// ended shows how the run ended: its summary, main's commit head
	// after it, and where every requirement stands (rows, nil when it
	// could not be read).
	ended(sum *orchestrator.Summary, head, mainBranch string, rows []coverage.Row)
	// stopped shows the summary of a run that stopped on an error,
	// reported already; rows gives where every requirement stands.
	stopped(sum *orchestrator.Summary, head string, rows func() []coverage.Row)
}

var (
	_ applyView = (*applyHuman)(nil)
	_ applyView = (*applyJSON)(nil)
)

// applyHuman is the plain view of setctl apply: the plan and the question
// before the run, a line per notable event during it (a live block of rows
// on a terminal), the summary and the coverage after it.
type applyHuman struct {
	e    *env
	name string // the command's
	sigs *interrupts
	term terminal
	// progress shows the run, from runStarts on.
	progress *progress
}

func (v *applyHuman) confirm(ctx context.Context, p *plan.Plan, g *graph.Graph, mainBranch string) (bool, int) {
	e := v.e
	if err := graph.Text(e.stdout, g, graph.TextOptions{Color: v.term.color}); err != nil {
		return false, e.errorf(v.name, "%v", err)
	}
	if p.Planning != nil {
		fmt.Fprintln(e.stdout)
		planningText(e.stdout, p.Planning)
	}
	if confirm(ctx, e, len(p.Changes), mainBranch) {
		return true, exitOK
	}
	if v.sigs.interrupted() {
		return false, e.errorf(v.name, "interrupted; nothing was run")
	}
	return false, e.errorf(v.name, "not applied (pass --yes to run without asking)")
}

func (v *applyHuman) upToDate(why, _ string, rows []coverage.Row) error {
	fmt.Fprintf(v.e.stdout, "No changes: %s.\n\n", why)
	return coverage.Text(v.e.stdout, rows)
}

func (v *applyHuman) runStarts(opts *orchestrator.Options, layout rundir.Layout) {
	v.progress = newProgress(v.e.stdout, opts.Plan, opts.Project.MainBranch, v.term, time.Now, redrawEvery)
	if st, err := state.Read(layout.Dir()); err == nil {
		v.progress.seed(st)
	}
	opts.OnEvent = v.progress.event
	opts.OnPrune = func(res prune.Result) {
		v.progress.notice(v.e.stdout, prunedNotice(res, opts.Project.History.Keep))
	}
	v.sigs.sayWith(func(msg string) { v.progress.notice(v.e.stderr, "setctl "+v.name+": "+msg) })
}

func (v *applyHuman) runEnds() { v.progress.close() }

func (v *applyHuman) ended(sum *orchestrator.Summary, head, mainBranch string, rows []coverage.Row) {
	out := v.e.stdout
	v.progress.summary(sum, head)
	if rows != nil {
		fmt.Fprintln(out)
		coverage.Text(out, rows)
	}
	switch sum.Result {
	case "success":
	case "interrupted":
		fmt.Fprintln(out, "Interrupted. Run `setctl apply` again to continue where this run stopped.")
	case "open":
		fmt.Fprintln(out, "Some changes are in review: their pull requests are open (`setctl status` lists them). The next `setctl apply` watches them again, and records what became of them.")
	case "paused":
		fmt.Fprintln(out, "Some changes are paused (see why with `setctl status`). Once their cause is dealt with (a budget raised in set.cue, committed), `setctl apply` resumes them, without a new plan.")
	default:
		fmt.Fprintf(out, "Some changes did not reach %s. See why in .set/logs/ and .set/events.jsonl; a new `setctl apply` retries them.\n", mainBranch)
	}
}

// stopped adds nothing: the error said how the run stopped, and its state
// is in .set/.
func (v *applyHuman) stopped(*orchestrator.Summary, string, func() []coverage.Row) {}

// applyJSON is the view of setctl apply --json: one JSON object per line
// on stdout and nothing else (see jsonUI); it never asks.
type applyJSON struct {
	e    *env
	name string // the command's
	ui   *jsonUI
}

// newApplyJSON starts the stream on e.stdout with its version line, and
// routes e's diagnostics and the interrupt notices of sigs into it.
func newApplyJSON(e *env, name string, sigs *interrupts) *applyJSON {
	v := &applyJSON{e: e, name: name, ui: newJSONUI(e.stdout, time.Now)}
	v.ui.version()
	e.diagnose = v.ui.diagnostic
	sigs.sayWith(func(msg string) { v.ui.diagnose(diag.Warning, msg) })
	return v
}

func (v *applyJSON) confirm(context.Context, *plan.Plan, *graph.Graph, string) (bool, int) {
	return false, v.e.errorf(v.name, "not applied: apply --json never asks; pass --yes, or a plan file from `setctl plan --out`")
}

func (v *applyJSON) upToDate(_, head string, rows []coverage.Row) error {
	v.ui.summary(&orchestrator.Summary{Result: "success", Statuses: map[string]state.Status{}}, head, rows)
	return nil
}

func (v *applyJSON) runStarts(opts *orchestrator.Options, layout rundir.Layout) {
	v.ui.start(opts.Project.MainBranch, layout.Events())
	opts.OnEvent = v.ui.event
	opts.OnPrune = func(res prune.Result) { v.ui.pruned(res, opts.Project.History.Keep) }
}

func (v *applyJSON) runEnds() { v.ui.end() }

func (v *applyJSON) ended(sum *orchestrator.Summary, head, _ string, rows []coverage.Row) {
	v.ui.summary(sum, head, rows)
}

func (v *applyJSON) stopped(sum *orchestrator.Summary, head string, rows func() []coverage.Row) {
	v.ui.summary(sum, head, rows())
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/pflag"

	"github.com/set-engine/set/engine/baseline"
	"github.com/set-engine/set/engine/coverage"
	"github.com/set-engine/set/engine/dashboard"
	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/orchestrator"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/project"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/state"
)

func applyCommand() command {
	return command{
		name:    "apply",
		summary: "run the plan: agents implement, gates check, main moves",
		arg:     "plan file",
		usage: `Usage: setctl apply [PLANFILE] [--yes] [--json] [--accept-baseline] [--keep-branches] [--dashboard]

Apply runs a plan to the end: every change whose dependencies are merged is
dispatched into its own worktree (.set/worktrees/<change>, branch
set/<change>), implemented by the configured agent, checked by its verify
stack, and integrated through a serial merge queue that fast-forwards main
only after the integration stack passed on the merged tree. Once a change
is on main its worktree is removed and its branch deleted (main holds
exactly the branch's tree); --keep-branches keeps the branches. A branch
checked out in a worktree, or changed since it merged, is always kept.

With PLANFILE (from setctl plan --out) it runs exactly that plan and refuses
one whose inputs changed since. Without it, it plans now and asks before
running, unless --yes is given.

Apply runs what the spec asks beyond what main implements (see setctl
help plan): with nothing to do it says so and runs nothing. At dispatch set
writes each change's OpenSpec change folder (openspec/changes/<change>:
proposal.md, the delta specs, tasks.md) from the requirements' statuses;
the agent implements against it. At the end it shows where every
requirement stands on main.

Apply is resumable: after a crash, a kill or Ctrl-C, run it again and it
continues from the journal (.set/events.jsonl): finished work is kept, a
change already on main is never merged again. One apply runs per project
at a time.

Ctrl-C (SIGINT) or SIGTERM stops agents and gates, records the run as
interrupted and releases the lock; a second Ctrl-C kills agents and gates
at once instead of giving them time to exit, a third exits without
waiting. A closed stdout (setctl apply | head) ends the output, not the
run.

With --json, stdout carries one JSON object per line and nothing else;
apply never asks then, so it needs --yes or a plan file. Every line has
"@level" (info, warn, error), "@message" (what the plain view prints),
"@timestamp" and "type":
  version     first line: "setctl" (its version), "ui" (this format's
              version; a new minor version only adds fields or types)
  diagnostic  an error or warning outside the events, such as a bad
              set.cue, a stale plan or the notice of a Ctrl-C:
              "diagnostic": {"severity", "summary", "detail"}
  event       every event of the run as it is journaled: "event" is the
              line of .set/events.jsonl ("seq", "time", "type", "run",
              "change", "data")
  summary     last line of a run: "summary": {"result", "resumed",
              "durationMs", "changes" (change → status), "main",
              "coverage" (every requirement on main after the run, as
              setctl plan --json gives it)}

--dashboard serves the live web view of setctl dashboard beside the run,
on 127.0.0.1:7400 or the loopback --dashboard-addr, and says where on
stderr; it stops with the run.

Exit status: 0 when every change is merged, 1 otherwise, 130 when
interrupted by SIGINT, 143 by SIGTERM.

Examples:
  setctl apply --yes
  setctl plan --out plan.json && setctl apply plan.json
  setctl -C examples/linkshort apply --yes
  setctl apply --yes --json | jq -r 'select(.type == "summary") | .summary.result'
  setctl apply --yes --dashboard
`,
		run: runApply,
	}
}

// applyFlags are the options of one setctl apply.
type applyFlags struct {
	yes, acceptBaseline, keepBranches, json bool
	// dashboard: serve setctl dashboard on dashboardAddr beside the run.
	dashboard     bool
	dashboardAddr string
	// planFile is the PLANFILE argument as given; "" to plan now.
	planFile string
	// invocation is how the user ran apply, for messages that tell them
	// what to run next.
	invocation baseline.Invocation
}

func runApply(e *env, args []string) (code int) {
	c := applyCommand()
	fs := c.flagSet(e)
	var f applyFlags
	fs.BoolVar(&f.yes, "yes", false, "do not ask for confirmation")
	fs.BoolVar(&f.acceptBaseline, "accept-baseline", false, "accept the failures gates already have on main and fail changes only on new ones")
	fs.BoolVar(&f.keepBranches, "keep-branches", false, "keep the branch set/<change> of every change that reached main")
	fs.BoolVar(&f.json, "json", false, "write one JSON object per line to stdout and nothing else (format above)")
	fs.BoolVar(&f.dashboard, "dashboard", false, "serve the live web view of the run (setctl dashboard) while it runs")
	fs.StringVar(&f.dashboardAddr, "dashboard-addr", dashboard.DefaultAddr, "the loopback address --dashboard listens on")
	if code, done := c.parse(e, fs, args); done {
		return code
	}
	if fs.Changed("dashboard-addr") && !f.dashboard {
		return c.usageError(e, "--dashboard-addr applies to --dashboard")
	}
	if loopback, err := dashboard.CheckAddr(f.dashboardAddr, true); err != nil || !loopback {
		return c.usageError(e, "--dashboard-addr %s: apply serves its dashboard on a loopback address only (`setctl dashboard --allow-remote` serves it elsewhere)", f.dashboardAddr)
	}
	f.planFile = fs.Arg(0)
	f.invocation = invocation(fs)
	// SIGINT and SIGTERM stop the run in order and make the exit status
	// 128+signal; a closed stdout ends the output, never the run.
	sigs := watchInterrupts(c.name, e.stderr)
	defer sigs.stop()
	defer func() {
		if sc := sigs.exitCode(); sc != 0 {
			code = sc
		}
	}()
	r, code := prepareApply(e, c.name, f, sigs)
	if r == nil {
		return code
	}
	defer r.closeRunners()
	if f.dashboard {
		defer startApplyDashboard(r.ws.root, f.dashboardAddr, e.stderr)()
	}
	sum, err := r.run()
	return r.report(sum, err)
}

// applyRun is one setctl apply, ready to run: the project, the plan and
// its graph, the agents and the gate runners, and the view of the run.
type applyRun struct {
	e    *env
	name string // the command's
	sigs *interrupts
	// term is what the plain view may use; ui is the --json stream, nil
	// for the plain view.
	term terminal
	ui   *jsonUI
	ws   *workspace
	opts orchestrator.Options
	// closeRunners releases the gate runners once the run is over.
	closeRunners func()
	// progress is the plain view (on io.Discard with --json).
	progress *progress
}

// prepareApply gets an apply ready: its output (plain or --json), the
// project, a runnable configuration and an existing main branch, the plan
// (made now or read from f.planFile, and refused when stale), the agents,
// the user's go-ahead unless --yes or a plan file gave it, and the gate
// runners. Nothing has run or been recorded yet. On a problem it reports
// it and returns a nil run with the exit code.
func prepareApply(e *env, name string, f applyFlags, sigs *interrupts) (*applyRun, int) {
	r := &applyRun{name: name, sigs: sigs, term: terminalFor(e.stdout, e.getenv)}
	pe := *e
	pe.stdout = &pipeWriter{w: e.stdout}
	e = &pe
	r.e = e
	if f.json {
		r.ui = newJSONUI(e.stdout, time.Now)
		r.ui.version()
		e.diagnose = r.ui.diagnostic
		sigs.sayWith(func(msg string) { r.ui.diagnose(diag.Warning, msg) })
	}
	ctx := sigs.ctx

	opts := project.Options{PlanFileShown: f.planFile}
	if f.planFile != "" {
		opts.PlanFile = resolveDir(e.dir, f.planFile)
	}
	pr, ds := project.Prepare(ctx, e.dir, opts)
	if code := e.present(name, ds, pr.Root); code != exitOK {
		return nil, code
	}
	ws, p, g := workspaceOf(pr.Project), pr.Plan, pr.Graph
	r.ws = ws
	// The run branches every change from the main branch and moves it.
	if status, d := checkMainBranch(ctx, ws); status != statusOK {
		d.Severity = diag.Error
		return nil, e.present(name, diag.List{d}, ws.root)
	}
	if len(p.Changes) == 0 && !unfinishedRun(ws.root) {
		return nil, r.nothingToDo(ctx, p)
	}
	adapter, adapters, err := pr.Agents(p)
	if err != nil {
		return nil, e.errorf(name, "%v", err)
	}
	if f.planFile == "" && !f.yes {
		if r.ui != nil {
			return nil, e.errorf(name, "not applied: apply --json never asks; pass --yes, or a plan file from `setctl plan --out`")
		}
		if err := graph.Text(e.stdout, g, graph.TextOptions{Color: r.term.color}); err != nil {
			return nil, e.errorf(name, "%v", err)
		}
		if p.Planning != nil {
			fmt.Fprintln(e.stdout)
			planningText(e.stdout, p.Planning)
		}
		if !confirm(ctx, e, len(p.Changes), ws.cfg.MainBranch) {
			if sigs.interrupted() {
				return nil, e.errorf(name, "interrupted; nothing was run")
			}
			return nil, e.errorf(name, "not applied (pass --yes to run without asking)")
		}
	}
	runners, closeRunners, err := pr.Runners(ctx, g, e.getenv)
	if err != nil {
		return nil, e.errorf(name, "%v", err)
	}
	r.closeRunners = closeRunners
	r.opts = orchestrator.Options{
		Root: ws.root, Project: ws.cfg, Plan: p, Graph: g, Adapter: adapter, Adapters: adapters,
		Runners: runners, Models: pr.Models(g), AcceptBaseline: f.acceptBaseline, KeepBranches: f.keepBranches,
		Invocation: f.invocation,
	}
	if ws.cfg.Planner.Replan == "auto" {
		r.opts.Replan = replanner(ws.proj)
	}
	return r, exitOK
}

// unfinishedRun reports whether the project's journal holds a run that
// did not end (killed before RUN_FINISHED) or that left a change in
// flight. Its work may all be on main, so the plan has no change, and
// still the run must be resumed: to record what reached main, remove its
// worktrees and release what it held.
func unfinishedRun(root string) bool {
	st, err := state.Read(rundir.New(root).Dir())
	if err != nil {
		return true // the run will say what is wrong with the journal
	}
	if st.Run != "" && !st.Finished {
		return true
	}
	for _, c := range st.Changes {
		if c.Status.Active() || c.Status == state.Merged {
			return true
		}
	}
	return false
}

// clearDeadHolder takes and releases the run lock of setDir when its
// file exists, so that the PID of an apply killed after its run finished
// (it held the lock, the kernel released it) is no longer named there.
// An apply that holds it is left alone; no lock file is created.
func clearDeadHolder(setDir string) {
	if _, err := os.Stat(filepath.Join(setDir, state.LockFile)); err != nil {
		return
	}
	if l, err := state.AcquireLock(setDir); err == nil {
		l.Release()
	}
}

// nothingToDo ends an apply whose plan has no change (main implements the
// whole spec) without a run: it says so, with where every requirement
// stands, and returns exitOK.
func (r *applyRun) nothingToDo(ctx context.Context, p *plan.Plan) int {
	clearDeadHolder(rundir.New(r.ws.root).Dir())
	rows, err := coverage.Of(ctx, r.ws.root, r.ws.cfg, p, nil)
	if err != nil {
		return r.e.errorf(r.name, "%v", err)
	}
	if r.ui != nil {
		head, _ := git.BranchHead(ctx, r.ws.root, r.ws.cfg.MainBranch)
		r.ui.summary(&orchestrator.Summary{Result: "success", Statuses: map[string]state.Status{}}, head, rows)
		return exitOK
	}
	fmt.Fprintf(r.e.stdout, "No changes: %s implements every requirement of the spec.\n\n", r.ws.cfg.MainBranch)
	if err := coverage.Text(r.e.stdout, rows); err != nil {
		return r.e.errorf(r.name, "%v", err)
	}
	return exitOK
}

// coverage is where every requirement stands on main after the run, with
// the run's statuses saying why pending work is pending; nil when it
// cannot be read (the summary then goes without it). A model's plan is
// the run's (plan.Reuse): no model is asked for it.
func (r *applyRun) coverage(sum *orchestrator.Summary) []coverage.Row {
	ctx := context.Background()
	p, err := r.ws.proj.PlanWithoutModel(ctx)
	if err != nil {
		return nil
	}
	rows, err := coverage.Of(ctx, r.ws.root, r.ws.cfg, p, sum.Statuses)
	if err != nil {
		return nil
	}
	return rows
}

// run runs the plan, showing its events as they are journaled: in the
// plain view (a live block on a terminal), or as the --json stream.
func (r *applyRun) run() (*orchestrator.Summary, error) {
	layout := rundir.New(r.ws.root)
	out, term := r.e.stdout, r.term
	if r.ui != nil {
		out, term = io.Discard, terminal{}
	}
	r.progress = newProgress(out, r.opts.Plan, r.ws.cfg.MainBranch, term, time.Now, redrawEvery)
	if st, err := state.Read(layout.Dir()); err == nil {
		r.progress.seed(st)
	}
	r.opts.OnEvent = r.progress.event
	if r.ui != nil {
		r.ui.start(r.ws.cfg.MainBranch, layout.Events())
		r.opts.OnEvent = r.ui.event
	}
	r.sigs.runStarts()
	if r.ui == nil {
		r.sigs.sayWith(func(msg string) { r.progress.notice(r.e.stderr, "setctl "+r.name+": "+msg) })
	}
	sum, err := orchestrator.Apply(r.sigs.ctx, r.opts)
	r.progress.close()
	if r.ui != nil {
		r.ui.end()
	}
	return sum, err
}

// report ends the output of the run with its summary (or its error) and
// returns the exit code: 0 when every change reached main.
func (r *applyRun) report(sum *orchestrator.Summary, err error) int {
	e, ws, ui := r.e, r.ws, r.ui
	if nb := (*git.NoBranchError)(nil); errors.As(err, &nb) {
		// The branch went away since checkMainBranch looked.
		return ws.report(e, r.name, noBranchError(r.sigs.ctx, ws, nb))
	}
	if err != nil && sum == nil {
		return e.errorf(r.name, "%v", err)
	}
	head, _ := git.BranchHead(context.Background(), ws.root, ws.cfg.MainBranch)
	if err != nil {
		msg := "%v\nThe run stopped; its state is in .set/. Fix the cause and run `setctl apply` again to continue."
		if errors.As(err, new(*baseline.RedError)) {
			msg = "%v" // it says how to go on
		}
		failed := e.errorf(r.name, msg, err)
		if ui != nil {
			ui.summary(sum, head, r.coverage(sum))
		}
		return failed
	}
	rows := r.coverage(sum)
	if ui != nil {
		ui.summary(sum, head, rows)
		if sum.Result == "success" {
			return exitOK
		}
		return exitError
	}
	r.progress.summary(sum, head)
	if rows != nil {
		fmt.Fprintln(e.stdout)
		coverage.Text(e.stdout, rows)
	}
	switch sum.Result {
	case "success":
		return exitOK
	case "interrupted":
		fmt.Fprintln(e.stdout, "Interrupted. Run `setctl apply` again to continue where this run stopped.")
	case "paused":
		fmt.Fprintln(e.stdout, "Some changes are paused (see why with `setctl status`). Once their cause is dealt with (a budget raised in set.cue), `setctl apply` resumes them, without a new plan.")
	default:
		fmt.Fprintf(e.stdout, "Some changes did not reach %s. See why in .set/logs/ and .set/events.jsonl; a new `setctl apply` retries them.\n", ws.cfg.MainBranch)
	}
	return exitError
}

// invocation is how the user ran apply, for messages that say what to
// type next: the flags given (without --accept-baseline, which the
// message adds where it helps) and the plan file, as typed.
func invocation(fs *pflag.FlagSet) baseline.Invocation {
	in := baseline.Invocation{PlanFile: fs.Arg(0)}
	fs.Visit(func(f *pflag.Flag) {
		switch {
		case f.Name == "accept-baseline":
		case f.Value.Type() != "bool":
			in.Flags = append(in.Flags, "--"+f.Name+"="+f.Value.String())
		case f.Value.String() == "true":
			in.Flags = append(in.Flags, "--"+f.Name)
		}
	})
	return in
}

// replanner asks the project's model planner for changes covering a
// replan's uncovered requirements, next to the changes that stay in the
// run, and journals its model calls (failed attempts too) as LLM_CALL
// events of the run.
func replanner(proj *project.Project) orchestrator.ReplanFunc {
	return func(ctx context.Context, req orchestrator.ReplanRequest) ([]plan.Change, error) {
		m, err := proj.Planner(ctx)
		if err != nil {
			return nil, err
		}
		ids := make([]string, len(req.Uncovered))
		for i, r := range req.Uncovered {
			ids[i] = r.ID
		}
		existing := slices.DeleteFunc(slices.Clone(req.Plan.Changes), func(c plan.Change) bool { return slices.Contains(req.Dropped, c.Name) })
		changes, planning, err := m.Changes(ctx, req.Plan, ids, existing)
		if planning != nil {
			for _, c := range planning.Calls {
				if eerr := req.Emit(c.LLMCallData); eerr != nil {
					return nil, eerr
				}
			}
		}
		return changes, err
	}
}

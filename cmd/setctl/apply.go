package main

import (
	"context"
	"errors"

	"github.com/spf13/pflag"

	"github.com/set-engine/set/engine/baseline"
	"github.com/set-engine/set/engine/coverage"
	"github.com/set-engine/set/engine/dashboard"
	"github.com/set-engine/set/engine/git"
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

Apply puts on main what it makes of the run's inputs, so main must hold
them: set.cue and the other CUE files of its package, cue.mod/module.cue
(and what the load reads under cue.mod), and every spec file (with
planner strategy "openspec", every file of the open change folders under
openspec/changes/) must be committed on main as they are on disk.
Otherwise apply refuses before it runs anything, naming each file
(untracked, not on main, or differs from main) and the git commands that
commit them. vet and plan read the spec files as they are, the change
folders as main has them; plan warns of those apply refuses.

Apply runs what the spec asks beyond what main implements (see setctl
help plan): with nothing to do it says so and runs nothing. At dispatch set
writes each change's OpenSpec change folder (openspec/changes/<change>:
proposal.md, the delta specs, tasks.md) from the requirements' statuses;
the agent implements against it. With planner strategy "openspec" the
folder is the one people wrote, on main: set writes nothing in it, the
agent checks its tasks off in tasks.md, spec_verify fails an edit of its
delta specs or .openspec.yaml, and the merge archives it as openspec
archive <change> --yes does (docs/openspec.md). At the end it shows where
every requirement stands on main.

Apply is resumable: after a crash, a kill or Ctrl-C, run it again and it
continues from the journal (.set/events.jsonl): finished work is kept, a
change already on main is never merged again. One apply runs per project
at a time.

Ctrl-C (SIGINT) or SIGTERM stops agents and gates, records the run as
interrupted and releases the lock; a second Ctrl-C kills agents and gates
at once instead of giving them time to exit, a third exits without
waiting. The dashboard's Stop (setctl dashboard) stops the run as the
first Ctrl-C does; apply then exits 1. A closed stdout (setctl apply |
head) ends the output, not the run.

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
stderr; it stops with the run: the open page says the run ended and
keeps what it shows, and the last line on stderr says where the
dashboard was and that setctl dashboard reopens it.

Exit status: 0 when every change is merged, 3 when none failed and the
others' pull requests are still open (pull-request delivery: setctl
status lists them, and the next setctl apply watches them again), 1
otherwise, 130 when interrupted by SIGINT, 143 by SIGTERM.

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

// applyArgs are the arguments of one setctl apply, parsed.
type applyArgs struct {
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

func runApply(e *env, args []string) int {
	a, code, done := parseApply(e, args)
	if done {
		return code
	}
	return apply(e, a)
}

// parseApply parses the arguments of setctl apply. When done, it has
// printed the usage or a usage error and code is the exit status.
func parseApply(e *env, args []string) (a applyArgs, code int, done bool) {
	c := applyCommand()
	fs := c.flagSet(e)
	fs.BoolVar(&a.yes, "yes", false, "do not ask for confirmation")
	fs.BoolVar(&a.acceptBaseline, "accept-baseline", false, "accept the failures gates already have on main and fail changes only on new ones")
	fs.BoolVar(&a.keepBranches, "keep-branches", false, "keep the branch set/<change> of every change that reached main")
	fs.BoolVar(&a.json, "json", false, "write one JSON object per line to stdout and nothing else (format above)")
	fs.BoolVar(&a.dashboard, "dashboard", false, "serve the live web view of the run (setctl dashboard) while it runs")
	fs.StringVar(&a.dashboardAddr, "dashboard-addr", dashboard.DefaultAddr, "the loopback address --dashboard listens on")
	if code, done := c.parse(e, fs, args); done {
		return a, code, true
	}
	if fs.Changed("dashboard-addr") && !a.dashboard {
		return a, c.usageError(e, "--dashboard-addr applies to --dashboard"), true
	}
	if loopback, err := dashboard.CheckAddr(a.dashboardAddr, true); err != nil || !loopback {
		return a, c.usageError(e, "--dashboard-addr %s: apply serves its dashboard on a loopback address only (`setctl dashboard --allow-remote` serves it elsewhere)", a.dashboardAddr), true
	}
	a.planFile = fs.Arg(0)
	a.invocation = invocation(fs)
	return a, exitOK, false
}

// apply runs setctl apply with its parsed arguments a.
func apply(e *env, a applyArgs) (code int) {
	const name = "apply"
	// SIGINT and SIGTERM stop the run in order and make the exit status
	// 128+signal; a closed stdout ends the output, never the run.
	sigs := watchInterrupts(name, e.stderr)
	defer sigs.stop()
	defer func() {
		if sc := sigs.exitCode(); sc != 0 {
			code = sc
		}
	}()
	r, code := prepareApply(e, name, a, sigs)
	if r == nil {
		return code
	}
	defer r.closeRunners()
	if a.dashboard {
		defer startApplyDashboard(r.ws.root, r.ws.cfg.Name, a.dashboardAddr, e.stderr)()
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
	view applyView
	ws   *workspace
	opts orchestrator.Options
	// closeRunners releases the gate runners once the run is over.
	closeRunners func()
}

// prepareApply gets an apply ready: its view (plain or --json), the
// project, a runnable configuration and an existing main branch, the plan
// (made now or read from a.planFile, and refused when stale), the agents,
// the user's go-ahead unless --yes or a plan file gave it, and the gate
// runners. Nothing has run or been recorded yet. On a problem it reports
// it and returns a nil run with the exit code.
func prepareApply(e *env, name string, a applyArgs, sigs *interrupts) (*applyRun, int) {
	r := &applyRun{name: name, sigs: sigs}
	// What the plain view may use is stdout's own (a terminal?), not that
	// of the pipeWriter around it.
	term := terminalFor(e.stdout, e.getenv)
	pe := *e
	pe.stdout = &pipeWriter{w: e.stdout}
	e = &pe
	r.e = e
	if a.json {
		r.view = newApplyJSON(e, name, sigs)
	} else {
		r.view = &applyHuman{e: e, name: name, sigs: sigs, term: term}
	}
	ctx := sigs.ctx

	// The run branches every change from the main branch, moves it, and
	// puts there what it makes of its inputs: Prepare checks that main
	// exists and holds them before it plans.
	opts := project.Options{PlanFileShown: a.planFile, MovesMain: true}
	if a.planFile != "" {
		opts.PlanFile = resolveDir(e.dir, a.planFile)
	}
	pr, ds := project.Prepare(ctx, e.dir, opts)
	if code := e.present(name, ds, pr.Root); code != exitOK {
		return nil, code
	}
	ws, p, g := workspaceOf(pr.Project), pr.Plan, pr.Graph
	r.ws = ws
	if len(p.Changes) == 0 && !state.Unfinished(rundir.New(ws.root).Dir()) {
		return nil, r.upToDate(ctx, p)
	}
	// The forge's token and repository are checked before any work.
	fg, err := forgeOf(ctx, ws.root, ws.cfg, e.getenv)
	if err != nil {
		return nil, ws.report(e, name, err)
	}
	adapter, adapters, err := pr.Agents(p)
	if err != nil {
		return nil, e.errorf(name, "%v", err)
	}
	if a.planFile == "" && !a.yes {
		if yes, code := r.view.confirm(ctx, p, g, ws.cfg.MainBranch); !yes {
			return nil, code
		}
	}
	runners, closeRunners, err := pr.Runners(ctx, g, e.getenv)
	if err != nil {
		return nil, e.errorf(name, "%v", err)
	}
	r.closeRunners = closeRunners
	r.opts = orchestrator.Options{
		Root: ws.root, Project: ws.cfg, Plan: p, Graph: g, Adapter: adapter, Adapters: adapters,
		Runners: runners, Models: pr.Models(g), AcceptBaseline: a.acceptBaseline, KeepBranches: a.keepBranches,
		Invocation: a.invocation, Forge: fg,
	}
	if ws.cfg.Planner.Replan == "auto" {
		r.opts.Replan = ws.proj.Replanner()
	}
	return r, exitOK
}

// upToDate ends an apply whose plan has no change (main implements the
// whole spec, or has no open change folder left) without a run: it says
// so, with where every requirement stands, and returns exitOK.
func (r *applyRun) upToDate(ctx context.Context, p *plan.Plan) int {
	if err := orchestrator.SettleFinished(r.ws.root); err != nil {
		return r.e.errorf(r.name, "%v", err)
	}
	rows, err := coverage.Of(ctx, r.ws.root, r.ws.cfg, p, nil)
	if err != nil {
		return r.e.errorf(r.name, "%v", err)
	}
	head, _ := git.BranchHead(ctx, r.ws.root, r.ws.cfg.MainBranch)
	if err := r.view.upToDate(noChangesReason(p.Strategy, r.ws.cfg.MainBranch), head, rows); err != nil {
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

// run runs the plan, showing its events in the view as they are
// journaled.
func (r *applyRun) run() (*orchestrator.Summary, error) {
	r.view.runStarts(&r.opts, rundir.New(r.ws.root))
	r.sigs.runStarts()
	sum, err := orchestrator.Apply(r.sigs.ctx, r.opts)
	r.view.runEnds()
	return sum, err
}

// report ends the output of the run with its summary (or its error) and
// returns the exit code: 0 when every change reached main, exitOpen when
// none failed and the others' pull requests are still open.
func (r *applyRun) report(sum *orchestrator.Summary, err error) int {
	e, ws := r.e, r.ws
	if nb := (*git.NoBranchError)(nil); errors.As(err, &nb) {
		// The branch went away since CheckMainBranch looked.
		return ws.report(e, r.name, project.NoBranchError(r.sigs.ctx, ws.root, ws.cfg, nb))
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
		r.view.stopped(sum, head, func() []coverage.Row { return r.coverage(sum) })
		return failed
	}
	r.view.ended(sum, head, ws.cfg.MainBranch, r.coverage(sum))
	switch sum.Result {
	case "success":
		return exitOK
	case "open":
		return exitOpen
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

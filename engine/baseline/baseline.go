// Package baseline judges main before a run dispatches anything: the exec
// gates of the stacks the plan uses run once on a clean checkout of main's
// tree, so that a gate already red on main stops the run with the ways on,
// instead of failing every change and spending every retry budget on it.
//
// Invariants:
//   - Gates run in a detached worktree of main's commit (Layout.Baseline),
//     never in the user's checkout; it is removed when Judge returns, and
//     one a crash left behind is removed when the next Judge starts, even
//     when every verdict comes from the cache.
//   - A verdict is cached in Layout.BaselineCache by main's tree and the
//     gate's definition (argv, env, runner, failures pattern, container
//     base): a tree already judged by the same gate is never judged again.
//     A timed-out run is not a verdict on the tree and is not cached.
//   - Each gate's full output is in its Layout.BaselineLog of the run
//     that judged main's tree (Input.Run), in that run's own folder: a
//     later run never writes over it, and a verdict taken from the cache
//     names it.
//   - A gate that fails on main in a container (not on the host runner)
//     runs again on the host, in the same checkout, and its verdict says
//     how that went (Verdict.OnHost): a gate that passes there fails for
//     what its base lacks, not for main's code. It is judged by its
//     container run all the same; the host run only explains it.
package baseline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/gate"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/redact"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/runner"
)

// Stage is the gate.Input.Stage of a gate judging main.
const Stage = "baseline"

// Check is one exec gate of the plan, as the baseline runs it.
type Check struct {
	// Step is the gate as the plan's stacks run it (runner, timeout).
	Step graph.GateStep
	// Blocking is set when some stack of the plan runs the gate in mode
	// "run": its failure on main would then fail changes.
	Blocking bool
}

// Checks are the distinct exec gates of the verify and integration stacks
// of changes, each once, in run order (order, then name). Built-in gates
// judge a change's diff, which main does not have, and are left out (the
// model-graded ones too, so judging main never calls a model); so
// are gates in mode "skip" (the graph never lists them). A gate whose
// `when` is decided at run time is in: some change may run it.
func Checks(changes []*graph.ChangeGraph) []Check {
	var checks []Check
	index := map[string]int{}
	for _, cg := range changes {
		for _, s := range slices.Concat(cg.Verify, cg.Integration) {
			if s.Kind != config.KindExec {
				continue
			}
			i, ok := index[s.Gate]
			if !ok {
				i = len(checks)
				index[s.Gate] = i
				checks = append(checks, Check{Step: s})
			}
			if s.Mode == config.ModeRun {
				checks[i].Blocking = true
			}
		}
	}
	slices.SortStableFunc(checks, func(a, b Check) int {
		return cmp.Or(cmp.Compare(a.Step.Order, b.Step.Order), cmp.Compare(a.Step.Gate, b.Step.Gate))
	})
	return checks
}

// Verdict is one gate's judgement of main's tree (judge.Verdict is a
// model's checked answer, another thing).
type Verdict struct {
	Gate string
	// Branch is the project's main branch, whose tip was judged; messages
	// name it.
	Branch string
	// Tree is the git tree of Branch that was judged.
	Tree string
	// Command is what the gate ran, as its messages name it
	// (gate.Result.Command).
	Command string
	// Pattern is the gate's failures pattern; "" when it has none.
	Pattern  string
	Blocking bool
	// Result is gate.StatusPass, gate.StatusFail, or gate.StatusSkip
	// when the gate's command checked nothing (gate.SkipMarker).
	Result   string
	ExitCode int
	TimedOut bool
	Reason   string
	// Failures are what Pattern found in the output of a failing run; nil
	// when the gate passed, timed out or has no pattern.
	Failures []string
	// Missing says which program (or module) the gate's failed command
	// could not find (gate.Result.Missing); "" when none was missing.
	Missing string
	// After are the gates judged before this one on the same tree that
	// are red there, in run order, when this one is red too: when it
	// could not run (Missing), they are the likely reason. Judge sets it,
	// cached verdict or not.
	After []string
	// Tail is the end of the gate's output.
	Tail string
	// Log is the gate's full output, relative to the project root.
	Log string
	// Base is what the gate ran on (gate.Result.Base): "host", or a
	// container runner's base ("rootfs ./rootfs", "from golang:1.26").
	Base string
	// OnHost is the gate's result when it ran again on the host runner
	// on the same checkout, after it failed in a container (not timed
	// out): gate.StatusPass, gate.StatusFail or gate.StatusSkip. It is ""
	// when the gate did not run there: it ran on the host, did not fail,
	// timed out, or could not run on the host either (or timed out
	// there).
	OnHost string
	// HostLog is the full output of that host run, relative to the
	// project root; "" when there was none.
	HostLog  string
	Duration time.Duration
	// Cached is set when the verdict was recorded earlier for this tree
	// and gate definition: nothing ran.
	Cached bool
}

// Red reports whether the gate fails on the main branch.
func (v Verdict) Red() bool { return v.Result == gate.StatusFail }

// BaseLacks reports whether the gate fails on the main branch in a
// container and passes on the host on the same tree: its base lacks
// something the host has that the gate needs (a C compiler for go test
// -race, a program), and fixing main would not help.
func (v Verdict) BaseLacks() bool { return v.Red() && v.OnHost == gate.StatusPass }

// Comparable reports whether the main branch's failures of the gate can
// be told apart from a change's: a run that ended and whose failures the
// gate's pattern named.
func (v Verdict) Comparable() bool { return v.Why() == "" }

// Caused reports whether the gate's failure follows from something else
// than what it checks (see gate.Result.Caused): a program it runs was
// missing (after, maybe, a gate judged before it went red). No failures
// pattern could name such a failure.
func (v Verdict) Caused() bool { return v.Red() && v.Missing != "" }

// Cause says why a caused gate could not run ("xo: not found — the
// install gate failed before it"); "" when it is not caused.
func (v Verdict) Cause() string {
	if !v.Caused() {
		return ""
	}
	return gate.Cause(v.Missing, v.After)
}

// Why says why a red gate's failures cannot be accepted; "" when they can.
func (v Verdict) Why() string {
	switch {
	case v.Caused():
		return fmt.Sprintf("it could not run on %s: %s", v.Branch, v.Cause())
	case v.TimedOut:
		return fmt.Sprintf("it timed out on %s, so its failures are unknown", v.Branch)
	case v.Pattern == "":
		return fmt.Sprintf("it has no failures pattern, so set cannot tell its failures on %s from a change's", v.Branch)
	case len(v.Failures) == 0:
		return fmt.Sprintf("its failures pattern found nothing in its output on %s", v.Branch)
	}
	return ""
}

// Event is the BASELINE_GATE payload of v.
func (v Verdict) Event() journal.BaselineGateData {
	mode := config.ModeWarn
	if v.Blocking {
		mode = config.ModeRun
	}
	return journal.BaselineGateData{
		Gate: v.Gate, Tree: v.Tree, Mode: mode, Result: v.Result, ExitCode: v.ExitCode,
		DurationMS: v.Duration.Milliseconds(), Cached: v.Cached, Log: v.Log, Reason: v.Reason,
		Failures: v.Failures, Base: v.Base, OnHost: v.OnHost, HostLog: v.HostLog,
	}
}

// Input is what Judge needs.
type Input struct {
	// Layout is the run directory of the project at Layout.Root().
	Layout rundir.Layout
	// Run is the ID of the run judging main: its gates log into its
	// folder (Layout.BaselineLog).
	Run        string
	MainBranch string
	Project    *config.Project
	Checks     []Check
	Runners    map[string]runner.Runner
	// Env is the base environment of the gates (nil: the engine's).
	Env []string
	// Redact masks secrets in the gates' logs and in the verdicts, which
	// the cache keeps (nil: none are masked).
	Redact *redact.Redactor
	// Now stamps cache entries; nil means time.Now.
	Now func() time.Time
	// Start, if set, records that a gate starts judging main's tree,
	// before it runs (a verdict from the cache runs nothing: no Start).
	Start func(journal.BaselineGateStartedData) error
	// Emit, if set, records each verdict as soon as it is known.
	Emit func(Verdict) error
	// Judged, if set, is called once every verdict is known, recorded and
	// saved, before the checkout is removed. Crash tests kill the process
	// there.
	Judged func()
}

// Judge runs each check on main's tree, or takes its cached verdict, and
// returns the verdicts in the order of in.Checks. Every check is judged,
// red or not, so that one stop shows everything red on main. An error is
// a run error: a gate that could not run (a missing tool, no runner), git,
// the disk, or ctx ending.
func Judge(ctx context.Context, in Input) (verdicts []Verdict, err error) {
	now := in.Now
	if now == nil {
		now = time.Now
	}
	commit, err := git.BranchHead(ctx, in.Layout.Root(), in.MainBranch)
	if err != nil {
		return nil, err
	}
	tree, err := git.Tree(ctx, in.Layout.Root(), commit)
	if err != nil {
		return nil, err
	}
	cachePath := in.Layout.BaselineCache()
	cache := loadCache(cachePath)
	root, wt := in.Layout.Root(), in.Layout.Baseline()
	// A crash after the last verdict was saved, before the checkout went,
	// leaves it behind; the next judgement may need none.
	if err := removeCheckout(ctx, root, wt); err != nil {
		return nil, fmt.Errorf("removing the baseline checkout %s an earlier run left: %w", wt, err)
	}
	checkedOut := false
	defer func() {
		if checkedOut {
			// Not ctx: the checkout goes even when the run was interrupted.
			if rerr := removeCheckout(context.WithoutCancel(ctx), root, wt); rerr != nil && err == nil {
				err = rerr
			}
		}
	}()
	// red are the gates found red so far: a later gate's failure may
	// follow from theirs.
	var red []string
	for _, c := range in.Checks {
		g := in.Project.Gates[c.Step.Gate]
		def := definition(in.Project, c.Step)
		v, ok := cache.lookup(tree, c.Step.Gate, def)
		if !ok {
			if in.Start != nil {
				_, logRel := in.Layout.BaselineLog(in.Run, c.Step.Gate)
				if err := in.Start(journal.BaselineGateStartedData{
					Gate: c.Step.Gate, Tree: tree, Command: g.Run, Runner: cmp.Or(c.Step.Runner, config.RunnerHost), Log: logRel,
				}); err != nil {
					return verdicts, err
				}
			}
			if !checkedOut {
				if err := checkout(ctx, root, wt, commit); err != nil {
					return verdicts, fmt.Errorf("checking out %s for its baseline: %w", in.MainBranch, err)
				}
				checkedOut = true
			}
			v, err = run(ctx, in, c, wt, commit, red)
			if err != nil {
				return verdicts, err
			}
		}
		v.Gate, v.Branch, v.Tree, v.Blocking = c.Step.Gate, in.MainBranch, tree, c.Blocking
		v.Command, v.Pattern = cmp.Or(v.Command, gate.CommandLine(g.Run)), g.Failures
		if v.Red() {
			v.After = slices.Clone(red)
			red = append(red, v.Gate)
		}
		if !ok && !v.TimedOut {
			// Saved at once: a later gate's crash keeps this verdict.
			cache.put(tree, def, v, now())
			if err := cache.save(cachePath); err != nil {
				return verdicts, err
			}
		}
		if in.Emit != nil {
			if err := in.Emit(v); err != nil {
				return verdicts, err
			}
		}
		verdicts = append(verdicts, v)
	}
	if in.Judged != nil {
		in.Judged()
	}
	return verdicts, nil
}

// checkout makes dir, which is not there, a detached checkout of commit.
func checkout(ctx context.Context, root, dir, commit string) error {
	// git may still record a checkout whose folder was deleted by hand.
	if err := git.PruneWorktrees(ctx, root); err != nil {
		return err
	}
	return git.AddDetachedWorktree(ctx, root, dir, commit)
}

// removeCheckout removes the checkout dir, if it is there: a worktree, or
// a plain folder (what a crash in the middle of adding it leaves), and
// git's record of it.
func removeCheckout(ctx context.Context, root, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := git.RemoveWorktree(ctx, root, dir); err != nil {
		// Not a worktree (any more): a plain folder to clear.
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	return git.PruneWorktrees(ctx, root)
}

// run runs one check in the checkout wt, blocking, with no condition: on
// main there is no change whose files a condition could read. red are the
// gates found red before it (gate.Input.After).
func run(ctx context.Context, in Input, c Check, wt, commit string, red []string) (Verdict, error) {
	step := c.Step
	step.Mode, step.Condition = config.ModeRun, ""
	res := runGate(ctx, in, step, wt, commit, red, in.Layout.BaselineLog)
	if res.Status == gate.StatusError {
		if ctx.Err() != nil {
			return Verdict{}, context.Cause(ctx)
		}
		return Verdict{}, fmt.Errorf("gate %s could not run on %s: %w", step.Gate, in.MainBranch, cmp.Or(res.Err, errors.New(res.Reason)))
	}
	failures := slices.Clone(res.Failures)
	for i, f := range failures {
		failures[i] = in.Redact.String(f)
	}
	v := Verdict{
		Result: res.Status, ExitCode: res.ExitCode, TimedOut: res.TimedOut,
		Reason: in.Redact.String(res.Reason), Failures: failures, Tail: in.Redact.String(res.Tail), Log: res.LogRel, Duration: res.Duration,
		Command: in.Redact.String(res.Command), Missing: in.Redact.String(res.Missing), Base: res.Base,
	}
	if v.Red() && !v.TimedOut && cmp.Or(step.Runner, config.RunnerHost) != config.RunnerHost && in.Runners[config.RunnerHost] != nil {
		var err error
		if v.OnHost, v.HostLog, err = onHost(ctx, in, step, wt, commit, red); err != nil {
			return Verdict{}, err
		}
	}
	return v, nil
}

// runGate runs step on main's checkout wt at commit, as the baseline runs
// its gates (no condition, attempt 1, red the gates found red before it),
// logging where logAt says.
func runGate(ctx context.Context, in Input, step graph.GateStep, wt, commit string, red []string, logAt func(run, gate string) (path, rel string)) gate.Result {
	logPath, logRel := logAt(in.Run, step.Gate)
	return gate.Run(ctx, gate.Input{
		Project: in.Project, Step: step, Stage: Stage, Attempt: 1,
		Worktree: wt, Base: commit, LogPath: logPath, LogRel: logRel, Env: in.Env, Redact: in.Redact,
		After: slices.Clone(red),
	}, in.Runners)
}

// onHost runs step, which failed on main in a container, again on the
// host runner in the same checkout wt, and returns its result and log
// (see Verdict.OnHost). Only ctx ending is an error: a gate that cannot
// run on the host, or times out there, tells nothing about the base, and
// its result is "".
func onHost(ctx context.Context, in Input, step graph.GateStep, wt, commit string, red []string) (result, log string, err error) {
	step.Runner = config.RunnerHost
	res := runGate(ctx, in, step, wt, commit, red, in.Layout.BaselineHostLog)
	switch {
	case ctx.Err() != nil:
		return "", "", context.Cause(ctx)
	case res.Status == gate.StatusError:
		return "", "", nil
	case res.TimedOut:
		return "", res.LogRel, nil
	}
	return res.Status, res.LogRel, nil
}

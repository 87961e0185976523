// Package orchestrator runs a plan: it dispatches changes whose
// dependencies are merged (critical path first, at most maxParallel at
// once), runs each change's agent loop and verify stack in a worker, and
// integrates verified changes one at a time through the merge queue.
//
// A run is a few services around one event loop (run.loop), which owns
// the run's progress (which changes are at work, queued, paused, held)
// and is the only goroutine that reads or writes it:
//   - worker: one goroutine per change at work, from dispatch to the
//     merge queue, with its dependencies in services;
//   - mergeQueue: the verified changes waiting and the train of
//     integration attempts it owns, each step in a goroutine of its own;
//   - worktreePool: every worktree of the run, made, parked, reused and
//     removed under the repository's git.WorktreeLock;
//   - watches: the sentinel, one watch per change at work;
//   - recorder: the single writer of the journal and the state.
//
// Workers, merge attempts, retirements and the sentinel report to the loop
// over channels. Two timers wake it besides: the heartbeat, and the
// sentinel's tick, which evaluates the rules whose facts change with time
// alone and reads the requests of setctl pause and resume appended to the
// control file since the last tick. Locks: the one nesting is the
// worktree lock, then worktreePool.spareMu; the recorder's, the
// sentinel's (watches.mu, each watch's mu) and spareMu otherwise are
// leaves, never held while another lock is taken.
//
// Invariants: every transition is journaled before it is acted on; main
// moves only through the merge queue, by fast-forward; a change already on
// main is never merged again; a panic in a worker fails that change, not
// the run.
package orchestrator

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/set-engine/set/engine/agent"
	"github.com/set-engine/set/engine/atomicfile"
	"github.com/set-engine/set/engine/baseline"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/control"
	"github.com/set-engine/set/engine/delivery"
	"github.com/set-engine/set/engine/forge"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm"
	"github.com/set-engine/set/engine/merge"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/proc"
	"github.com/set-engine/set/engine/prune"
	"github.com/set-engine/set/engine/redact"
	"github.com/set-engine/set/engine/report"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/runner"
	"github.com/set-engine/set/engine/sentinel"
	"github.com/set-engine/set/engine/state"
)

// Options configure one Apply.
type Options struct {
	Root    string
	Project *config.Project
	Plan    *plan.Plan
	Graph   *graph.Graph
	// Adapter is the project's agent; Adapters holds, by adapter name,
	// the other agents that plan changes ask for.
	Adapter  agent.Adapter
	Adapters map[string]agent.Adapter
	Runners  map[string]runner.Runner
	// Models configures the model calls of the model-graded gates
	// (review, spec_verify graded by "llm"); nil when the plan runs none.
	Models *llm.Config
	// OnEvent, if set, sees every event of the run, in order, from its own
	// goroutine.
	OnEvent func(journal.Event)
	// Now is the clock (archive dates, durations); nil means time.Now.
	Now func() time.Time
	// OnPrune, if set, is told which runs a new run removed before it
	// started, beyond the project's history.keep (none removed: no call).
	OnPrune func(prune.Result)
	// AcceptBaseline accepts the failures that blocking gates have on
	// main before the first dispatch, instead of stopping the run: the
	// run then fails a change only on failures main does not have (see
	// run.checkBaseline).
	AcceptBaseline bool
	// Invocation is how the user ran setctl apply: a run stopped by the
	// baseline says what to type next in the same form.
	Invocation baseline.Invocation
	// KeepBranches keeps the branch set/<change> of a change that reached
	// main; by default it is deleted once main holds its work.
	KeepBranches bool
	// Replan, if set, is asked for changes covering the requirements of
	// changes that failed for good, once nothing more can merge (see
	// run.replan); at most Project.Planner.MaxReplanCycles times a run.
	Replan ReplanFunc
	// Checkpoint, if set, is called at the named points of a change's way
	// to main ("dispatched", in push mode "before-push" and "pushed",
	// "before-fast-forward", "fast-forwarded", "merged", "archived"),
	// after everything before the point is journaled (except at "pushed"
	// and "fast-forwarded": the remote's main or main moved, MERGED and
	// ARCHIVED are not journaled yet), and with no change at
	// "baseline-judged" (main judged, its checkout not yet removed). Crash
	// tests kill the process there.
	Checkpoint func(point, change string)
	// Forge is the forge of pull-request delivery (project.delivery.mode
	// "pull-request"), reached with its token: required in that mode,
	// unused in the others.
	Forge forge.Forge
	// after, if set, replaces time.After for the waits between two looks
	// at the pull requests in review: tests look at once.
	after func(time.Duration) <-chan time.Time
	// wallBudget, if set, replaces the wall-time budget's timer (see
	// worker.wallTime): tests end a change's budget at the moment they
	// choose.
	wallBudget func(ctx context.Context, change string) (context.Context, context.CancelFunc)
	// sentinelTick is how often the sentinel evaluates the rules of the
	// changes at work for the facts that change with time alone (events
	// evaluate them at once); zero means 100ms.
	sentinelTick time.Duration
}

// Summary is how a run ended. A resumed run is reported as a whole:
// Statuses has every change of the run, those an earlier invocation put
// on main included, and Duration counts from the run's first RUN_STARTED.
type Summary struct {
	Result   string // "success", "failed", "paused", "open" or "interrupted"
	Statuses map[string]state.Status
	Resumed  bool
	Duration time.Duration
}

// run is one Apply in progress: the event loop (see loop) and what it
// owns. Its services are what it shares with the goroutines it starts;
// every other field is the loop goroutine's own, read and written by no
// other goroutine, so none is under a lock. The others report to the
// loop over channels: workers on workerDone, the merge queue's attempts
// on mq.done, retirements on retired, the sentinel's run error on
// watches.errs.
type run struct {
	*services
	// opts are the run's options. opts.Plan and opts.Graph are the plan
	// now: a replan, which happens only while no worker and no attempt
	// runs, replaces them.
	opts Options
	// replaced are the changes replans dropped from the plan: the
	// summary still reports them.
	replaced []string

	workerDone chan workerResult
	// reviews watches the pull requests in review (pull-request mode;
	// nil in the others).
	reviews *reviews
	// mq is the merge queue (see mergeQueue).
	mq *mergeQueue
	// retired reports the retirements (run.retireLater) of the changes
	// the merge queue archived; retiring counts those under way.
	retired  chan workerResult
	retiring int
	active   map[string]bool // changes with a running worker

	// control reads the requests of setctl pause and resume. resumable
	// holds the paused changes to dispatch again; userPaused those setctl
	// pause paused, which the run waits for (a paused change otherwise
	// ends the run); heldPending the changes not started that setctl
	// pause CHANGE holds: not dispatched, and waited for, until setctl
	// resume lets them go; held stops every new dispatch (setctl pause
	// --all).
	// runTokens is set once the run-wide token budget is spent: nothing
	// new starts.
	control     *control.Reader
	resumable   map[string]bool
	userPaused  map[string]bool
	heldPending map[string]bool
	held        bool
	runTokens   bool
	// blockedAt is recorder.failures when blockDependents last looked
	// (-1: never, or the plan changed since).
	blockedAt int
	// earlyRequests are the requests read before the loop ran (see
	// watchForStop), which the loop takes first.
	earlyRequests []control.Request
}

type workerResult struct {
	change string
	err    error // a run error: the run stops
}

// Apply runs the plan to completion, or continues the unfinished run of
// the same plan recorded in the project's journal. It holds the project's
// lock for its whole duration. The context ending (Ctrl-C) stops agents
// and gates, records the run as interrupted and returns; a later Apply
// continues it. Before the first dispatch main itself is judged by the
// plan's exec gates: a blocking gate red on main (or one that cannot run
// there) ends the run, recorded as failed, before any agent started; Apply
// then returns the failed run's Summary with a *baseline.RedError (or why
// the gate could not run).
func Apply(ctx context.Context, opts Options) (*Summary, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.sentinelTick == 0 {
		opts.sentinelTick = 100 * time.Millisecond
	}
	if opts.Project.Delivery.ProposesPullRequests() && opts.Forge == nil {
		return nil, fmt.Errorf("pull-request delivery needs a forge, and the run was given none")
	}
	rules, err := sentinel.Compile(opts.Project.Sentinel)
	if err != nil {
		return nil, err
	}
	// A directory that is not a repository gets its error before .set/
	// exists: a run directory there would be left behind in the user's
	// files, with git not yet excluding it.
	if !git.InRepository(ctx, opts.Root) {
		return nil, notRepositoryError(opts.Root, opts.Project.MainBranch)
	}
	layout := rundir.New(opts.Root)
	if err := os.MkdirAll(layout.Dir(), 0o755); err != nil {
		return nil, err
	}
	lock, err := state.AcquireLock(layout.Dir())
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	// Every agent and gate leaves a PID file under .set/procs while it
	// runs, so that a run restarted after a SIGKILL can end them.
	procs := layout.Procs()
	if err := os.MkdirAll(procs, 0o755); err != nil {
		return nil, err
	}
	ctx = proc.WithPIDDir(ctx, procs)

	if err := prepareRepository(ctx, opts.Root, opts.Project.MainBranch); err != nil {
		return nil, err
	}
	// set's commits ask git for a committer identity once per run.
	ctx = git.WithIdentity(ctx, opts.Root)
	r, resumed, closeJournal, err := openRun(ctx, opts, layout, rules)
	if err != nil {
		return nil, err
	}
	defer closeJournal()
	start := opts.Now()
	if err := r.begin(ctx, resumed); err != nil {
		r.rec.close()
		return nil, err
	}
	result, runErr := r.execute(ctx)
	result, runErr = r.gitDir.checkAtEnd(ctx, result, runErr)
	r.pool.drop(context.WithoutCancel(ctx))
	// RUN_FINISHED is journaled once the run's worktrees are gone from
	// disk: an apply killed while their files are deleted has a journal
	// that did not finish, so the next apply resumes it and its reconcile
	// discards them, where one that finds nothing to do would leave them.
	r.pool.wait()
	return r.finish(result, runErr, resumed, opts.Now().Sub(start))
}

// runIDLayout is the layout of a run's ID: the UTC second it started in.
const runIDLayout = "20060102T150405Z"

// newRunID is the ID of a new run that starts at now after the run last
// (the journal's latest run, "" for none): the second it starts in, or
// the second after last's when that is not later. No two runs of a
// journal share an ID, which is how engine/history tells them apart,
// even when a run starts within the second the one before it started.
func newRunID(now time.Time, last string) string {
	t := now.UTC().Truncate(time.Second)
	if prev, err := time.Parse(runIDLayout, last); err == nil && !t.After(prev) {
		t = prev.Add(time.Second)
	}
	return t.Format(runIDLayout)
}

// notRepositoryError is the error for a project root outside any git
// repository.
func notRepositoryError(root, mainBranch string) error {
	return fmt.Errorf("%s is not in a git repository; setctl apply needs one with a commit on %s", root, mainBranch)
}

// openRun rebuilds the state from the journal, decides whether the plan
// continues the journal's run (resumed) or starts a new one, and opens the
// journal for it, with opts.OnEvent subscribed. closeJournal ends the
// subscription, once OnEvent has seen every event, and closes the journal.
func openRun(ctx context.Context, opts Options, layout rundir.Layout, rules *sentinel.Rules) (r *run, resumed bool, closeJournal func(), err error) {
	st, err := state.Read(layout.Dir())
	if err != nil {
		return nil, false, nil, fmt.Errorf("rebuilding the state of the last run: %w", err)
	}
	if resumed, err = continues(ctx, opts, st); err != nil {
		return nil, false, nil, err
	}
	if keep := opts.Project.History.Keep; !resumed && keep > 0 {
		// The retention: a new run starts with the newest keep runs
		// kept, and the journal of no other. Nothing is journaled about
		// the runs removed: they are no part of the runs kept.
		res, err := prune.Prune(layout, prune.Options{Keep: keep})
		if err != nil {
			return nil, false, nil, fmt.Errorf("removing the runs beyond history.keep (%d): %w", keep, err)
		}
		if len(res.Runs) > 0 {
			if st, err = state.Read(layout.Dir()); err != nil {
				return nil, false, nil, fmt.Errorf("rebuilding the state of the runs kept: %w", err)
			}
			if opts.OnPrune != nil {
				opts.OnPrune(res)
			}
		}
	}
	runID := st.Run
	if !resumed || runID == "" {
		runID = newRunID(opts.Now(), st.Run)
	}
	env := os.Environ()
	red := redact.New(env, opts.Project.SecretNames())
	rec, err := newRecorder(st, layout.State(), func(onCommit journal.Option) (*journal.Writer, error) {
		return journal.Open(layout.Dir(), runID, journal.WithRedactor(red), onCommit)
	})
	if err != nil {
		return nil, false, nil, err
	}
	w := rec.w
	closeJournal = func() { w.Close() }
	if opts.OnEvent != nil {
		ch, stop := w.Subscribe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			for e := range ch {
				opts.OnEvent(e)
			}
		}()
		closeJournal = func() {
			stop()
			<-done
			w.Close()
		}
	}
	s := newServices(opts, layout, rec, rules, env, red)
	r = &run{
		services:  s,
		opts:      opts,
		control:   control.NewReader(layout.Control()),
		resumable: map[string]bool{}, userPaused: map[string]bool{}, heldPending: map[string]bool{},
		// Buffered so that a worker or the queue can always report, even
		// when the loop has stopped listening.
		workerDone: make(chan workerResult, max(opts.Project.MaxParallel, 1)),
		mq:         newMergeQueue(s),
		reviews:    newReviewsOf(opts),
		retired:    make(chan workerResult, 1),
		active:     map[string]bool{},
		blockedAt:  -1,
	}
	return r, resumed, closeJournal, nil
}

// execute judges main, then, unless main stops the run, runs the event
// loop; it returns the run's result ("success", "failed" or
// "interrupted") and the run error, if any.
func (r *run) execute(ctx context.Context) (string, error) {
	// A stop from the dashboard before the loop ends ctx as Ctrl-C does.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	watched := r.watchForStop(stop)
	err := r.checkBaseline(ctx)
	if err == nil {
		err = r.gitDir.take(ctx)
	}
	if werr := watched(); werr != nil && err == nil {
		err = werr
	}
	switch {
	case err == nil:
		return r.loop(ctx)
	case ctx.Err() != nil:
		return "interrupted", nil
	}
	return "failed", err
}

// finish records the end of the run (RUN_FINISHED, then the state's last
// snapshot and the run report, .set/runs/<id>/report.md and its copy
// .set/report.md) and returns its summary
// with runErr, or with the error that kept the end from being recorded.
func (r *run) finish(result string, runErr error, resumed bool, took time.Duration) (*Summary, error) {
	sum := &Summary{Result: result, Statuses: map[string]state.Status{}, Resumed: resumed, Duration: took}
	counts := map[string]int{}
	for _, c := range r.opts.Plan.Changes {
		s := r.rec.status(c.Name)
		sum.Statuses[c.Name] = s
		counts[string(s)]++
	}
	for _, name := range r.replaced {
		sum.Statuses[name] = r.rec.status(name)
	}
	if resumed {
		// The plan of a resumed run leaves out what the run already put on
		// main; the summary is of the whole run.
		started, names := r.rec.runStart()
		for _, name := range names {
			if _, ok := sum.Statuses[name]; !ok {
				sum.Statuses[name] = r.rec.status(name)
			}
		}
		if !started.IsZero() {
			sum.Duration = max(r.opts.Now().Sub(started), took)
		}
	}
	if err := r.rec.emit("", journal.RunFinishedData{Result: result, Statuses: counts, DurationMS: took.Milliseconds()}); err != nil && runErr == nil {
		runErr = err
	}
	if err := r.rec.close(); err != nil && runErr == nil {
		runErr = err
	}
	if err := r.writeReport(); err != nil && runErr == nil {
		runErr = err
	}
	return sum, runErr
}

// writeReport writes the run report of the recorded state, atomically.
// It is written once the journal and the state are closed: the run is
// over, so it reads as finished (report.Build), whoever holds the lock.
func (r *run) writeReport() error { return writeReport(r.layout, r.rec.state()) }

// writeReport writes the run report of st, a finished run's state, to
// the run's folder and to layout's report.md (the latest's), atomically.
func writeReport(layout rundir.Layout, st *state.State) error {
	var b bytes.Buffer
	if err := report.Markdown(&b, report.Build(st, report.Liveness{}, st.Updated)); err != nil {
		return err
	}
	if err := writeRunFile(layout.RunReport(st.Run), layout.Report(), b.Bytes()); err != nil {
		return fmt.Errorf("run report: %w", err)
	}
	return nil
}

// writeRunPlan writes p, the plan the run executes, to the run's own
// folder and to .set/plan.json, the latest run's.
func (r *run) writeRunPlan(p *plan.Plan) error {
	data, err := plan.Encode(p)
	if err != nil {
		return err
	}
	return writeRunFile(r.layout.RunPlan(r.rec.runID()), r.layout.Plan(), data)
}

// writeRunFile writes data, atomically, to own, a file of the run's own
// folder that no later run replaces (rundir.Layout.Run), and then to
// latest, its copy for the latest run.
func writeRunFile(own, latest string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(own), 0o755); err != nil {
		return err
	}
	if err := atomicfile.Write(own, data, 0o644); err != nil {
		return err
	}
	return atomicfile.Write(latest, data, 0o644)
}

// continues reports whether the plan continues the journal's last run:
// the run was made from the same configuration and spec, it asked every
// change of the plan for the same work (the plan may have fewer changes:
// those the run already put on main are done), and every change of the
// plan the journal has on main really is there. The journal is the cache
// of a run, never the record of what is done: when main disagrees with it
// (reset, or another history), the plan starts a new run. main moving in
// between is expected (the run moves it), so git HEAD and the living specs
// do not count.
func continues(ctx context.Context, opts Options, st *state.State) (bool, error) {
	p := opts.Plan
	if len(st.Plan.Changes) == 0 || st.Plan.Config != p.Fingerprint.Config || !maps.Equal(st.Plan.Specs, p.Fingerprint.Specs) {
		return false, nil
	}
	for _, c := range p.Changes {
		if !slices.Contains(st.Plan.Changes, c.Name) || st.Plan.Work[c.Name] != p.Work(c.Name) {
			return false, nil
		}
		sc := st.Changes[c.Name]
		if sc == nil || (sc.Status != state.Merged && sc.Status != state.Archived) {
			continue
		}
		commit, err := landedCommit(ctx, opts.Root, opts.Project.MainBranch, c.Name, sc)
		if err != nil {
			return false, err
		}
		if commit == "" {
			return false, nil
		}
	}
	return true, nil
}

// landedCommit is the commit of main that holds the change c of the
// state, "" when main has none: the commit MERGED recorded, when main
// has it (in pull-request mode the forge's, whose message the forge
// wrote, with or without set's trailer), else the commit since the
// change's dispatch with its trailer.
func landedCommit(ctx context.Context, root, mainBranch, name string, c *state.Change) (string, error) {
	main := "refs/heads/" + mainBranch // the branch, never a tag of its name
	if c.MergedCommit != "" {
		if ok, err := git.IsAncestor(ctx, root, c.MergedCommit, main); err == nil && ok {
			return c.MergedCommit, nil
		}
	}
	rev := main
	if c.Base != "" {
		rev = c.Base + ".." + rev
	}
	return git.FindTrailer(ctx, root, rev, merge.ChangeTrailer, name)
}

// begin records the start of the run: a new run records its plan; a
// resumed one reconciles its recorded state with the repository. What a
// killed run left in the repository is repaired, and main's checkout
// checked clean, first: a run refused there journals no RUN_STARTED.
func (r *run) begin(ctx context.Context, resumed bool) error {
	if err := r.repairLeftovers(ctx); err != nil {
		return err
	}
	if err := checkMainClean(ctx, r.opts.Root, r.opts.Project.MainBranch); err != nil {
		return err
	}
	// In push mode the remote's main is the main: a change a killed run
	// pushed is on it, and once main follows it reconcile finds the
	// change's commit on main, as after any crash once main moved, so the
	// change is merged, never pushed twice.
	if r.opts.Project.Delivery.FollowsRemote() {
		if _, err := delivery.Follow(ctx, r.opts.Root, r.opts.Project, r.layout.FastForward()); err != nil {
			return err
		}
	}
	p := r.opts.Plan
	names := make([]string, len(p.Changes))
	for i, c := range p.Changes {
		names[i] = c.Name
	}
	if err := r.rec.emit("", journal.RunStartedData{
		PID: os.Getpid(), Fingerprint: p.Fingerprint.Sum, Changes: names,
		MaxParallel: r.opts.Project.MaxParallel, Resumed: resumed,
		MainBranch: r.opts.Project.MainBranch, Budgets: runBudgets(r.opts.Project.Budgets),
		CrossCutting: r.opts.Project.CrossCuttingGlobs(),
		Learnings:    config.Names(r.opts.Project.Adopted("")),
	}); err != nil {
		return err
	}
	if !resumed {
		data, err := plan.Encode(p)
		if err != nil {
			return err
		}
		if err := r.writeRunPlan(p); err != nil {
			return err
		}
		if err := r.rec.emit("", journal.PlanCreatedData{
			Strategy: p.Strategy, Fingerprint: p.Fingerprint.Sum, Changes: names,
			Requirements: len(p.Requirements), Plan: data, Learnings: p.Learnings,
		}); err != nil {
			return err
		}
		// The planner's model calls, made before the run (setctl plan has
		// no journal), are the run's: its first LLM_CALL events, of no
		// change. A plan reused from an earlier run had them journaled
		// there.
		if pl := p.Planning; pl != nil && !pl.Reused {
			for _, c := range pl.Calls {
				if err := r.rec.emit("", c.LLMCallData); err != nil {
					return err
				}
			}
		}
	}
	// A new plan keeps the progress of the changes it names again, so the
	// repository is reconciled either way.
	if err := r.reconcile(ctx); err != nil {
		return err
	}
	// A new apply resumes what an earlier one paused; a rule that paused
	// a change pauses it again if its facts still hold.
	for _, c := range p.Changes {
		if r.rec.status(c.Name) == state.Paused {
			r.resumable[c.Name] = true
		}
	}
	return r.retryFailed()
}

// runBudgets is b as RUN_STARTED records it.
func runBudgets(b config.Budgets) *journal.Budgets {
	rb := &journal.Budgets{
		RetriesVerify: b.Retries.Verify, RetriesIntegration: b.Retries.Integration, RetriesConflicts: b.Retries.Conflicts,
		Iterations: b.Iterations, WallTimeMS: b.WallTime.D().Milliseconds(),
	}
	for size, n := range b.Tokens {
		if rb.Tokens == nil {
			rb.Tokens = map[string]int64{}
		}
		rb.Tokens[size] = int64(n)
	}
	return rb
}

// retryFailed gives the failed and blocked changes of an earlier run a new
// start: a new apply is how a user retries them, typically after raising a
// budget or fixing what made them fail. Their retry budgets start again;
// their branches and worktrees keep what was done.
func (r *run) retryFailed() error {
	for _, c := range r.opts.Plan.Changes {
		s := r.rec.status(c.Name)
		if s.Failed() || s == state.DepBlocked {
			if err := r.rec.transition(c.Name, state.Pending, "retried by a new setctl apply (was "+string(s)+")"); err != nil {
				return err
			}
		}
	}
	return nil
}

package orchestrator

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/agent"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/gate"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/spec"
	"github.com/set-engine/set/engine/state"
)

// worker takes one change from where it stands to the merge queue (see
// work). It is the goroutine's own that the loop started for the change:
// the loop sets its fields at dispatch and reads nothing of it after, and
// it records only its change's events and transitions. What it shares
// with the rest of the run is its services (its dependencies); the
// sentinel steers it through watch.
type worker struct {
	*services
	change plan.Change
	graph  *graph.ChangeGraph
	// plan is the run's plan at dispatch: a replan happens only once no
	// worker runs.
	plan *plan.Plan
	// adapter is the change's agent (see adapterOf); adapterErr says why
	// it has none.
	adapter    agent.Adapter
	adapterErr error
	// watch is the change's sentinel, taken once the change is dispatched.
	watch *watch
	// budget is the context of the agent and the gates, ended once the
	// change's wall-time budget is spent (see work); set by work.
	budget context.Context
	// wallBudget is Options.wallBudget.
	wallBudget func(ctx context.Context, change string) (context.Context, context.CancelFunc)
}

// work takes one change from where it stands to the merge queue: dispatch
// (a worktree on its own branch), agent iterations, the verify stack, and
// back to the agent on a blocking failure while the verify budget lasts.
// It returns when the change is queued, has failed, or the run stops; a
// returned error is a run error.
//
// The change's wall-time budget is an outcome of the change, never a run
// error: it ends the agent and the gates (they run on the budget's
// context), while git, the journal and the state run on the run's context
// ctx, so a budget that ends in the middle of a git call lets the call
// finish and the change then fails with failed:wall_time_exhausted.
func (w *worker) work(ctx context.Context) error {
	name := w.change.Name
	var cancel context.CancelFunc
	w.budget, cancel = w.wallTime(ctx)
	defer cancel()
	err := w.implementAndVerify(ctx)
	if err != nil || context.Cause(w.budget) != errWallTime {
		return err
	}
	if s := w.rec.status(name); s == state.Queued || s.Terminal() {
		// It reached the merge queue, or failed, as the budget ran out.
		return nil
	}
	wall := w.project.Budgets.WallTime.D()
	if err := w.rec.emit(name, journal.BudgetExceededData{Budget: "wallTime", Used: wall.Milliseconds(), Limit: wall.Milliseconds()}); err != nil {
		return err
	}
	return w.fail(name, state.FailedWallTime, fmt.Sprintf("the wall-time budget of %s is spent", wall))
}

// wallTime is the context of the change's agent and gates: ctx, ended
// with the cause errWallTime once the project's wall-time budget is spent
// (never, when it has none).
func (w *worker) wallTime(ctx context.Context) (context.Context, context.CancelFunc) {
	if w.wallBudget != nil {
		return w.wallBudget(ctx, w.change.Name)
	}
	if wall := w.project.Budgets.WallTime.D(); wall > 0 {
		return context.WithTimeoutCause(ctx, wall, errWallTime)
	}
	return context.WithCancel(ctx)
}

// adapterOf is the agent of a change: its own when the plan names one.
func adapterOf(opts Options, c plan.Change) (agent.Adapter, error) {
	if c.Agent == "" || c.Agent == opts.Project.Agent.Adapter {
		return opts.Adapter, nil
	}
	if a := opts.Adapters[c.Agent]; a != nil {
		return a, nil
	}
	return nil, fmt.Errorf("change %s asks for the %s agent, which this run was not given", c.Name, c.Agent)
}

// errWallTime ends a worker whose change spent its wall-time budget.
var errWallTime = errors.New("wall-time budget spent")

// implementAndVerify is work before the wall-time budget is accounted:
// the agent and the gates run on budget, the rest on ctx; it returns nil
// as soon as budget ends.
func (w *worker) implementAndVerify(ctx context.Context) error {
	name := w.change.Name
	if w.adapterErr != nil {
		return w.fail(name, state.FailedAgentError, w.adapterErr.Error())
	}
	// fresh: dispatched just now, on a new branch (see agent.LoopInput.Fresh).
	fresh := false
	if w.rec.status(name) == state.Pending {
		var err error
		if fresh, err = w.dispatch(ctx); err != nil {
			return err
		}
	}
	w.watch = w.watches.of(w.change)
	retry, err := w.resume()
	if err != nil {
		return err
	}
	for {
		if w.budget.Err() != nil {
			return nil
		}
		if s := w.rec.status(name); s != state.Verifying {
			if ended, err := w.implement(ctx, retry, fresh); ended || err != nil {
				return err
			}
		}
		fresh = false
		v, ended, err := w.verifyOnce(ctx)
		if ended || err != nil {
			return err
		}
		if v == nil {
			continue // stopped mid-stack, to run again
		}
		var again bool
		if again, err = w.settleVerify(ctx, v.passed, v.rc); !again || err != nil {
			return err
		}
		retry = retryNote{v.rc, state.StageVerify}
	}
}

// resume takes a paused change back to where it was paused, and returns
// the failure the agent is to hear of first, if any: the one it was
// sent back with, also when the run (or a pause) stopped the agent while
// it worked on that failure, so that a resumed iteration has the prompt
// the interrupted one had.
func (w *worker) resume() (retryNote, error) {
	name := w.change.Name
	if st := w.rec.change(name); st.Status == state.Paused {
		if err := w.rec.transition(name, st.PausedFrom, "resumed"); err != nil {
			return retryNote{}, err
		}
	}
	st := w.rec.change(name)
	switch st.Status {
	case state.VerifyFailed:
		return retryNote{st.RetryContext, state.StageVerify}, nil
	case state.IntegrationFailed:
		// A conflict (RetryStage conflict) or a red integration stack.
		return retryNote{st.RetryContext, cmp.Or(st.RetryStage, state.StageIntegration)}, nil
	case state.Implementing:
		// Where the last iteration stopped, when one ran since the agent
		// was last sent to work; else the failure it was sent back with
		// (none on the change's first implementation: a retry from
		// pending clears it).
		return retryNote{cmp.Or(st.IterationContext, st.RetryContext), st.RetryStage}, nil
	}
	return retryNote{}, nil
}

// verdict is what a run of the verify stack decided: passed, or the
// retry context rc of its first blocking failure.
type verdict struct {
	passed bool
	rc     string
}

// verifyOnce settles a stop pending before the verify stack, then runs
// the stack under the sentinel. It reports ended when the change's work
// ended (a stop, the budget), and no verdict when a stop cut the stack
// short for it to run again.
func (w *worker) verifyOnce(ctx context.Context) (v *verdict, ended bool, err error) {
	if ended, err := w.settleStop(w.watch.Take()); ended || err != nil {
		return nil, true, err
	}
	// Every round has a number of its own, merge conflicts and retries
	// from pending included (see state.Change.VerifyRound).
	attempt := w.rec.change(w.change.Name).VerifyRound + 1
	stack, done := w.watch.activity(w.budget)
	passed, rc, err := w.verify(ctx, stack, attempt)
	done()
	if err != nil || w.budget.Err() != nil {
		return nil, true, err
	}
	if stop := agent.StopOf(stack); stop != nil {
		// Stopped mid-stack: nothing of it was recorded, and it runs
		// again unless the stop ends the change's work.
		ended, err := w.settleStop(w.watch.Take())
		return nil, ended || err != nil, err
	}
	return &verdict{passed, rc}, false, nil
}

// retryNote is the last failure sent back to the agent (its retry
// context) and the stage it failed in; zero before the first failure.
type retryNote struct{ context, stage string }

// implement runs the agent loop on the change until the agent is done, and
// moves the change to verifying. It reports ended when the change ended
// instead (a budget, a stall, an agent error) or the run is stopping.
// fresh: the worktree is the one dispatch made just now for a new branch.
func (w *worker) implement(ctx context.Context, retry retryNote, fresh bool) (ended bool, err error) {
	name := w.change.Name
	if err := w.rec.transition(name, state.Implementing, ""); err != nil {
		return true, err
	}
	for {
		res, err := w.agentLoop(ctx, retry, fresh)
		if err != nil {
			return true, err
		}
		fresh = false
		if res.Ending == agent.EndStopped && res.Stop.Action == "redispatch" {
			if err := w.redispatch(ctx, res.Stop); err != nil {
				return true, err
			}
			retry.context = "set's supervision stopped your previous session and gave you a fresh one on the branch, with the work committed so far: " + res.Stop.Reason
			continue
		}
		if res.Ending == agent.EndStopped {
			return w.settleStop(res.Stop)
		}
		if to, ok := agentEndings[res.Ending]; ok {
			return true, w.fail(name, to, res.Reason)
		}
		if res.Ending == agent.EndInterrupted {
			return true, nil
		}
		return false, w.rec.transition(name, state.Verifying, "")
	}
}

// agentLoop runs the agent loop of the change once, under its sentinel.
func (w *worker) agentLoop(ctx context.Context, retry retryNote, fresh bool) (agent.LoopResult, error) {
	c, name := w.change, w.change.Name
	gates := make([]string, 0, len(w.graph.Verify))
	for _, s := range w.graph.Verify {
		gates = append(gates, s.Gate)
	}
	st := w.rec.change(name)
	testGlobs, testFiles := w.tests(ctx)
	// No retry stage (a first attempt, or one where the last iteration
	// stopped) counts as verify's.
	stage := cmp.Or(retry.stage, state.StageVerify)
	attempt, retryBudget := st.RetriesUsed(stage), runBudgets(w.project.Budgets).Retries(stage)
	prompt := agent.PromptInput{
		Project: w.project, Change: c, Reqs: w.requirements(c), Worktree: w.layout.Worktree(name),
		Gates: gates, RetryContext: retry.context, RetryStage: retry.stage, Attempt: attempt, Budget: retryBudget,
		Folder: folderName(w.plan, c), Standings: w.standings(), TestGlobs: testGlobs, TestFiles: testFiles,
	}
	if userFolders(w.plan) {
		var err error
		if prompt.Proposal, prompt.Design, prompt.Tasks, err = w.folderTexts(ctx); err != nil {
			return agent.LoopResult{}, err
		}
		prompt.UserFolder = true
	}
	return agent.Loop(ctx, agent.LoopInput{
		Adapter: w.adapter, Prompt: prompt,
		Layout: w.layout, Worktree: w.layout.Worktree(name), MainBranch: w.project.MainBranch,
		Done: st.Iteration, Fresh: fresh, MaxIterations: st.IterationBase + w.project.Budgets.Iterations,
		Model: w.model(), ModelField: w.modelField(), SessionID: st.SessionID,
		TokensUsed: st.Tokens.Total(), TokenBudget: tokenBudget(w.project, c), TokenField: tokenField(c),
		Steer: w.watch, Env: w.agentEnv(), Redact: w.redact,
		Siblings: func(n int) []agent.SiblingNote { return w.rec.siblings(name, n, gates) },
		Emit:     func(p journal.Payload) error { return w.rec.emit(name, p) },
		Budget:   w.budget,
	})
}

// agentEndings are the terminal statuses of the agent loop's endings that
// end the change.
var agentEndings = map[agent.Ending]state.Status{
	agent.EndAgentError: state.FailedAgentError,
	agent.EndIterations: state.FailedIterationBudget,
}

// settleStop carries out a stop of the sentinel (or of setctl pause) that
// ends the change's work: fail fails it, pause pauses it where it is
// (its worktree and session kept). It reports ended for those; a nil
// stop, or a restart or redispatch met between stages, changes nothing.
func (w *worker) settleStop(stop *agent.Stop) (ended bool, err error) {
	if stop == nil {
		return false, nil
	}
	switch stop.Action {
	case "fail":
		to := state.FailedStalled
		if stop.Fails == "agent_error" {
			to = state.FailedAgentError
		}
		return true, w.fail(w.change.Name, to, stop.Reason)
	case "pause":
		return true, w.rec.transition(w.change.Name, state.Paused, stop.Reason)
	}
	return false, nil
}

// redispatch gives the change a fresh worktree from its branch, for a
// fresh agent session: what the agent left uncommitted is committed, the
// worktree removed and added again on set/<change>, and the session
// forgotten.
func (w *worker) redispatch(ctx context.Context, stop *agent.Stop) error {
	name := w.change.Name
	wt := w.layout.Worktree(name)
	if err := w.pool.check(ctx, name); err != nil {
		return err
	}
	if unresolved, err := git.UnresolvedConflicts(ctx, wt); err != nil {
		return err
	} else if len(unresolved) == 0 {
		if _, err := git.CommitAll(ctx, wt, name+": uncommitted work before a redispatch"); err != nil {
			return err
		}
	}
	if err := w.pool.renew(ctx, name); err != nil {
		return err
	}
	return w.rec.emit(name, journal.DispatchData{
		Worktree: filepath.ToSlash(relTo(w.root, wt)), Branch: git.ChangeBranch(name), Base: w.rec.change(name).Base,
		Redispatch: stop.Reason,
	})
}

// settleVerify moves a verified change on: to the merge queue when its
// stack passed; otherwise, while the verify retry budget lasts, back to
// the agent with the gates' retry context rc (again), or to
// failed:retry_budget_exhausted.
func (w *worker) settleVerify(ctx context.Context, passed bool, rc string) (again bool, err error) {
	name := w.change.Name
	if passed {
		if err := w.rec.transition(name, state.Queued, ""); err != nil {
			return false, err
		}
		head, err := git.RevParse(ctx, w.layout.Worktree(name), "HEAD")
		if err != nil {
			return false, err
		}
		return false, w.rec.emit(name, journal.MergeQueuedData{Head: head})
	}
	retries := w.project.Budgets.Retries.Verify
	used := w.rec.change(name).VerifyAttempts
	if used >= retries {
		if err := w.rec.emit(name, journal.BudgetExceededData{Budget: "verify", Used: int64(used), Limit: int64(retries)}); err != nil {
			return false, err
		}
		return false, w.fail(name, state.FailedRetryBudget, fmt.Sprintf("verify failed with its retry budget spent (budgets.retries.verify: %d)", retries))
	}
	// What the gates left (build outputs) must not reach the next
	// iteration's commit: the tree goes back to what was verified.
	// (A verified change is cleaned by the merge queue.) The gates ran the
	// change's code there: it must still be the change's worktree.
	if err := w.pool.check(ctx, name); err != nil {
		return false, err
	}
	if err := git.Clean(ctx, w.layout.Worktree(name)); err != nil {
		return false, err
	}
	if err := w.rec.transition(name, state.VerifyFailed, ""); err != nil {
		return false, err
	}
	if err := w.rec.emit(name, journal.RetryScheduledData{Stage: "verify", Attempt: used + 1, Budget: retries, Reason: "a blocking gate failed", RetryContext: rc}); err != nil {
		return false, err
	}
	return true, nil
}

// dispatchChange creates the change's worktree on branch set/<change> from
// main, or takes over the one an interrupted run left. It reports fresh
// when it created the branch, at main's head (see agent.LoopInput.Fresh).
func (w *worker) dispatch(ctx context.Context) (fresh bool, err error) {
	c := w.change
	wt := w.layout.Worktree(c.Name)
	base, err := git.BranchHead(ctx, w.root, w.project.MainBranch)
	if err != nil {
		return false, err
	}
	_, statErr := os.Stat(wt)
	reused, created := statErr == nil, false
	if !reused {
		created, err = w.pool.add(ctx, c.Name, base)
		if err != nil {
			return false, err
		}
	}
	// A directory found where the worktree belongs must be that worktree:
	// git run in anything else falls through to the root checkout, main.
	if err := w.pool.check(ctx, c.Name); err != nil {
		return false, err
	}
	if _, err := w.ownFolder(ctx, base, created); err != nil {
		return false, err
	}
	if err := w.rec.emit(c.Name, journal.DispatchData{Worktree: filepath.ToSlash(relTo(w.root, wt)), Branch: git.ChangeBranch(c.Name), Base: base, Reused: reused}); err != nil {
		return false, err
	}
	if err := w.rec.transition(c.Name, state.Dispatched, ""); err != nil {
		return false, err
	}
	w.checkpoint("dispatched", c.Name)
	return created, nil
}

// folderOn is the OpenSpec change folder set writes for change c of plan
// p on base, a commit of main or a candidate of the merge queue (see
// spec.ChangeFolder), or nil for a change without requirements, which has
// no delta. It is the plan's folder for the change with one difference
// that depends on base: a capability gets its "## Purpose" only where base
// has no living spec of it (openspec/specs/<capability>/spec.md). The plan
// knows main as it was when it was made; base is main as the change is
// dispatched, verified or integrated on it, which a sibling may have given
// the capability since.
func folderOn(ctx context.Context, root string, p *plan.Plan, c plan.Change, base string) (map[string][]byte, error) {
	if len(c.Requirements) == 0 {
		return nil, nil
	}
	in := p.ChangeFolder(c.Name)
	for _, capability := range slices.Sorted(maps.Keys(in.Purposes)) {
		living, err := git.HasPath(ctx, root, base, "openspec/specs/"+capability+"/spec.md")
		if err != nil {
			return nil, err
		}
		if living {
			delete(in.Purposes, capability)
		}
	}
	return spec.ChangeFolder(in), nil
}

// ownFolder makes the change's OpenSpec change folder on its branch the
// one set writes on base (see folderOn), and returns its delta specs: what
// spec_verify holds the change to. set owns the folder's specs/ and
// writes them in its own commits (agent.FolderTrailer), never charging
// the agent for them:
//
//   - a branch without such a commit (newBranch: one created just now, at
//     base) gets the whole folder;
//   - on a branch that has one, specs/ is rewritten, in a commit of its
//     own, when what set writes on base differs from what set wrote in
//     its newest such commit (a resumed run or a replan plans again from
//     main's living specs; main moved under the change). proposal.md,
//     tasks.md and any file the agent added stay as the branch has them:
//     they are the agent's to refine once written, and what set writes
//     there depends on the change's work only, which a branch keeps from
//     one plan to the next (plan.Work).
//
// What the agent changed in specs/ since set's newest commit is left for
// spec_verify to name, unless set rewrites specs/ anyway. A worktree in
// the middle of a merge is not written to: its delta is returned as set
// would write it.
//
// A change of a plan from the folders people wrote (userFolders) is the
// exception: its folder is on base already, theirs, and set writes and
// commits nothing in it; its delta is what main has (userDelta).
func (w *worker) ownFolder(ctx context.Context, base string, newBranch bool) (map[string][]byte, error) {
	c := w.change
	if userFolders(w.plan) {
		return userDelta(ctx, w.root, c, base)
	}
	files, err := folderOn(ctx, w.root, w.plan, c, base)
	if files == nil || err != nil {
		return nil, err
	}
	delta := deltaOf(files)
	wt := w.layout.Worktree(c.Name)
	if newBranch {
		if err := spec.WriteChangeFolder(wt, c.Name, files); err != nil {
			return nil, err
		}
		// Nothing else is staged on a branch made just now.
		_, err := git.CommitNewPaths(ctx, wt, w.folderMessage(base, "wrote "+spec.ChangeDir(c.Name)+"/"), spec.ChangeDir(c.Name))
		return delta, err
	}
	last, err := git.FindTrailer(ctx, wt, "refs/heads/"+w.project.MainBranch+"..HEAD", agent.FolderTrailer, c.Name)
	if err != nil {
		return nil, err
	}
	if last != "" {
		wrote, err := git.FilesAt(ctx, wt, last, spec.ChangeDir(c.Name)+"/specs")
		if err != nil {
			return nil, err
		}
		if maps.EqualFunc(wrote, prefixed(spec.ChangeDir(c.Name)+"/", delta), bytes.Equal) {
			return delta, nil
		}
	}
	if git.InMerge(ctx, wt) {
		return delta, nil
	}
	what, write := "wrote "+spec.ChangeDir(c.Name)+"/", spec.WriteChangeFolder
	if last != "" {
		what, write = "rewrote the delta specs of "+spec.ChangeDir(c.Name)+"/ (proposal.md and tasks.md stay as they are)", spec.WriteDeltaSpecs
	}
	if err := write(wt, c.Name, files); err != nil {
		return nil, err
	}
	_, err = git.CommitPaths(ctx, wt, w.folderMessage(base, what), spec.ChangeDir(c.Name))
	return delta, err
}

// folderMessage is the message of set's commit of the change folder: what
// it did, on which commit of main, with the agent.FolderTrailer.
func (w *worker) folderMessage(base, what string) string {
	c := w.change.Name
	return fmt.Sprintf("%s: the OpenSpec change folder\n\nset %s from the spec and the living specs of %s at %s.\n\n%s: %s\n",
		c, what, w.project.MainBranch, shortID(base), agent.FolderTrailer, c)
}

// userFolders reports whether plan p comes from the OpenSpec change
// folders the project's people wrote on main (planner strategy
// "openspec"): each change is the folder named after it, which set
// neither writes nor rewrites, and whose delta spec_verify and the fold
// hold to main's (see userDelta).
func userFolders(p *plan.Plan) bool {
	return p.Strategy == config.StrategyOpenSpec
}

// userDelta is the delta of change c of a plan from user folders
// (userFolders), as base has it: the files of its folder's specs/ and its
// .openspec.yaml (which steers the archive), keyed by their paths in the
// folder. It is never nil, so that spec_verify holds the change to it
// even when the folder has neither (an added file fails the gate). A
// folder base does not have is an error: the plan was made from a main
// that had it, and only the change's own archive takes it away.
func userDelta(ctx context.Context, root string, c plan.Change, base string) (map[string][]byte, error) {
	dir := spec.ChangeDir(c.Name) + "/"
	files, err := git.FilesAt(ctx, root, base, dir)
	if err != nil {
		return nil, err
	}
	delta := map[string][]byte{}
	found := false
	for name, data := range files {
		rel, ok := strings.CutPrefix(name, dir)
		if !ok {
			continue
		}
		found = true
		if strings.HasPrefix(rel, "specs/") || rel == gate.MetadataFile {
			delta[rel] = data
		}
	}
	if !found {
		return nil, fmt.Errorf("change %s: its OpenSpec change folder %s, which the plan was made from, is not in commit %s", c.Name, dir, shortID(base))
	}
	return delta, nil
}

// deltaOn is the delta of change c of plan p on base, a commit of main or
// a candidate of the merge queue: what spec_verify and the fold hold the
// change to (see ownFolder).
func deltaOn(ctx context.Context, root string, p *plan.Plan, c plan.Change, base string) (map[string][]byte, error) {
	if userFolders(p) {
		return userDelta(ctx, root, c, base)
	}
	files, err := folderOn(ctx, root, p, c, base)
	return deltaOf(files), err
}

// shortID is a commit ID as a message names it.
func shortID(id string) string {
	return id[:min(len(id), 12)]
}

// deltaOf is the delta specs of a change folder (its specs/ files), nil
// when it has none.
func deltaOf(files map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for name, data := range files {
		if strings.HasPrefix(name, "specs/") {
			out[name] = data
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// prefixed is files with every name prefixed.
func prefixed(prefix string, files map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(files))
	for name, data := range files {
		out[prefix+name] = data
	}
	return out
}

// folderName is the change's OpenSpec change folder of plan p: "" for a
// change without requirements when set writes the folders (it writes
// none for it); the folder of every change of a plan from user folders,
// which has one whatever its delta holds (a skip_specs folder has no
// requirement).
func folderName(p *plan.Plan, c plan.Change) string {
	if len(c.Requirements) == 0 && !userFolders(p) {
		return ""
	}
	return spec.ChangeDir(c.Name)
}

// removing lists the requirements of change c of plan p that no test is
// to name: those the spec removed, and in a plan from user folders also a
// RENAMED one, whose behaviour stays what it was (a rename changes the
// title only).
func removing(p *plan.Plan, c plan.Change) []string {
	var out []string
	for _, id := range c.Requirements {
		st := p.Standing(id)
		if st.Status == spec.Removed || userFolders(p) && agent.NeedsNoTest(st) {
			out = append(out, id)
		}
	}
	return out
}

// folderTexts is the proposal.md, design.md and tasks.md of the change's
// folder, one the project's people wrote (userFolders), for the prompt:
// as they are on the commit of main the change's branch was made from,
// as tests has its files, so that a resumed iteration's prompt is the
// one the interrupted iteration had ("" for a file the folder does not
// have there). The agent checks tasks off in the worktree's tasks.md.
func (w *worker) folderTexts(ctx context.Context) (proposal, design, tasks string, err error) {
	rev := cmp.Or(w.rec.change(w.change.Name).Base, "refs/heads/"+w.project.MainBranch)
	texts := make([]string, 3)
	for i, name := range []string{"proposal.md", "design.md", "tasks.md"} {
		data, err := git.FileAt(ctx, w.layout.Root(), rev, spec.ChangeDir(w.change.Name)+"/"+name)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", "", "", err
		}
		texts[i] = string(data)
	}
	return texts[0], texts[1], texts[2], nil
}

// tests is the globs of the files the project counts as tests, and
// those files, on the commit of main the change's branch was made from
// (its dispatch base; main's head before the first dispatch), for the
// prompt's word on where this project keeps its tests: a resumed
// iteration's prompt is the one the interrupted iteration had, whatever
// reached main meanwhile. The globs include those of the project's test
// runners' configuration on that commit (gate.TestGlobs). files is nil
// when git cannot say.
func (w *worker) tests(ctx context.Context) (globs, files []string) {
	rev := w.rec.change(w.change.Name).Base
	if rev == "" {
		rev = "refs/heads/" + w.project.MainBranch
	}
	globs = gate.TestGlobs(ctx, w.project, w.layout.Root(), rev)
	paths, err := git.TreeFiles(ctx, w.layout.Root(), rev)
	if err != nil {
		return globs, nil
	}
	return globs, gate.TestFiles(globs, paths)
}

// standings are how the change's requirements stand against main's
// living specs, by ID.
func (w *worker) standings() map[string]spec.Standing {
	out := map[string]spec.Standing{}
	for _, id := range w.change.Requirements {
		out[id] = w.plan.Standing(id)
	}
	return out
}

// verify runs the change's verify stack in order and stops at the first
// blocking failure, whose retry context it returns. Gates the plan
// skipped are recorded as skipped, with the reason. The gates run on
// budget, git on ctx; a gate cut short by budget ending is not recorded.
func (w *worker) verify(ctx, budget context.Context, attempt int) (bool, string, error) {
	c, cg := w.change, w.graph
	var skipped []graph.SkippedGate
	for _, sk := range cg.Skipped {
		if sk.Stage == graph.StageVerify {
			skipped = append(skipped, sk)
		}
	}
	wt := w.layout.Worktree(c.Name)
	// The delta is the one set writes on main as it is now, where the
	// change is to be integrated: the branch gets it first (a folder the
	// project's people wrote is main's as it is, see ownFolder).
	head, err := git.BranchHead(ctx, w.root, w.project.MainBranch)
	if err != nil {
		return false, "", err
	}
	delta, err := w.ownFolder(ctx, head, false)
	if err != nil {
		return false, "", err
	}
	base, err := git.MergeBase(ctx, wt, w.project.MainBranch, "HEAD")
	if err != nil {
		return false, "", err
	}
	res, err := gate.RunStack(budget, gate.StackInput{
		Project: w.project, Change: c, Reqs: w.requirements(c), Stage: graph.StageVerify, Attempt: attempt,
		Delta: delta, Removing: removing(w.plan, c), UserFolder: userFolders(w.plan),
		Layout: w.layout, Worktree: wt, Base: base, Env: w.env, Redact: w.redact,
		Steps: cg.Verify, Skipped: skipped, Accepted: w.rec.accepted(), Runners: w.runners, Models: w.models,
	}, func(p journal.Payload) error { return w.rec.emit(c.Name, p) })
	return res.Passed, res.RetryContext(), err
}

// model is the model of the change's agent.
func (w *worker) model() string {
	c := w.change
	if c.Model != "" {
		return c.Model
	}
	return w.project.Agent.Models.Implement
}

// modelField is the set.cue field that names the change's model (see
// worker.model), with its position when the project declares it.
func (w *worker) modelField() string {
	c := w.change
	path := []string{"agent", "models", "implement"}
	if c.Model != "" {
		path = []string{"plan", "changes", c.Name, "model"}
	}
	return w.project.FieldName(path...)
}

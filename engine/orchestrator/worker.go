package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/agent"
	"github.com/set-engine/set/engine/gate"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/merge"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/spec"
	"github.com/set-engine/set/engine/state"
)

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
func (r *run) work(ctx context.Context, c plan.Change) error {
	name := c.Name
	budget, cancel := r.wallBudget(ctx, name)
	defer cancel()
	err := r.implementAndVerify(ctx, budget, c)
	if err != nil || context.Cause(budget) != errWallTime {
		return err
	}
	if s := r.rec.status(name); s == state.Queued || s.Terminal() {
		// It reached the merge queue, or failed, as the budget ran out.
		return nil
	}
	wall := r.opts.Project.Budgets.WallTime.D()
	if err := r.rec.emit(name, journal.BudgetExceededData{Budget: "wallTime", Used: wall.Milliseconds(), Limit: wall.Milliseconds()}); err != nil {
		return err
	}
	return r.fail(name, state.FailedWallTime, fmt.Sprintf("the wall-time budget of %s is spent", wall))
}

// wallBudget is the context of a change's agent and gates: ctx, ended
// with the cause errWallTime once the project's wall-time budget is spent
// (never, when it has none).
func (r *run) wallBudget(ctx context.Context, change string) (context.Context, context.CancelFunc) {
	if r.opts.wallBudget != nil {
		return r.opts.wallBudget(ctx, change)
	}
	if wall := r.opts.Project.Budgets.WallTime.D(); wall > 0 {
		return context.WithTimeoutCause(ctx, wall, errWallTime)
	}
	return context.WithCancel(ctx)
}

// errWallTime ends a worker whose change spent its wall-time budget.
var errWallTime = errors.New("wall-time budget spent")

// adapter is the agent of a change: its own when the plan names one.
func (r *run) adapter(c plan.Change) (agent.Adapter, error) {
	if c.Agent == "" || c.Agent == r.opts.Project.Agent.Adapter {
		return r.opts.Adapter, nil
	}
	if a := r.opts.Adapters[c.Agent]; a != nil {
		return a, nil
	}
	return nil, fmt.Errorf("change %s asks for the %s agent, which this run was not given", c.Name, c.Agent)
}

// implementAndVerify is work before the wall-time budget is accounted:
// the agent and the gates run on budget, the rest on ctx; it returns nil
// as soon as budget ends.
func (r *run) implementAndVerify(ctx, budget context.Context, c plan.Change) error {
	name := c.Name
	adapter, err := r.adapter(c)
	if err != nil {
		return r.fail(name, state.FailedAgentError, err.Error())
	}
	// fresh: dispatched just now, on a new branch (see agent.LoopInput.Fresh).
	fresh := false
	if r.rec.status(name) == state.Pending {
		if fresh, err = r.dispatchChange(ctx, c); err != nil {
			return err
		}
	}
	w := r.watchOf(name)
	if st := r.rec.change(name); st.Status == state.Paused {
		if err := r.rec.transition(name, st.PausedFrom, "resumed"); err != nil {
			return err
		}
	}
	var retry retryNote
	switch r.rec.status(name) {
	case state.VerifyFailed:
		retry = retryNote{r.rec.change(name).RetryContext, state.StageVerify}
	case state.IntegrationFailed:
		retry = retryNote{r.rec.change(name).RetryContext, state.StageIntegration}
	}
	cg, _ := r.opts.Graph.Change(name)
	for {
		if budget.Err() != nil {
			return nil
		}
		if s := r.rec.status(name); s != state.Verifying {
			if ended, err := r.implement(ctx, budget, c, cg, adapter, retry, fresh, w); ended || err != nil {
				return err
			}
		}
		fresh = false
		if ended, err := r.settleStop(ctx, c, w.Take()); ended || err != nil {
			return err
		}
		attempt := r.rec.change(name).VerifyAttempts + 1
		stack, done := w.activity(budget)
		passed, rc, err := r.verify(ctx, stack, c, cg, attempt)
		done()
		if err != nil || budget.Err() != nil {
			return err
		}
		if stop := agent.StopOf(stack); stop != nil {
			// Stopped mid-stack: nothing of it was recorded, and it runs
			// again unless the stop ends the change's work.
			if ended, err := r.settleStop(ctx, c, w.Take()); ended || err != nil {
				return err
			}
			continue
		}
		var again bool
		if again, err = r.settleVerify(ctx, name, passed, rc); !again || err != nil {
			return err
		}
		retry = retryNote{rc, state.StageVerify}
	}
}

// retryNote is the last failure sent back to the agent (its retry
// context) and the stage it failed in; zero before the first failure.
type retryNote struct{ context, stage string }

// implement runs the agent loop on the change until the agent is done, and
// moves the change to verifying. It reports ended when the change ended
// instead (a budget, a stall, an agent error) or the run is stopping.
// fresh: the worktree is the one dispatch made just now for a new branch.
func (r *run) implement(ctx, budget context.Context, c plan.Change, cg *graph.ChangeGraph, adapter agent.Adapter, retry retryNote, fresh bool, w *watch) (ended bool, err error) {
	name := c.Name
	if err := r.rec.transition(name, state.Implementing, ""); err != nil {
		return true, err
	}
	for {
		res, err := r.agentLoop(ctx, budget, c, cg, adapter, retry, fresh, w)
		if err != nil {
			return true, err
		}
		fresh = false
		if res.Ending == agent.EndStopped && res.Stop.Action == "redispatch" {
			if err := r.redispatch(ctx, c, res.Stop); err != nil {
				return true, err
			}
			retry.context = "set's supervision stopped your previous session and gave you a fresh one on the branch, with the work committed so far: " + res.Stop.Reason
			continue
		}
		if res.Ending == agent.EndStopped {
			return r.settleStop(ctx, c, res.Stop)
		}
		if to, ok := agentEndings[res.Ending]; ok {
			return true, r.fail(name, to, res.Reason)
		}
		if res.Ending == agent.EndInterrupted {
			return true, nil
		}
		return false, r.rec.transition(name, state.Verifying, "")
	}
}

// agentLoop runs the agent loop of the change once, under its sentinel.
func (r *run) agentLoop(ctx, budget context.Context, c plan.Change, cg *graph.ChangeGraph, adapter agent.Adapter, retry retryNote, fresh bool, w *watch) (agent.LoopResult, error) {
	name := c.Name
	gates := make([]string, 0, len(cg.Verify))
	for _, s := range cg.Verify {
		gates = append(gates, s.Gate)
	}
	st := r.rec.change(name)
	attempt, retryBudget := st.VerifyAttempts, r.opts.Project.Budgets.Retries.Verify
	if retry.stage == state.StageIntegration {
		attempt, retryBudget = st.IntegrationAttempts, r.opts.Project.Budgets.Retries.Integration
	}
	return agent.Loop(ctx, agent.LoopInput{
		Adapter: adapter,
		Prompt: agent.PromptInput{
			Project: r.opts.Project, Change: c, Reqs: r.requirements(c), Worktree: r.layout.Worktree(name),
			Gates: gates, RetryContext: retry.context, RetryStage: retry.stage, Attempt: attempt, Budget: retryBudget,
			Folder: folderName(c), Standings: r.standings(c),
		},
		Layout: r.layout, Worktree: r.layout.Worktree(name), MainBranch: r.opts.Project.MainBranch,
		Done: st.Iteration, Fresh: fresh, MaxIterations: st.IterationBase + r.opts.Project.Budgets.Iterations,
		Model: r.model(c), ModelField: r.modelField(c), SessionID: st.SessionID,
		TokensUsed: st.Tokens.Total(), TokenBudget: r.tokenBudget(name), TokenField: r.tokenField(name),
		Steer: w, Env: r.agentEnv(), Redact: r.redact,
		Emit:   func(p journal.Payload) error { return r.rec.emit(name, p) },
		Budget: budget,
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
func (r *run) settleStop(ctx context.Context, c plan.Change, stop *agent.Stop) (ended bool, err error) {
	if stop == nil {
		return false, nil
	}
	switch stop.Action {
	case "fail":
		to := state.FailedStalled
		if stop.Fails == "agent_error" {
			to = state.FailedAgentError
		}
		return true, r.fail(c.Name, to, stop.Reason)
	case "pause":
		return true, r.rec.transition(c.Name, state.Paused, stop.Reason)
	}
	return false, nil
}

// redispatch gives the change a fresh worktree from its branch, for a
// fresh agent session: what the agent left uncommitted is committed, the
// worktree removed and added again on set/<change>, and the session
// forgotten.
func (r *run) redispatch(ctx context.Context, c plan.Change, stop *agent.Stop) error {
	name := c.Name
	wt, branch := r.layout.Worktree(name), "set/"+name
	if err := r.checkWorktree(ctx, name); err != nil {
		return err
	}
	if unresolved, err := git.UnresolvedConflicts(ctx, wt); err != nil {
		return err
	} else if len(unresolved) == 0 {
		if _, err := git.CommitAll(ctx, wt, name+": uncommitted work before a redispatch"); err != nil {
			return err
		}
	}
	if err := r.removeWorktree(ctx, name); err != nil {
		return err
	}
	r.worktrees.Lock()
	err := git.AddWorktree(ctx, r.opts.Root, wt, branch, "")
	r.worktrees.Unlock()
	if err != nil {
		return err
	}
	return r.rec.emit(name, journal.DispatchData{
		Worktree: filepath.ToSlash(relTo(r.opts.Root, wt)), Branch: branch, Base: r.rec.change(name).Base,
		Redispatch: stop.Reason,
	})
}

// settleVerify moves a verified change on: to the merge queue when its
// stack passed; otherwise, while the verify retry budget lasts, back to
// the agent with the gates' retry context rc (again), or to
// failed:retry_budget_exhausted.
func (r *run) settleVerify(ctx context.Context, name string, passed bool, rc string) (again bool, err error) {
	if passed {
		if err := r.rec.transition(name, state.Queued, ""); err != nil {
			return false, err
		}
		head, err := git.RevParse(ctx, r.layout.Worktree(name), "HEAD")
		if err != nil {
			return false, err
		}
		return false, r.rec.emit(name, journal.MergeQueuedData{Head: head})
	}
	retries := r.opts.Project.Budgets.Retries.Verify
	used := r.rec.change(name).VerifyAttempts
	if used >= retries {
		if err := r.rec.emit(name, journal.BudgetExceededData{Budget: "verify", Used: int64(used), Limit: int64(retries)}); err != nil {
			return false, err
		}
		return false, r.fail(name, state.FailedRetryBudget, fmt.Sprintf("verify failed with its retry budget spent (budgets.retries.verify: %d)", retries))
	}
	// What the gates left (build outputs) must not reach the next
	// iteration's commit: the tree goes back to what was verified.
	// (A verified change is cleaned by the merge queue.) The gates ran the
	// change's code there: it must still be the change's worktree.
	if err := r.checkWorktree(ctx, name); err != nil {
		return false, err
	}
	if err := git.Clean(ctx, r.layout.Worktree(name)); err != nil {
		return false, err
	}
	if err := r.rec.transition(name, state.VerifyFailed, ""); err != nil {
		return false, err
	}
	if err := r.rec.emit(name, journal.RetryScheduledData{Stage: "verify", Attempt: used + 1, Budget: retries, Reason: "a blocking gate failed", RetryContext: rc}); err != nil {
		return false, err
	}
	return true, nil
}

// dispatchChange creates the change's worktree on branch set/<change> from
// main, or takes over the one an interrupted run left. It reports fresh
// when it created the branch, at main's head (see agent.LoopInput.Fresh).
func (r *run) dispatchChange(ctx context.Context, c plan.Change) (fresh bool, err error) {
	wt, branch := r.layout.Worktree(c.Name), "set/"+c.Name
	base, err := git.BranchHead(ctx, r.opts.Root, r.opts.Project.MainBranch)
	if err != nil {
		return false, err
	}
	_, statErr := os.Stat(wt)
	reused, created := statErr == nil, false
	if !reused {
		if err := os.MkdirAll(filepath.Dir(wt), 0o755); err != nil {
			return false, err
		}
		created, err = r.addWorktree(ctx, wt, branch, base)
		if err != nil {
			return false, err
		}
	}
	// A directory found where the worktree belongs must be that worktree:
	// git run in anything else falls through to the root checkout, main.
	if err := r.checkWorktree(ctx, c.Name); err != nil {
		return false, err
	}
	if err := r.writeFolder(ctx, c, created); err != nil {
		return false, err
	}
	if err := r.rec.emit(c.Name, journal.DispatchData{Worktree: filepath.ToSlash(relTo(r.opts.Root, wt)), Branch: branch, Base: base, Reused: reused}); err != nil {
		return false, err
	}
	if err := r.rec.transition(c.Name, state.Dispatched, ""); err != nil {
		return false, err
	}
	r.checkpoint("dispatched", c.Name)
	return created, nil
}

// folder is the OpenSpec change folder set writes for a change (see
// spec.ChangeFolder), or nil for a change without requirements, which has
// no delta.
func (r *run) folder(c plan.Change) map[string][]byte {
	if len(c.Requirements) == 0 {
		return nil
	}
	return spec.ChangeFolder(r.opts.Plan.ChangeFolder(c.Name))
}

// writeFolder puts the change's OpenSpec change folder on its branch, as
// set's own commit (agent.FolderTrailer), before the agent starts: the
// delta is derived from the requirements' standings, never left to the
// agent. A branch that has that commit already (a worktree an interrupted
// run left, a change retried) keeps its folder, which the agent may have
// refined. A branch created just now (newBranch) is main's head, with no
// commit of its own to look through.
func (r *run) writeFolder(ctx context.Context, c plan.Change, newBranch bool) error {
	files := r.folder(c)
	if files == nil {
		return nil
	}
	wt := r.layout.Worktree(c.Name)
	if !newBranch {
		done, err := git.FindTrailer(ctx, wt, "refs/heads/"+r.opts.Project.MainBranch+"..HEAD", agent.FolderTrailer, c.Name)
		if err != nil || done != "" {
			return err
		}
	}
	if err := spec.WriteChangeFolder(wt, c.Name, files); err != nil {
		return err
	}
	msg := fmt.Sprintf("%s: the OpenSpec change folder\n\nset wrote %s/ from the spec and %s's living specs.\n\n%s: %s\n",
		c.Name, spec.ChangeDir(c.Name), r.opts.Project.MainBranch, agent.FolderTrailer, c.Name)
	commit := git.CommitPaths
	if newBranch {
		commit = git.CommitNewPaths // nothing else is staged there
	}
	_, err := commit(ctx, wt, msg, spec.ChangeDir(c.Name))
	return err
}

// deltaOf is the delta specs of the change's folder: what spec_verify
// holds the change to.
func (r *run) deltaOf(c plan.Change) map[string][]byte {
	out := map[string][]byte{}
	for name, data := range r.folder(c) {
		if strings.HasPrefix(name, "specs/") {
			out[name] = data
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// folderName is the change's OpenSpec change folder, "" for a change
// without requirements (see run.folder).
func folderName(c plan.Change) string {
	if len(c.Requirements) == 0 {
		return ""
	}
	return spec.ChangeDir(c.Name)
}

// removing lists the change's requirements that the spec removed.
func (r *run) removing(c plan.Change) []string {
	var out []string
	for _, id := range c.Requirements {
		if r.opts.Plan.Standing(id).Status == spec.Removed {
			out = append(out, id)
		}
	}
	return out
}

// standings are how the change's requirements stand against main's
// living specs, by ID.
func (r *run) standings(c plan.Change) map[string]spec.Standing {
	out := map[string]spec.Standing{}
	for _, id := range c.Requirements {
		out[id] = r.opts.Plan.Standing(id)
	}
	return out
}

// checkWorktree proves that the change's worktree directory is its
// worktree of the repository, on branch set/<change>, before git changes
// it (see git.CheckWorktree).
func (r *run) checkWorktree(ctx context.Context, change string) error {
	return git.CheckWorktree(ctx, r.opts.Root, r.layout.Worktree(change), "set/"+change)
}

// verify runs the change's verify stack in order and stops at the first
// blocking failure, whose retry context it returns. Gates the plan
// skipped are recorded as skipped, with the reason. The gates run on
// budget, git on ctx; a gate cut short by budget ending is not recorded.
func (r *run) verify(ctx, budget context.Context, c plan.Change, cg *graph.ChangeGraph, attempt int) (bool, string, error) {
	var skipped []graph.SkippedGate
	for _, sk := range cg.Skipped {
		if sk.Stage == graph.StageVerify {
			skipped = append(skipped, sk)
		}
	}
	wt := r.layout.Worktree(c.Name)
	base, err := git.MergeBase(ctx, wt, r.opts.Project.MainBranch, "HEAD")
	if err != nil {
		return false, "", err
	}
	res, err := gate.RunStack(budget, gate.StackInput{
		Project: r.opts.Project, Change: c, Reqs: r.requirements(c), Stage: graph.StageVerify, Attempt: attempt,
		Delta: r.deltaOf(c), Removing: r.removing(c),
		Layout: r.layout, Worktree: wt, Base: base, Env: r.env, Redact: r.redact,
		Steps: cg.Verify, Skipped: skipped, Accepted: r.rec.accepted(), Runners: r.opts.Runners, Models: r.opts.Models,
	}, func(p journal.Payload) error { return r.rec.emit(c.Name, p) })
	return res.Passed, res.RetryContext(), err
}

// land ends a change whose one commit is on main, its MERGED and ARCHIVED
// journaled: merged, then archived (the fold is in that same commit), then
// retired. reason explains the transitions (a restart found the commit).
func (r *run) land(ctx context.Context, name, reason string) error {
	if err := r.archive(name, reason); err != nil {
		return err
	}
	return r.retire(ctx, name)
}

// archive moves a change whose one commit is on main, its MERGED and
// ARCHIVED journaled, to merged and then archived: from then on the
// changes that depend on it may start.
func (r *run) archive(name, reason string) error {
	if r.rec.status(name) != state.Merged {
		if err := r.rec.transition(name, state.Merged, reason); err != nil {
			return err
		}
	}
	r.checkpoint("merged", name)
	if err := r.rec.transition(name, state.Archived, reason); err != nil {
		return err
	}
	// Archived is final: the sentinel has nothing more to watch.
	r.unwatch(name)
	return nil
}

// retire removes what an archived change leaves behind: its worktree
// (parked for reuse, or removed) and its branch. Both steps are safe to
// repeat, so a run restarted between them finishes the job.
func (r *run) retire(ctx context.Context, change string) error {
	r.checkpoint("archived", change)
	if err := r.parkWorktree(ctx, change); err != nil {
		return err
	}
	r.deleteBranch(ctx, change)
	return nil
}

// parkWorktree takes an archived change's worktree out of the way: it
// becomes a spare (see run.spares) while fewer are kept than maxParallel
// and the changes still to dispatch, else it is removed (here, off the
// run's way, rather than when the run ends). Removing a worktree deletes every file of the
// project and adding one writes them all again; a spare reused by the
// next dispatch (run.addWorktree) rewrites only the files that differ.
func (r *run) parkWorktree(ctx context.Context, change string) error {
	defer r.parkedOrNot(change)
	trash, err := r.parkOrSetAside(ctx, change)
	r.emptyTrash(trash)
	return err
}

// parkOrSetAside is parkWorktree's part under run.worktrees: it parks the
// worktree or sets it aside (see run.setAside), and returns the trash to
// delete, if any.
func (r *run) parkOrSetAside(ctx context.Context, change string) (trash string, err error) {
	r.worktrees.Lock()
	defer r.worktrees.Unlock()
	wt := r.layout.Worktree(change)
	r.spareMu.Lock()
	room := len(r.spares) < min(max(r.opts.Project.MaxParallel, 1), r.rec.pendingChanges())
	r.spareMu.Unlock()
	if _, err := os.Stat(wt); err == nil && room && r.checkWorktree(ctx, change) == nil {
		r.worktreeSeq++
		spare := r.layout.SpareWorktree(r.worktreeSeq)
		if err := git.ParkWorktree(ctx, r.opts.Root, wt, spare); err == nil {
			r.spareMu.Lock()
			r.spares = append(r.spares, spare)
			r.spareMu.Unlock()
			return "", nil
		}
		// Not parked: what a move half-done left at the spare's place
		// goes, and the worktree is removed as usual.
		if _, err := git.DiscardWorktree(ctx, r.opts.Root, spare); err != nil {
			return "", err
		}
	}
	return r.setAside(ctx, wt)
}

// setAside removes the worktree at wt, its files moved into a trash
// directory first (git.SetAsideWorktree), and returns the trash, which
// the caller hands to run.emptyTrash once it no longer holds
// run.worktrees, which it holds: deleting the files of a large checkout
// takes long, and dispatches wait for run.worktrees meanwhile.
func (r *run) setAside(ctx context.Context, wt string) (trash string, err error) {
	r.worktreeSeq++
	trash = r.layout.Trash(r.worktreeSeq)
	return trash, git.SetAsideWorktree(ctx, r.opts.Root, wt, trash)
}

// emptyTrash deletes a trash directory of run.setAside ("": none) in the
// background (see run.trash). One it cannot delete stays, and the next
// run's reconcile discards it: it holds only what a removed worktree held.
func (r *run) emptyTrash(trash string) {
	if trash != "" {
		r.trash.Go(func() { _ = os.RemoveAll(trash) })
	}
}

// addWorktree makes a change's worktree at wt as git.NewWorktree does, in
// a spare when there is one (see run.parkWorktree); a spare git cannot
// reuse is discarded, and a new worktree made.
func (r *run) addWorktree(ctx context.Context, wt, branch, base string) (created bool, err error) {
	spare := r.takeSpare()
	r.worktrees.Lock()
	defer r.worktrees.Unlock()
	if spare != "" {
		if created, err := git.ReuseWorktree(ctx, r.opts.Root, spare, wt, branch, base); err == nil {
			return created, nil
		}
		for _, p := range []string{wt, spare} {
			if _, err := git.DiscardWorktree(ctx, r.opts.Root, p); err != nil {
				return false, err
			}
		}
	}
	return git.NewWorktree(ctx, r.opts.Root, wt, branch, base)
}

// takeSpare takes a spare worktree, waiting for those being parked when
// there is none; "" when none is left.
func (r *run) takeSpare() string {
	r.spareMu.Lock()
	defer r.spareMu.Unlock()
	for len(r.spares) == 0 && len(r.parking) > 0 {
		r.parked.Wait()
	}
	n := len(r.spares)
	if n == 0 {
		return ""
	}
	spare := r.spares[n-1]
	r.spares = r.spares[:n-1]
	return spare
}

// parkedOrNot ends the wait of the dispatches for the change's worktree
// (see run.parking), parked or not.
func (r *run) parkedOrNot(change string) {
	r.spareMu.Lock()
	defer r.spareMu.Unlock()
	if r.parking[change] {
		delete(r.parking, change)
		r.parked.Broadcast()
	}
}

// dropSpares removes the spare worktrees when the run ends (see
// run.setAside). One git cannot remove stays, and the next run's
// reconcile discards it: a spare holds no work.
func (r *run) dropSpares(ctx context.Context) {
	r.spareMu.Lock()
	spares := r.spares
	r.spares = nil
	r.spareMu.Unlock()
	var trash []string
	r.worktrees.Lock()
	for _, s := range spares {
		t, _ := r.setAside(ctx, s)
		trash = append(trash, t)
	}
	r.worktrees.Unlock()
	for _, t := range trash {
		r.emptyTrash(t)
	}
}

// removeWorktree removes a change's worktree (see run.worktrees).
func (r *run) removeWorktree(ctx context.Context, change string) error {
	r.worktrees.Lock()
	trash, err := r.setAside(ctx, r.layout.Worktree(change))
	r.worktrees.Unlock()
	r.emptyTrash(trash)
	return err
}

// deleteBranch deletes the branch set/<change> of a change that is on
// main, unless the run keeps branches. It deletes only work main holds:
// main has the change's commit (found by its Set-Change trailer) and that
// commit's tree is the tree of the branch's tip, the tree the integration
// stack passed. A branch that is gone already is fine; one that holds
// other work or is checked out somewhere is kept.
//
// Deleting is tidying, never a step a change needs: when git cannot look
// or delete (a refs/heads/set/<change>.lock left by a killed git), the
// branch is kept, as a branch with other work is, and the run carries on;
// the next run removes the stale lock and tries again. It is not
// reported: a kept branch is what the user sees either way, and the
// orchestrator has no channel for a warning that is no event of a change.
func (r *run) deleteBranch(ctx context.Context, change string) {
	branch := "set/" + change
	if r.opts.KeepBranches || !git.BranchExists(ctx, r.opts.Root, branch) {
		return
	}
	commit, err := r.onMain(ctx, change)
	if err != nil || commit == "" {
		return
	}
	tip, err := git.RevParse(ctx, r.opts.Root, "refs/heads/"+branch)
	if err != nil {
		return
	}
	trees, err := git.Run(ctx, r.opts.Root, "rev-parse", commit+"^{tree}", tip+"^{tree}")
	if t := strings.Fields(trees); err != nil || len(t) != 2 || t[0] != t[1] {
		return
	}
	r.worktrees.Lock()
	defer r.worktrees.Unlock()
	_, _ = git.DeleteBranch(ctx, r.opts.Root, branch, tip)
}

func (r *run) mergeInput(c plan.Change, cg *graph.ChangeGraph) merge.Input {
	st := r.rec.change(c.Name)
	return merge.Input{
		Project: r.opts.Project, Layout: r.layout, Change: c, Reqs: r.requirements(c),
		Steps: cg.Integration, Worktree: r.layout.Worktree(c.Name), Head: st.QueuedHead, Attempt: st.IntegrationTries + 1,
		Env: r.env, Redact: r.redact, Runners: r.opts.Runners, Models: r.opts.Models, Now: r.opts.Now, Accepted: r.rec.accepted(),
		Emit:       func(p journal.Payload) error { return r.rec.emit(c.Name, p) },
		Checkpoint: func(point string) { r.checkpoint(point, c.Name) },
	}
}

// integrationFailed sends a change whose integration failed (out) back to
// its agent while its integration budget lasts.
func (r *run) integrationFailed(name string, out merge.Outcome) error {
	budget := r.opts.Project.Budgets.Retries.Integration
	used := r.rec.change(name).IntegrationAttempts
	if err := r.rec.transition(name, state.IntegrationFailed, out.Reason); err != nil {
		return err
	}
	if used >= budget {
		if err := r.rec.emit(name, journal.BudgetExceededData{Budget: "integration", Used: int64(used), Limit: int64(budget)}); err != nil {
			return err
		}
		return r.fail(name, state.FailedRetryBudget, fmt.Sprintf("integration failed with its retry budget spent (budgets.retries.integration: %d)", budget))
	}
	return r.rec.emit(name, journal.RetryScheduledData{Stage: "integration", Attempt: used + 1, Budget: budget, Reason: out.Reason, RetryContext: out.RetryContext})
}

// requirements are the spec requirements of a change, in its order.
func (r *run) requirements(c plan.Change) []spec.Requirement {
	out := make([]spec.Requirement, 0, len(c.Requirements))
	for _, id := range c.Requirements {
		if req, ok := r.reqs[id]; ok {
			out = append(out, req)
		}
	}
	return out
}

func (r *run) model(c plan.Change) string {
	if c.Model != "" {
		return c.Model
	}
	return r.opts.Project.Agent.Models.Implement
}

// modelField is the set.cue field that names the change's model (see
// model), with its position when the project declares it.
func (r *run) modelField(c plan.Change) string {
	path := []string{"agent", "models", "implement"}
	if c.Model != "" {
		path = []string{"plan", "changes", c.Name, "model"}
	}
	return r.opts.Project.FieldName(path...)
}

// agentEnv is the agents' environment: set's own plus the agent's env.
func (r *run) agentEnv() []string {
	env := append([]string{}, r.env...)
	for _, k := range slices.Sorted(maps.Keys(r.opts.Project.Agent.Env)) {
		env = append(env, k+"="+r.opts.Project.Agent.Env[k])
	}
	return env
}

func relTo(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil {
		return rel
	}
	return path
}

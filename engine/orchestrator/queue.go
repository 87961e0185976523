package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sourcegraph/conc/panics"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/delivery"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/merge"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/state"
)

// mergeQueue is the merge queue: the verified changes waiting, and the
// train of integration attempts under way, which it owns. Its fields are
// the loop goroutine's own: the attempts' steps (prepare, the stack's
// check, settle) run in goroutines of their own, which read and write
// only their attempt and the services (see attempt), and report on done,
// which the loop hands back to afterAttempt.
//
// The train holds at most mergeQueue.speculative attempts, in queue
// order: the first is merged onto main, each next one onto the candidate
// of the one before it (merge.Onto), and their integration stacks run in
// parallel. Only the first attempt settles: main moves to its candidate
// (merge.Land), or it goes back to its agent (merge.Reject), so main
// moves in queue order, by fast-forward, to trees whose stack passed.
// When an attempt fails, every attempt behind it was merged onto a
// candidate main will never take: they are discarded (stopped if they
// run) and their changes queued again, in their places. A change that
// conflicts with the changes ahead of it waits until the train is empty,
// then merges onto main, where a conflict is its own.
//
// In push mode (project.delivery) main moving is a push to the remote's
// main first (merge.Land). A push the remote refuses because its main
// moved is no failure of the change: main follows the remote's, and the
// change and every attempt behind it are queued again, in their places,
// to be merged onto it and checked again; no retry budget is spent.
// A change refused maxRemoteMoves times in a row ends the run instead.
//
// In pull-request mode main does not move: the first attempt settles by
// proposing its candidate (merge.Propose: the branch set/<change> pushed,
// its pull request opened) and its change goes in review, off the train;
// the forge merges it (see reviews). The train holds one attempt: a
// candidate stacked on one in review would be built on a commit main may
// never take in that form (the forge squashes, or merges it later).
type mergeQueue struct {
	*services
	// speculative is how many attempts the train holds at most.
	speculative int
	// waiting are the changes waiting for the train, in the order they
	// were first queued (order), which a discarded attempt's change keeps.
	waiting []string
	order   map[string]int
	next    int
	train   []*attempt
	// conflictedAhead are the waiting changes whose last attempt
	// conflicted with the changes ahead of it.
	conflictedAhead map[string]bool
	// remoteMoves counts, for each change, the pushes of it the remote
	// refused in a row in this run because its main moved (push mode);
	// a failed integration of the change ends the row.
	remoteMoves map[string]int
	done        chan attemptResult
}

// maxRemoteMoves bounds the pushes of one change that the remote refuses
// in a row within one run because its main moved (someone else pushed).
// Each refusal costs a run of the change's integration stack on the new
// main, and a remote that others push to more often than the stack runs
// would refuse every push: the queue would integrate the change again for
// ever. Two applies at once, or a teammate's push now and then, are
// refused once or twice; five refusals in a row say the remote moves
// faster than the change can be checked. The run then ends with an error
// naming the remote; it is not the change's failure (no retry budget is
// spent, the change is queued again), and a later apply counts afresh.
const maxRemoteMoves = 5

// attempt is one integration attempt of a change. The loop changes it
// only while it is not busy (discarded aside, which no step reads); the
// prepare step sets in and onto.Commit, which the loop reads once the
// step reported.
type attempt struct {
	change plan.Change
	graph  *graph.ChangeGraph
	// plan is the run's plan the attempt was made from.
	plan *plan.Plan
	in   merge.Input
	onto merge.Onto
	// busy: a goroutine prepares, checks or settles the attempt; cancel
	// stops it.
	busy   bool
	cancel context.CancelCauseFunc
	// prepared: cand is made; checked: the stack ran, and out holds a
	// failure, if any.
	prepared, checked bool
	cand              merge.Candidate
	out               merge.Outcome
	// discarded says why the attempt is discarded, once an attempt ahead
	// of it failed; it goes once it is not busy.
	discarded string
}

// attemptResult is what the goroutine of an attempt's step reports.
type attemptResult struct {
	a    *attempt
	step attemptStep
	cand merge.Candidate
	out  merge.Outcome
	err  error
	// remoteMoved is set when the remote refused the push of a settling
	// attempt because its main moved (push mode): main has followed it,
	// and the change is integrated again onto it.
	remoteMoved *delivery.Synced
	// proposed is set when the settled attempt's pull request is open
	// (pull-request mode).
	proposed bool
}

type attemptStep int

const (
	stepPrepare attemptStep = iota // merge.Prepare
	stepCheck                      // merge.Check
	stepSettle                     // merge.Land or merge.Reject, and the change's status
)

// errDiscarded stops the steps of a discarded attempt.
var errDiscarded = errors.New("the attempt is discarded")

func newMergeQueue(s *services) *mergeQueue {
	n := max(s.project.MergeQueue.Speculative, 1)
	if s.project.Delivery.ProposesPullRequests() {
		n = 1
	}
	return &mergeQueue{
		services: s, speculative: n,
		order: map[string]int{}, conflictedAhead: map[string]bool{}, remoteMoves: map[string]int{},
		done: make(chan attemptResult, n),
	}
}

// enqueue puts a change in the queue, at its first place if it had one.
func (q *mergeQueue) enqueue(name string) {
	if _, ok := q.order[name]; !ok {
		q.order[name] = q.next
		q.next++
	}
	i, _ := slices.BinarySearchFunc(q.waiting, name, func(w, n string) int { return q.order[w] - q.order[n] })
	q.waiting = slices.Insert(q.waiting, i, name)
}

// holds reports whether the change is waiting or in the train.
func (q *mergeQueue) holds(name string) bool {
	return slices.Contains(q.waiting, name) || slices.ContainsFunc(q.train, func(a *attempt) bool { return a.change.Name == name })
}

// busy reports whether a step of an attempt is under way.
func (q *mergeQueue) busy() bool {
	return slices.ContainsFunc(q.train, func(a *attempt) bool { return a.busy })
}

// idle reports whether no attempt is in the train: nothing merges onto
// main now.
func (q *mergeQueue) idle() bool { return len(q.train) == 0 }

// empty reports whether nothing waits and no attempt is under way.
func (q *mergeQueue) empty() bool { return len(q.waiting) == 0 && len(q.train) == 0 }

// remove takes a out of the train.
func (q *mergeQueue) remove(a *attempt) {
	q.train = slices.DeleteFunc(q.train, func(b *attempt) bool { return b == a })
}

// advance settles the train's first attempt once its stack ran, and
// lengthens the train from the waiting changes of p, the run's plan, and
// g, its graph.
func (q *mergeQueue) advance(ctx context.Context, p *plan.Plan, g *graph.Graph) {
	if len(q.train) > 0 {
		if h := q.train[0]; h.checked && !h.busy && h.discarded == "" {
			q.step(ctx, h, stepSettle, func(ctx context.Context) attemptResult { return q.settle(ctx, h) })
		}
	}
	for len(q.train) < q.speculative && len(q.waiting) > 0 {
		onto := merge.Onto{}
		if n := len(q.train); n > 0 {
			last := q.train[n-1]
			if !last.prepared || last.discarded != "" || last.out.Failed || q.conflictedAhead[q.waiting[0]] {
				return
			}
			onto = merge.Onto{Commit: last.cand.Commit, Ahead: append(slices.Clone(last.onto.Ahead), last.change.Name)}
		}
		name := q.waiting[0]
		q.waiting = q.waiting[1:]
		delete(q.conflictedAhead, name)
		c, _ := p.Change(name)
		cg, _ := g.Change(name)
		a := &attempt{change: *c, graph: cg, plan: p, onto: onto}
		q.train = append(q.train, a)
		q.step(ctx, a, stepPrepare, func(ctx context.Context) attemptResult { return q.prepare(ctx, a) })
	}
}

// step runs one step of a in a goroutine of its own, on a context the
// queue can cancel when it discards a.
func (q *mergeQueue) step(ctx context.Context, a *attempt, step attemptStep, do func(context.Context) attemptResult) {
	ctx, a.cancel = context.WithCancelCause(ctx)
	cancel := a.cancel
	a.busy = true
	go func() {
		var res attemptResult
		var pc panics.Catcher
		pc.Try(func() { res = do(ctx) })
		if rec := pc.Recovered(); rec != nil {
			res = attemptResult{err: errors.New("internal error in the merge queue: " + rec.String())}
		}
		cancel(nil)
		res.a, res.step = a, step
		q.done <- res
	}()
}

// prepare starts the attempt: the change is integrating, and its merge
// onto main or onto the candidate ahead becomes its candidate.
func (q *mergeQueue) prepare(ctx context.Context, a *attempt) attemptResult {
	name := a.change.Name
	for _, d := range a.change.DependsOn {
		if q.rec.status(d) != state.Archived {
			return attemptResult{err: fmt.Errorf("%s reached the merge queue before its dependency %s was merged", name, d)}
		}
	}
	if err := q.rec.transition(name, state.Integrating, ""); err != nil {
		return attemptResult{err: err}
	}
	if a.onto.Commit == "" && q.project.Delivery.ProposesPullRequests() {
		// The pull request goes into the remote's main, which others
		// move: its candidate is made on the newest one.
		var err error
		q.pool.still(func() { _, err = delivery.Follow(ctx, q.root, q.project, q.layout.FastForward()) })
		if err != nil {
			return attemptResult{err: err}
		}
	}
	if a.onto.Commit == "" {
		head, err := git.BranchHead(ctx, q.root, q.project.MainBranch)
		if err != nil {
			return attemptResult{err: err}
		}
		a.onto.Commit = head
	}
	a.in = q.mergeInput(a.change, a.graph, a.plan)
	cand, out, err := merge.Prepare(ctx, a.in, a.onto)
	if err != nil || out.Failed || out.ConflictsAhead != nil {
		return attemptResult{out: out, err: err}
	}
	return attemptResult{cand: cand}
}

// settle ends the train's first attempt: main takes its candidate, or
// the change goes back to its agent.
func (q *mergeQueue) settle(ctx context.Context, a *attempt) attemptResult {
	if a.out.Failed {
		out, err := merge.Reject(ctx, a.in, a.cand, a.out)
		return attemptResult{out: out, err: err}
	}
	if q.project.Delivery.ProposesPullRequests() {
		p, err := q.proposal(a)
		if err == nil {
			_, err = merge.Propose(ctx, a.in, a.cand, p)
		}
		return attemptResult{proposed: err == nil, err: err}
	}
	out, err := merge.Land(ctx, a.in, a.cand)
	if rej := (*git.PushRejectedError)(nil); errors.As(err, &rej) {
		// Someone else pushed to the remote's main: main follows it, and
		// the change goes round the queue again, onto it.
		var synced delivery.Synced
		q.pool.still(func() {
			synced, err = delivery.Follow(context.WithoutCancel(ctx), q.root, q.project, q.layout.FastForward())
		})
		if err != nil {
			return attemptResult{err: err}
		}
		if synced.To == a.cand.Onto.Commit {
			// The remote refused a fast-forward of a main that did not
			// move: integrating again would be refused again.
			return attemptResult{err: rej}
		}
		return attemptResult{remoteMoved: &synced}
	}
	if err != nil {
		return attemptResult{err: err}
	}
	// Retired by the loop (see run.retireLater), off the queue's way and
	// the way of the changes that waited for this one.
	return attemptResult{out: out, err: q.archive(a.change.Name, "")}
}

// afterAttempt takes the report of an attempt's step. It returns the
// change that landed on main, once one did, for the loop to retire.
func (q *mergeQueue) afterAttempt(ctx context.Context, res attemptResult) (landed string, err error) {
	a := res.a
	a.busy = false
	name := a.change.Name
	if a.discarded != "" {
		if res.err != nil && ctx.Err() == nil && !errors.Is(res.err, errDiscarded) {
			return "", fmt.Errorf("merge queue, %s: %w", name, res.err)
		}
		return "", q.discard(a)
	}
	if res.err != nil {
		if ctx.Err() != nil {
			return "", nil // interrupted: a resumed run integrates it again
		}
		return "", fmt.Errorf("merge queue, %s: %w", name, res.err)
	}
	switch res.step {
	case stepPrepare:
		switch {
		case res.out.ConflictsAhead != nil:
			q.remove(a)
			q.conflictedAhead[name] = true
			q.enqueue(name)
			reason := fmt.Sprintf("merging onto %s conflicts in %s; integrated again once %s are on %s",
				strings.Join(a.onto.Ahead, ", "), strings.Join(res.out.ConflictsAhead, ", "), strings.Join(a.onto.Ahead, ", "), q.project.MainBranch)
			return "", q.rec.transition(name, state.Queued, reason)
		case res.out.Failed:
			q.remove(a)
			return "", q.integrationFailed(name, res.out)
		}
		a.prepared, a.cand = true, res.cand
		q.step(ctx, a, stepCheck, func(ctx context.Context) attemptResult {
			out, err := merge.Check(ctx, a.in, a.cand)
			return attemptResult{out: out, err: err}
		})
	case stepCheck:
		a.checked, a.out = true, res.out
		if res.out.Failed {
			return "", q.discardBehind(a, fmt.Sprintf("%s, ahead of it, failed its integration stack", name))
		}
	case stepSettle:
		if m := res.remoteMoved; m != nil {
			// Not the change's failure: no retry budget is spent. The
			// attempts behind it were merged onto its candidate, which
			// main will never take.
			q.remoteMoves[name]++
			n := q.remoteMoves[name]
			why := fmt.Sprintf("%s's %s moved to %s (someone else pushed); integrated again onto it", m.Remote, m.Branch, shortCommit(m.To))
			if n >= maxRemoteMoves {
				why = fmt.Sprintf("%s's %s moved to %s (someone else pushed), %d times in a row: the run stops", m.Remote, m.Branch, shortCommit(m.To), n)
			}
			if err := q.discardBehind(a, why); err != nil {
				return "", err
			}
			q.remove(a)
			q.enqueue(name)
			if err := q.rec.transition(name, state.Queued, why); err != nil {
				return "", err
			}
			if n >= maxRemoteMoves {
				return "", fmt.Errorf("merge queue, %s: %s's %s moved %d times in a row (last to %s), refusing each push of %s: others push there faster than its integration stack runs; %s is queued, with no retry spent",
					name, m.Remote, m.Branch, n, shortCommit(m.To), name, name)
			}
			return "", nil
		}
		q.remove(a)
		if res.out.Failed {
			return "", q.integrationFailed(name, res.out)
		}
		if res.proposed {
			return "", q.rec.transition(name, state.InReview, "")
		}
		return name, nil
	}
	return "", nil
}

// discardBehind discards every attempt behind a in the train: each was
// merged onto a's candidate, which main will never take. One whose
// stack runs is stopped; one being prepared finishes its git work first
// (a git command killed half-way would leave its locks in the worktree).
func (q *mergeQueue) discardBehind(a *attempt, why string) error {
	i := slices.Index(q.train, a)
	for _, b := range slices.Clone(q.train[i+1:]) {
		b.discarded = why
		switch {
		case b.busy && b.prepared:
			b.cancel(errDiscarded)
		case !b.busy:
			if err := q.discard(b); err != nil {
				return err
			}
		}
	}
	return nil
}

// discard takes a discarded attempt out of the train and queues its
// change again, in its place.
func (q *mergeQueue) discard(a *attempt) error {
	q.remove(a)
	q.enqueue(a.change.Name)
	return q.rec.transition(a.change.Name, state.Queued, a.discarded)
}

// mergeInput is the input of the change's integration attempt, made from
// plan p.
func (q *mergeQueue) mergeInput(c plan.Change, cg *graph.ChangeGraph, p *plan.Plan) merge.Input {
	st := q.rec.change(c.Name)
	return merge.Input{
		Project: q.project, Layout: q.layout, Change: c, Reqs: q.requirements(c), Removing: removing(p, c), UserFolder: userFolders(p),
		Steps: cg.Integration, Worktree: q.layout.Worktree(c.Name), Head: st.QueuedHead, Attempt: st.IntegrationTries + 1,
		Env: q.env, Redact: q.redact, Runners: q.runners, Models: q.models, Now: q.now, Accepted: q.rec.accepted(),
		Emit:       func(p journal.Payload) error { return q.rec.emit(c.Name, p) },
		Checkpoint: func(point string) { q.checkpoint(point, c.Name) },
		Delta: func(ctx context.Context, base string) (map[string][]byte, error) {
			return deltaOn(ctx, q.root, p, c, base)
		},
	}
}

// integrationFailed sends a change whose integration failed (out) back to
// its agent while the budget of its cause lasts: a merge conflict spends
// budgets.retries.conflicts, a red integration stack
// budgets.retries.integration (see retryStage).
func (q *mergeQueue) integrationFailed(name string, out merge.Outcome) error {
	delete(q.remoteMoves, name)
	stage := retryStageOf(q.project, out)
	c := q.rec.change(name)
	used := c.RetriesUsed(stage.name)
	if err := q.rec.transition(name, state.IntegrationFailed, out.Reason); err != nil {
		return err
	}
	if used >= stage.budget {
		if err := q.rec.emit(name, journal.BudgetExceededData{Budget: stage.budgetName, Used: int64(used), Limit: int64(stage.budget), Field: stage.field}); err != nil {
			return err
		}
		return q.fail(name, state.FailedRetryBudget, fmt.Sprintf("%s with its retry budget spent (%s: %d)", stage.failed, stage.field, stage.budget))
	}
	return q.rec.emit(name, journal.RetryScheduledData{Stage: stage.name, Attempt: used + 1, Budget: stage.budget, Reason: out.Reason, RetryContext: out.RetryContext})
}

// retryStage is what a failed integration counts against: a stage of
// RETRY_SCHEDULED, its budget, and how BUDGET_EXCEEDED names them.
type retryStage struct {
	name       string // state.StageIntegration or state.StageConflict
	budget     int
	budgetName string // BUDGET_EXCEEDED's Budget
	field      string // the set.cue field that sets the budget
	failed     string // what failed, for the change's error
}

// retryStageOf is the stage a failed integration counts against. A
// conflict with main is not the agent's mistake: it never spends the
// integration budget, only the conflicts bound, which stops a change that
// never gets through.
func retryStageOf(p *config.Project, out merge.Outcome) retryStage {
	budgets := runBudgets(p.Budgets)
	if out.Reason == journal.ReasonConflict {
		return retryStage{name: state.StageConflict, budget: budgets.Retries(state.StageConflict), budgetName: "conflicts",
			field: "budgets.retries.conflicts", failed: "merging " + p.MainBranch + " conflicted"}
	}
	return retryStage{name: state.StageIntegration, budget: budgets.Retries(state.StageIntegration), budgetName: "integration",
		field: "budgets.retries.integration", failed: "integration failed"}
}

// shortCommit is commit's first 10 hex digits, as events name commits.
func shortCommit(commit string) string {
	if len(commit) > 10 {
		return commit[:10]
	}
	return commit
}

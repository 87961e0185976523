package orchestrator

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/forge"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm"
	"github.com/set-engine/set/engine/merge"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/redact"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/runner"
	"github.com/set-engine/set/engine/sentinel"
	"github.com/set-engine/set/engine/spec"
	"github.com/set-engine/set/engine/state"
)

// services are the dependencies that a run's goroutines share: the loop,
// the workers (worker), the merge queue's attempts (mergeQueue), the
// retirements and the sentinel (watches). openRun sets every field once;
// none is reassigned after, and each is read-only or safe for concurrent
// use: the recorder is the single writer of the journal and the state,
// the pool the single owner of worktrees, watches of the sentinel.
// Nothing here is the run's progress: that is the loop's (see run).
type services struct {
	root    string
	project *config.Project
	// layout is the run directory, the one place its paths come from.
	layout  rundir.Layout
	rec     *recorder
	pool    *worktreePool
	watches *watches
	// gitDir guards the repository's shared git directory (see
	// gitDirGuard).
	gitDir *gitDirGuard
	// reqs are the spec's requirements by ID (a replan keeps them).
	reqs map[string]spec.Requirement
	env  []string
	// redact masks the secrets of env (and the project's secrets) in
	// everything the run writes: the journal (and so the state), gate and
	// agent logs, prompts.
	redact  *redact.Redactor
	runners map[string]runner.Runner
	models  *llm.Config
	// forge is the forge of pull-request mode (Options.Forge; nil in the
	// other modes).
	forge forge.Forge
	now   func() time.Time
	// keepBranches and onCheckpoint are Options.KeepBranches and
	// Options.Checkpoint.
	keepBranches bool
	onCheckpoint func(point, change string)
}

// newServices are the services of a run of opts recorded by rec: the
// sentinel sees every event rec records.
func newServices(opts Options, layout rundir.Layout, rec *recorder, rules *sentinel.Rules, env []string, red *redact.Redactor) *services {
	s := &services{
		root: opts.Root, project: opts.Project, layout: layout, rec: rec,
		watches: newWatches(rules, rec, opts.Project, opts.Now),
		reqs:    map[string]spec.Requirement{},
		env:     env, redact: red, runners: opts.Runners, models: opts.Models, forge: opts.Forge, now: opts.Now,
		keepBranches: opts.KeepBranches, onCheckpoint: opts.Checkpoint,
	}
	// Spares worth keeping: no more than the workers that may take one,
	// nor than the changes still to dispatch.
	s.pool = newWorktreePool(opts.Root, layout, func() int {
		return min(max(opts.Project.MaxParallel, 1), rec.pendingChanges())
	})
	for _, req := range opts.Plan.Requirements {
		s.reqs[req.ID] = req
	}
	s.gitDir = &gitDirGuard{root: opts.Root, file: layout.GitDirSnapshot(), rec: rec, watches: s.watches}
	// The guard sees an event first, so that the watch's rules see the
	// guard's stop.
	rec.observe = func(e journal.Event) {
		s.gitDir.check(e)
		s.watches.observe(e)
	}
	return s
}

// fail moves a change to a failed status.
func (s *services) fail(change string, to state.Status, reason string) error {
	return s.rec.transition(change, to, reason)
}

// checkpoint calls Options.Checkpoint, if any.
func (s *services) checkpoint(point, change string) {
	if s.onCheckpoint != nil {
		s.onCheckpoint(point, change)
	}
}

// requirements are the spec requirements of a change, in its order.
func (s *services) requirements(c plan.Change) []spec.Requirement {
	out := make([]spec.Requirement, 0, len(c.Requirements))
	for _, id := range c.Requirements {
		if req, ok := s.reqs[id]; ok {
			out = append(out, req)
		}
	}
	return out
}

// agentEnv is the agents' environment: set's own plus the agent's env.
func (s *services) agentEnv() []string {
	env := append([]string{}, s.env...)
	for _, k := range slices.Sorted(maps.Keys(s.project.Agent.Env)) {
		env = append(env, k+"="+s.project.Agent.Env[k])
	}
	return env
}

// land ends a change whose one commit is on main, its MERGED and ARCHIVED
// journaled: merged, then archived (the fold is in that same commit), then
// retired. reason explains the transitions (a restart found the commit).
func (s *services) land(ctx context.Context, name, reason string) error {
	if err := s.archive(name, reason); err != nil {
		return err
	}
	return s.retire(ctx, name)
}

// archive moves a change whose one commit is on main, its MERGED and
// ARCHIVED journaled, to merged and then archived: from then on the
// changes that depend on it may start.
func (s *services) archive(name, reason string) error {
	if s.rec.status(name) != state.Merged {
		if err := s.rec.transition(name, state.Merged, reason); err != nil {
			return err
		}
	}
	s.checkpoint("merged", name)
	if err := s.rec.transition(name, state.Archived, reason); err != nil {
		return err
	}
	// Archived is final: the sentinel has nothing more to watch.
	s.watches.forget(name)
	return nil
}

// retire removes what an archived change leaves behind: its worktree
// (parked for reuse, or removed; see worktreePool.park) and its branch.
// Both steps are safe to repeat, so a run restarted between them
// finishes the job.
func (s *services) retire(ctx context.Context, change string) error {
	s.checkpoint("archived", change)
	if err := s.pool.park(ctx, change); err != nil {
		return err
	}
	s.deleteBranch(ctx, change)
	return nil
}

// deleteBranch deletes the branch set/<change> of a change that is on
// main, unless the run keeps branches. It deletes only work main holds:
// main has the change's commit (found by its Set-Change trailer) and that
// commit's tree is the tree of the branch's tip, the tree the integration
// stack passed. In pull-request mode, where the forge made main's commit,
// the branch goes when it is where set left it once it opened the pull
// request the forge merged (state.PullRequest.BranchTip: the candidate's
// tree without the fold, nothing the pull request lacks), or where a
// resumed run made it again from the pull request's head
// (merge.Unfolded); the remote's
// set/<change> is the forge's to delete. A branch that is gone already
// is fine; one that holds other work or is checked out somewhere is kept.
//
// Deleting is tidying, never a step a change needs: when git cannot look
// or delete (a refs/heads/set/<change>.lock left by a killed git), the
// branch is kept, as a branch with other work is, and the run carries on;
// the next run removes the stale lock and tries again. It is not
// reported: a kept branch is what the user sees either way, and the
// orchestrator has no channel for a warning that is no event of a change.
func (s *services) deleteBranch(ctx context.Context, change string) {
	if s.keepBranches || !git.BranchExists(ctx, s.root, git.ChangeBranch(change)) {
		return
	}
	tip, err := git.RevParse(ctx, s.root, "refs/heads/"+git.ChangeBranch(change))
	if err != nil {
		return
	}
	c := s.rec.change(change)
	if pr := c.PullRequest; pr != nil && c.MergedCommit != "" && (pr.BranchTip == tip || merge.Unfolded(ctx, s.root, change, pr.Head, tip)) {
		s.pool.deleteBranch(ctx, change, tip)
		return
	}
	commit, err := s.onMain(ctx, change)
	if err != nil || commit == "" {
		return
	}
	if same, err := git.SameTree(ctx, s.root, commit, tip); err != nil || !same {
		return
	}
	s.pool.deleteBranch(ctx, change, tip)
}

// onMain finds the commit that put the change on main (landedCommit),
// or "" when it is not there.
func (s *services) onMain(ctx context.Context, name string) (string, error) {
	c := s.rec.change(name)
	return landedCommit(ctx, s.root, s.project.MainBranch, name, &c)
}

// relPaths are paths relative to the project's root, with slashes.
func (s *services) relPaths(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.ToSlash(relTo(s.root, p))
	}
	return out
}

func relTo(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil {
		return rel
	}
	return path
}

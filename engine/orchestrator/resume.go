package orchestrator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/merge"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/proc"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/state"
)

// prepareRepository checks that the project can be run and keeps .set/
// out of git: main must exist. A repository without the main branch is a
// *git.NoBranchError, for the caller to word in terms of its
// configuration.
func prepareRepository(ctx context.Context, root, mainBranch string) error {
	if _, err := git.BranchHead(ctx, root, mainBranch); err != nil {
		if !git.InRepository(ctx, root) {
			return notRepositoryError(root, mainBranch)
		}
		return err
	}
	return git.Exclude(ctx, root, "/"+rundir.Name+"/")
}

// checkMainClean refuses a checkout of main with uncommitted changes: the
// run moves main and keeps that checkout's files in step. It runs after
// repairLeftovers, so that what a killed run of set wrote there is never
// taken for the user's.
func checkMainClean(ctx context.Context, root, mainBranch string) error {
	if git.CurrentBranch(ctx, root) != mainBranch {
		return nil
	}
	dirty, err := git.Dirty(ctx, root)
	if err != nil {
		return err
	}
	if len(dirty) > 0 {
		if len(dirty) > 5 {
			dirty = append(dirty[:5], "…")
		}
		return fmt.Errorf("%s is checked out in %s with uncommitted changes (%s); commit or stash them first: setctl apply moves %s", mainBranch, root, strings.Join(dirty, ", "), mainBranch)
	}
	return nil
}

// repairLeftovers repairs what a killed run left in the repository that
// keeps git from working there: its orphaned agents and gates are
// killed, then the git locks they can no longer own are removed, then a
// fast-forward of main's checkout left half-way is finished. Each repair
// is journaled as REPAIRED.
func (s *services) repairLeftovers(ctx context.Context) error {
	if err := s.killOrphans(); err != nil {
		return err
	}
	if err := s.removeStaleLocks(ctx); err != nil {
		return err
	}
	return s.finishFastForward(ctx)
}

// reconcile brings a resumed run's recorded state in line with the
// repository after a crash (once repairLeftovers ran): stray worktrees
// are removed, changes that reached main are never merged again (their
// journal is completed from their commit on main), and the branches of
// archived changes are deleted (see deleteBranch).
func (r *run) reconcile(ctx context.Context) error {
	inPlan := map[string]bool{}
	for _, c := range r.opts.Plan.Changes {
		inPlan[c.Name] = true
	}
	entries, _ := os.ReadDir(r.layout.Worktrees())
	for _, e := range entries {
		s := r.rec.status(e.Name())
		if !inPlan[e.Name()] || s.Terminal() || s == state.Pending {
			// Whatever state it is in: git refuses to remove a directory
			// a killed git worktree add or remove left half-way.
			if _, err := r.pool.discard(ctx, r.layout.Worktree(e.Name())); err != nil {
				return err
			}
		}
	}
	if err := r.pool.prune(ctx); err != nil {
		return err
	}

	for _, name := range r.opts.Graph.Order {
		c, _ := r.opts.Plan.Change(name)
		s := r.rec.status(name)
		if s == state.Archived {
			// A run that stopped before it deleted the branch.
			r.deleteBranch(ctx, name)
		}
		if s == state.Pending || s.Terminal() {
			continue
		}
		if err := r.restoreWorktree(ctx, *c); err != nil {
			return err
		}
		switch s {
		case state.Queued, state.Integrating, state.Merged:
			commit, err := r.onMain(ctx, name)
			if err != nil {
				return err
			}
			if commit == "" {
				if s == state.Merged {
					return fmt.Errorf("%s is recorded as merged, but no commit of %s since it was dispatched has the trailer %s: %s", name, r.project.MainBranch, merge.ChangeTrailer, name)
				}
				r.mq.enqueue(name)
				continue
			}
			// On main before the crash; MERGED and ARCHIVED may not be
			// journaled yet.
			if err := r.recordLanded(ctx, name, commit); err != nil {
				return err
			}
			if err := r.land(ctx, name, "found on "+r.project.MainBranch+" after a restart"); err != nil {
				return err
			}
		}
	}
	return r.settleLanded(ctx, inPlan)
}

// settleLanded completes the journal of the changes of a resumed run that
// the plan no longer names because main has their work: one that reached
// main before its MERGED or ARCHIVED was journaled is recorded as merged
// and archived, and retired, as reconcile does for the plan's own.
func (r *run) settleLanded(ctx context.Context, inPlan map[string]bool) error {
	for _, name := range r.rec.names() {
		switch s := r.rec.status(name); {
		case inPlan[name]:
		case s == state.Queued || s == state.Integrating || s == state.Merged:
			commit, err := r.onMain(ctx, name)
			if err != nil || commit == "" {
				return err
			}
			if err := r.recordLanded(ctx, name, commit); err != nil {
				return err
			}
			if err := r.land(ctx, name, "found on "+r.project.MainBranch+" after a restart"); err != nil {
				return err
			}
		}
	}
	return nil
}

// recordLanded journals what the journal lacks of a change whose commit
// reached main: MERGED, and ARCHIVED read back from the commit.
func (s *services) recordLanded(ctx context.Context, name, commit string) error {
	st := s.rec.change(name)
	if st.MergedCommit == "" {
		parent, err := git.RevParse(ctx, s.root, commit+"^")
		if err != nil {
			return err
		}
		if err := s.rec.emit(name, journal.MergedData{Commit: commit, Previous: parent}); err != nil {
			return err
		}
	}
	if st.ArchiveCommit != "" {
		return nil
	}
	archived, err := merge.Archived(ctx, s.root, name, commit)
	if err != nil {
		return err
	}
	return s.rec.emit(name, archived)
}

// killOrphans ends the agents and gates (and whatever they started) that
// a killed run left running, and journals which (see proc.KillOrphans):
// once it returns they no longer write into worktrees.
func (s *services) killOrphans() error {
	killed, err := proc.KillOrphans(s.layout.Procs())
	if len(killed) > 0 {
		groups := make([]string, len(killed))
		for i, o := range killed {
			groups[i] = o.String()
		}
		if jerr := s.rec.emit("", journal.RepairedData{Problem: "processes of the interrupted run left running", Removed: groups}); err == nil {
			err = jerr
		}
	}
	return err
}

// removeStaleLocks removes the git lock files a git process killed with
// the run left (HEAD.lock, index.lock, …, in the repository and in the
// worktrees), and journals which: with every child of the old run ended
// and the project's lock held, no git process of set owns them.
func (s *services) removeStaleLocks(ctx context.Context) error {
	removed, err := git.RemoveLocks(ctx, s.root)
	if len(removed) > 0 {
		if jerr := s.rec.emit("", journal.RepairedData{Problem: "stale git locks", Removed: s.relPaths(removed)}); err == nil {
			err = jerr
		}
	}
	return err
}

// finishFastForward finishes the move of main's checkout that the merge
// queue of a killed run left half-way (see git.FinishFastForward), and
// journals it; reconcile then finds the change's commit on main and
// records it as landed. The killed git's index.lock must be gone first.
func (s *services) finishFastForward(ctx context.Context) error {
	done, err := git.FinishFastForward(ctx, s.root, s.layout.FastForward())
	if err != nil || done == nil {
		return err
	}
	// The record holds full commit IDs (git.FinishFastForward checks).
	problem := fmt.Sprintf("the fast-forward of %s from %s to %s was interrupted", done.Branch, done.From[:12], done.To[:12])
	if len(done.Written) > 0 {
		problem += fmt.Sprintf(" with its checkout half-way (%s)", strings.Join(english.Cut(done.Written, 5), ", "))
	} else {
		problem += " before it changed the checkout"
	}
	return s.rec.emit("", journal.RepairedData{Problem: problem, Done: fmt.Sprintf("finished it: %s is at %s", done.Branch, done.To[:12])})
}

// restoreWorktree makes a change's worktree sound when an interrupted run
// left it half created or half removed (see git.WorktreeProblem): what is
// left is removed, journaled as REPAIRED, and the worktree made again
// from the change's branch, as it is when only the branch is left.
func (s *services) restoreWorktree(ctx context.Context, c plan.Change) error {
	wt := s.layout.Worktree(c.Name)
	problem := git.WorktreeProblem(wt)
	if problem == "" {
		return nil
	}
	removed, err := s.pool.discard(ctx, wt)
	if len(removed) > 0 {
		p := fmt.Sprintf("worktree %s: %s", filepath.ToSlash(relTo(s.root, wt)), problem)
		if jerr := s.rec.emit(c.Name, journal.RepairedData{Problem: p, Removed: s.relPaths(removed)}); err == nil {
			err = jerr
		}
	}
	if err != nil {
		return err
	}
	if !git.BranchExists(ctx, s.root, git.ChangeBranch(c.Name)) {
		return s.branchFromPullRequest(ctx, c.Name)
	}
	return s.pool.restore(ctx, c.Name)
}

// branchFromPullRequest makes again the branch and worktree of a change
// in review that has neither: a run resumed in another checkout (a CI
// job's fresh one, with .set/ restored from the run before). The branch
// starts from the remote's set/<change> while it holds a commit set
// pushed there, the pull request's head: what the agent built, with the
// fold it holds undone (merge.Unfold), so that review feedback goes back
// to that work and the next integration folds it again. Nothing is
// made otherwise: a change in review whose pull request merges needs no
// worktree.
func (s *services) branchFromPullRequest(ctx context.Context, name string) error {
	c := s.rec.change(name)
	if c.Status != state.InReview || c.PullRequest == nil || !s.project.Delivery.ProposesPullRequests() {
		return nil
	}
	branch := git.ChangeBranch(name)
	var tip string
	var err error
	s.pool.still(func() { tip, err = git.FetchBranch(ctx, s.root, s.project.Delivery.Remote, branch, git.RemoteTimeout) })
	if err != nil {
		return err
	}
	if tip != c.PullRequest.Head && !slices.Contains(c.Pushed, tip) {
		return nil
	}
	if err := s.pool.restoreAt(ctx, name, tip); err != nil {
		return err
	}
	if err := merge.Unfold(ctx, s.layout.Worktree(name), name, tip); err != nil {
		return err
	}
	return s.rec.emit(name, journal.RepairedData{
		Problem: fmt.Sprintf("no branch %s here, nor its worktree", branch),
		Done:    fmt.Sprintf("made them again from %s's %s at %s, the head of pull request #%d, its OpenSpec fold undone", s.project.Delivery.Remote, branch, shortCommit(tip), c.PullRequest.Number),
	})
}

// SettleFinished brings the files a finished run leaves beside its
// journal in step with it, for an apply that finds nothing to do and so
// opens no run: an apply killed after it journaled RUN_FINISHED but
// before it wrote state.json and report.md (the journal is the truth,
// those are its snapshots) leaves them behind the journal, and nothing
// would write them again. It takes the run lock, which also clears the
// PID of a dead holder from the lock file; a run that holds the lock is
// left alone, as is a run that did not finish (the next run resumes it).
func SettleFinished(root string) error {
	layout := rundir.New(root)
	if _, err := os.Stat(layout.Events()); err != nil {
		state.ClearDeadHolder(layout.Dir())
		return nil
	}
	lock, err := state.AcquireLock(layout.Dir())
	if err != nil {
		return nil // a live apply holds it, and writes its own snapshots
	}
	defer lock.Release()
	st, err := state.Read(layout.Dir())
	if err != nil || !st.Finished {
		return err
	}
	if saved, err := state.Load(layout.State()); err == nil && saved.LastSeq == st.LastSeq {
		return nil
	}
	data, err := state.Encode(st)
	if err != nil {
		return err
	}
	if err := state.WriteEncoded(layout.State(), data); err != nil {
		return err
	}
	return writeReport(layout, st)
}

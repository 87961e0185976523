package orchestrator

import (
	"context"
	"os"
	"path/filepath"
	"sync"

	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/rundir"
)

// worktreePool makes, parks, reuses and removes the worktrees of a run's
// changes, each at rundir.Layout.Worktree(change) on branch set/<change>.
// Removing a worktree deletes every file of the project and adding one
// writes them all again, so the worktree of an archived change is parked
// as a spare for the next dispatch to reuse (git.ReuseWorktree rewrites
// only the files that differ), and the files of a removed one are deleted
// in the background.
//
// It owns, and is safe for concurrent use through:
//   - lock, the repository's worktree lock (git.WorktreeLock): every git
//     command of the run that changes worktrees runs under it. seq, which
//     numbers the spare and trash directories the pool makes, is guarded
//     by it too.
//   - spareMu, which guards spares and parking: it is never held across a
//     git command. Lock order: lock, then spareMu (one who holds spareMu
//     never takes lock). spares are parked worktrees, at most maxParallel
//     and never more than the changes still to dispatch; the pool removes
//     them when the run ends (drop), and a killed run's are discarded by
//     the next run's reconcile (their names are no change's). parking are
//     the changes whose worktree is about to be parked: a dispatch with
//     no spare waits for them (parked is signalled as each is done), as
//     parking takes a fraction of making a worktree.
//   - trash, the goroutines deleting the files of removed worktrees; wait
//     returns once they are done.
type worktreePool struct {
	root   string
	layout rundir.Layout
	// room is how many spares are worth keeping now (see park).
	room func() int

	lock *git.WorktreeLock
	seq  int

	spareMu sync.Mutex
	spares  []string
	parking map[string]bool
	parked  *sync.Cond

	trash sync.WaitGroup
}

func newWorktreePool(root string, layout rundir.Layout, room func() int) *worktreePool {
	p := &worktreePool{root: root, layout: layout, room: room, lock: git.NewWorktreeLock(root), parking: map[string]bool{}}
	p.parked = sync.NewCond(&p.spareMu)
	return p
}

// check proves that the change's worktree directory is its worktree of
// the repository, on branch set/<change>, before git changes it (see
// git.CheckWorktree).
func (p *worktreePool) check(ctx context.Context, change string) error {
	return git.CheckWorktree(ctx, p.root, p.layout.Worktree(change), git.ChangeBranch(change))
}

// add makes the change's worktree on branch set/<change> as
// git.NewWorktree does (the branch created at base, or taken as it is),
// in a spare when there is one; a spare git cannot reuse is discarded,
// and a new worktree made. It reports whether it created the branch.
func (p *worktreePool) add(ctx context.Context, change, base string) (created bool, err error) {
	wt := p.layout.Worktree(change)
	if err := os.MkdirAll(filepath.Dir(wt), 0o755); err != nil {
		return false, err
	}
	spare := p.takeSpare()
	p.lock.Do(func(w git.LockedWorktrees) {
		if spare != "" {
			if created, err = w.Reuse(ctx, spare, wt, git.ChangeBranch(change), base); err == nil {
				return
			}
			for _, path := range []string{wt, spare} {
				if _, err = w.Discard(ctx, path); err != nil {
					return
				}
			}
		}
		created, err = w.New(ctx, wt, git.ChangeBranch(change), base)
	})
	return created, err
}

// renew gives the change a fresh worktree from its branch: the worktree
// is removed and added again on set/<change>.
func (p *worktreePool) renew(ctx context.Context, change string) error {
	if err := p.remove(ctx, change); err != nil {
		return err
	}
	var err error
	p.lock.Do(func(w git.LockedWorktrees) {
		err = w.Add(ctx, p.layout.Worktree(change), git.ChangeBranch(change), "")
	})
	return err
}

// restore makes the worktree of a change that has a branch, at the
// change's place, after a restart discarded what was there.
func (p *worktreePool) restore(ctx context.Context, change string) error {
	wt := p.layout.Worktree(change)
	if err := os.MkdirAll(filepath.Dir(wt), 0o755); err != nil {
		return err
	}
	var err error
	p.lock.Do(func(w git.LockedWorktrees) { err = w.Add(ctx, wt, git.ChangeBranch(change), "") })
	return err
}

// restoreAt is restore for a change whose branch is gone: the branch is
// made again at commit.
func (p *worktreePool) restoreAt(ctx context.Context, change, commit string) error {
	wt := p.layout.Worktree(change)
	if err := os.MkdirAll(filepath.Dir(wt), 0o755); err != nil {
		return err
	}
	var err error
	p.lock.Do(func(w git.LockedWorktrees) { err = w.Add(ctx, wt, git.ChangeBranch(change), commit) })
	return err
}

// discard removes the worktree at path whatever state it is in (see
// git.DiscardWorktree) and returns what it removed.
func (p *worktreePool) discard(ctx context.Context, path string) (removed []string, err error) {
	p.lock.Do(func(w git.LockedWorktrees) { removed, err = w.Discard(ctx, path) })
	return removed, err
}

// prune forgets the worktrees whose directories are gone.
func (p *worktreePool) prune(ctx context.Context) error {
	var err error
	p.lock.Do(func(w git.LockedWorktrees) { err = w.Prune(ctx) })
	return err
}

// still runs fn while no worktree is being made or removed: git commands
// that read every worktree's HEAD (a fetch's check that the objects the
// refs name are there) fail on one that git worktree add has half made.
func (p *worktreePool) still(fn func()) {
	p.lock.Do(func(git.LockedWorktrees) { fn() })
}

// remove removes a change's worktree.
func (p *worktreePool) remove(ctx context.Context, change string) error {
	var trash string
	var err error
	p.lock.Do(func(w git.LockedWorktrees) { trash, err = p.setAside(ctx, w, p.layout.Worktree(change)) })
	p.emptyTrash(trash)
	return err
}

// deleteBranch deletes branch set/<change> if it still points at tip and
// no worktree has it (see git.DeleteBranch).
func (p *worktreePool) deleteBranch(ctx context.Context, change, tip string) {
	p.lock.Do(func(w git.LockedWorktrees) { _, _ = w.DeleteBranch(ctx, git.ChangeBranch(change), tip) })
}

// willPark tells the pool that the change's worktree is about to be
// parked (see parking); park, or parked, ends the wait.
func (p *worktreePool) willPark(change string) {
	p.spareMu.Lock()
	p.parking[change] = true
	p.spareMu.Unlock()
}

// park takes an archived change's worktree out of the way: it becomes a
// spare while fewer are kept than room says, else it is removed (here,
// off the run's way, rather than when the run ends).
func (p *worktreePool) park(ctx context.Context, change string) error {
	defer p.doneParking(change)
	var trash string
	var err error
	p.lock.Do(func(w git.LockedWorktrees) { trash, err = p.parkOrSetAside(ctx, w, change) })
	p.emptyTrash(trash)
	return err
}

// parkOrSetAside is park's part under the lock: it parks the worktree or
// sets it aside (see setAside), and returns the trash to delete, if any.
func (p *worktreePool) parkOrSetAside(ctx context.Context, w git.LockedWorktrees, change string) (trash string, err error) {
	wt := p.layout.Worktree(change)
	p.spareMu.Lock()
	room := len(p.spares) < p.room()
	p.spareMu.Unlock()
	if _, err := os.Stat(wt); err == nil && room && w.Check(ctx, wt, git.ChangeBranch(change)) == nil {
		p.seq++
		spare := p.layout.SpareWorktree(p.seq)
		if err := w.Park(ctx, wt, spare); err == nil {
			p.spareMu.Lock()
			p.spares = append(p.spares, spare)
			p.spareMu.Unlock()
			return "", nil
		}
		// Not parked: what a move half-done left at the spare's place
		// goes, and the worktree is removed as usual.
		if _, err := w.Discard(ctx, spare); err != nil {
			return "", err
		}
	}
	return p.setAside(ctx, w, wt)
}

// setAside removes the worktree at wt, its files moved into a trash
// directory first (git.SetAsideWorktree), and returns the trash, which
// the caller hands to emptyTrash once it no longer holds the lock, which
// it holds: deleting the files of a large checkout takes long, and
// dispatches wait for the lock meanwhile.
func (p *worktreePool) setAside(ctx context.Context, w git.LockedWorktrees, wt string) (trash string, err error) {
	p.seq++
	trash = p.layout.Trash(p.seq)
	return trash, w.SetAside(ctx, wt, trash)
}

// emptyTrash deletes a trash directory of setAside ("": none) in the
// background (see trash). One it cannot delete stays, and the next run's
// reconcile discards it: it holds only what a removed worktree held.
func (p *worktreePool) emptyTrash(trash string) {
	if trash != "" {
		p.trash.Go(func() { _ = os.RemoveAll(trash) })
	}
}

// takeSpare takes a spare worktree, waiting for those being parked when
// there is none; "" when none is left.
func (p *worktreePool) takeSpare() string {
	p.spareMu.Lock()
	defer p.spareMu.Unlock()
	for len(p.spares) == 0 && len(p.parking) > 0 {
		p.parked.Wait()
	}
	n := len(p.spares)
	if n == 0 {
		return ""
	}
	spare := p.spares[n-1]
	p.spares = p.spares[:n-1]
	return spare
}

// doneParking ends the wait of the dispatches for the change's worktree
// (see parking), parked or not.
func (p *worktreePool) doneParking(change string) {
	p.spareMu.Lock()
	defer p.spareMu.Unlock()
	if p.parking[change] {
		delete(p.parking, change)
		p.parked.Broadcast()
	}
}

// drop removes the spare worktrees when the run ends. One git cannot
// remove stays, and the next run's reconcile discards it: a spare holds
// no work.
func (p *worktreePool) drop(ctx context.Context) {
	p.spareMu.Lock()
	spares := p.spares
	p.spares = nil
	p.spareMu.Unlock()
	var trash []string
	p.lock.Do(func(w git.LockedWorktrees) {
		for _, s := range spares {
			t, _ := p.setAside(ctx, w, s)
			trash = append(trash, t)
		}
	})
	for _, t := range trash {
		p.emptyTrash(t)
	}
}

// wait waits for the deletions of the trash the pool made.
func (p *worktreePool) wait() { p.trash.Wait() }

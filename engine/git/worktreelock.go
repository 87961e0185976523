package git

import (
	"context"
	"sync"
)

// WorktreeLock is the lock of one repository's worktree metadata (its
// .git/worktrees/ and the branches checked out there). Concurrent
// `git worktree add`, `move` and `remove` in one repository race on that
// metadata, and git itself does not lock it; deleting a branch must not
// race with a worktree taking it. Every command that changes worktrees is
// a method of LockedWorktrees, which only WorktreeLock.Do hands out, so a
// program that makes one WorktreeLock per repository and changes
// worktrees only through it runs those commands one at a time.
//
// A WorktreeLock is safe for concurrent use; its zero value is not (use
// NewWorktreeLock).
type WorktreeLock struct {
	root string
	mu   sync.Mutex
}

// NewWorktreeLock is the worktree lock of the repository at root.
func NewWorktreeLock(root string) *WorktreeLock {
	return &WorktreeLock{root: root}
}

// Do runs fn holding the lock. fn changes the repository's worktrees
// through w, which is valid only while fn runs; a sequence of commands
// in one fn is seen whole by every other holder of the lock.
func (l *WorktreeLock) Do(fn func(w LockedWorktrees)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fn(LockedWorktrees{root: l.root})
}

// LockedWorktrees are the commands that change the worktrees of one
// repository, run under its WorktreeLock (see WorktreeLock.Do). Each is
// the package function of the same purpose, at the lock's root.
type LockedWorktrees struct{ root string }

// Add is AddWorktree.
func (w LockedWorktrees) Add(ctx context.Context, path, branch, base string) error {
	return AddWorktree(ctx, w.root, path, branch, base)
}

// New is NewWorktree.
func (w LockedWorktrees) New(ctx context.Context, path, branch, base string) (created bool, err error) {
	return NewWorktree(ctx, w.root, path, branch, base)
}

// Reuse is ReuseWorktree.
func (w LockedWorktrees) Reuse(ctx context.Context, spare, path, branch, base string) (created bool, err error) {
	return ReuseWorktree(ctx, w.root, spare, path, branch, base)
}

// Park is ParkWorktree.
func (w LockedWorktrees) Park(ctx context.Context, path, spare string) error {
	return ParkWorktree(ctx, w.root, path, spare)
}

// SetAside is SetAsideWorktree.
func (w LockedWorktrees) SetAside(ctx context.Context, path, trash string) error {
	return SetAsideWorktree(ctx, w.root, path, trash)
}

// Discard is DiscardWorktree.
func (w LockedWorktrees) Discard(ctx context.Context, path string) ([]string, error) {
	return DiscardWorktree(ctx, w.root, path)
}

// Prune is PruneWorktrees.
func (w LockedWorktrees) Prune(ctx context.Context) error {
	return PruneWorktrees(ctx, w.root)
}

// Check is CheckWorktree, which reads the metadata the other commands
// change.
func (w LockedWorktrees) Check(ctx context.Context, dir, branch string) error {
	return CheckWorktree(ctx, w.root, dir, branch)
}

// DeleteBranch is DeleteBranch: a branch is deleted only when no worktree
// has it checked out, which the lock keeps true until the ref is gone.
func (w LockedWorktrees) DeleteBranch(ctx context.Context, branch, tip string) (bool, error) {
	return DeleteBranch(ctx, w.root, branch, tip)
}

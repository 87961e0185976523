// Package delivery keeps the local main and the remote's main in step in
// push mode (project.delivery.mode "push"), where the remote's main is
// the main: set reads it, the local main follows it by fast-forward, and
// a change lands on it by a push that is never forced (see merge.Land).
// Invariants: set never pushes, rebases or drops a commit it did not make;
// a local main that holds commits the remote lacks stops the run.
package delivery

import (
	"context"
	"fmt"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/git"
)

// Synced is what Follow did: the local main moved From → To (equal when
// it was at the remote's main already).
type Synced struct {
	Remote, Branch string
	From, To       string
}

// Moved reports whether the local main moved.
func (s Synced) Moved() bool { return s.From != s.To }

// NotFollowingError is a local main that cannot follow the remote's by
// fast-forward: it holds commits the remote's main lacks (Ahead), which
// set will not push, or the two diverged, which set will not rebase.
type NotFollowingError struct {
	Remote, Branch string
	Local, Theirs  string
	// Ahead: the remote's main is an ancestor of the local one.
	Ahead bool
	// Mine counts the local commits the remote lacks.
	Mine int
}

func (e *NotFollowingError) Error() string {
	rb := e.Remote + "/" + e.Branch
	if e.Ahead {
		return fmt.Sprintf("the local %s (%.10s) has %s that %s (%.10s) lacks; in push mode set lands changes on %s and never pushes commits it did not make: push them yourself (git push %s %s), or move them off %s, then run setctl apply again",
			e.Branch, e.Local, english.Plural(e.Mine, "commit"), rb, e.Theirs, rb, e.Remote, e.Branch, e.Branch)
	}
	return fmt.Sprintf("the local %s (%.10s) and %s (%.10s) have diverged: the local one has %s that %s lacks; set never rebases your commits: bring them onto %s yourself (git pull --rebase %s %s, then git push %s %s), or reset %s to %s after saving them, then run setctl apply again",
		e.Branch, e.Local, rb, e.Theirs, english.Plural(e.Mine, "commit"), rb, rb, e.Remote, e.Branch, e.Remote, e.Branch, e.Branch, rb)
}

// Follow fetches the remote's main and brings the local main there by
// fast-forward (git.FastForward, recorded at record when main is checked
// out in root). A local main the remote's main does not descend from is a
// *NotFollowingError, and nothing moves.
func Follow(ctx context.Context, root string, cfg *config.Project, record string) (Synced, error) {
	remote, branch := cfg.Delivery.Remote, cfg.MainBranch
	s := Synced{Remote: remote, Branch: branch}
	theirs, err := git.FetchBranch(ctx, root, remote, branch, git.RemoteTimeout)
	if err != nil {
		return s, err
	}
	local, err := git.BranchHead(ctx, root, branch)
	if err != nil {
		return s, err
	}
	s.From, s.To = local, theirs
	if local == theirs {
		return s, nil
	}
	if err := Behind(ctx, root, remote, branch, local, theirs); err != nil {
		s.To = local
		return s, err
	}
	if err := git.FastForward(ctx, root, branch, local, theirs, record); err != nil {
		return s, err
	}
	return s, nil
}

// Behind reports whether the local main (local) can follow the remote's
// (theirs, a commit the repository holds) by fast-forward: nil when local
// is an ancestor of theirs, a *NotFollowingError when it holds commits
// theirs lacks (ahead of it, or diverged).
func Behind(ctx context.Context, root, remote, branch, local, theirs string) error {
	behind, err := git.IsAncestor(ctx, root, local, theirs)
	if err != nil || behind {
		return err
	}
	ahead, err := git.IsAncestor(ctx, root, theirs, local)
	if err != nil {
		return err
	}
	mine, err := git.CountCommits(ctx, root, theirs, local)
	if err != nil {
		return err
	}
	return &NotFollowingError{Remote: remote, Branch: branch, Local: local, Theirs: theirs, Ahead: ahead, Mine: mine}
}

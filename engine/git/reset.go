package git

import "context"

// ResetHard moves the branch checked out in dir to rev and makes the
// index and the work tree match it (git reset --hard): tracked edits are
// lost; untracked files stay (see Clean).
func ResetHard(ctx context.Context, dir, rev string) error {
	_, err := Run(ctx, dir, "reset", "-q", "--hard", rev)
	return err
}

// ResetKeep moves the branch checked out in dir to rev, keeping the
// uncommitted edits of files the move does not touch (git reset --keep);
// it fails, changing nothing, when an edited file is one the move
// changes.
func ResetKeep(ctx context.Context, dir, rev string) error {
	_, err := Run(ctx, dir, "reset", "-q", "--keep", rev)
	return err
}

// CheckoutTheirs takes the other side's version of path (a path relative
// to dir) during a merge in dir (git checkout --theirs).
func CheckoutTheirs(ctx context.Context, dir, path string) error {
	_, err := Run(ctx, dir, "checkout", "--theirs", "--", path)
	return err
}

package git

import (
	"context"
	"strings"
)

// Tree is the ID of the tree of commit rev: the files it holds, whatever
// history led to them.
func Tree(ctx context.Context, dir, rev string) (string, error) {
	return Run(ctx, dir, "rev-parse", "--verify", "-q", rev+"^{tree}")
}

// SameTree reports whether commits a and b hold the same tree, that is
// the same files with the same content and modes, whatever their history:
// a commit rebuilt from another one's files (a squash, a fold dropped and
// made again) counts as the same.
func SameTree(ctx context.Context, dir, a, b string) (bool, error) {
	out, err := Run(ctx, dir, "rev-parse", a+"^{tree}", b+"^{tree}")
	if err != nil {
		return false, err
	}
	t := strings.Fields(out)
	return len(t) == 2 && t[0] == t[1], nil
}

package git

import (
	"context"
	"strings"
)

// SameTree reports whether commits a and b of the repository at dir have
// the same tree: the same files, whatever their histories.
func SameTree(ctx context.Context, dir, a, b string) (bool, error) {
	out, err := Run(ctx, dir, "rev-parse", a+"^{tree}", b+"^{tree}")
	if err != nil {
		return false, err
	}
	t := strings.Fields(out)
	return len(t) == 2 && t[0] == t[1], nil
}

// TreeID is the ID of the tree of commit rev.
func TreeID(ctx context.Context, dir, rev string) (string, error) {
	return Run(ctx, dir, "rev-parse", "--verify", "-q", rev+"^{tree}")
}

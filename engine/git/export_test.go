package git

import (
	"context"
	"strconv"
)

// CountCommits is the number of commits reachable from head but not base.
func CountCommits(ctx context.Context, dir, base, head string) (int, error) {
	out, err := Run(ctx, dir, "rev-list", "--count", base+".."+head)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(out)
}

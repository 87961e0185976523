package git

import (
	"context"
	"fmt"
)

// CommitDiff is the patch from the commit from to the commit to in the
// repository at dir (`git diff from to`), with diffArgs' settings: no
// colour, no external or textconv drivers, no rename detection, paths
// unquoted, whatever the user's configuration says. Both must be object
// IDs (as the journal records commits), so that neither reads as an
// option or a range.
func CommitDiff(ctx context.Context, dir, from, to string) (string, error) {
	for _, id := range []string{from, to} {
		if !objectID(id) {
			return "", fmt.Errorf("git diff: %q is not a commit ID", id)
		}
	}
	argv := append(append([]string{}, diffArgs...), from, to, "--")
	return Run(ctx, dir, argv...)
}

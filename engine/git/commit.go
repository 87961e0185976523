package git

import (
	"context"
	"regexp"
	"strconv"
)

// CommitPaths stages every change under the given paths (relative to
// dir) and commits only those, with msg; other changes in dir stay as
// they are. It reports false when there was nothing to commit.
func CommitPaths(ctx context.Context, dir, msg string, paths ...string) (bool, error) {
	if _, err := Run(ctx, dir, append([]string{"add", "-A", "--"}, paths...)...); err != nil {
		return false, err
	}
	if _, err := Run(ctx, dir, append([]string{"diff", "--cached", "--quiet", "--"}, paths...)...); err == nil {
		return false, nil
	} else if exitCode(err) != 1 {
		return false, err
	}
	args := append(identity(ctx, dir), append([]string{"commit", "-q", "--no-verify", "-m", msg, "--"}, paths...)...)
	if _, err := Run(ctx, dir, args...); err != nil {
		return false, err
	}
	return true, nil
}

// CommitNewPaths is CommitPaths for a work tree whose index holds nothing
// but HEAD (a worktree made just now): the paths are staged and the index
// committed as it is, which spares git the temporary index that a commit
// of paths builds. A change staged before would be committed with them.
func CommitNewPaths(ctx context.Context, dir, msg string, paths ...string) (bool, error) {
	if _, err := Run(ctx, dir, append([]string{"add", "-A", "--"}, paths...)...); err != nil {
		return false, err
	}
	if _, err := Run(ctx, dir, append([]string{"diff", "--cached", "--quiet", "--"}, paths...)...); err == nil {
		return false, nil
	} else if exitCode(err) != 1 {
		return false, err
	}
	args := append(identity(ctx, dir), "commit", "-q", "--no-verify", "-m", msg)
	if _, err := Run(ctx, dir, args...); err != nil {
		return false, err
	}
	return true, nil
}

// CountWork counts the commits of head that base does not have, leaving
// out those whose message has the trailer line "key: value" (commits set
// makes on a change's branch, which are not the agent's work).
func CountWork(ctx context.Context, dir, base, head, key, value string) (int, error) {
	out, err := Run(ctx, dir, "rev-list", "--count", "--extended-regexp", "--invert-grep",
		"--grep=^"+regexp.QuoteMeta(key+": "+value)+"$", base+".."+head)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(out)
}

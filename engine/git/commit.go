package git

import (
	"context"
	"regexp"
	"strconv"
	"strings"
)

// CommitPaths stages every change under the given paths (relative to
// dir) and commits only those, with msg; other changes in dir stay as
// they are. It reports false when there was nothing to commit.
func CommitPaths(ctx context.Context, dir, msg string, paths ...string) (bool, error) {
	if staged, err := stagePaths(ctx, dir, paths); !staged || err != nil {
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
// It takes two git processes when there is something to commit, the usual
// case: the index is compared with HEAD only when git commit refused.
func CommitNewPaths(ctx context.Context, dir, msg string, paths ...string) (bool, error) {
	if _, err := Run(ctx, dir, append([]string{"add", "-A", "--"}, paths...)...); err != nil {
		return false, err
	}
	args := append(identity(ctx, dir), "commit", "-q", "--no-verify", "-m", msg)
	_, err := Run(ctx, dir, args...)
	if err == nil {
		return true, nil
	}
	if exitCode(err) == 1 {
		// git commit says "nothing to commit" with exit status 1.
		if _, derr := Run(ctx, dir, "diff", "--cached", "--quiet", "HEAD"); derr == nil {
			return false, nil
		}
	}
	return false, err
}

// stagePaths stages every change under paths and reports whether the
// index then differs from HEAD there.
func stagePaths(ctx context.Context, dir string, paths []string) (bool, error) {
	if _, err := Run(ctx, dir, append([]string{"add", "-A", "--"}, paths...)...); err != nil {
		return false, err
	}
	if _, err := Run(ctx, dir, append([]string{"diff", "--cached", "--quiet", "--"}, paths...)...); err == nil {
		return false, nil
	} else if exitCode(err) != 1 {
		return false, err
	}
	return true, nil
}

// CommitOnHead stages every change under paths and commits the whole
// index as a child of HEAD with msg, moving HEAD's branch to it. It is
// for a work tree whose index was HEAD's before something under paths
// changed, and commits by plumbing (write-tree, commit-tree, update-ref
// from HEAD, so that a HEAD moved meanwhile is an error), which is
// quicker than git commit. It returns the commit.
func CommitOnHead(ctx context.Context, dir, msg string, paths ...string) (string, error) {
	if _, err := Run(ctx, dir, append([]string{"add", "-A", "--"}, paths...)...); err != nil {
		return "", err
	}
	tree, err := Run(ctx, dir, "write-tree")
	if err != nil {
		return "", err
	}
	head, err := RevParse(ctx, dir, "HEAD")
	if err != nil {
		return "", err
	}
	commit, err := CommitTree(ctx, dir, tree, head, msg)
	if err != nil {
		return "", err
	}
	subject, _, _ := strings.Cut(msg, "\n")
	if _, err := Run(ctx, dir, "update-ref", "-m", "commit: "+subject, "HEAD", commit, head); err != nil {
		return "", err
	}
	return commit, nil
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

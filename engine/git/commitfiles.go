package git

import (
	"context"
	"strings"
)

// TrailerValue is the value of the trailer key in the message of commit
// rev ("key: value"), or "" when it has none. Several trailers of that key
// give their values one a line.
func TrailerValue(ctx context.Context, dir, rev, key string) (string, error) {
	out, err := Run(ctx, dir, "log", "-1", "--format=%(trailers:key="+key+",valueonly)", rev)
	return strings.TrimSpace(out), err
}

// CommitChanges lists the paths under the directory prefix (a slash path
// relative to the repository's top, "" for all) that commit changed
// against its first parent, and how, in git's order. Renames are a
// deletion and an addition.
func CommitChanges(ctx context.Context, dir, commit, prefix string) ([]PathStatus, error) {
	args := []string{"diff-tree", "-r", "-z", "--no-renames", "--name-status", commit + "^", commit}
	if prefix != "" {
		args = append(args, "--", prefix)
	}
	out, err := run(ctx, dir, args...)
	if err != nil {
		return nil, err
	}
	return parseNameStatus("git diff-tree --name-status", out)
}

// HasPath reports whether the tree of commit rev holds path (a file or a
// directory, relative to dir).
func HasPath(ctx context.Context, dir, rev, path string) (bool, error) {
	out, err := Run(ctx, dir, "ls-tree", "--name-only", rev, "--", path)
	return out != "", err
}

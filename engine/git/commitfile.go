package git

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// CommitFile makes a commit whose parent is the commit parent and whose
// tree is parent's with the regular file name (a slash path relative to
// dir, which may be a subdirectory of the repository) holding data, and
// returns its ID. It touches no checkout, no branch and not the
// repository's index: the tree is built in an index of its own, which it
// removes. setctl learn --write proposes learnings.cue this way, as a
// pull request on main, without changing the user's working tree.
func CommitFile(ctx context.Context, dir, parent, name string, data []byte, msg string) (string, error) {
	prefix, err := Prefix(ctx, dir)
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "set-commitfile-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	content := filepath.Join(tmp, "content")
	if err := os.WriteFile(content, data, 0o644); err != nil {
		return "", err
	}
	blob, err := Run(ctx, dir, "hash-object", "-w", "--no-filters", "--", content)
	if err != nil {
		return "", err
	}
	index := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	if _, err := runEnv(ctx, dir, index, 0, "read-tree", parent+"^{commit}"); err != nil {
		return "", err
	}
	if _, err := runEnv(ctx, dir, index, 0, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+path.Join(prefix, name)); err != nil {
		return "", err
	}
	tree, err := runEnv(ctx, dir, index, 0, "write-tree")
	if err != nil {
		return "", err
	}
	return CommitTree(ctx, dir, strings.TrimSpace(tree), parent, msg)
}

// Prefix is dir's place in its repository: its slash path from the
// repository's top, ending in "/", or "" at the top (git rev-parse
// --show-prefix). A path of dir's joined to it is what FileAt takes.
func Prefix(ctx context.Context, dir string) (string, error) {
	return Run(ctx, dir, "rev-parse", "--show-prefix")
}

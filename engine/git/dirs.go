package git

import (
	"context"
	"path"
	"strings"
)

// DirsAt returns the names of the directories directly under the
// directory prefix (a slash path relative to the repository's top) in the
// tree of commit rev, in git's order; none when the tree has no such
// directory. It reads no file, so it stays cheap however much the
// directories hold.
func DirsAt(ctx context.Context, dir, rev, prefix string) ([]string, error) {
	entries, err := lsTree(ctx, dir, "--full-tree", rev+"^{commit}", "--", strings.TrimSuffix(prefix, "/")+"/")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.typ == "tree" {
			names = append(names, path.Base(e.path))
		}
	}
	return names, nil
}

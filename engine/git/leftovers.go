package git

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// CommitLeftovers commits what dir holds uncommitted, as CommitAll does,
// unless an unmerged path still holds a conflict marker line: then it
// commits nothing and returns those paths, as UnresolvedConflicts lists
// them (a merge must not be concluded over a marker). It learns both from
// one git status, so a dir with nothing uncommitted, outside a merge,
// costs one git process, and one with leftovers three (status, add,
// commit). committed reports whether it made a commit.
func CommitLeftovers(ctx context.Context, dir, msg string) (unresolved []string, committed bool, err error) {
	out, err := run(ctx, dir, "status", "--porcelain", "-z", "--untracked-files=all")
	if err != nil {
		return nil, false, err
	}
	entries := strings.Split(out, "\x00")
	any := false
	for i := 0; i < len(entries); i++ {
		e := entries[i]
		if len(e) <= 3 {
			continue
		}
		any = true
		xy, path := e[:2], e[3:]
		if xy[0] == 'R' || xy[0] == 'C' {
			i++ // the source path follows, with no status
			continue
		}
		if !unmerged(xy) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
		if err != nil {
			if os.IsNotExist(err) {
				continue // resolved by deleting the file
			}
			return nil, false, err
		}
		if HasConflictMarkers(string(data)) {
			unresolved = append(unresolved, path)
		}
	}
	if len(unresolved) > 0 {
		return unresolved, false, nil
	}
	merging := InMerge(ctx, dir)
	if !any && !merging {
		return nil, false, nil
	}
	if _, err := Run(ctx, dir, "add", "-A"); err != nil {
		return nil, false, err
	}
	args := append(identity(ctx, dir), "commit", "-q", "--no-verify", "-m", msg)
	if _, cerr := Run(ctx, dir, args...); cerr != nil {
		// git status saw a change that add -A does not stage (a
		// submodule's own edits): nothing to commit after all.
		if _, err := Run(ctx, dir, "diff", "--cached", "--quiet"); err == nil && !merging {
			return nil, false, nil
		}
		return nil, false, cerr
	}
	return nil, true, nil
}

// unmerged reports whether a git status XY code is an unmerged path's.
func unmerged(xy string) bool {
	return xy[0] == 'U' || xy[1] == 'U' || xy == "AA" || xy == "DD"
}

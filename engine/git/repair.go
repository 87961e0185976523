package git

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The repairs of a repository that a killed run can leave half-way: git
// lock files whose git process is gone, and worktrees half created or half
// removed. They are for a caller that knows no git process of its own is
// running in the repository (set holds the project's lock and has ended
// the orphans of the killed run).

// commonDir is the git directory shared by every worktree of the
// repository at root (its .git directory), absolute. A main checkout at
// the top of its work tree (root/.git a directory, and no GIT_DIR or
// GIT_COMMON_DIR in the environment to say otherwise) has its .git there,
// which is read without running git; any other root (a linked worktree,
// a subdirectory of a work tree) asks git.
func commonDir(ctx context.Context, root string) (string, error) {
	if info, err := os.Stat(filepath.Join(root, ".git")); err == nil && info.IsDir() && os.Getenv("GIT_DIR") == "" && os.Getenv("GIT_COMMON_DIR") == "" {
		return filepath.Join(filepath.Clean(root), ".git"), nil
	}
	dir, err := Run(ctx, root, "rev-parse", "--git-common-dir")
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	return filepath.Clean(dir), nil
}

// RemoveLocks removes the lock files a killed git process leaves in the
// repository at root: the *.lock files of its git directory (HEAD.lock,
// ORIG_HEAD.lock, index.lock, packed-refs.lock, config.lock), of each
// worktree's git directory (.git/worktrees/<name>/), and under refs/. It
// returns the paths it removed, sorted. Git cannot tell a lock of a live
// process from a stale one, so the caller must know that no git process
// runs in the repository.
func RemoveLocks(ctx context.Context, root string) ([]string, error) {
	common, err := commonDir(ctx, root)
	if err != nil {
		return nil, err
	}
	locks, _ := filepath.Glob(filepath.Join(common, "*.lock"))
	inWorktrees, _ := filepath.Glob(filepath.Join(common, "worktrees", "*", "*.lock"))
	locks = append(locks, inWorktrees...)
	err = filepath.WalkDir(filepath.Join(common, "refs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".lock") {
			locks = append(locks, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, l := range locks {
		if info, err := os.Lstat(l); err != nil || info.IsDir() {
			continue
		}
		if err := os.Remove(l); err != nil && !os.IsNotExist(err) {
			return removed, err
		}
		removed = append(removed, l)
	}
	slices.Sort(removed)
	return removed, nil
}

// WorktreeProblem says what is wrong with the worktree at path, or "" when
// it is sound. A sound worktree has a .git file pointing at its git
// directory under the repository's .git/worktrees/, which points back at
// it and is not left locked by a `git worktree add` that did not finish
// ("initializing"). A path that does not exist is "no directory". The
// branch checked out is not judged: an agent may have switched it.
func WorktreeProblem(path string) string {
	if _, err := os.Stat(path); err != nil {
		return "no directory"
	}
	gd, ok := gitDir(path)
	if !ok {
		return "a directory without .git"
	}
	back, err := os.ReadFile(filepath.Join(gd, "gitdir"))
	if err != nil {
		return ".git names a git directory that is missing"
	}
	if !sameFile(strings.TrimSpace(string(back)), filepath.Join(path, ".git")) {
		return ".git names the git directory of another worktree"
	}
	if _, err := os.Stat(filepath.Join(gd, "locked")); err == nil {
		return "left locked by an unfinished git worktree add"
	}
	return ""
}

// sameFile reports whether paths a and b name the same file (the same
// directory entry, symbolic links resolved).
func sameFile(a, b string) bool {
	ia, err := os.Stat(a)
	if err != nil {
		return false
	}
	ib, err := os.Stat(b)
	return err == nil && os.SameFile(ia, ib)
}

// resolvedPath is path made absolute with its symbolic links resolved, as far
// as it exists (git records a worktree's real path).
func resolvedPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	if parent := filepath.Dir(abs); parent != abs {
		return filepath.Join(resolvedPath(parent), filepath.Base(abs))
	}
	return abs
}

// DiscardWorktree removes the worktree at path whatever state it is in:
// through git when git knows it, else by removing the directory and the
// worktree's git directory (found from path's .git file, or as the one of
// .git/worktrees/ that points at path), then forgets worktrees whose
// directory is gone. It returns what it removed; a path that does not
// exist, with no git directory, is nothing to remove.
func DiscardWorktree(ctx context.Context, root, path string) ([]string, error) {
	_, statErr := os.Stat(path)
	exists := statErr == nil
	if exists {
		if _, err := Run(ctx, root, "worktree", "remove", "--force", "--force", path); err == nil {
			return []string{path}, PruneWorktrees(ctx, root)
		}
	}
	common, err := commonDir(ctx, root)
	if err != nil {
		return nil, err
	}
	var admin []string
	if gd, ok := gitDir(path); ok && resolvedPath(filepath.Dir(gd)) == resolvedPath(filepath.Join(common, "worktrees")) {
		if _, err := os.Stat(gd); err == nil {
			admin = append(admin, filepath.Clean(gd))
		}
	}
	links, _ := filepath.Glob(filepath.Join(common, "worktrees", "*", "gitdir"))
	for _, l := range links {
		data, err := os.ReadFile(l)
		if err == nil && resolvedPath(strings.TrimSpace(string(data))) == resolvedPath(filepath.Join(path, ".git")) && !slices.Contains(admin, filepath.Dir(l)) {
			admin = append(admin, filepath.Dir(l))
		}
	}
	var removed []string
	if exists {
		if err := os.RemoveAll(path); err != nil {
			return nil, err
		}
		removed = append(removed, path)
	}
	for _, a := range admin {
		if err := os.RemoveAll(a); err != nil {
			return removed, err
		}
		removed = append(removed, a)
	}
	return removed, PruneWorktrees(ctx, root)
}

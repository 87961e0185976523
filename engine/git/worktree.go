package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/set-engine/set/engine/atomicfile"
)

// Exclude adds pattern to the repository's info/exclude unless a line equal
// to it is there already, so that set's run state never shows up in
// `git status` of the user or of any worktree.
func Exclude(ctx context.Context, root, pattern string) error {
	path, err := Run(ctx, root, "rev-parse", "--git-path", "info/exclude")
	if err != nil {
		return err
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == pattern {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		data = append(data, '\n')
	}
	return atomicfile.Write(path, append(data, pattern+"\n"...), 0o644)
}

// Worktree is one entry of `git worktree list`.
type Worktree struct {
	Path   string
	Head   string
	Branch string // short name, "" when detached
}

// Worktrees lists the worktrees of the repository at root.
func Worktrees(ctx context.Context, root string) ([]Worktree, error) {
	out, err := Run(ctx, root, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	var list []Worktree
	var cur *Worktree
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "worktree "):
			list = append(list, Worktree{Path: strings.TrimPrefix(line, "worktree ")})
			cur = &list[len(list)-1]
		case cur != nil && strings.HasPrefix(line, "HEAD "):
			cur.Head = strings.TrimPrefix(line, "HEAD ")
		case cur != nil && strings.HasPrefix(line, "branch "):
			cur.Branch = strings.TrimPrefix(strings.TrimPrefix(line, "branch "), "refs/heads/")
		}
	}
	return list, nil
}

// AddWorktree creates a worktree at path on a new branch started at base.
// If the branch exists already (a run that crashed after creating it), the
// worktree is attached to it instead, keeping its commits.
func AddWorktree(ctx context.Context, root, path, branch, base string) error {
	_, err := NewWorktree(ctx, root, path, branch, base)
	return err
}

// NewWorktree is AddWorktree, reporting whether it created the branch
// (then at base, with no commit of its own). With base "" the branch
// must exist. A new branch, the usual case, takes one git process: git
// refuses `worktree add -b` for a branch that exists before it writes
// anything, and only then is the branch looked for.
func NewWorktree(ctx context.Context, root, path, branch, base string) (created bool, err error) {
	if base != "" {
		_, err := Run(ctx, root, "worktree", "add", "-q", "-b", branch, path, base)
		if err == nil || !BranchExists(ctx, root, branch) {
			return err == nil, err
		}
	}
	_, err = Run(ctx, root, "worktree", "add", "-q", path, branch)
	return false, err
}

// ParkWorktree keeps the worktree at path for ReuseWorktree: its HEAD is
// detached from its branch (which can then be deleted), what git does not
// track is deleted (ignored files included), and the worktree moved to
// spare, files and all. Removing a worktree deletes every file of it and
// adding one writes them all again; reusing it rewrites only the files
// that differ. A worktree git cannot move (one with submodules) is an
// error, and stays where it was.
func ParkWorktree(ctx context.Context, root, path, spare string) error {
	if _, err := Run(ctx, path, "checkout", "-q", "--detach"); err != nil {
		return err
	}
	if _, err := Run(ctx, path, "clean", "-q", "-ffdx"); err != nil {
		return err
	}
	_, err := Run(ctx, root, "worktree", "move", path, spare)
	return err
}

// ReuseWorktree makes the worktree ParkWorktree parked at spare the
// worktree at path, as NewWorktree would make it: on branch, created at
// base, or as it is when it exists, with nothing else in it. Parking
// deleted what git does not track, and a forced checkout undoes the
// edits of tracked files, so a spare nothing touched since it was parked
// takes two git processes. It reports whether it created the branch.
// After an error the worktree may be at spare or at path, in any state:
// the caller discards it (DiscardWorktree).
func ReuseWorktree(ctx context.Context, root, spare, path, branch, base string) (created bool, err error) {
	if _, err := Run(ctx, root, "worktree", "move", spare, path); err != nil {
		return false, err
	}
	_, err = Run(ctx, path, "checkout", "-q", "-f", "-b", branch, base)
	if err == nil {
		return true, nil
	}
	if !BranchExists(ctx, root, branch) {
		return false, err
	}
	_, err = Run(ctx, path, "checkout", "-q", "-f", branch)
	return false, err
}

// AddDetachedWorktree creates a worktree at path with rev checked out and
// no branch: a clean, throwaway checkout of a commit.
func AddDetachedWorktree(ctx context.Context, root, path, rev string) error {
	_, err := Run(ctx, root, "worktree", "add", "-q", "--detach", path, rev)
	return err
}

// RemoveWorktree removes the worktree at path, even with local changes.
// A worktree whose directory is gone already is left to PruneWorktrees.
func RemoveWorktree(ctx context.Context, root, path string) error {
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	_, err := Run(ctx, root, "worktree", "remove", "--force", "--force", path)
	return err
}

// SetAsideWorktree removes the worktree at path as RemoveWorktree does,
// but first moves its files (everything but .git) into trash, a directory
// it creates on the same file system, for the caller to delete when it
// suits (os.RemoveAll): git then removes a directory with nothing in it
// but .git, which takes milliseconds however many files the checkout has,
// where deleting them takes tens to hundreds. Files it could not move are
// deleted by git. A worktree whose directory is gone already is left to
// PruneWorktrees, and trash is not made.
func SetAsideWorktree(ctx context.Context, root, path, trash string) error {
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil
	}
	if err := os.Mkdir(trash, 0o755); err == nil {
		for _, e := range entries {
			if e.Name() != ".git" {
				_ = os.Rename(filepath.Join(path, e.Name()), filepath.Join(trash, e.Name()))
			}
		}
	}
	_, err = Run(ctx, root, "worktree", "remove", "--force", "--force", path)
	return err
}

// PruneWorktrees forgets worktrees whose directories no longer exist.
func PruneWorktrees(ctx context.Context, root string) error {
	_, err := Run(ctx, root, "worktree", "prune")
	return err
}

// MergeResult says how merging a commit into a worktree went.
type MergeResult struct {
	// Clean is set when the merge finished (or there was nothing to merge).
	Clean bool
	// Conflicts are the unmerged paths of a merge left in progress.
	Conflicts []string
}

// Merge merges rev into the branch checked out in dir. On a conflict the
// merge is left in progress (markers in the files, MERGE_HEAD set) for an
// agent to resolve; Abort undoes it.
func Merge(ctx context.Context, dir, rev, msg string) (MergeResult, error) {
	// The plain conflict style, whatever the user's git config says, so
	// that conflict markers (and what an agent or a recording expects of
	// them) are the same everywhere.
	args := append(identity(ctx, dir), "-c", "merge.conflictStyle=merge", "merge", "--no-edit", "-q", "-m", msg, rev)
	_, err := Run(ctx, dir, args...)
	if err == nil {
		return MergeResult{Clean: true}, nil
	}
	conflicts, cerr := Conflicts(ctx, dir)
	if cerr != nil || len(conflicts) == 0 || !InMerge(ctx, dir) {
		return MergeResult{}, err
	}
	return MergeResult{Conflicts: conflicts}, nil
}

// Conflicts lists the unmerged paths in dir.
func Conflicts(ctx context.Context, dir string) ([]string, error) {
	out, err := Run(ctx, dir, "diff", "--name-only", "--diff-filter=U")
	if err != nil || out == "" {
		return nil, err
	}
	return strings.Split(out, "\n"), nil
}

// AbortMerge abandons a merge in progress in dir.
func AbortMerge(ctx context.Context, dir string) error {
	_, err := Run(ctx, dir, "merge", "--abort")
	return err
}

func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// UnresolvedConflicts lists the unmerged paths in dir whose content still
// holds a conflict marker line. A merge must not be concluded while any
// remain: `git add` would take the markers for a resolution.
func UnresolvedConflicts(ctx context.Context, dir string) ([]string, error) {
	paths, err := Conflicts(ctx, dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range paths {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			if os.IsNotExist(err) {
				continue // resolved by deleting the file
			}
			return nil, err
		}
		if HasConflictMarkers(string(data)) {
			out = append(out, p)
		}
	}
	return out, nil
}

// HasConflictMarkers reports whether text holds a line that opens or
// closes a conflict (<<<<<<< or >>>>>>> followed by a space).
func HasConflictMarkers(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "<<<<<<< ") || strings.HasPrefix(line, ">>>>>>> ") {
			return true
		}
	}
	return false
}

// Uncommitted reports whether dir has anything `git add -A` would stage
// or the index holds that HEAD does not: changes to tracked files,
// untracked files that are not ignored, staged changes.
func Uncommitted(ctx context.Context, dir string) (bool, error) {
	status, err := Run(ctx, dir, "status", "--porcelain", "--untracked-files=all")
	return status != "", err
}

// Clean discards every uncommitted change and every untracked file that is
// not ignored in dir, leaving the tree of HEAD (ignored files, such as
// build caches, stay).
func Clean(ctx context.Context, dir string) error {
	dirty, err := Uncommitted(ctx, dir)
	if err != nil || !dirty {
		return err // nothing to clean: one git call in the common case
	}
	if _, err := Run(ctx, dir, "reset", "-q", "--hard", "HEAD"); err != nil {
		return err
	}
	_, err = Run(ctx, dir, "clean", "-q", "-fd")
	return err
}

// NotWorktreeError is a directory that set was about to run git in as the
// worktree of a change's branch, and is not it.
type NotWorktreeError struct {
	Dir    string
	Branch string
	Reason string
}

func (e *NotWorktreeError) Error() string {
	return fmt.Sprintf("%s is not the worktree of branch %s (%s); setctl runs no git command there", e.Dir, e.Branch, e.Reason)
}

// GitDirs are the absolute git directory of the checkout at dir (for a
// linked worktree, its own under the repository's .git/worktrees/) and the
// repository's common git directory (the objects and refs every worktree
// shares). For a main checkout both are its .git.
func GitDirs(ctx context.Context, dir string) (gitDir, commonDir string, err error) {
	out, err := Run(ctx, dir, "rev-parse", "--git-dir", "--git-common-dir")
	if err != nil {
		return "", "", err
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 2 {
		return "", "", fmt.Errorf("git rev-parse in %s said %q", dir, out)
	}
	return absIn(dir, lines[0]), absIn(dir, lines[1]), nil
}

// CheckWorktree proves that dir is a linked worktree of the repository at
// root, at dir's own top, with branch checked out. Every git command that
// changes a change's worktree (commit, merge, reset, clean) is run only
// after it: git run in a directory that merely lies inside root (a
// worktree whose .git file is gone, a directory left where a worktree
// was) acts on root's checkout, which is main, and a separate repository
// or another branch is no place for the change's commits either. A
// directory that fails is a *NotWorktreeError.
func CheckWorktree(ctx context.Context, root, dir, branch string) error {
	fail := func(format string, args ...any) error {
		return &NotWorktreeError{Dir: dir, Branch: branch, Reason: fmt.Sprintf(format, args...)}
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return fail("no such directory")
	}
	if worktreeByFiles(ctx, root, dir, branch) {
		return nil
	}
	out, err := Run(ctx, dir, "rev-parse", "--show-toplevel", "--git-dir", "--git-common-dir", "--symbolic-full-name", "HEAD")
	if err != nil {
		return fail("%v", err)
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 4 {
		return fail("git rev-parse said %q", out)
	}
	top, gitDir, common, head := lines[0], absIn(dir, lines[1]), absIn(dir, lines[2]), lines[3]
	rootCommon, err := commonDir(ctx, root)
	if err != nil {
		return err
	}
	switch {
	case !samePath(top, dir):
		return fail("it lies inside the checkout at %s", top)
	case !samePath(common, rootCommon):
		return fail("it is a repository of its own, not a worktree of %s", root)
	case samePath(gitDir, common):
		return fail("it is the repository's main checkout, not a linked worktree")
	case head != "refs/heads/"+branch:
		if head == "HEAD" {
			return fail("its HEAD is detached")
		}
		return fail("it is on %s", strings.TrimPrefix(head, "refs/heads/"))
	}
	return nil
}

// worktreeByFiles reports whether the files git itself reads to find the
// repository of dir prove what CheckWorktree asks, in the ordinary layout
// only: no GIT_DIR, GIT_WORK_TREE or GIT_COMMON_DIR in the environment,
// dir/.git a file naming its git directory (so dir is its work tree's top),
// that directory's commondir naming root's common directory and its HEAD
// naming branch, and no per-worktree configuration (which could move the
// work tree). It runs no git. Anything else, and every failure, is left to
// git (CheckWorktree's rev-parse), which says why.
func worktreeByFiles(ctx context.Context, root, dir, branch string) bool {
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR"} {
		if os.Getenv(k) != "" {
			return false
		}
	}
	if info, err := os.Lstat(filepath.Join(dir, ".git")); err != nil || !info.Mode().IsRegular() {
		return false
	}
	gd, ok := gitDir(dir)
	if !ok {
		return false
	}
	common, err := os.ReadFile(filepath.Join(gd, "commondir"))
	if err != nil {
		return false
	}
	if _, err := os.Lstat(filepath.Join(gd, "config.worktree")); err == nil {
		return false
	}
	head, err := os.ReadFile(filepath.Join(gd, "HEAD"))
	if err != nil || strings.TrimSpace(string(head)) != "ref: refs/heads/"+branch {
		return false
	}
	rootCommon, err := commonDir(ctx, root)
	if err != nil {
		return false
	}
	c := absIn(gd, strings.TrimSpace(string(common)))
	return samePath(c, rootCommon) && !samePath(gd, c)
}

// absIn is path made absolute against dir, as git prints paths relative
// to the directory it ran in.
func absIn(dir, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(dir, path)
}

// samePath reports whether a and b name the same directory, symbolic
// links resolved (git prints the resolved path; a temp dir may not be).
func samePath(a, b string) bool {
	resolve := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	return resolve(a) == resolve(b)
}

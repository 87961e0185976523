package git

import (
	"context"
	"path/filepath"
	"testing"
)

// RevParse reads HEAD and branches from the files where they settle it,
// and gives git's answer everywhere: in the main checkout and a linked
// worktree, on a detached HEAD, for packed refs, from a subdirectory,
// and for a branch that does not exist.
func TestRevParseByFiles(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	first := r.git("rev-parse", "HEAD")
	r.write("a.txt", "a\n")
	second := r.commit("second")
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", "-b", "set/x", wt, first)
	detached := filepath.Join(t.TempDir(), "detached")
	r.git("worktree", "add", "-q", "--detach", detached, first)
	r.write("sub/b.txt", "b\n")
	r.commit("third")
	third := r.git("rev-parse", "HEAD")

	check := func(dir, rev, want string, byFiles bool) {
		t.Helper()
		got, err := RevParse(ctx, dir, rev)
		if err != nil || got != want {
			t.Errorf("RevParse(%s, %s) = %q, %v; want %s", dir, rev, got, err, want)
		}
		if _, ok := commitByFiles(dir, rev); ok != byFiles {
			t.Errorf("commitByFiles(%s, %s) answered: %v, want %v", dir, rev, ok, byFiles)
		}
	}
	check(r.dir, "HEAD", third, true)
	check(r.dir, "refs/heads/main", third, true)
	check(r.dir, "refs/heads/set/x", first, true)
	check(wt, "HEAD", first, true)
	check(wt, "refs/heads/main", third, true)
	check(detached, "HEAD", first, true)
	// Not a work tree's top: git answers.
	check(filepath.Join(r.dir, "sub"), "HEAD", third, false)
	// Anything but HEAD and a branch's full name: git answers.
	check(r.dir, "main", third, false)
	check(r.dir, "HEAD~1", second, false)

	// Packed refs have no loose file: git answers, and still right.
	r.git("pack-refs", "--all")
	check(r.dir, "HEAD", third, false)
	check(wt, "refs/heads/main", third, false)
	check(wt, "HEAD", first, false)

	if got, err := RevParse(ctx, r.dir, "refs/heads/nope"); err == nil {
		t.Errorf("RevParse(refs/heads/nope) = %q, want an error", got)
	}
	// A moved branch is read anew.
	r.write("c.txt", "c\n")
	fourth := r.commit("fourth")
	check(r.dir, "refs/heads/main", fourth, true)

	// With GIT_DIR set, git decides what the directory is.
	t.Setenv("GIT_DIR", filepath.Join(r.dir, ".git"))
	check(r.dir, "HEAD", fourth, false)
}

// CommitOnHead commits the paths' changes as a child of HEAD, with its
// message, moves the branch and leaves the work tree clean.
func TestCommitOnHead(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	before := r.git("rev-parse", "HEAD")
	r.write("openspec/specs/a/spec.md", "# a\n")
	commit, err := CommitOnHead(ctx, r.dir, "Archive x: fold\n\nSet-Archive: x\n", "openspec")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.git("rev-parse", "HEAD"); got != commit {
		t.Errorf("HEAD = %s, want the commit %s", got, commit)
	}
	if got := r.git("rev-parse", "HEAD^"); got != before {
		t.Errorf("HEAD^ = %s, want %s", got, before)
	}
	if got := r.git("symbolic-ref", "HEAD"); got != "refs/heads/main" {
		t.Errorf("HEAD is %s, want still on main", got)
	}
	if got := r.git("log", "-1", "--format=%s%n%(trailers:key=Set-Archive,valueonly)", "HEAD"); got != "Archive x: fold\nx" {
		t.Errorf("message = %q", got)
	}
	if got := r.git("status", "--porcelain", "--untracked-files=all"); got != "" {
		t.Errorf("status after the commit:\n%s", got)
	}
}

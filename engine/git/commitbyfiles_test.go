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

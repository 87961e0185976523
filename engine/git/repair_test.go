package git

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRemoveLocks: the lock files a killed git leaves in the git
// directory, a worktree's git directory and refs/ are removed and
// listed; other files stay, and git works again.
func TestRemoveLocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", "-b", "set/x", wt)
	gd := filepath.Join(r.dir, ".git")
	locks := []string{
		filepath.Join(gd, "HEAD.lock"),
		filepath.Join(gd, "ORIG_HEAD.lock"),
		filepath.Join(gd, "index.lock"),
		filepath.Join(gd, "refs", "heads", "set", "x.lock"),
		filepath.Join(gd, "worktrees", "wt", "HEAD.lock"),
		filepath.Join(gd, "worktrees", "wt", "index.lock"),
	}
	for _, l := range locks {
		writeIn(t, filepath.Dir(l), filepath.Base(l), "")
	}
	if _, err := Run(ctx, wt, "commit", "--allow-empty", "-q", "-m", "x"); err == nil {
		t.Fatal("git commits with the worktree's index.lock in place; the test sets up nothing")
	}
	removed, err := RemoveLocks(ctx, r.dir)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(slices.Values(locks))
	if diff := cmp.Diff(want, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	for _, l := range locks {
		if _, err := os.Stat(l); !os.IsNotExist(err) {
			t.Errorf("%s is left: %v", l, err)
		}
	}
	if _, err := os.Stat(filepath.Join(gd, "HEAD")); err != nil {
		t.Errorf("HEAD is gone: %v", err)
	}
	gitIn(t, wt, "commit", "--allow-empty", "-q", "-m", "x")
	r.git("commit", "--allow-empty", "-q", "-m", "main")
	if removed, err := RemoveLocks(ctx, r.dir); err != nil || len(removed) != 0 {
		t.Errorf("second RemoveLocks = %v, %v; want nothing", removed, err)
	}
}

// TestWorktreeProblemAndDiscard: each way a killed `git worktree add` or
// `git worktree remove` leaves a worktree is found, DiscardWorktree
// clears it whether git knows the directory or not, and the worktree can
// be added again on its branch.
func TestWorktreeProblemAndDiscard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		damage  func(t *testing.T, r *repo, wt string)
		problem string
	}{
		{"sound", func(*testing.T, *repo, string) {}, ""},
		{"directory without .git", func(t *testing.T, r *repo, wt string) {
			if err := os.Remove(filepath.Join(wt, ".git")); err != nil {
				t.Fatal(err)
			}
		}, "a directory without .git"},
		{"a directory git never knew", func(t *testing.T, r *repo, wt string) {
			if err := os.RemoveAll(wt); err != nil {
				t.Fatal(err)
			}
			r.git("worktree", "prune")
			writeIn(t, wt, "half.txt", "half\n")
		}, "a directory without .git"},
		{".git without its git directory", func(t *testing.T, r *repo, wt string) {
			if err := os.RemoveAll(filepath.Join(r.dir, ".git", "worktrees", "wt")); err != nil {
				t.Fatal(err)
			}
		}, ".git names a git directory that is missing"},
		{"git directory without the directory", func(t *testing.T, r *repo, wt string) {
			if err := os.RemoveAll(wt); err != nil {
				t.Fatal(err)
			}
		}, "no directory"},
		{"left locked while initializing", func(t *testing.T, r *repo, wt string) {
			writeIn(t, filepath.Join(r.dir, ".git", "worktrees", "wt"), "locked", "initializing")
		}, "left locked by an unfinished git worktree add"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			wt := filepath.Join(t.TempDir(), "wt")
			r.git("worktree", "add", "-q", "-b", "set/x", wt)
			tc.damage(t, r, wt)
			if got := WorktreeProblem(wt); got != tc.problem {
				t.Fatalf("WorktreeProblem = %q, want %q", got, tc.problem)
			}
			removed, err := DiscardWorktree(ctx, r.dir, wt)
			if err != nil {
				t.Fatal(err)
			}
			if len(removed) == 0 {
				t.Errorf("DiscardWorktree removed nothing")
			}
			if _, err := os.Stat(wt); !os.IsNotExist(err) {
				t.Errorf("the directory is left: %v", err)
			}
			if err := AddWorktree(ctx, r.dir, wt, "set/x", "main"); err != nil {
				t.Fatalf("adding the worktree again: %v", err)
			}
			if got := WorktreeProblem(wt); got != "" {
				t.Errorf("the worktree added again: %s", got)
			}
			if removed, err := DiscardWorktree(ctx, r.dir, filepath.Join(t.TempDir(), "never")); err != nil || len(removed) != 0 {
				t.Errorf("discarding a path that does not exist: %v, %v", removed, err)
			}
		})
	}
}

package git

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A parked worktree comes back as NewWorktree would make it: on the new
// branch at base (or on the branch as it is, when it exists), with
// nothing of its last use left, and its old branch free to delete.
func TestParkAndReuseWorktree(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	r.write(".gitignore", "build/\n")
	r.commit("ignore build/")
	base := r.git("rev-parse", "HEAD")
	dir := t.TempDir()
	wt1, spare, wt2, wt3 := filepath.Join(dir, "a"), filepath.Join(dir, ".spare-1"), filepath.Join(dir, "b"), filepath.Join(dir, "c")
	if _, err := NewWorktree(ctx, r.dir, wt1, "set/a", base); err != nil {
		t.Fatal(err)
	}
	writeIn(t, wt1, "a.txt", "a\n")
	if _, err := CommitAll(ctx, wt1, "a's work"); err != nil {
		t.Fatal(err)
	}
	tipA := Head(ctx, wt1)
	// What a use leaves: an edit, an untracked file, an ignored one.
	writeIn(t, wt1, "notes.txt", "edited\n")
	writeIn(t, wt1, "stray/file.txt", "stray\n")
	writeIn(t, wt1, "build/out.bin", "out\n")

	if err := ParkWorktree(ctx, r.dir, wt1, spare); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt1); !os.IsNotExist(err) {
		t.Errorf("%s is still there after parking: %v", wt1, err)
	}
	if ok, err := DeleteBranch(ctx, r.dir, "set/a", tipA); err != nil || !ok {
		t.Errorf("DeleteBranch(set/a) after parking = %v, %v; want deleted", ok, err)
	}

	r.write("main.txt", "main moved\n")
	newMain := r.commit("main moves on")
	created, err := ReuseWorktree(ctx, r.dir, spare, wt2, "set/b", newMain)
	if err != nil || !created {
		t.Fatalf("ReuseWorktree = %v, %v; want set/b created", created, err)
	}
	fresh := func(wt, branch, head string) {
		t.Helper()
		if err := CheckWorktree(ctx, r.dir, wt, branch); err != nil {
			t.Error(err)
		}
		if got := Head(ctx, wt); got != head {
			t.Errorf("%s: HEAD = %s, want %s", wt, got, head)
		}
		if got := gitIn(t, wt, "status", "--porcelain", "--ignored", "--untracked-files=all"); got != "" {
			t.Errorf("%s holds what its last use left:\n%s", wt, got)
		}
		if got := readIn(t, wt, "main.txt"); got != "main moved\n" {
			t.Errorf("%s: main.txt = %q", wt, got)
		}
	}
	fresh(wt2, "set/b", newMain)
	if _, err := os.Stat(filepath.Join(wt2, "a.txt")); !os.IsNotExist(err) {
		t.Errorf("a.txt, a's work, is in b's worktree: %v", err)
	}
	if _, err := os.Stat(spare); !os.IsNotExist(err) {
		t.Errorf("the spare is still there: %v", err)
	}

	// A branch that exists is taken as it is, base or not.
	writeIn(t, wt2, "b.txt", "b\n")
	if _, err := CommitAll(ctx, wt2, "b's work"); err != nil {
		t.Fatal(err)
	}
	tipB := Head(ctx, wt2)
	if err := ParkWorktree(ctx, r.dir, wt2, spare); err != nil {
		t.Fatal(err)
	}
	if created, err := ReuseWorktree(ctx, r.dir, spare, wt3, "set/b", base); err != nil || created {
		t.Fatalf("ReuseWorktree of an existing branch = %v, %v; want it attached", created, err)
	}
	fresh(wt3, "set/b", tipB)
	list, err := Worktrees(ctx, r.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[1].Path != realPath(t, wt3) || list[1].Branch != "set/b" {
		t.Errorf("Worktrees = %+v, want the root and %s on set/b", list, wt3)
	}
}

// A worktree set aside is gone for git and from its place, its files in
// the trash, none of git's among them.
func TestSetAsideWorktree(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	dir := t.TempDir()
	wt, trash := filepath.Join(dir, "a"), filepath.Join(dir, ".trash-1")
	if _, err := NewWorktree(ctx, r.dir, wt, "set/a", r.git("rev-parse", "HEAD")); err != nil {
		t.Fatal(err)
	}
	writeIn(t, wt, "sub/a.txt", "a\n")
	if err := SetAsideWorktree(ctx, r.dir, wt, trash); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", wt, err)
	}
	if got := readIn(t, trash, "sub/a.txt"); got != "a\n" {
		t.Errorf("trash's sub/a.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(trash, ".git")); !os.IsNotExist(err) {
		t.Errorf("the trash holds .git: %v", err)
	}
	if list, err := Worktrees(ctx, r.dir); err != nil || len(list) != 1 {
		t.Errorf("Worktrees = %+v, %v; want the root alone", list, err)
	}
	// Gone already: nothing to do, and no trash made.
	if err := SetAsideWorktree(ctx, r.dir, wt, filepath.Join(dir, ".trash-2")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".trash-2")); !os.IsNotExist(err) {
		t.Errorf("a trash was made for no worktree: %v", err)
	}
}

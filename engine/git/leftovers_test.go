package git

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// CommitLeftovers commits what is left (concluding a merge whose markers
// are resolved), commits nothing in a clean tree, and never concludes a
// merge over a conflict marker.
func TestCommitLeftovers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("clean", func(t *testing.T) {
		r := newRepo(t)
		head := r.git("rev-parse", "HEAD")
		unresolved, committed, err := CommitLeftovers(ctx, r.dir, "x")
		if err != nil || committed || unresolved != nil {
			t.Errorf("CommitLeftovers = %v, %v, %v; want nothing done", unresolved, committed, err)
		}
		if got := r.git("rev-parse", "HEAD"); got != head {
			t.Errorf("HEAD moved to %s", got)
		}
	})
	t.Run("edits and new files", func(t *testing.T) {
		r := newRepo(t)
		r.write("notes.txt", "edited\n")
		r.write("new/file.txt", "new\n")
		r.git("mv", "README.md", "README.txt")
		if unresolved, committed, err := CommitLeftovers(ctx, r.dir, "leftovers"); err != nil || !committed || unresolved != nil {
			t.Fatalf("CommitLeftovers = %v, %v, %v; want a commit", unresolved, committed, err)
		}
		if got := r.git("status", "--porcelain"); got != "" {
			t.Errorf("left uncommitted:\n%s", got)
		}
		if got := r.git("log", "-1", "--format=%s"); got != "leftovers" {
			t.Errorf("last commit = %q", got)
		}
	})
	// What the agent staged is committed as staged, what it did not is
	// staged with it: a staged deletion, a renamed file edited again, a
	// file deleted but not staged, a path with a space and a glob's stars.
	t.Run("staged and not", func(t *testing.T) {
		r := newRepo(t)
		r.write("gone.txt", "gone\n")
		r.write("unstaged-gone.txt", "x\n")
		r.write("keep.txt", "keep\n")
		r.commit("more files")
		r.git("rm", "-q", "gone.txt")
		r.git("mv", "keep.txt", "kept.txt")
		r.write("kept.txt", "kept, edited\n")
		if err := os.Remove(filepath.Join(r.dir, "unstaged-gone.txt")); err != nil {
			t.Fatal(err)
		}
		r.write("a dir/with *stars*.txt", "odd\n")
		if _, committed, err := CommitLeftovers(ctx, r.dir, "leftovers"); err != nil || !committed {
			t.Fatalf("CommitLeftovers = %v, %v; want a commit", committed, err)
		}
		if got := r.git("status", "--porcelain"); got != "" {
			t.Errorf("left uncommitted:\n%s", got)
		}
		if got, want := r.git("show", "--name-status", "--format=", "HEAD"), "A\ta dir/with *stars*.txt\nD\tgone.txt\nD\tkeep.txt\nA\tkept.txt\nD\tunstaged-gone.txt"; got != want {
			t.Errorf("the commit changed:\n%s\nwant:\n%s", got, want)
		}
	})
	// Only staged changes: committed as they are.
	t.Run("staged only", func(t *testing.T) {
		r := newRepo(t)
		r.write("staged.txt", "s\n")
		r.git("add", "staged.txt")
		if _, committed, err := CommitLeftovers(ctx, r.dir, "leftovers"); err != nil || !committed {
			t.Fatalf("CommitLeftovers = %v, %v; want a commit", committed, err)
		}
		if got := r.git("show", "--name-status", "--format=", "HEAD"); got != "A\tstaged.txt" {
			t.Errorf("the commit changed %q", got)
		}
	})
	t.Run("markers left", func(t *testing.T) {
		r := newRepo(t)
		conflicting(r)
		if _, err := Merge(ctx, r.dir, "side", "merge side"); err != nil {
			t.Fatal(err)
		}
		r.write("other.txt", "more\n")
		unresolved, committed, err := CommitLeftovers(ctx, r.dir, "x")
		if err != nil || committed || !slices.Equal(unresolved, []string{"notes.txt"}) {
			t.Errorf("CommitLeftovers = %v, %v, %v; want notes.txt unresolved, nothing committed", unresolved, committed, err)
		}
		if !InMerge(ctx, r.dir) {
			t.Error("the merge was concluded over a marker")
		}
	})
	for _, tc := range []struct{ name, resolution string }{
		{"markers resolved", "line 1\nmain 2\nside 2\nline 3\n"},
		// The index then equals HEAD: the merge is concluded all the same.
		{"resolved as ours", "line 1\nmain 2\nline 3\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			mainHead, side := conflicting(r)
			if _, err := Merge(ctx, r.dir, "side", "merge side"); err != nil {
				t.Fatal(err)
			}
			r.write("notes.txt", tc.resolution)
			if unresolved, committed, err := CommitLeftovers(ctx, r.dir, "resolve"); err != nil || !committed || unresolved != nil {
				t.Fatalf("CommitLeftovers = %v, %v, %v; want the merge concluded", unresolved, committed, err)
			}
			if got, want := r.git("rev-parse", "HEAD^1", "HEAD^2"), mainHead+"\n"+side; got != want {
				t.Errorf("parents = %q, want %q", got, want)
			}
		})
	}
	t.Run("conflicted file deleted", func(t *testing.T) {
		r := newRepo(t)
		conflicting(r)
		if _, err := Merge(ctx, r.dir, "side", "merge side"); err != nil {
			t.Fatal(err)
		}
		// Still unmerged in the index; gone from the tree.
		if err := os.Remove(filepath.Join(r.dir, "notes.txt")); err != nil {
			t.Fatal(err)
		}
		if unresolved, committed, err := CommitLeftovers(ctx, r.dir, "resolve by deleting"); err != nil || !committed || unresolved != nil {
			t.Fatalf("CommitLeftovers = %v, %v, %v; want the merge concluded", unresolved, committed, err)
		}
	})
}

// CommitNewPaths commits the paths, leaves everything else in the work
// tree uncommitted, and commits nothing when the paths hold no change.
func TestCommitNewPaths(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	r.write("folder/a.md", "a\n")
	r.write("code.go", "package x\n")
	r.write("notes.txt", "edited\n")
	ok, err := CommitNewPaths(ctx, r.dir, "folder", "folder")
	if err != nil || !ok {
		t.Fatalf("CommitNewPaths = %v, %v", ok, err)
	}
	if got := r.git("show", "--name-only", "--format=", "HEAD"); got != "folder/a.md" {
		t.Errorf("committed %q, want folder/a.md only", got)
	}
	if dirty := r.git("status", "--porcelain"); dirty != "M notes.txt\n?? code.go" {
		t.Errorf("after CommitNewPaths, git status: %q", dirty)
	}
	if ok, err := CommitNewPaths(ctx, r.dir, "again", "folder"); err != nil || ok {
		t.Errorf("CommitNewPaths with nothing to commit = %v, %v", ok, err)
	}
}

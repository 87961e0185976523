package git

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// realPath resolves symlinks in a temp dir path, as git reports worktree
// paths.
func realPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestExclude(t *testing.T) {
	ctx := context.Background()
	excludeFile := func(r *repo) string {
		r.t.Helper()
		return r.read(".git/info/exclude")
	}

	t.Run("adds the line once", func(t *testing.T) {
		r := newRepo(t)
		before := excludeFile(r) // git init's template comments
		for range 3 {
			if err := Exclude(ctx, r.dir, "/.set/"); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := excludeFile(r), before+"/.set/\n"; got != want {
			t.Errorf("info/exclude = %q, want %q", got, want)
		}
		r.write(".set/state.json", "{}\n")
		if got := r.git("status", "--porcelain", "--untracked-files=all"); got != "" {
			t.Errorf("git status shows excluded files:\n%s", got)
		}
	})

	t.Run("creates the file and keeps other lines", func(t *testing.T) {
		r := newRepo(t)
		if err := os.RemoveAll(filepath.Join(r.dir, ".git", "info")); err != nil {
			t.Fatal(err)
		}
		if err := Exclude(ctx, r.dir, "/.set/"); err != nil {
			t.Fatal(err)
		}
		if got := excludeFile(r); got != "/.set/\n" {
			t.Errorf("info/exclude = %q, want %q", got, "/.set/\n")
		}

		// A last line without a newline is ended before the new one.
		r.write(".git/info/exclude", "*.log\n  /.set/  \nbuild")
		if err := Exclude(ctx, r.dir, "/.set/"); err != nil {
			t.Fatal(err)
		}
		if err := Exclude(ctx, r.dir, "/tmp/"); err != nil {
			t.Fatal(err)
		}
		if got, want := excludeFile(r), "*.log\n  /.set/  \nbuild\n/tmp/\n"; got != want {
			t.Errorf("info/exclude = %q, want %q", got, want)
		}
	})

	t.Run("from a worktree writes the shared file", func(t *testing.T) {
		r := newRepo(t)
		wt := filepath.Join(t.TempDir(), "wt")
		r.git("worktree", "add", "-q", "-b", "feature", wt)
		before := excludeFile(r)
		if err := Exclude(ctx, wt, "/.set/"); err != nil {
			t.Fatal(err)
		}
		if err := Exclude(ctx, r.dir, "/.set/"); err != nil {
			t.Fatal(err)
		}
		if got, want := excludeFile(r), before+"/.set/\n"; got != want {
			t.Errorf("info/exclude = %q, want %q", got, want)
		}
		if _, err := os.Stat(filepath.Join(wt, ".git", "info")); err == nil {
			t.Error("Exclude wrote into the worktree's .git file's directory")
		}
		writeIn(t, wt, ".set/x", "x\n")
		if got := gitIn(t, wt, "status", "--porcelain", "--untracked-files=all"); got != "" {
			t.Errorf("git status in the worktree shows excluded files:\n%s", got)
		}
	})

	t.Run("from a subdirectory", func(t *testing.T) {
		r := newRepo(t)
		r.write("sub/dir/keep", "")
		before := excludeFile(r)
		if err := Exclude(ctx, filepath.Join(r.dir, "sub", "dir"), "/.set/"); err != nil {
			t.Fatal(err)
		}
		if got, want := excludeFile(r), before+"/.set/\n"; got != want {
			t.Errorf("info/exclude = %q, want %q", got, want)
		}
	})

	t.Run("not a repository", func(t *testing.T) {
		hermetic(t)
		if err := Exclude(ctx, t.TempDir(), "/.set/"); err == nil {
			t.Error("Exclude outside a repository: want an error")
		}
	})
}

func TestAddWorktreeNewBranch(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	base := r.git("rev-parse", "HEAD")
	r.write("later.txt", "later\n")
	r.commit("main moves on")

	wt := filepath.Join(t.TempDir(), "wt")
	if created, err := NewWorktree(ctx, r.dir, wt, "set/feature", base); err != nil || !created {
		t.Fatalf("NewWorktree = %v, %v; want the branch created", created, err)
	}
	if got := Head(ctx, wt); got != base {
		t.Errorf("worktree HEAD = %s, want base %s", got, base)
	}
	if got := CurrentBranch(ctx, wt); got != "set/feature" {
		t.Errorf("worktree branch = %q, want set/feature", got)
	}
	if _, err := os.Stat(filepath.Join(wt, "later.txt")); err == nil {
		t.Error("worktree has a file committed after base")
	}

	list, err := Worktrees(ctx, r.dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Worktree{
		{Path: realPath(t, r.dir), Head: r.git("rev-parse", "main"), Branch: "main"},
		{Path: realPath(t, wt), Head: base, Branch: "set/feature"},
	}
	if diff := cmp.Diff(want, list); diff != "" {
		t.Errorf("Worktrees (-want +got):\n%s", diff)
	}
}

func TestAddWorktreeReattachesAnExistingBranch(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	base := r.git("rev-parse", "HEAD")
	wt := filepath.Join(t.TempDir(), "wt")
	if err := AddWorktree(ctx, r.dir, wt, "set/feature", base); err != nil {
		t.Fatal(err)
	}
	writeIn(t, wt, "work.txt", "work\n")
	if _, err := CommitAll(ctx, wt, "work"); err != nil {
		t.Fatal(err)
	}
	work := Head(ctx, wt)

	// The worktree is lost (a crash); the branch with its commit stays.
	if err := os.RemoveAll(wt); err != nil {
		t.Fatal(err)
	}
	if err := PruneWorktrees(ctx, r.dir); err != nil {
		t.Fatal(err)
	}
	r.write("later.txt", "later\n")
	newMain := r.commit("main moves on")

	// The base is ignored for an existing branch (the run passes "").
	for _, b := range []string{"", newMain} {
		if created, err := NewWorktree(ctx, r.dir, wt, "set/feature", b); err != nil || created {
			t.Fatalf("NewWorktree(base %q) = %v, %v; want the branch attached, not created", b, created, err)
		}
		if got := Head(ctx, wt); got != work {
			t.Errorf("base %q: worktree HEAD = %s, want the branch's %s", b, got, work)
		}
		if got := CurrentBranch(ctx, wt); got != "set/feature" {
			t.Errorf("base %q: worktree branch = %q, want set/feature", b, got)
		}
		if got := readIn(t, wt, "work.txt"); got != "work\n" {
			t.Errorf("base %q: work.txt = %q", b, got)
		}
		if err := RemoveWorktree(ctx, r.dir, wt); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAddWorktreeErrors(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()

	t.Run("branch checked out elsewhere", func(t *testing.T) {
		wt := filepath.Join(t.TempDir(), "wt")
		if err := AddWorktree(ctx, r.dir, wt, "main", ""); err == nil {
			t.Error("AddWorktree of the branch checked out in root: want an error")
		}
	})

	t.Run("unknown base", func(t *testing.T) {
		wt := filepath.Join(t.TempDir(), "wt")
		err := AddWorktree(ctx, r.dir, wt, "set/x", "no-such-rev")
		if err == nil {
			t.Fatal("AddWorktree from an unknown base: want an error")
		}
		gitError(t, err)
		if BranchExists(ctx, r.dir, "set/x") {
			t.Error("a failed AddWorktree left its branch")
		}
	})
}

func TestRemoveWorktree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("with local changes", func(t *testing.T) {
		r := newRepo(t)
		wt := filepath.Join(t.TempDir(), "wt")
		if err := AddWorktree(ctx, r.dir, wt, "set/feature", "main"); err != nil {
			t.Fatal(err)
		}
		writeIn(t, wt, "notes.txt", "edited\n")
		writeIn(t, wt, "untracked.txt", "new\n")
		if err := RemoveWorktree(ctx, r.dir, wt); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(wt); !os.IsNotExist(err) {
			t.Errorf("worktree directory still there: %v", err)
		}
		list, err := Worktrees(ctx, r.dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 {
			t.Errorf("Worktrees = %+v, want only root", list)
		}
		if !BranchExists(ctx, r.dir, "set/feature") {
			t.Error("RemoveWorktree deleted the branch")
		}
	})

	t.Run("missing path is a no-op", func(t *testing.T) {
		r := newRepo(t)
		if err := RemoveWorktree(ctx, r.dir, filepath.Join(t.TempDir(), "never-there")); err != nil {
			t.Errorf("RemoveWorktree of a path never added: %v", err)
		}

		wt := filepath.Join(t.TempDir(), "wt")
		if err := AddWorktree(ctx, r.dir, wt, "set/feature", "main"); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(wt); err != nil {
			t.Fatal(err)
		}
		if err := RemoveWorktree(ctx, r.dir, wt); err != nil {
			t.Errorf("RemoveWorktree of a deleted worktree: %v", err)
		}
		// The registration is left for PruneWorktrees.
		list, err := Worktrees(ctx, r.dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 {
			t.Fatalf("Worktrees = %+v, want root and the stale worktree", list)
		}
		if err := PruneWorktrees(ctx, r.dir); err != nil {
			t.Fatal(err)
		}
		list, err = Worktrees(ctx, r.dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 {
			t.Errorf("Worktrees after prune = %+v, want only root", list)
		}
	})

	t.Run("a directory that is no worktree is an error", func(t *testing.T) {
		r := newRepo(t)
		if err := RemoveWorktree(ctx, r.dir, t.TempDir()); err == nil {
			t.Error("RemoveWorktree of a plain directory: want an error")
		}
	})
}

func TestWorktreesDetached(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	head := r.git("rev-parse", "HEAD")
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", "--detach", wt, head)
	list, err := Worktrees(ctx, r.dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Worktree{
		{Path: realPath(t, r.dir), Head: head, Branch: "main"},
		{Path: realPath(t, wt), Head: head},
	}
	if diff := cmp.Diff(want, list); diff != "" {
		t.Errorf("Worktrees (-want +got):\n%s", diff)
	}
}

func TestMergeClean(t *testing.T) {
	ctx := context.Background()

	t.Run("merge commit with the message", func(t *testing.T) {
		r := newRepo(t)
		r.git("checkout", "-q", "-b", "side")
		r.write("side.txt", "side\n")
		side := r.commit("side")
		r.git("checkout", "-q", "main")
		r.write("main.txt", "main\n")
		mainHead := r.commit("main")

		res, err := Merge(ctx, r.dir, "side", "Merge side into main")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(MergeResult{Clean: true}, res); diff != "" {
			t.Errorf("result (-want +got):\n%s", diff)
		}
		if got, want := r.git("rev-parse", "HEAD^1", "HEAD^2"), mainHead+"\n"+side; got != want {
			t.Errorf("parents = %q, want %q", got, want)
		}
		if got := r.git("log", "-1", "--format=%s"); got != "Merge side into main" {
			t.Errorf("message = %q", got)
		}
		if InMerge(ctx, r.dir) {
			t.Error("InMerge after a clean merge")
		}
		if got := r.read("side.txt"); got != "side\n" {
			t.Errorf("side.txt = %q", got)
		}
	})

	t.Run("already up to date", func(t *testing.T) {
		r := newRepo(t)
		before := r.git("rev-parse", "HEAD")
		r.git("branch", "same")
		res, err := Merge(ctx, r.dir, "same", "nothing")
		if err != nil {
			t.Fatal(err)
		}
		if !res.Clean || len(res.Conflicts) != 0 {
			t.Errorf("result = %+v, want clean", res)
		}
		if got := r.git("rev-parse", "HEAD"); got != before {
			t.Errorf("HEAD moved to %s", got)
		}
	})

	t.Run("identity fallback", func(t *testing.T) {
		r := newRepo(t)
		r.git("checkout", "-q", "-b", "side")
		r.write("side.txt", "side\n")
		r.commit("side")
		r.git("checkout", "-q", "main")
		r.write("main.txt", "main\n")
		r.commit("main")
		noIdentity(t)
		r.git("config", "user.useConfigOnly", "true")
		if _, err := Merge(ctx, r.dir, "side", "merge"); err != nil {
			t.Fatal(err)
		}
		if got := r.git("log", "-1", "--format=%an <%ae>"); got != "set <set@localhost>" {
			t.Errorf("merge author = %q, want set <set@localhost>", got)
		}
	})
}

func TestMergeConflict(t *testing.T) {
	ctx := context.Background()
	hermetic(t) // a global config of its own, which it writes
	r := newRepo(t)
	// The user's own taste in markers must not leak into set's merges.
	r.git("config", "--global", "merge.conflictStyle", "diff3")
	r.write("other.txt", "base\n")
	r.commit("other")
	conflicting(r)
	r.git("checkout", "-q", "side")
	r.write("other.txt", "side\n")
	r.commit("side other")
	r.git("checkout", "-q", "main")
	r.write("other.txt", "main\n")
	r.commit("main other")
	r.write("clean.txt", "untouched by the merge\n")
	mainHead := r.commit("clean")

	res, err := Merge(ctx, r.dir, "side", "merge side")
	if err != nil {
		t.Fatal(err)
	}
	want := MergeResult{Conflicts: []string{"notes.txt", "other.txt"}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if !InMerge(ctx, r.dir) {
		t.Error("merge not left in progress")
	}
	wantNotes := "line 1\n<<<<<<< HEAD\nmain 2\n=======\nside 2\n>>>>>>> side\nline 3\n"
	if got := r.read("notes.txt"); got != wantNotes {
		t.Errorf("notes.txt (plain markers, no |||||||):\ngot:\n%s\nwant:\n%s", got, wantNotes)
	}
	conflicts, err := Conflicts(ctx, r.dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Conflicts, conflicts); diff != "" {
		t.Errorf("Conflicts (-want +got):\n%s", diff)
	}

	if err := AbortMerge(ctx, r.dir); err != nil {
		t.Fatal(err)
	}
	if InMerge(ctx, r.dir) {
		t.Error("merge in progress after AbortMerge")
	}
	if got := r.git("rev-parse", "HEAD"); got != mainHead {
		t.Errorf("HEAD = %s after abort, want %s", got, mainHead)
	}
	if got := r.read("notes.txt"); got != "line 1\nmain 2\nline 3\n" {
		t.Errorf("notes.txt after abort = %q", got)
	}
	if got := r.git("status", "--porcelain"); got != "" {
		t.Errorf("status after abort:\n%s", got)
	}
	if conflicts, err := Conflicts(ctx, r.dir); err != nil || conflicts != nil {
		t.Errorf("Conflicts after abort = %q, %v; want none", conflicts, err)
	}
}

func TestMergeErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("unknown rev", func(t *testing.T) {
		r := newRepo(t)
		res, err := Merge(ctx, r.dir, "no-such-rev", "x")
		if err == nil {
			t.Fatalf("Merge = %+v, want an error", res)
		}
		gitError(t, err)
		if InMerge(ctx, r.dir) {
			t.Error("InMerge after a failed merge")
		}
	})

	t.Run("local changes would be overwritten", func(t *testing.T) {
		r := newRepo(t)
		r.git("checkout", "-q", "-b", "side")
		r.write("notes.txt", "side\n")
		r.commit("side")
		r.git("checkout", "-q", "main")
		r.write("main.txt", "main\n")
		r.commit("main")
		r.write("notes.txt", "local edit\n")

		res, err := Merge(ctx, r.dir, "side", "x")
		if err == nil {
			t.Fatalf("Merge = %+v, want an error", res)
		}
		if !strings.Contains(err.Error(), "overwritten") {
			t.Errorf("error = %v, want git's \"would be overwritten\"", err)
		}
		if got := r.read("notes.txt"); got != "local edit\n" {
			t.Errorf("notes.txt = %q, want the local edit", got)
		}
	})

	t.Run("abort without a merge", func(t *testing.T) {
		r := newRepo(t)
		if err := AbortMerge(ctx, r.dir); err == nil {
			t.Error("AbortMerge with no merge: want an error")
		}
	})
}

// ffRepo is a repository whose main is at old, with next a commit that
// descends from old (on branch "next") and side one that does not.
type ffRepo struct {
	*repo
	old, next, side string
	// record is where FastForward records a move of main's checkout.
	record string
}

func newFFRepo(t *testing.T) *ffRepo {
	t.Helper()
	r := &ffRepo{repo: newRepo(t), record: filepath.Join(t.TempDir(), "fast-forward.json")}
	first := r.git("rev-parse", "HEAD")
	r.write("notes.txt", "line 1\nline 2 on main\nline 3\n")
	r.old = r.commit("main")
	r.git("checkout", "-q", "-b", "next")
	r.write("notes.txt", "line 1\nline 2 from next\nline 3\n")
	r.write("next.txt", "next\n")
	r.next = r.commit("next")
	r.git("checkout", "-q", "-b", "side", first)
	r.write("side.txt", "side\n")
	r.side = r.commit("side")
	r.git("checkout", "-q", "main")
	return r
}

// checkNoRecord checks that no record of a move is left behind.
func (r *ffRepo) checkNoRecord() {
	r.t.Helper()
	if _, err := os.Stat(r.record); !os.IsNotExist(err) {
		r.t.Errorf("the record of the move is left: %v", err)
	}
}

// detach leaves root on a detached HEAD at main, so main is no branch
// checked out in root.
func (r *ffRepo) detach() {
	r.t.Helper()
	r.git("checkout", "-q", "--detach", "main")
}

func TestFastForward(t *testing.T) {
	// Each subtest has a repository of its own and runs in parallel with
	// the others, but for the identity fallback's, which changes the
	// process's environment (noIdentity): it runs alone, before them.
	ctx := context.Background()

	for _, checkedOut := range []bool{true, false} {
		name := "ref only"
		if checkedOut {
			name = "checked out"
		}

		t.Run(name+"/refuses a commit that does not descend from old", func(t *testing.T) {
			t.Parallel()
			r := newFFRepo(t)
			if !checkedOut {
				r.detach()
			}
			err := FastForward(ctx, r.dir, "main", r.old, r.side, r.record)
			want := "refusing to move main: " + r.side[:12] + " does not descend from " + r.old[:12]
			if err == nil || err.Error() != want {
				t.Errorf("error = %v, want %q", err, want)
			}
			if got := r.git("rev-parse", "main"); got != r.old {
				t.Errorf("main = %s, want unchanged %s", got, r.old)
			}
		})

		t.Run(name+"/refuses when the branch moved", func(t *testing.T) {
			t.Parallel()
			r := newFFRepo(t)
			// main moves to next behind the caller's back; next's child
			// still descends from the old the caller saw.
			r.git("update-ref", "refs/heads/main", r.next)
			if checkedOut {
				r.git("reset", "-q", "--hard", r.next)
			} else {
				r.detach()
			}
			r.git("checkout", "-q", "-b", "child", r.next)
			r.write("child.txt", "child\n")
			child := r.commit("child")
			if checkedOut {
				r.git("checkout", "-q", "main")
			} else {
				r.detach()
			}

			err := FastForward(ctx, r.dir, "main", r.old, child, r.record)
			if err == nil {
				t.Fatal("FastForward with a stale old: want an error")
			}
			if checkedOut {
				want := "refusing to move main: it is at " + r.next[:12] + ", expected " + r.old[:12]
				if err.Error() != want {
					t.Errorf("error = %q, want %q", err, want)
				}
			} else {
				gitError(t, err) // update-ref's compare-and-swap failed
			}
			if got := r.git("rev-parse", "main"); got != r.next {
				t.Errorf("main = %s, want unchanged %s", got, r.next)
			}
		})

		t.Run(name+"/unknown old is an error", func(t *testing.T) {
			t.Parallel()
			r := newFFRepo(t)
			if !checkedOut {
				r.detach()
			}
			if err := FastForward(ctx, r.dir, "main", "no-such-rev", r.next, r.record); err == nil {
				t.Error("FastForward from an unknown old: want an error")
			}
			if got := r.git("rev-parse", "main"); got != r.old {
				t.Errorf("main = %s, want unchanged %s", got, r.old)
			}
		})

		t.Run(name+"/to old itself", func(t *testing.T) {
			t.Parallel()
			r := newFFRepo(t)
			if !checkedOut {
				r.detach()
			}
			if err := FastForward(ctx, r.dir, "main", r.old, r.old, r.record); err != nil {
				t.Fatal(err)
			}
			if got := r.git("rev-parse", "main"); got != r.old {
				t.Errorf("main = %s, want %s", got, r.old)
			}
		})
	}

	t.Run("moves the ref when main is not checked out in root", func(t *testing.T) {
		t.Parallel()
		r := newFFRepo(t)
		r.git("checkout", "-q", "side") // root on another branch
		r.write("untracked.txt", "mine\n")
		if err := FastForward(ctx, r.dir, "main", r.old, r.next, r.record); err != nil {
			t.Fatal(err)
		}
		if got := r.git("rev-parse", "main"); got != r.next {
			t.Errorf("main = %s, want %s", got, r.next)
		}
		if got := r.git("reflog", "-1", "--format=%gs", "main"); got != "set: fast-forward" {
			t.Errorf("reflog message = %q", got)
		}
		// root's own checkout is untouched.
		if got := CurrentBranch(ctx, r.dir); got != "side" {
			t.Errorf("root branch = %q, want side", got)
		}
		if got := r.git("rev-parse", "HEAD"); got != r.side {
			t.Errorf("root HEAD = %s, want %s", got, r.side)
		}
		if _, err := os.Stat(filepath.Join(r.dir, "next.txt")); err == nil {
			t.Error("next.txt appeared in root's checkout of side")
		}
		if got := r.git("status", "--porcelain"); got != "?? untracked.txt" {
			t.Errorf("status = %q", got)
		}
		r.checkNoRecord()
	})

	t.Run("updates the files when main is checked out in root", func(t *testing.T) {
		t.Parallel()
		r := newFFRepo(t)
		r.write("untracked.txt", "mine\n")
		if err := FastForward(ctx, r.dir, "main", r.old, r.next, r.record); err != nil {
			t.Fatal(err)
		}
		if got := r.git("rev-parse", "main", "HEAD"); got != r.next+"\n"+r.next {
			t.Errorf("main, HEAD = %q, want %s twice", got, r.next)
		}
		if got := CurrentBranch(ctx, r.dir); got != "main" {
			t.Errorf("root branch = %q, want main", got)
		}
		if got := r.read("notes.txt"); got != "line 1\nline 2 from next\nline 3\n" {
			t.Errorf("notes.txt = %q", got)
		}
		if got := r.read("next.txt"); got != "next\n" {
			t.Errorf("next.txt = %q", got)
		}
		dirty, err := Dirty(ctx, r.dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(dirty) != 0 {
			t.Errorf("Dirty after fast-forward = %q", dirty)
		}
		if got := r.read("untracked.txt"); got != "mine\n" {
			t.Errorf("untracked.txt = %q", got)
		}
		r.checkNoRecord()
	})

	t.Run("refuses to overwrite local edits in root", func(t *testing.T) {
		t.Parallel()
		r := newFFRepo(t)
		r.write("notes.txt", "local edit\n")
		err := FastForward(ctx, r.dir, "main", r.old, r.next, r.record)
		if err == nil {
			t.Fatal("FastForward over a local edit: want an error")
		}
		gitError(t, err)
		if got := r.git("rev-parse", "main"); got != r.old {
			t.Errorf("main = %s, want unchanged %s", got, r.old)
		}
		if got := r.read("notes.txt"); got != "local edit\n" {
			t.Errorf("notes.txt = %q, want the local edit", got)
		}
		r.checkNoRecord() // git refused before it wrote anything
	})

	t.Run("refuses to overwrite an untracked file in root", func(t *testing.T) {
		t.Parallel()
		r := newFFRepo(t)
		r.write("next.txt", "mine\n")
		if err := FastForward(ctx, r.dir, "main", r.old, r.next, r.record); err == nil {
			t.Fatal("FastForward over an untracked file: want an error")
		}
		if got := r.git("rev-parse", "main"); got != r.old {
			t.Errorf("main = %s, want unchanged %s", got, r.old)
		}
		if got := r.read("next.txt"); got != "mine\n" {
			t.Errorf("next.txt = %q, want the user's file", got)
		}
		r.checkNoRecord()
	})

	t.Run("identity fallback in root", func(t *testing.T) {
		// merge --ff-only makes no commit, but must not fail for want of
		// an identity either.
		r := newFFRepo(t)
		noIdentity(t)
		r.git("config", "user.useConfigOnly", "true")
		if err := FastForward(ctx, r.dir, "main", r.old, r.next, r.record); err != nil {
			t.Fatal(err)
		}
		if got := r.git("rev-parse", "main"); got != r.next {
			t.Errorf("main = %s, want %s", got, r.next)
		}
	})
}

func TestFastForwardKeepsLinearHistory(t *testing.T) {
	t.Parallel()
	// Several fast-forwards in a row leave main's first-parent history as
	// the sequence of commits it was moved to.
	r := newFFRepo(t)
	ctx := context.Background()
	r.detach()
	old := r.old
	var moved []string
	for i := range 3 {
		tree := r.git("rev-parse", r.next+"^{tree}")
		c, err := CommitTree(ctx, r.dir, tree, old, "step "+string(rune('a'+i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := FastForward(ctx, r.dir, "main", old, c, r.record); err != nil {
			t.Fatal(err)
		}
		moved = append(moved, c)
		old = c
	}
	got := strings.Split(r.git("rev-list", "--first-parent", r.old+"..main"), "\n")
	slices.Reverse(got)
	if diff := cmp.Diff(moved, got); diff != "" {
		t.Errorf("main's history since old (-want +got):\n%s", diff)
	}
}

// TestCheckWorktree builds each directory that is not a change's worktree
// and checks that CheckWorktree names why.
func TestCheckWorktree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	r.write(".gitignore", "/.set/\n")
	r.commit("ignore .set")
	add := func(name, branch string) string {
		t.Helper()
		dir := filepath.Join(r.dir, ".set", "worktrees", name)
		if err := AddWorktree(ctx, r.dir, dir, branch, "main"); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	good := add("good", "set/good")
	if err := CheckWorktree(ctx, r.dir, good, "set/good"); err != nil {
		t.Fatalf("the change's own worktree: %v", err)
	}
	// The ordinary layout is proved from git's own files, with no git.
	if !worktreeByFiles(ctx, r.dir, good, "set/good") {
		t.Error("worktreeByFiles = false for the change's own worktree")
	}
	if worktreeByFiles(ctx, r.dir, good, "set/other") {
		t.Error("worktreeByFiles = true for another branch")
	}
	if worktreeByFiles(ctx, r.dir, r.dir, "main") {
		t.Error("worktreeByFiles = true for the main checkout")
	}
	// Through a symbolic link to the repository, as a temp dir may be.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(r.dir, link); err != nil {
		t.Fatal(err)
	}
	if err := CheckWorktree(ctx, link, filepath.Join(link, ".set", "worktrees", "good"), "set/good"); err != nil {
		t.Fatalf("the worktree through a symbolic link: %v", err)
	}

	// A worktree whose .git file is gone: git there acts on root's main.
	gutted := add("gutted", "set/gutted")
	if err := os.Remove(filepath.Join(gutted, ".git")); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(r.dir, ".set", "worktrees", "plain")
	writeIn(t, plain, "file.txt", "not a worktree\n")
	other := add("other", "set/other")
	detached := add("detached", "set/detached")
	gitIn(t, detached, "checkout", "-q", "--detach")
	separate := filepath.Join(r.dir, ".set", "worktrees", "separate")
	writeIn(t, separate, "file.txt", "a repository of its own\n")
	gitIn(t, separate, "init", "-q", "-b", "set/separate")
	gitIn(t, separate, "add", "-A")
	gitIn(t, separate, "commit", "-q", "-m", "own")
	// A worktree's .git file pointed at the repository's own git dir.
	hijacked := add("hijacked", "set/hijacked")
	writeIn(t, hijacked, ".git", "gitdir: "+filepath.Join(r.dir, ".git")+"\n")
	outside := filepath.Join(t.TempDir(), "outside")
	writeIn(t, outside, "file.txt", "outside any repository\n")

	top := realPath(t, r.dir)
	for _, tc := range []struct {
		name, dir, branch, reason string
	}{
		{"gutted worktree", gutted, "set/gutted", "it lies inside the checkout at " + top},
		{"plain directory", plain, "set/plain", "it lies inside the checkout at " + top},
		{"the repository itself", r.dir, "main", "it is the repository's main checkout, not a linked worktree"},
		{"another branch", other, "set/good", "it is on set/other"},
		{"detached", detached, "set/detached", "its HEAD is detached"},
		{"separate repository", separate, "set/separate", "it is a repository of its own, not a worktree of " + r.dir},
		{"hijacked .git file", hijacked, "set/hijacked", "it is the repository's main checkout, not a linked worktree"},
		{"missing", filepath.Join(r.dir, ".set", "worktrees", "missing"), "set/missing", "no such directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckWorktree(ctx, r.dir, tc.dir, tc.branch)
			var nw *NotWorktreeError
			if !errors.As(err, &nw) {
				t.Fatalf("CheckWorktree = %v, want a *NotWorktreeError", err)
			}
			want := tc.dir + " is not the worktree of branch " + tc.branch + " (" + tc.reason + "); setctl runs no git command there"
			if err.Error() != want {
				t.Errorf("error:\n got %s\nwant %s", err, want)
			}
		})
	}
	t.Run("outside any repository", func(t *testing.T) {
		var nw *NotWorktreeError
		if err := CheckWorktree(ctx, r.dir, outside, "set/x"); !errors.As(err, &nw) || !strings.Contains(err.Error(), "not a git repository") {
			t.Fatalf("CheckWorktree = %v, want a *NotWorktreeError saying git found no repository", err)
		}
	})
}

package git

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/internal/gittest"
	"github.com/set-engine/set/internal/testpar"
)

// repo is a real git repository in a temp dir. Git reads no system config
// and the empty global config TestMain gives the process, which no test
// writes: a test that runs `git config --global` calls hermetic first and
// does not run in parallel. Author and committer come from the
// environment unless a test clears them.
type repo struct {
	t   *testing.T
	dir string
}

// TestMain makes git hermetic for the whole process (gittest.Main), so
// that the tests that set no environment of their own run in parallel,
// twice GOMAXPROCS at once (testpar.Double): most of their time is spent
// waiting for git.
func TestMain(m *testing.M) {
	flag.Parse()
	testpar.Double()
	gittest.Main(m, "")
}

// hermetic points git at an empty global config of the test's own, no
// system config, and a fixed identity. It returns the global config path.
func hermetic(t *testing.T) string {
	t.Helper()
	return gittest.Hermetic(t, "")
}

// newEmptyRepo is `git init -b main` with no commit.
func newEmptyRepo(t *testing.T) *repo {
	t.Helper()
	r := &repo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	return r
}

// newRepo is a repository on main with one commit of README.md and
// notes.txt.
func newRepo(t *testing.T) *repo {
	t.Helper()
	r := newEmptyRepo(t)
	r.write("README.md", "# repo\n")
	r.write("notes.txt", "line 1\nline 2\nline 3\n")
	r.commit("initial")
	return r
}

// git runs git in the repository and fails the test on an error.
func (r *repo) git(args ...string) string {
	r.t.Helper()
	return gitIn(r.t, r.dir, args...)
}

// gitIn runs git in dir and fails the test on an error.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *repo) write(name, content string) {
	r.t.Helper()
	writeIn(r.t, r.dir, name, content)
}

func writeIn(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (r *repo) read(name string) string {
	r.t.Helper()
	return readIn(r.t, r.dir, name)
}

func readIn(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// commit stages everything and commits it, returning the new HEAD.
func (r *repo) commit(msg string) string {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

// gitError is err as a *Error, failing the test when it is not one.
func gitError(t *testing.T, err error) *Error {
	t.Helper()
	var ge *Error
	if !errors.As(err, &ge) {
		t.Fatalf("error %v (%T) is not a *git.Error", err, err)
	}
	return ge
}

func TestRunTrimsOutput(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	got, err := Run(context.Background(), r.dir, "log", "-1", "--format=%n  %s  %n")
	if err != nil {
		t.Fatal(err)
	}
	if got != "initial" {
		t.Errorf("Run = %q, want %q", got, "initial")
	}
}

func TestRunError(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()

	t.Run("exit code and stderr", func(t *testing.T) {
		_, err := Run(ctx, r.dir, "rev-parse", "--verify", "no-such-rev")
		ge := gitError(t, err)
		want := &Error{
			Args:     []string{"rev-parse", "--verify", "no-such-rev"},
			ExitCode: 128,
			Stderr:   "fatal: Needed a single revision",
		}
		if diff := cmp.Diff(want, ge); diff != "" {
			t.Errorf("error (-want +got):\n%s", diff)
		}
		if got, want := err.Error(), "git rev-parse --verify no-such-rev: fatal: Needed a single revision"; got != want {
			t.Errorf("Error() = %q, want %q", got, want)
		}
	})

	t.Run("silent failure names the exit status", func(t *testing.T) {
		_, err := Run(ctx, r.dir, "rev-parse", "--verify", "-q", "no-such-rev")
		ge := gitError(t, err)
		if ge.ExitCode != 1 || ge.Stderr != "" {
			t.Errorf("error = %#v, want exit code 1 and no stderr", ge)
		}
		if got, want := err.Error(), "git rev-parse --verify -q no-such-rev: exit status 1"; got != want {
			t.Errorf("Error() = %q, want %q", got, want)
		}
	})

	t.Run("missing directory", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "missing")
		_, err := Run(ctx, missing, "status")
		ge := gitError(t, err)
		if ge.ExitCode != 128 || !strings.Contains(ge.Stderr, "cannot change to") {
			t.Errorf("error = %#v, want exit code 128 and \"cannot change to\" in stderr", ge)
		}
	})

	t.Run("keeps the output of a failed command", func(t *testing.T) {
		// `git merge-base --is-ancestor` prints nothing; `git ls-files
		// --error-unmatch` prints the matched paths before failing.
		out, err := Run(ctx, r.dir, "ls-files", "--error-unmatch", "README.md", "nope.txt")
		gitError(t, err)
		if out != "README.md" {
			t.Errorf("output = %q, want %q", out, "README.md")
		}
	})
}

func TestHeadAndRevParseOnEmptyRepo(t *testing.T) {
	t.Parallel()
	r := newEmptyRepo(t)
	ctx := context.Background()
	if got := Head(ctx, r.dir); got != "" {
		t.Errorf("Head = %q, want \"\"", got)
	}
	got, err := RevParse(ctx, r.dir, "HEAD")
	if err == nil {
		t.Fatalf("RevParse(HEAD) = %q, want an error", got)
	}
	if ge := gitError(t, err); ge.ExitCode != 1 {
		t.Errorf("exit code = %d, want 1", ge.ExitCode)
	}
	if BranchExists(ctx, r.dir, "main") {
		t.Error("BranchExists(main) = true on an unborn branch")
	}
	if got := CurrentBranch(ctx, r.dir); got != "main" {
		t.Errorf("CurrentBranch = %q, want main (unborn)", got)
	}
}

func TestHeadOutsideARepository(t *testing.T) {
	hermetic(t)
	ctx := context.Background()
	if got := Head(ctx, t.TempDir()); got != "" {
		t.Errorf("Head of a plain directory = %q, want \"\"", got)
	}
	if got := Head(ctx, filepath.Join(t.TempDir(), "missing")); got != "" {
		t.Errorf("Head of a missing directory = %q, want \"\"", got)
	}
}

func TestHeadAndRevParse(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	first := r.git("rev-parse", "HEAD")
	r.write("a.txt", "a\n")
	second := r.commit("second")
	r.git("tag", "-a", "-m", "annotated", "v1", first)

	if got := Head(ctx, r.dir); got != second {
		t.Errorf("Head = %q, want %q", got, second)
	}
	for _, tc := range []struct{ rev, want string }{
		{"HEAD", second},
		{"main", second},
		{"HEAD~1", first},
		{"v1", first}, // an annotated tag peels to its commit
	} {
		got, err := RevParse(ctx, r.dir, tc.rev)
		if err != nil {
			t.Errorf("RevParse(%s): %v", tc.rev, err)
			continue
		}
		if got != tc.want {
			t.Errorf("RevParse(%s) = %s, want %s", tc.rev, got, tc.want)
		}
	}
	// A tree is not a commit.
	if got, err := RevParse(ctx, r.dir, "HEAD^{tree}"); err == nil {
		t.Errorf("RevParse(HEAD^{tree}) = %q, want an error", got)
	}
}

// BranchHead resolves the branch and nothing else: a tag of the same name,
// which `git rev-parse main` would prefer, does not win; a missing branch
// is a *NoBranchError listing the branches there are.
func TestBranchHead(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	first := r.git("rev-parse", "HEAD")
	r.write("a.txt", "a\n")
	second := r.commit("second")
	r.git("tag", "main", first)
	r.git("branch", "feature/x", first)
	if got, err := BranchHead(ctx, r.dir, "main"); err != nil || got != second {
		t.Errorf("BranchHead(main) = %q, %v; want %s, the branch's commit, not the tag's", got, err, second)
	}
	_, err := BranchHead(ctx, r.dir, "develop")
	var nb *NoBranchError
	if !errors.As(err, &nb) || nb.Branch != "develop" || !slices.Equal(nb.Branches, []string{"feature/x", "main"}) {
		t.Fatalf("BranchHead(develop) = %v, want a *NoBranchError listing feature/x and main", err)
	}
	if want := "the repository has no branch develop (its branches: feature/x, main)"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}

	empty := newEmptyRepo(t)
	_, err = BranchHead(ctx, empty.dir, "main")
	if !errors.As(err, &nb) || len(nb.Branches) != 0 || err.Error() != "the repository has no branch main (no commit yet)" {
		t.Errorf("BranchHead in a repository with no commit = %v", err)
	}
	if _, err := BranchHead(ctx, t.TempDir(), "main"); err == nil || errors.As(err, &nb) {
		t.Errorf("BranchHead outside a repository = %v, want git's error", err)
	}
}

func TestBranchExistsAndCurrentBranch(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	r.git("branch", "feature")
	if !BranchExists(ctx, r.dir, "feature") {
		t.Error("BranchExists(feature) = false")
	}
	if BranchExists(ctx, r.dir, "nope") {
		t.Error("BranchExists(nope) = true")
	}
	// A tag of the same name is not a branch.
	r.git("tag", "v1")
	if BranchExists(ctx, r.dir, "v1") {
		t.Error("BranchExists(v1) = true for a tag")
	}
	if got := CurrentBranch(ctx, r.dir); got != "main" {
		t.Errorf("CurrentBranch = %q, want main", got)
	}
	r.git("checkout", "-q", "--detach")
	if got := CurrentBranch(ctx, r.dir); got != "" {
		t.Errorf("CurrentBranch on a detached HEAD = %q, want \"\"", got)
	}
}

func TestBranchesAndRepository(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newEmptyRepo(t)
	if !InRepository(ctx, r.dir) {
		t.Error("InRepository = false in a new repository")
	}
	if b, err := Branches(ctx, r.dir); err != nil || len(b) != 0 {
		t.Errorf("Branches before the first commit = %v, %v", b, err)
	}
	r.write("README.md", "# repo\n")
	r.commit("initial")
	r.git("branch", "feature/x")
	r.git("tag", "v1")
	if b, err := Branches(ctx, r.dir); err != nil || !slices.Equal(b, []string{"feature/x", "main"}) {
		t.Errorf("Branches = %v, %v", b, err)
	}
	outside := t.TempDir()
	if InRepository(ctx, outside) {
		t.Error("InRepository = true outside a repository")
	}
	if _, err := Branches(ctx, outside); err == nil {
		t.Error("Branches outside a repository did not fail")
	}
}

func TestRemoteHead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	origin := newEmptyRepo(t)
	origin.git("checkout", "-q", "-b", "trunk")
	origin.write("README.md", "# repo\n")
	origin.commit("initial")
	if got := RemoteHead(ctx, origin.dir, "origin"); got != "" {
		t.Errorf("RemoteHead without a remote = %q", got)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", origin.dir, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	if got := RemoteHead(ctx, clone, "origin"); got != "trunk" {
		t.Errorf("RemoteHead of a clone = %q, want trunk", got)
	}
}

func TestConfigValue(t *testing.T) {
	ctx := context.Background()
	hermetic(t) // a global config of its own, which it writes
	r := newEmptyRepo(t)
	if got := ConfigValue(ctx, t.TempDir(), "init.defaultBranch"); got != "" {
		t.Errorf("ConfigValue of an unset key = %q", got)
	}
	r.git("config", "--global", "init.defaultBranch", "trunk")
	if got := ConfigValue(ctx, t.TempDir(), "init.defaultBranch"); got != "trunk" {
		t.Errorf("ConfigValue outside a repository = %q, want trunk", got)
	}
}

func TestDeleteBranch(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	r.git("branch", "set/a")
	tip := r.git("rev-parse", "set/a")

	// Only at the expected tip.
	r.git("commit", "-q", "--allow-empty", "-m", "moves main")
	other := r.git("rev-parse", "main")
	if ok, err := DeleteBranch(ctx, r.dir, "set/a", other); ok || err == nil {
		t.Errorf("DeleteBranch at a stale tip = %v, %v; want an error", ok, err)
	}
	if !BranchExists(ctx, r.dir, "set/a") {
		t.Fatal("a failed compare-and-swap deleted the branch")
	}

	// Never under a checkout.
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", wt, "set/a")
	if ok, err := DeleteBranch(ctx, r.dir, "set/a", tip); ok || err != nil {
		t.Errorf("DeleteBranch of a checked-out branch = %v, %v; want false, nil", ok, err)
	}
	if !BranchExists(ctx, r.dir, "set/a") {
		t.Fatal("a checked-out branch was deleted")
	}
	r.git("worktree", "remove", wt)

	r.git("reflog", "exists", "refs/heads/set/a")
	if ok, err := DeleteBranch(ctx, r.dir, "set/a", tip); !ok || err != nil {
		t.Fatalf("DeleteBranch = %v, %v", ok, err)
	}
	if BranchExists(ctx, r.dir, "set/a") {
		t.Error("the branch is still there")
	}
	if _, err := Run(ctx, r.dir, "reflog", "exists", "refs/heads/set/a"); err == nil {
		t.Error("the branch's reflog is still there")
	}
}

func TestIsAncestor(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	first := r.git("rev-parse", "HEAD")
	r.write("a.txt", "a\n")
	second := r.commit("second")
	r.git("checkout", "-q", "-b", "side", first)
	r.write("b.txt", "b\n")
	side := r.commit("side")

	tests := []struct {
		name string
		a, b string
		want bool
	}{
		{"parent of child", first, second, true},
		{"child of parent", second, first, false},
		{"itself", second, second, true},
		{"sibling", side, second, false},
		{"by branch name", "main", "side", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := IsAncestor(ctx, r.dir, tc.a, tc.b)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("IsAncestor = %v, want %v", got, tc.want)
			}
		})
	}

	t.Run("unknown commit is an error", func(t *testing.T) {
		got, err := IsAncestor(ctx, r.dir, "no-such-rev", second)
		if err == nil {
			t.Fatalf("IsAncestor = %v, want an error", got)
		}
		if ge := gitError(t, err); ge.ExitCode == 1 {
			t.Errorf("exit code 1 would read as \"not an ancestor\": %v", ge)
		}
		if got {
			t.Error("IsAncestor = true with an error")
		}
	})
}

func TestMergeBase(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	first := r.git("rev-parse", "HEAD")
	r.write("a.txt", "a\n")
	r.commit("main work")
	r.git("checkout", "-q", "-b", "side", first)
	r.write("b.txt", "b\n")
	r.commit("side work")

	got, err := MergeBase(ctx, r.dir, "main", "side")
	if err != nil {
		t.Fatal(err)
	}
	if got != first {
		t.Errorf("MergeBase = %s, want %s", got, first)
	}
	if _, err := MergeBase(ctx, r.dir, "main", "no-such-rev"); err == nil {
		t.Error("MergeBase with an unknown rev: want an error")
	}
}

func TestCountCommits(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	base := r.git("rev-parse", "HEAD")
	r.write("a.txt", "a\n")
	r.commit("one")
	r.write("b.txt", "b\n")
	head := r.commit("two")

	for _, tc := range []struct {
		base, head string
		want       int
	}{
		{base, head, 2},
		{head, base, 0},
		{head, head, 0},
		{"main~1", "main", 1},
	} {
		got, err := CountCommits(ctx, r.dir, tc.base, tc.head)
		if err != nil {
			t.Errorf("CountCommits(%s, %s): %v", tc.base, tc.head, err)
			continue
		}
		if got != tc.want {
			t.Errorf("CountCommits(%s, %s) = %d, want %d", tc.base, tc.head, got, tc.want)
		}
	}
	if got, err := CountCommits(ctx, r.dir, "no-such-rev", head); err == nil {
		t.Errorf("CountCommits with an unknown base = %d, want an error", got)
	}
}

func TestDirty(t *testing.T) {
	ctx := context.Background()

	t.Run("clean", func(t *testing.T) {
		r := newRepo(t)
		got, err := Dirty(ctx, r.dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 0 {
			t.Errorf("Dirty = %q, want none", got)
		}
	})

	t.Run("untracked files are not listed", func(t *testing.T) {
		r := newRepo(t)
		r.write("new.txt", "new\n")
		r.write("dir/also-new.txt", "new\n")
		got, err := Dirty(ctx, r.dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 0 {
			t.Errorf("Dirty = %q, want none", got)
		}
	})

	t.Run("modified, deleted and staged tracked files", func(t *testing.T) {
		r := newRepo(t)
		r.write("dir/with space.txt", "x\n")
		r.write("gone.txt", "x\n")
		r.commit("more files")

		r.write("notes.txt", "changed\n")          // modified, unstaged
		r.write("dir/with space.txt", "changed\n") // modified, name with a space
		if err := os.Remove(filepath.Join(r.dir, "gone.txt")); err != nil {
			t.Fatal(err)
		}
		r.write("staged.txt", "new\n") // new, staged: tracked from now on
		r.git("add", "staged.txt")
		r.write("README.md", "staged edit\n")
		r.git("add", "README.md")
		r.write("untracked.txt", "x\n")

		got, err := Dirty(ctx, r.dir)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		want := []string{"README.md", "dir/with space.txt", "gone.txt", "notes.txt", "staged.txt"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Dirty (-want +got):\n%s", diff)
		}
	})

	t.Run("not a repository", func(t *testing.T) {
		hermetic(t)
		if got, err := Dirty(ctx, t.TempDir()); err == nil {
			t.Errorf("Dirty = %q, want an error", got)
		}
	})
}

func TestCommitAll(t *testing.T) {
	ctx := context.Background()

	t.Run("nothing to commit", func(t *testing.T) {
		r := newRepo(t)
		before := r.git("rev-parse", "HEAD")
		ok, err := CommitAll(ctx, r.dir, "nothing")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			t.Error("CommitAll = true with nothing to commit")
		}
		if after := r.git("rev-parse", "HEAD"); after != before {
			t.Errorf("HEAD moved from %s to %s", before, after)
		}
	})

	t.Run("commits every change, untracked files included", func(t *testing.T) {
		r := newRepo(t)
		before := r.git("rev-parse", "HEAD")
		r.write("notes.txt", "changed\n")
		r.write("dir/new.txt", "new\n")
		if err := os.Remove(filepath.Join(r.dir, "README.md")); err != nil {
			t.Fatal(err)
		}
		ok, err := CommitAll(ctx, r.dir, "all of it\n\nbody")
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Fatal("CommitAll = false with changes")
		}
		if got := r.git("rev-parse", "HEAD^"); got != before {
			t.Errorf("parent = %s, want %s", got, before)
		}
		if got := r.git("log", "-1", "--format=%B"); got != "all of it\n\nbody" {
			t.Errorf("message = %q", got)
		}
		if got := r.git("status", "--porcelain"); got != "" {
			t.Errorf("status after CommitAll:\n%s", got)
		}
		if got := r.git("ls-tree", "-r", "--name-only", "HEAD"); got != "dir/new.txt\nnotes.txt" {
			t.Errorf("tree = %q", got)
		}
	})

	t.Run("skips hooks", func(t *testing.T) {
		r := newRepo(t)
		hook := filepath.Join(r.dir, ".git", "hooks", "pre-commit")
		if err := os.WriteFile(hook, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		r.write("a.txt", "a\n")
		if ok, err := CommitAll(ctx, r.dir, "hooked"); err != nil || !ok {
			t.Errorf("CommitAll = %v, %v; want true, nil", ok, err)
		}
	})

	t.Run("not a repository", func(t *testing.T) {
		hermetic(t)
		if _, err := CommitAll(ctx, t.TempDir(), "x"); err == nil {
			t.Error("CommitAll outside a repository: want an error")
		}
	})
}

// conflicting makes main and branch "side" change line 2 of notes.txt
// differently and checks out main; it returns main's and side's commits.
func conflicting(r *repo) (mainHead, side string) {
	r.t.Helper()
	r.git("checkout", "-q", "-b", "side")
	r.write("notes.txt", "line 1\nside 2\nline 3\n")
	side = r.commit("side edit")
	r.git("checkout", "-q", "main")
	r.write("notes.txt", "line 1\nmain 2\nline 3\n")
	mainHead = r.commit("main edit")
	return mainHead, side
}

func TestCommitAllConcludesAMerge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		resolution string
	}{
		{"resolved with both sides", "line 1\nmain 2\nside 2\nline 3\n"},
		// The index then equals HEAD: CommitAll must commit all the same,
		// or the merge would stay in progress.
		{"resolved as ours", "line 1\nmain 2\nline 3\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			mainHead, side := conflicting(r)
			res, err := Merge(ctx, r.dir, "side", "merge side")
			if err != nil {
				t.Fatal(err)
			}
			if res.Clean {
				t.Fatal("merge was clean, want a conflict")
			}
			r.write("notes.txt", tc.resolution)
			ok, err := CommitAll(ctx, r.dir, "resolve")
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				t.Error("CommitAll = false during a merge")
			}
			if InMerge(ctx, r.dir) {
				t.Error("merge still in progress after CommitAll")
			}
			if got, want := r.git("rev-parse", "HEAD^1", "HEAD^2"), mainHead+"\n"+side; got != want {
				t.Errorf("parents = %q, want %q", got, want)
			}
			if got := r.read("notes.txt"); got != tc.resolution {
				t.Errorf("notes.txt = %q, want %q", got, tc.resolution)
			}
		})
	}
}

func TestInMerge(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	if InMerge(ctx, r.dir) {
		t.Error("InMerge = true before any merge")
	}
	conflicting(r)
	if _, err := Merge(ctx, r.dir, "side", "merge side"); err != nil {
		t.Fatal(err)
	}
	if !InMerge(ctx, r.dir) {
		t.Error("InMerge = false with a conflicted merge in progress")
	}
	if err := AbortMerge(ctx, r.dir); err != nil {
		t.Fatal(err)
	}
	if InMerge(ctx, r.dir) {
		t.Error("InMerge = true after AbortMerge")
	}
}

// noIdentity clears every source of a committer identity but the repo's
// config: the environment and the (empty) global config.
func noIdentity(t *testing.T) {
	t.Helper()
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"} {
		t.Setenv(k, "") // restored after the test
		os.Unsetenv(k)
	}
}

func TestIdentityFallback(t *testing.T) {
	ctx := context.Background()

	t.Run("no user.email: set's own identity", func(t *testing.T) {
		r := newRepo(t)
		noIdentity(t)
		// Without the fallback git refuses to commit; make sure it would.
		r.git("config", "user.useConfigOnly", "true")

		r.write("a.txt", "a\n")
		ok, err := CommitAll(ctx, r.dir, "by set")
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Fatal("CommitAll = false")
		}
		if got := r.git("log", "-1", "--format=%an <%ae>|%cn <%ce>"); got != "set <set@localhost>|set <set@localhost>" {
			t.Errorf("author|committer = %q, want set <set@localhost> for both", got)
		}

		tree := r.git("rev-parse", "HEAD^{tree}")
		c, err := CommitTree(ctx, r.dir, tree, "HEAD", "tree by set")
		if err != nil {
			t.Fatal(err)
		}
		if got := r.git("log", "-1", "--format=%an <%ae>", c); got != "set <set@localhost>" {
			t.Errorf("CommitTree author = %q, want set <set@localhost>", got)
		}
		// The fallback is passed per command: the repository's config is
		// left alone.
		if out, err := Run(ctx, r.dir, "config", "user.email"); err == nil {
			t.Errorf("user.email = %q was written to the config", out)
		}
	})

	t.Run("configured user.email wins", func(t *testing.T) {
		hermetic(t) // a global config of its own, which it writes
		r := newRepo(t)
		noIdentity(t)
		r.git("config", "--global", "user.name", "Ada")
		r.git("config", "--global", "user.email", "ada@example.com")
		if got := identity(ctx, r.dir); got != nil {
			t.Errorf("identity = %q, want none", got)
		}
		r.write("a.txt", "a\n")
		if _, err := CommitAll(ctx, r.dir, "by ada"); err != nil {
			t.Fatal(err)
		}
		if got := r.git("log", "-1", "--format=%an <%ae>"); got != "Ada <ada@example.com>" {
			t.Errorf("author = %q, want Ada <ada@example.com>", got)
		}
	})

	t.Run("WithIdentity resolves it once", func(t *testing.T) {
		hermetic(t) // a global config of its own, which it writes
		r := newRepo(t)
		noIdentity(t)
		r.git("config", "user.useConfigOnly", "true")
		runCtx := WithIdentity(ctx, r.dir)
		// Configured after the run resolved it: the run's commits keep
		// the identity it resolved, and so ask git no more.
		r.git("config", "--global", "user.name", "Ada")
		r.git("config", "--global", "user.email", "ada@example.com")
		r.write("a.txt", "a\n")
		if _, err := CommitAll(runCtx, r.dir, "by set"); err != nil {
			t.Fatal(err)
		}
		if got := r.git("log", "-1", "--format=%an <%ae>"); got != "set <set@localhost>" {
			t.Errorf("author = %q, want the identity resolved at the start, set <set@localhost>", got)
		}
		if got := identity(ctx, r.dir); got != nil {
			t.Errorf("identity without WithIdentity = %q, want none (Ada's)", got)
		}
	})
}

func TestCommitTree(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	parent := r.git("rev-parse", "HEAD")
	r.git("checkout", "-q", "-b", "work")
	r.write("a.txt", "a\n")
	r.commit("work 1")
	r.write("b.txt", "b\n")
	work := r.commit("work 2")
	tree := r.git("rev-parse", work+"^{tree}")
	status := r.git("status", "--porcelain")

	c, err := CommitTree(ctx, r.dir, tree, parent, "squashed\n\nSet-Change: work\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.git("rev-list", "--parents", "-1", c); got != c+" "+parent {
		t.Errorf("commit and parents = %q, want %q", got, c+" "+parent)
	}
	if got := r.git("rev-parse", c+"^{tree}"); got != tree {
		t.Errorf("tree = %s, want %s", got, tree)
	}
	if got := r.git("log", "-1", "--format=%B", c); got != "squashed\n\nSet-Change: work" {
		t.Errorf("message = %q", got)
	}
	// No ref and no checkout moved.
	if got := r.git("rev-parse", "main", "work"); got != parent+"\n"+work {
		t.Errorf("main, work = %q, want %q", got, parent+"\n"+work)
	}
	if got := r.git("status", "--porcelain"); got != status {
		t.Errorf("status changed to %q", got)
	}

	if _, err := CommitTree(ctx, r.dir, "no-such-tree", parent, "x"); err == nil {
		t.Error("CommitTree of an unknown tree: want an error")
	}
}

// trailerCommit commits the tree of main onto main with msg (as merge's
// squash commits are made) and moves main there.
func (r *repo) trailerCommit(msg string) string {
	r.t.Helper()
	r.write("n-"+r.git("rev-parse", "HEAD")+".txt", "") // a distinct tree
	r.git("add", "-A")
	tree := r.git("write-tree")
	c := r.git("commit-tree", tree, "-p", "HEAD", "-m", msg)
	r.git("reset", "-q", "--hard", c)
	return c
}

func TestFindTrailer(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	initial := r.git("rev-parse", "HEAD")
	alpha := r.trailerCommit("alpha: first\n\nSet-Change: alpha")
	archive := r.trailerCommit("Archive alpha\n\nSet-Archive: alpha")
	base := r.git("rev-parse", "HEAD")
	beta := r.trailerCommit("beta: second\n\n- REQ-1: x\n\nSet-Change: beta")
	alpha2 := r.trailerCommit("alpha again\n\nSet-Change: alpha")

	// gamma is only on the second parent of a merge into main.
	r.git("checkout", "-q", "-b", "side", initial)
	r.trailerCommit("gamma\n\nSet-Change: gamma")
	r.git("checkout", "-q", "main")
	r.git("merge", "-q", "--no-ff", "--no-edit", "side")

	tests := []struct {
		name, rev, key, value, want string
	}{
		{"newest of two", "main", "Set-Change", "alpha", alpha2},
		{"older rev", alpha2 + "~1", "Set-Change", "alpha", alpha},
		{"other key", "main", "Set-Archive", "alpha", archive},
		{"one change", "main", "Set-Change", "beta", beta},
		{"absent", "main", "Set-Change", "delta", ""},
		{"not on first-parent history", "main", "Set-Change", "gamma", ""},
		{"inside range", base + "..main", "Set-Change", "beta", beta},
		{"before range", base + "..main", "Set-Archive", "alpha", ""},
		{"range starts after", beta + "..main", "Set-Change", "beta", ""},
		{"value is not a regexp", "main", "Set-Change", "alph.", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FindTrailer(ctx, r.dir, tc.rev, tc.key, tc.value)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("FindTrailer(%s, %s: %s) = %q, want %q", tc.rev, tc.key, tc.value, got, tc.want)
			}
		})
	}

	t.Run("unknown rev is an error", func(t *testing.T) {
		if got, err := FindTrailer(ctx, r.dir, "no-such-rev", "Set-Change", "alpha"); err == nil {
			t.Errorf("FindTrailer = %q, want an error", got)
		}
	})
}

func TestShort(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                  "",
		"abc":               "abc",
		"0123456789ab":      "0123456789ab",
		"0123456789abcdef0": "0123456789ab",
	} {
		if got := short(in); got != want {
			t.Errorf("short(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFindTrailerMatchesTheWholeValue(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.trailerCommit("api-v2: second\n\nSet-Change: api-v2")
	got, err := FindTrailer(context.Background(), r.dir, "main", "Set-Change", "api")
	if err != nil {
		t.Fatal(err)
	}
	if got != "" {
		t.Errorf("FindTrailer(Set-Change: api) = %s, the commit of api-v2; want \"\"", got)
	}
}

func TestDirtyStagedRename(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.git("mv", "notes.txt", "renamed.txt")
	got, _ := Dirty(context.Background(), r.dir)
	slices.Sort(got)
	if want := []string{"notes.txt", "renamed.txt"}; !slices.Equal(got, want) {
		t.Errorf("Dirty = %q, want %q", got, want)
	}
}

// TestNoHookRuns plants, in the repository's shared hooks directory, every
// hook that set's commits, merges, ref moves and worktree operations would
// run, each leaving a marker file; none may run.
func TestNoHookRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	marker := filepath.Join(t.TempDir(), "hook-ran")
	hooks := filepath.Join(r.dir, ".git", "hooks")
	for _, name := range []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit",
		"pre-merge-commit", "post-merge", "post-checkout", "reference-transaction", "post-rewrite"} {
		writeIn(t, hooks, name, "#!/bin/sh\necho "+name+" >> '"+marker+"'\n")
		if err := os.Chmod(filepath.Join(hooks, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The hooks work: plain git runs them.
	gitIn(t, r.dir, "commit", "-q", "--allow-empty", "-m", "plain git")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the planted hooks did not run under plain git: %v", err)
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}

	wt := filepath.Join(t.TempDir(), "wt")
	if err := AddWorktree(ctx, r.dir, wt, "set/hooks", "main"); err != nil {
		t.Fatal(err)
	}
	writeIn(t, wt, "new.txt", "new\n")
	if _, err := CommitAll(ctx, wt, "commit in the worktree"); err != nil {
		t.Fatal(err)
	}
	r.write("main.txt", "main\n")
	if _, err := CommitAll(ctx, r.dir, "main moves"); err != nil {
		t.Fatal(err)
	}
	if res, err := Merge(ctx, wt, "main", "merge main"); err != nil || !res.Clean {
		t.Fatalf("Merge = %+v, %v; want a clean merge", res, err)
	}
	tip := Head(ctx, wt)
	if err := Clean(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if err := RemoveWorktree(ctx, r.dir, wt); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, r.dir, "checkout", "-q", "--detach"); err != nil {
		t.Fatal(err)
	}
	if err := FastForward(ctx, r.dir, "main", Head(ctx, r.dir), tip, filepath.Join(t.TempDir(), "fast-forward.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := DeleteBranch(ctx, r.dir, "set/hooks", tip); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(marker); err == nil {
		t.Fatalf("set's git commands ran hooks:\n%s", data)
	}
}

// TestNoAutoMaintenance: plain git commit starts `git maintenance run
// --auto` (seen in its trace2 events); set's commits start none, so no
// maintenance process outlives set or holds objects/maintenance.lock.
func TestNoAutoMaintenance(t *testing.T) {
	r := newRepo(t)
	trace := filepath.Join(t.TempDir(), "trace")
	t.Setenv("GIT_TRACE2_EVENT", trace)
	maintenance := func() bool {
		data, _ := os.ReadFile(trace)
		return strings.Contains(string(data), `"maintenance","run","--auto"`)
	}
	gitIn(t, r.dir, "commit", "-q", "--allow-empty", "-m", "plain git")
	if !maintenance() {
		t.Skip("this git starts no automatic maintenance after a commit")
	}
	if err := os.Remove(trace); err != nil {
		t.Fatal(err)
	}
	r.write("main.txt", "main\n")
	if _, err := CommitAll(context.Background(), r.dir, "set's commit"); err != nil {
		t.Fatal(err)
	}
	if maintenance() {
		t.Errorf("set's commit started git maintenance:\n%s", trace)
	}
}

func TestCommitMessage(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.write("a.txt", "a\n")
	c := r.commit("subject\n\nbody\n\nSet-Change: work")
	got, err := CommitMessage(context.Background(), r.dir, c)
	if err != nil || got != "subject\n\nbody\n\nSet-Change: work" {
		t.Errorf("CommitMessage = %q, %v", got, err)
	}
}

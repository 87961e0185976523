package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"

	"github.com/set-engine/set/internal/gittest"
)

func hermeticGit(t *testing.T) {
	gittest.Hermetic(t, "")
}

func TestCheckMainBranch(t *testing.T) {
	hermeticGit(t)
	ctx := context.Background()
	check := func(dir, branch string) (string, string) {
		status, d := checkMainBranch(ctx, &workspace{root: dir, cfg: &config.Project{MainBranch: branch}})
		return status, d.Text(dir)
	}
	expect := func(what, status, msg, wantStatus, wantMsg string) {
		t.Helper()
		if status != wantStatus || !strings.Contains(msg, wantMsg) {
			t.Errorf("%s: %s %q, want %s with %q", what, status, msg, wantStatus, wantMsg)
		}
	}

	dir := t.TempDir()
	status, msg := check(dir, "main")
	expect("not a repository", status, msg, statusWarn, "not in a git repository yet; setctl apply needs one with a commit on main (git init -b main, then commit)")

	gitIn(t, dir, "init", "-q", "-b", "main")
	status, msg = check(dir, "main")
	expect("no commit, on main", status, msg, statusWarn, "the repository has no commit yet; setctl apply branches from main, so commit first")
	status, msg = check(dir, "develop")
	expect("no commit, on another branch", status, msg, statusFail, `project.mainBranch: branch "develop" does not exist: the repository has no commit yet and is on main; set mainBranch: "main" in set.cue`)

	gitIn(t, dir, "commit", "-q", "--allow-empty", "-m", "first")
	status, msg = check(dir, "main")
	expect("main exists", status, msg, statusOK, "main at ")

	// On a feature branch, the suggestion is the branch a main branch
	// usually is, not the one checked out; set's own branches are not listed.
	gitIn(t, dir, "branch", "-m", "main", "master")
	gitIn(t, dir, "branch", "set/greet")
	gitIn(t, dir, "checkout", "-q", "-b", "feature")
	status, msg = check(dir, "main")
	expect("main missing", status, msg, statusFail, `project.mainBranch: branch "main" does not exist in this repository (its branches: feature, master); set mainBranch: "master" in set.cue`)
}

// The likely main branch is origin's default branch, git's
// init.defaultBranch, main or master when the repository has one; the
// branch checked out only when it has none of them.
func TestLikelyMainBranch(t *testing.T) {
	hermeticGit(t)
	ctx := context.Background()
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "feature/x")
	gitIn(t, dir, "commit", "-q", "--allow-empty", "-m", "first")
	if b, why := likelyMainBranch(ctx, dir); b != "feature/x" || why != "the current branch" {
		t.Errorf("with only feature/x: %q (%s)", b, why)
	}
	gitIn(t, dir, "branch", "main")
	if b, why := likelyMainBranch(ctx, dir); b != "main" || why != "the current branch is feature/x" {
		t.Errorf("on feature/x with main: %q (%s)", b, why)
	}
	if b, src := defaultBranch(ctx, dir); b != "main" {
		t.Errorf("init on feature/x with main: mainBranch %q (%s), want main", b, src)
	}
	gitIn(t, dir, "branch", "trunk")
	gitIn(t, dir, "config", "--global", "init.defaultBranch", "trunk")
	if b, why := likelyMainBranch(ctx, dir); b != "trunk" || why != "git's init.defaultBranch" {
		t.Errorf("with init.defaultBranch trunk: %q (%s)", b, why)
	}
	// setctl's own branches are never a main branch.
	other := t.TempDir()
	gitIn(t, other, "init", "-q", "-b", "set/greet")
	gitIn(t, other, "commit", "-q", "--allow-empty", "-m", "first")
	gitIn(t, other, "branch", "develop")
	if b, why := likelyMainBranch(ctx, other); b != "develop" || why != "the only branch that is not setctl's own" {
		t.Errorf("on set/greet with develop: %q (%s)", b, why)
	}
}

func TestDefaultBranch(t *testing.T) {
	hermeticGit(t)
	ctx := context.Background()
	dir := t.TempDir()
	if b, src := defaultBranch(ctx, filepath.Join(dir, "new", "project")); b != "main" || src != "not a git repository yet" {
		t.Errorf("outside a repository: %q (%s)", b, src)
	}
	gitIn(t, dir, "config", "--global", "init.defaultBranch", "trunk")
	if b, src := defaultBranch(ctx, dir); b != "trunk" || src != "git's init.defaultBranch; not a git repository yet" {
		t.Errorf("outside a repository with init.defaultBranch: %q (%s)", b, src)
	}

	origin := filepath.Join(dir, "origin")
	gitIn(t, dir, "init", "-q", "-b", "develop", origin)
	if b, src := defaultBranch(ctx, origin); b != "develop" || src != "the current branch" {
		t.Errorf("before the first commit: %q (%s)", b, src)
	}
	gitIn(t, origin, "commit", "-q", "--allow-empty", "-m", "first")
	clone := filepath.Join(dir, "clone")
	gitIn(t, dir, "clone", "-q", origin, clone)
	gitIn(t, clone, "checkout", "-q", "-b", "feature")
	if b, src := defaultBranch(ctx, filepath.Join(clone, "services", "new")); b != "develop" || src != "origin's default branch" {
		t.Errorf("in a clone on a feature branch: %q (%s)", b, src)
	}
}

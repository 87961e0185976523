package git

import (
	"context"
	"path/filepath"
	"testing"
)

// The likely main branch is origin's default branch, git's
// init.defaultBranch, main or master when the repository has one; the
// branch checked out only when it has none of them.
func TestLikelyMainBranch(t *testing.T) {
	hermetic(t)
	ctx := context.Background()
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "feature/x")
	gitIn(t, dir, "commit", "-q", "--allow-empty", "-m", "first")
	if b, why := LikelyMainBranch(ctx, dir); b != "feature/x" || why != "the current branch" {
		t.Errorf("with only feature/x: %q (%s)", b, why)
	}
	gitIn(t, dir, "branch", "main")
	if b, why := LikelyMainBranch(ctx, dir); b != "main" || why != "the current branch is feature/x" {
		t.Errorf("on feature/x with main: %q (%s)", b, why)
	}
	if b, src := DefaultBranch(ctx, dir); b != "main" {
		t.Errorf("init on feature/x with main: mainBranch %q (%s), want main", b, src)
	}
	gitIn(t, dir, "branch", "trunk")
	gitIn(t, dir, "config", "--global", "init.defaultBranch", "trunk")
	if b, why := LikelyMainBranch(ctx, dir); b != "trunk" || why != "git's init.defaultBranch" {
		t.Errorf("with init.defaultBranch trunk: %q (%s)", b, why)
	}
	// setctl's own branches are never a main branch.
	other := t.TempDir()
	gitIn(t, other, "init", "-q", "-b", "set/greet")
	gitIn(t, other, "commit", "-q", "--allow-empty", "-m", "first")
	gitIn(t, other, "branch", "develop")
	if b, why := LikelyMainBranch(ctx, other); b != "develop" || why != "the only branch that is not setctl's own" {
		t.Errorf("on set/greet with develop: %q (%s)", b, why)
	}
}

func TestDefaultBranch(t *testing.T) {
	hermetic(t)
	ctx := context.Background()
	dir := t.TempDir()
	if b, src := DefaultBranch(ctx, dir); b != "main" || src != "not a git repository yet" {
		t.Errorf("outside a repository: %q (%s)", b, src)
	}
	gitIn(t, dir, "config", "--global", "init.defaultBranch", "trunk")
	if b, src := DefaultBranch(ctx, dir); b != "trunk" || src != "git's init.defaultBranch; not a git repository yet" {
		t.Errorf("outside a repository with init.defaultBranch: %q (%s)", b, src)
	}

	origin := filepath.Join(dir, "origin")
	gitIn(t, dir, "init", "-q", "-b", "develop", origin)
	if b, src := DefaultBranch(ctx, origin); b != "develop" || src != "the current branch" {
		t.Errorf("before the first commit: %q (%s)", b, src)
	}
	gitIn(t, origin, "commit", "-q", "--allow-empty", "-m", "first")
	clone := filepath.Join(dir, "clone")
	gitIn(t, dir, "clone", "-q", origin, clone)
	gitIn(t, clone, "checkout", "-q", "-b", "feature")
	if b, src := DefaultBranch(ctx, clone); b != "develop" || src != "origin's default branch" {
		t.Errorf("in a clone on a feature branch: %q (%s)", b, src)
	}
}

package git

import (
	"context"
	"slices"
)

// DefaultBranch is the branch a new project at dir (an existing
// directory) should name its main branch, and where it comes from: in a
// git repository, LikelyMainBranch; outside one, git's
// init.defaultBranch (what `git init` will create), else "main".
func DefaultBranch(ctx context.Context, dir string) (branch, source string) {
	if !InRepository(ctx, dir) {
		if b := ConfigValue(ctx, dir, "init.defaultBranch"); b != "" {
			return b, "git's init.defaultBranch; not a git repository yet"
		}
		return "main", "not a git repository yet"
	}
	if b, why := LikelyMainBranch(ctx, dir); b != "" {
		return b, why
	}
	return "main", "HEAD is detached and the repository has no branch yet"
}

// LikelyMainBranch is the branch of the repository at dir that its main
// branch most likely is, and why. In order: the branch origin's HEAD names
// (a clone's default branch), git's init.defaultBranch, main and master,
// whichever the repository has; only when it has none of them, the branch
// checked out (even one with no commit yet); else, on a detached HEAD,
// its first branch. setctl's own set/ branches never count. "" when the
// repository has no branch at all.
func LikelyMainBranch(ctx context.Context, dir string) (branch, why string) {
	current := CurrentBranch(ctx, dir)
	if IsChangeBranch(current) {
		current = ""
	}
	because := func(b, source string) (string, string) {
		switch {
		case b == current:
			return b, "the current branch"
		case source != "":
			return b, source
		case current != "":
			return b, "the current branch is " + current
		}
		return b, "HEAD is detached"
	}
	for _, c := range []struct{ branch, source string }{
		{RemoteHead(ctx, dir, "origin"), "origin's default branch"},
		{ConfigValue(ctx, dir, "init.defaultBranch"), "git's init.defaultBranch"},
		{"main", ""},
		{"master", ""},
	} {
		if c.branch != "" && !IsChangeBranch(c.branch) && BranchExists(ctx, dir, c.branch) {
			return because(c.branch, c.source)
		}
	}
	if current != "" {
		return current, "the current branch"
	}
	all, _ := Branches(ctx, dir)
	others := slices.DeleteFunc(all, IsChangeBranch)
	switch len(others) {
	case 0:
		return "", ""
	case 1:
		return others[0], "the only branch that is not setctl's own"
	}
	return others[0], "the first of the repository's branches; none is checked out"
}

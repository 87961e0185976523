package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/git"
)

// defaultBranch is the branch a new project's mainBranch names, and where
// it comes from: the branch origin's HEAD names when it exists locally (a
// clone's default branch), else the branch checked out, even one with no
// commit yet; outside a git repository, git's init.defaultBranch (what
// `git init` will create), else "main".
func defaultBranch(ctx context.Context, dir string) (branch, source string) {
	dir = existingDir(dir)
	if !git.InRepository(ctx, dir) {
		if b := git.ConfigValue(ctx, dir, "init.defaultBranch"); b != "" {
			return b, "git's init.defaultBranch; not a git repository yet"
		}
		return "main", "not a git repository yet"
	}
	if b := git.RemoteHead(ctx, dir, "origin"); b != "" && git.BranchExists(ctx, dir, b) {
		return b, "origin's default branch"
	}
	if b := git.CurrentBranch(ctx, dir); b != "" {
		return b, "the current branch"
	}
	for _, b := range []string{"main", "master"} {
		if git.BranchExists(ctx, dir, b) {
			return b, "HEAD is detached; the repository has this branch"
		}
	}
	return "main", "HEAD is detached"
}

// existingDir is dir or its nearest existing ancestor, for asking git
// about a directory init is about to create.
func existingDir(dir string) string {
	for {
		if info, err := os.Stat(dir); err == nil && info.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}

// Verdicts of a check.
const (
	statusOK   = "ok"
	statusWarn = "warn"
	statusFail = "fail"
)

// checkMainBranch checks the project's main branch against its
// repository, since setctl apply branches every change from it and
// fast-forwards it. The verdict is ok when the branch exists; warn when
// the directory is not a git repository yet, or the repository has no
// commit yet and is on that branch (both are fixed by committing);
// fail when the repository has other branches than the configured one.
// A failing message names the position of mainBranch and the fix.
func checkMainBranch(ctx context.Context, ws *workspace) (status, msg string) {
	branch := ws.cfg.MainBranch
	where := ws.cfg.Pos("mainBranch") + ": project.mainBranch: "
	if !git.InRepository(ctx, ws.root) {
		return statusWarn, fmt.Sprintf("the project is not in a git repository yet; setctl apply needs one with a commit on %s (git init -b %s, then commit)", branch, branch)
	}
	if head, err := git.RevParse(ctx, ws.root, "refs/heads/"+branch); err == nil {
		return statusOK, fmt.Sprintf("%s at %.7s", branch, head)
	}
	all, err := git.Branches(ctx, ws.root)
	if err != nil {
		return statusFail, where + err.Error()
	}
	if len(all) == 0 {
		current := git.CurrentBranch(ctx, ws.root)
		if current == branch || current == "" {
			return statusWarn, fmt.Sprintf("the repository has no commit yet; setctl apply branches from %s, so commit first", branch)
		}
		return statusFail, fmt.Sprintf("%sbranch %q does not exist: the repository has no commit yet and is on %s; set mainBranch: %q in set.cue", where, branch, current, current)
	}
	// set/<change> branches are setctl apply's own, never a main branch.
	var branches []string
	for _, b := range all {
		if !strings.HasPrefix(b, "set/") {
			branches = append(branches, b)
		}
	}
	if len(branches) == 0 {
		return statusFail, fmt.Sprintf("%sbranch %q does not exist in this repository, which has only setctl's own set/ branches", where, branch)
	}
	// The suggestion is the branch a main branch usually is.
	fix := branches[0]
	for _, b := range []string{git.RemoteHead(ctx, ws.root, "origin"), "main", "master", git.CurrentBranch(ctx, ws.root)} {
		if b != "" && slices.Contains(branches, b) {
			fix = b
			break
		}
	}
	listed := branches
	if len(listed) > 10 {
		listed = append(slices.Clone(listed[:10]), fmt.Sprintf("… %d more", len(branches)-10))
	}
	return statusFail, fmt.Sprintf("%sbranch %q does not exist in this repository (its branches: %s); set mainBranch: %q in set.cue",
		where, branch, strings.Join(listed, ", "), fix)
}

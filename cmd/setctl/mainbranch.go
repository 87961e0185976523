package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/load"
)

// defaultBranch is the branch a new project's mainBranch names, and where
// it comes from: in a git repository, likelyMainBranch; outside one, git's
// init.defaultBranch (what `git init` will create), else "main".
func defaultBranch(ctx context.Context, dir string) (branch, source string) {
	dir = existingDir(dir)
	if !git.InRepository(ctx, dir) {
		if b := git.ConfigValue(ctx, dir, "init.defaultBranch"); b != "" {
			return b, "git's init.defaultBranch; not a git repository yet"
		}
		return "main", "not a git repository yet"
	}
	if b, why := likelyMainBranch(ctx, dir); b != "" {
		return b, why
	}
	return "main", "HEAD is detached and the repository has no branch yet"
}

// likelyMainBranch is the branch of the repository at dir that its main
// branch most likely is, and why. In order: the branch origin's HEAD names
// (a clone's default branch), git's init.defaultBranch, main and master,
// whichever the repository has; only when it has none of them, the branch
// checked out (even one with no commit yet); else, on a detached HEAD,
// its first branch. setctl's own set/ branches never count. "" when the
// repository has no branch at all.
func likelyMainBranch(ctx context.Context, dir string) (branch, why string) {
	current := git.CurrentBranch(ctx, dir)
	if git.IsChangeBranch(current) {
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
		{git.RemoteHead(ctx, dir, "origin"), "origin's default branch"},
		{git.ConfigValue(ctx, dir, "init.defaultBranch"), "git's init.defaultBranch"},
		{"main", ""},
		{"master", ""},
	} {
		if c.branch != "" && !git.IsChangeBranch(c.branch) && git.BranchExists(ctx, dir, c.branch) {
			return because(c.branch, c.source)
		}
	}
	if current != "" {
		return current, "the current branch"
	}
	all, _ := git.Branches(ctx, dir)
	others := slices.DeleteFunc(all, git.IsChangeBranch)
	switch len(others) {
	case 0:
		return "", ""
	case 1:
		return others[0], "the only branch that is not setctl's own"
	}
	return others[0], "the first of the repository's branches; none is checked out"
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
// The verdict comes with a diagnostic saying it: a warning for warn, an
// error at set.cue's mainBranch for fail (see noBranchError), and for ok
// one whose summary names the branch's commit.
func checkMainBranch(ctx context.Context, ws *workspace) (status string, d diag.Diagnostic) {
	branch := ws.cfg.MainBranch
	warn := func(format string, args ...any) (string, diag.Diagnostic) {
		return statusWarn, diag.Diagnostic{Severity: diag.Warning, Summary: fmt.Sprintf(format, args...)}
	}
	if !git.InRepository(ctx, ws.root) {
		return warn("the project is not in a git repository yet; setctl apply needs one with a commit on %s (git init -b %s, then commit)", branch, branch)
	}
	head, err := git.BranchHead(ctx, ws.root, branch)
	var nb *git.NoBranchError
	switch {
	case err == nil:
		return statusOK, diag.Diagnostic{Summary: fmt.Sprintf("%s at %.7s", branch, head)}
	case !errors.As(err, &nb):
		return statusFail, load.Diagnostics(ws.cfg.FieldError([]string{"mainBranch"}, "%v", err))[0]
	case len(nb.Branches) == 0:
		if current := git.CurrentBranch(ctx, ws.root); current == branch || current == "" {
			return warn("the repository has no commit yet; setctl apply branches from %s, so commit first", branch)
		}
	}
	return statusFail, load.Diagnostics(noBranchError(ctx, ws, nb))[0]
}

// noBranchError words a repository without the project's main branch as
// an error at set.cue's mainBranch, with the branch to name there
// instead. checkMainBranch and a run that finds the branch gone both
// report it so.
func noBranchError(ctx context.Context, ws *workspace, nb *git.NoBranchError) *config.FieldError {
	at := []string{"mainBranch"}
	if len(nb.Branches) == 0 {
		current := git.CurrentBranch(ctx, ws.root)
		return ws.cfg.FieldError(at, "branch %q does not exist: the repository has no commit yet and is on %s; set mainBranch: %q in set.cue", nb.Branch, current, current)
	}
	// set/<change> branches are setctl apply's own, never a main branch.
	branches := slices.DeleteFunc(slices.Clone(nb.Branches), git.IsChangeBranch)
	if len(branches) == 0 {
		return ws.cfg.FieldError(at, "branch %q does not exist in this repository, which has only setctl's own set/ branches", nb.Branch)
	}
	fix, _ := likelyMainBranch(ctx, ws.root)
	listed := branches
	if len(listed) > 10 {
		listed = append(slices.Clone(listed[:10]), fmt.Sprintf("… %d more", len(branches)-10))
	}
	return ws.cfg.FieldError(at, "branch %q does not exist in this repository (its branches: %s); set mainBranch: %q in set.cue",
		nb.Branch, strings.Join(listed, ", "), fix)
}

package project

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/load"
)

// CheckMainBranch checks the main branch cfg names against the repository
// at root, since setctl apply branches every change from it and
// fast-forwards it. ok is true when the branch exists, and d's summary
// then names its commit. Otherwise d says what is wrong: a warning when
// the directory is not a git repository yet, or the repository has no
// commit yet and is on that branch (both are fixed by committing); an
// error at set.cue's mainBranch when the repository has other branches
// than the configured one (see NoBranchError).
func CheckMainBranch(ctx context.Context, root string, cfg *config.Project) (d diag.Diagnostic, ok bool) {
	branch := cfg.MainBranch
	warn := func(format string, args ...any) (diag.Diagnostic, bool) {
		return diag.Diagnostic{Severity: diag.Warning, Summary: fmt.Sprintf(format, args...)}, false
	}
	if !git.InRepository(ctx, root) {
		return warn("the project is not in a git repository yet; setctl apply needs one with a commit on %s (git init -b %s, then commit)", branch, branch)
	}
	head, err := git.BranchHead(ctx, root, branch)
	var nb *git.NoBranchError
	switch {
	case err == nil:
		return diag.Diagnostic{Summary: fmt.Sprintf("%s at %.7s", branch, head)}, true
	case !errors.As(err, &nb):
		return load.Diagnostics(cfg.FieldError([]string{"mainBranch"}, "%v", err))[0], false
	case len(nb.Branches) == 0:
		if current := git.CurrentBranch(ctx, root); current == branch || current == "" {
			return warn("the repository has no commit yet; setctl apply branches from %s, so commit first", branch)
		}
	}
	return load.Diagnostics(NoBranchError(ctx, root, cfg, nb))[0], false
}

// NoBranchError words a repository at root without the main branch cfg
// names as an error at set.cue's mainBranch, with the branch to name
// there instead. CheckMainBranch and a run that finds the branch gone
// both report it so.
func NoBranchError(ctx context.Context, root string, cfg *config.Project, nb *git.NoBranchError) *config.FieldError {
	at := []string{"mainBranch"}
	if len(nb.Branches) == 0 {
		current := git.CurrentBranch(ctx, root)
		return cfg.FieldError(at, "branch %q does not exist: the repository has no commit yet and is on %s; set mainBranch: %q in set.cue", nb.Branch, current, current)
	}
	// set/<change> branches are setctl apply's own, never a main branch.
	branches := slices.DeleteFunc(slices.Clone(nb.Branches), git.IsChangeBranch)
	if len(branches) == 0 {
		return cfg.FieldError(at, "branch %q does not exist in this repository, which has only setctl's own set/ branches", nb.Branch)
	}
	fix, _ := git.LikelyMainBranch(ctx, root)
	listed := branches
	if len(listed) > 10 {
		listed = append(slices.Clone(listed[:10]), fmt.Sprintf("… %d more", len(branches)-10))
	}
	return cfg.FieldError(at, "branch %q does not exist in this repository (its branches: %s); set mainBranch: %q in set.cue",
		nb.Branch, strings.Join(listed, ", "), fix)
}

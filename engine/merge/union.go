package merge

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/pathglob"
)

// unionConflicts resolves, in the merge in progress in the worktree, the
// conflicts in append-only files, those the project's mergeUnion globs
// name or whose .gitattributes say `merge=union`, as git's union driver
// does (git.ResolveUnion: the change's lines, then main's), and stages
// them. It returns the paths it resolved and those still in conflict, each
// in the order given. A conflict that is not one of text in a file on
// both sides (a side deleted it) stays. set installs no merge driver:
// the repository's configuration is the user's (see the git-dir guard).
func unionConflicts(ctx context.Context, in Input, paths []string) (unioned, rest []string, _ error) {
	byAttr, err := git.UnionAttributes(ctx, in.Worktree, paths)
	if err != nil {
		return nil, nil, err
	}
	globs := in.Project.UnionGlobs()
	for _, p := range paths {
		if !pathglob.Any(globs, p) && !slices.Contains(byAttr, p) {
			rest = append(rest, p)
			continue
		}
		ok, err := git.ResolveUnion(ctx, in.Worktree, p)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			unioned = append(unioned, p)
		} else {
			rest = append(rest, p)
		}
	}
	return unioned, rest, nil
}

// concludeUnion commits the merge in progress once union resolved every
// conflict it had.
func concludeUnion(ctx context.Context, in Input, label string, unioned []string) error {
	_, err := git.CommitAll(ctx, in.Worktree, fmt.Sprintf("Merge %s into %s (union of %s)", label, in.Change.Name, strings.Join(unioned, ", ")))
	return err
}

// unionNote tells the agent whose integration gate failed that set took
// the append-only files unioned as both sides' lines (the change's, then
// main's), since that merge, not the agent's code, may be what failed
// (a key now twice in a registry, a list out of order); "" when the
// merge unioned nothing.
func unionNote(unioned []string, mainBranch string) string {
	if len(unioned) == 0 {
		return ""
	}
	return fmt.Sprintf("set merged %s as a union of both sides' lines (yours, then %s's): if the failure comes from those lines, fix them on your branch.\n", strings.Join(unioned, ", "), mainBranch)
}

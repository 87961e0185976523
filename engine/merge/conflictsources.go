package merge

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/git"
)

// conflictSource is a change that reached main after the conflicting
// change last took main, and changed files the conflict is in: the work
// the agent is to keep beside its own.
type conflictSource struct {
	Landed
	// paths are the conflicting files it changed.
	paths []string
}

// conflictSources finds, for a merge of main left in conflict in the
// worktree, the changes whose commits reached main since the change's
// base (the merge base of its branch and main: where it last took main)
// and changed the conflicting paths, oldest first. Commits set did not
// make (no ChangeTrailer) are not named.
func conflictSources(ctx context.Context, worktree string, paths []string) ([]conflictSource, error) {
	base, err := git.MergeBase(ctx, worktree, "HEAD", "MERGE_HEAD")
	if err != nil {
		return nil, err
	}
	var sources []conflictSource
	byCommit := map[string]int{}
	for _, p := range paths {
		commits, err := git.CommitsChanging(ctx, worktree, base, "MERGE_HEAD", p)
		if err != nil {
			return nil, err
		}
		for _, c := range commits {
			i, seen := byCommit[c.ID]
			if !seen {
				l, ok := landedBy(c)
				if !ok {
					continue
				}
				i = len(sources)
				byCommit[c.ID] = i
				sources = append(sources, conflictSource{Landed: l})
			}
			sources[i].paths = append(sources[i].paths, p)
		}
	}
	// Oldest first, by their place in main's history since the base (the
	// logs above are per path, each newest first).
	order, err := git.CommitsChanging(ctx, worktree, base, "MERGE_HEAD", ".")
	if err != nil {
		return nil, err
	}
	rank := map[string]int{}
	for i, c := range order {
		rank[c.ID] = len(order) - i
	}
	slices.SortStableFunc(sources, func(a, b conflictSource) int { return rank[a.Commit] - rank[b.Commit] })
	return sources, nil
}

// describeSources says which changes reached main since the change's
// base and changed the conflicting files, and what each was for: its
// requirements (ID and title), or its title when it has none. "" when
// none is known.
func describeSources(mainBranch string, sources []conflictSource) string {
	if len(sources) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Since your branch's base, these changes reached %s and changed the same files:\n", mainBranch)
	for _, s := range sources {
		var what []string
		for _, id := range s.Requirements {
			what = append(what, strings.TrimSpace(id+" "+s.Titles[id]))
		}
		if len(what) == 0 && s.Title != "" {
			what = append(what, s.Title)
		}
		purpose := ""
		if len(what) > 0 {
			purpose = " (" + strings.Join(what, "; ") + ")"
		}
		fmt.Fprintf(&b, "- %s%s changed %s\n", s.Change, purpose, strings.Join(s.paths, ", "))
	}
	b.WriteString("Keep what they added as well as your own work.\n")
	return b.String()
}

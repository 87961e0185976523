package merge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/set-engine/set/engine/git"
)

// UnfoldTrailer ("Set-Unfold: <change>") ends the commit of Unfold.
const UnfoldTrailer = "Set-Unfold"

// Unfolded reports whether the branch tip tip is where Unfold left the
// branch of change made again at candidate, or candidate itself: a
// branch there holds nothing the pull request of candidate lacks.
func Unfolded(ctx context.Context, root, change, candidate, tip string) bool {
	if tip == candidate {
		return true
	}
	if v, err := git.TrailerValue(ctx, root, tip, UnfoldTrailer); err != nil || v != change {
		return false
	}
	parent, err := git.RevParse(ctx, root, tip+"^")
	return err == nil && parent == candidate
}

// Unfold undoes, in the worktree of a change whose branch was made again
// at candidate (a pull request's head, fetched in a checkout that had not
// the branch: see orchestrator's branchFromPullRequest), the fold the
// candidate holds: its openspec/ becomes the candidate's parent's (main's
// then) with the change folder back at openspec/changes/<change>, as the
// archive holds it, committed on the branch with UnfoldTrailer. The next
// integration folds it again onto main as it is then; without this, the
// change folder would be both archived and written anew. A candidate that folded
// nothing is left as it is. (What the change's own commits wrote under
// openspec/ but outside its folder is not on the branch afterwards: the
// OpenSpec way has a change write its folder only.)
func Unfold(ctx context.Context, worktree, change, candidate string) error {
	archived, err := Archived(ctx, worktree, change, candidate)
	if err != nil || archived.ArchiveDir == "" {
		return err
	}
	before, err := git.FilesAt(ctx, worktree, candidate+"^", "openspec")
	if err != nil {
		return err
	}
	folder, err := git.FilesAt(ctx, worktree, candidate, archived.ArchiveDir)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(worktree, "openspec")); err != nil {
		return err
	}
	files := before
	for path, data := range folder {
		files["openspec/changes/"+change+strings.TrimPrefix(path, archived.ArchiveDir)] = data
	}
	for path, data := range files {
		p := filepath.Join(worktree, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	msg := fmt.Sprintf("Unarchive %s: its folder back from %s, openspec/specs as before the fold\n\n%s: %s\n", change, archived.ArchiveDir, UnfoldTrailer, change)
	_, err = git.CommitOnHead(ctx, worktree, msg, "openspec")
	return err
}

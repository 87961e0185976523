package git

import "strings"

// changeBranchPrefix starts the name of every branch set makes for a
// change. The user's own branches never start with it, so that main-branch
// detection can leave set's branches out.
const changeBranchPrefix = "set/"

// ChangeBranch is the branch a change's agent works on, set/<change>, in
// the change's worktree (rundir.Layout.Worktree). The branch is named
// after the change and nothing else, so that a resumed run finds the work
// of the run it resumes.
func ChangeBranch(change string) string { return changeBranchPrefix + change }

// IsChangeBranch reports whether branch is one set made for a change (see
// ChangeBranch), not one of the user's.
func IsChangeBranch(branch string) bool { return strings.HasPrefix(branch, changeBranchPrefix) }

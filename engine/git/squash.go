package git

import (
	"context"
	"fmt"
	"strings"
)

// A forge's merges happen in its own repository, a bare one, where there
// is no work tree to merge in: the merge is computed by git merge-tree and
// committed by plumbing. These functions are what a stand-in forge
// (forge/githubtest) does to the bare repository it serves; set itself
// never moves a remote's branch this way.

// ConflictError is a merge that does not apply: the two sides change the
// same lines. Paths names the files in conflict, as git lists them.
type ConflictError struct {
	Base, Head string
	Paths      []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s does not apply onto %s: conflict in %s", short(e.Head), short(e.Base), strings.Join(e.Paths, ", "))
}

// SquashCommit makes, in the repository at dir (bare or not), one commit
// whose parent is base and whose tree is head merged onto base (a
// three-way merge from their merge base, as git merge-tree computes it),
// with msg, authored and committed by name <email>, and returns it. No ref
// moves. A merge that conflicts is a *ConflictError and makes no commit.
func SquashCommit(ctx context.Context, dir, base, head, msg, name, email string) (string, error) {
	out, err := Run(ctx, dir, "merge-tree", "--write-tree", "--name-only", "--no-messages", base, head)
	if err != nil {
		if exitCode(err) == 1 { // conflicts: the tree, then the conflicted paths
			lines := strings.Split(out, "\n")
			return "", &ConflictError{Base: base, Head: head, Paths: lines[1:]}
		}
		return "", err
	}
	tree, _, _ := strings.Cut(out, "\n")
	who := []string{"GIT_AUTHOR_NAME=" + name, "GIT_AUTHOR_EMAIL=" + email, "GIT_COMMITTER_NAME=" + name, "GIT_COMMITTER_EMAIL=" + email}
	commit, err := runEnv(ctx, dir, who, 0, "commit-tree", tree, "-p", base, "-m", msg)
	return strings.TrimSpace(commit), err
}

// MoveBranch points refs/heads/<branch> at commit where it is at old (a
// full SHA the caller read), as one compare-and-swap: a branch that
// moved since is left where it is, and an error.
func MoveBranch(ctx context.Context, dir, branch, commit, old string) error {
	_, err := Run(ctx, dir, "update-ref", "-m", "forge: merge", "refs/heads/"+branch, commit, old)
	return err
}

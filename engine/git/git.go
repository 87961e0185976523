// Package git drives the git command line. Every call runs `git -C dir`
// with a fixed argv (no shell), and its errors carry git's own message.
//
// Invariant kept by the callers of this package: main only ever moves by
// fast-forward (FastForward checks ancestry and moves the ref with a
// compare-and-swap).
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/set-engine/set/engine/proc"
)

// Error is a failed git command. (Each package's Error is its own
// failure: cond.Error a condition's, prompt.Error a template's.)
type Error struct {
	Args     []string
	ExitCode int
	Stderr   string
}

func (e *Error) Error() string {
	msg := e.Stderr
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.ExitCode)
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

// Run runs git with args in dir and returns its trimmed standard output.
func Run(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := run(ctx, dir, args...)
	return strings.TrimSpace(out), err
}

// run is Run without trimming, for output whose whitespace matters. It is
// the one place set executes git, and it always runs git with hooks
// disabled (core.hooksPath=/dev/null): the hooks directory is shared by
// every worktree of the repository, so an agent could plant one there
// (post-commit, reference-transaction, post-checkout…) and have set's own
// commits, merges and worktree operations run it. Nor does a git outlive
// a SIGKILLed set where the OS allows (proc.DieWithParent), to hold a
// lock file the resumed run needs; and set's commits start no automatic
// maintenance (maintenance.auto, gc.auto), which would run as a process
// set does not own, holding objects/maintenance.lock when set is killed.
// The user's own git commands do that housekeeping.
func run(ctx context.Context, dir string, args ...string) (string, error) {
	return runEnv(ctx, dir, nil, 0, args...)
}

// runEnv is run with env added to set's environment. A git stopped by
// ctx may leave children behind (ssh, a credential helper) holding its
// output open: with waitDelay > 0, runEnv waits at most that long for
// them once git is stopped (exec.Cmd.WaitDelay), instead of as long as
// they live.
func runEnv(ctx context.Context, dir string, env []string, waitDelay time.Duration, args ...string) (string, error) {
	return runInput(ctx, dir, env, waitDelay, nil, args...)
}

// runInput is runEnv with stdin as git's standard input (none when nil).
func runInput(ctx context.Context, dir string, env []string, waitDelay time.Duration, stdin io.Reader, args ...string) (string, error) {
	argv := append([]string{"-C", dir, "-c", "core.hooksPath=/dev/null", "-c", "maintenance.auto=false", "-c", "gc.auto=0"}, args...)
	cmd := exec.CommandContext(ctx, "git", argv...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.WaitDelay = waitDelay
	cmd.Stdin = stdin
	proc.DieWithParent(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		code := proc.ExitCode(err)
		msg := strings.TrimSpace(stderr.String())
		if msg == "" && code == -1 {
			msg = err.Error()
		}
		return stdout.String(), &Error{Args: args, ExitCode: code, Stderr: msg}
	}
	return stdout.String(), nil
}

// exitCode is the exit code of a failed git command, or -1.
func exitCode(err error) int {
	var ge *Error
	if errors.As(err, &ge) {
		return ge.ExitCode
	}
	return -1
}

// Head is the commit HEAD points at in dir, or "" when dir is not a git
// work tree or has no commit yet.
func Head(ctx context.Context, dir string) string {
	out, err := RevParse(ctx, dir, "HEAD")
	if err != nil {
		return ""
	}
	return out
}

// RevParse resolves rev to a commit ID. HEAD and a branch's full name
// (refs/heads/<branch>) are read from the files git itself reads, where
// they settle it (see commitByFiles), without running git.
func RevParse(ctx context.Context, dir, rev string) (string, error) {
	if id, ok := commitByFiles(dir, rev); ok {
		return id, nil
	}
	return Run(ctx, dir, "rev-parse", "--verify", "-q", rev+"^{commit}")
}

// commitByFiles resolves rev, when it is HEAD or a branch's full name
// (refs/heads/<branch>), in the work tree whose top is dir, by reading
// the files git reads: HEAD in the work tree's git directory, then the
// branch's loose ref in the repository's common directory. Git writes
// both by renaming a finished lock file into place, so a read sees the
// old or the new commit, never a part. ok is false whenever the files do
// not settle it, and then git must be asked: a GIT_DIR, GIT_WORK_TREE or
// GIT_COMMON_DIR in the environment, dir not a work tree's top, a branch
// with no loose ref (packed, or a reftable repository), anything that is
// not a plain object ID. A branch's ref names a commit (git refuses to
// point refs/heads/ anywhere else).
func commitByFiles(dir, rev string) (string, bool) {
	if rev != "HEAD" && (!strings.HasPrefix(rev, "refs/heads/") || strings.Contains(rev, "..")) {
		return "", false
	}
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR"} {
		if os.Getenv(k) != "" {
			return "", false
		}
	}
	gd, ok := gitDir(dir)
	if !ok {
		return "", false
	}
	common := gd
	if data, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
		common = absIn(gd, strings.TrimSpace(string(data)))
	}
	ref := rev
	if rev == "HEAD" {
		head, err := os.ReadFile(filepath.Join(gd, "HEAD"))
		if err != nil {
			return "", false
		}
		h := strings.TrimSpace(string(head))
		if objectID(h) {
			return h, true // detached
		}
		var found bool
		if ref, found = strings.CutPrefix(h, "ref: "); !found || !strings.HasPrefix(ref, "refs/heads/") || strings.Contains(ref, "..") {
			return "", false
		}
	}
	data, err := os.ReadFile(filepath.Join(common, filepath.FromSlash(ref)))
	if id := strings.TrimSpace(string(data)); err == nil && objectID(id) {
		return id, true
	}
	return "", false
}

// objectID reports whether s is a full object ID (SHA-1 or SHA-256), in
// lower-case hex as git writes it.
func objectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// BranchHead is the commit refs/heads/<branch> points at. Only the branch
// counts: a tag or a remote-tracking ref of the same name, which git's
// own lookup of the short name may prefer, never does. A repository
// without that branch gives a *NoBranchError.
func BranchHead(ctx context.Context, dir, branch string) (string, error) {
	head, err := RevParse(ctx, dir, "refs/heads/"+branch)
	if err == nil {
		return head, nil
	}
	if exitCode(err) != 1 { // not a repository, or git failed
		return "", err
	}
	branches, lerr := Branches(ctx, dir)
	if lerr != nil {
		return "", lerr
	}
	return "", &NoBranchError{Branch: branch, Branches: branches}
}

// NoBranchError is a branch the repository does not have.
type NoBranchError struct {
	Branch string
	// Branches are the repository's local branches, sorted; none before
	// the first commit.
	Branches []string
}

func (e *NoBranchError) Error() string {
	if len(e.Branches) == 0 {
		return fmt.Sprintf("the repository has no branch %s (no commit yet)", e.Branch)
	}
	return fmt.Sprintf("the repository has no branch %s (its branches: %s)", e.Branch, strings.Join(e.Branches, ", "))
}

// BranchExists reports whether refs/heads/<branch> exists.
func BranchExists(ctx context.Context, dir, branch string) bool {
	_, err := Run(ctx, dir, "show-ref", "--verify", "-q", "refs/heads/"+branch)
	return err == nil
}

// InRepository reports whether dir is inside a git work tree.
func InRepository(ctx context.Context, dir string) bool {
	out, err := Run(ctx, dir, "rev-parse", "--is-inside-work-tree")
	return err == nil && out == "true"
}

// Branches lists the local branches of the repository at dir, sorted; none
// before the first commit. Names are the full branch names, even where a
// tag of the same name makes git shorten them to "heads/NAME".
func Branches(ctx context.Context, dir string) ([]string, error) {
	out, err := Run(ctx, dir, "for-each-ref", "--format=%(refname:lstrip=2)", "refs/heads/")
	if err != nil || out == "" {
		return nil, err
	}
	return strings.Split(out, "\n"), nil
}

// RemoteHead is the branch the remote's HEAD names as recorded locally
// (refs/remotes/<remote>/HEAD, set by clone), or "" when there is none.
func RemoteHead(ctx context.Context, dir, remote string) string {
	out, err := Run(ctx, dir, "symbolic-ref", "-q", "--short", "refs/remotes/"+remote+"/HEAD")
	if err != nil {
		return ""
	}
	branch, _ := strings.CutPrefix(out, remote+"/")
	return branch
}

// ConfigValue is the value of a git configuration key as seen from dir
// (which need not be a repository), or "" when it is unset.
func ConfigValue(ctx context.Context, dir, key string) string {
	out, err := Run(ctx, dir, "config", "--get", key)
	if err != nil {
		return ""
	}
	return out
}

// DeleteBranch deletes refs/heads/<branch>, and its reflog, if it still
// points at tip (a compare-and-swap, as FastForward moves main). A branch
// checked out in a worktree of the repository is left alone and reported
// as not deleted: removing the ref under a checkout would leave that
// checkout on a branch with no commit.
func DeleteBranch(ctx context.Context, root, branch, tip string) (bool, error) {
	worktrees, err := Worktrees(ctx, root)
	if err != nil {
		return false, err
	}
	for _, w := range worktrees {
		if w.Branch == branch {
			return false, nil
		}
	}
	if _, err := Run(ctx, root, "update-ref", "-m", "set: delete", "-d", "refs/heads/"+branch, tip); err != nil {
		return false, err
	}
	return true, nil
}

// CurrentBranch is the branch checked out in dir, or "" on a detached HEAD.
func CurrentBranch(ctx context.Context, dir string) string {
	if gd, ok := gitDir(dir); ok {
		if head, err := os.ReadFile(filepath.Join(gd, "HEAD")); err == nil {
			ref, _ := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: refs/heads/")
			if ref != strings.TrimSpace(string(head)) {
				return ref
			}
			return "" // detached
		}
	}
	out, err := Run(ctx, dir, "symbolic-ref", "-q", "--short", "HEAD")
	if err != nil {
		return ""
	}
	return out
}

// HasCommit reports whether the repository at dir holds the commit id.
func HasCommit(ctx context.Context, dir, id string) bool {
	_, err := Run(ctx, dir, "cat-file", "-e", id+"^{commit}")
	return err == nil
}

// IsAncestor reports whether commit a is an ancestor of (or equal to) b.
func IsAncestor(ctx context.Context, dir, a, b string) (bool, error) {
	_, err := Run(ctx, dir, "merge-base", "--is-ancestor", a, b)
	switch {
	case err == nil:
		return true, nil
	case exitCode(err) == 1:
		return false, nil
	}
	return false, err
}

// MergeBase is the best common ancestor of a and b.
func MergeBase(ctx context.Context, dir, a, b string) (string, error) {
	return Run(ctx, dir, "merge-base", a, b)
}

// Dirty lists the tracked paths with uncommitted changes in dir. Untracked
// files are not listed: a fast-forward leaves them alone (and refuses to
// overwrite one).
func Dirty(ctx context.Context, dir string) ([]string, error) {
	out, err := run(ctx, dir, "status", "--porcelain", "-z", "--untracked-files=no")
	if err != nil {
		return nil, err
	}
	var paths []string
	entries := strings.Split(out, "\x00")
	for i := 0; i < len(entries); i++ {
		entry := entries[i]
		if len(entry) <= 3 {
			continue
		}
		paths = append(paths, entry[3:])
		// A rename or copy is followed by its source path, with no status.
		if (entry[0] == 'R' || entry[0] == 'C') && i+1 < len(entries) {
			i++
			paths = append(paths, entries[i])
		}
	}
	return paths, nil
}

// InMerge reports whether a merge is in progress in dir (MERGE_HEAD set).
func InMerge(ctx context.Context, dir string) bool {
	if gd, ok := gitDir(dir); ok {
		_, err := os.Stat(filepath.Join(gd, "MERGE_HEAD"))
		return err == nil
	}
	_, err := Run(ctx, dir, "rev-parse", "-q", "--verify", "MERGE_HEAD")
	return err == nil
}

// gitDir is the git directory of the work tree whose top is dir, read
// from dir/.git (a directory, or a worktree's "gitdir:" file) without
// running git; ok is false when dir is not a work tree's top.
func gitDir(dir string) (string, bool) {
	dotGit := filepath.Join(dir, ".git")
	info, err := os.Stat(dotGit)
	if err != nil {
		return "", false
	}
	if info.IsDir() {
		return dotGit, true
	}
	data, err := os.ReadFile(dotGit)
	if err != nil {
		return "", false
	}
	gd, found := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
	if !found {
		return "", false
	}
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(dir, gd)
	}
	return gd, true
}

// identity returns `-c user.name=… -c user.email=…` when dir has no
// committer identity configured, so that set's own commits never fail on
// a machine without one. A ctx of WithIdentity has the answer already.
func identity(ctx context.Context, dir string) []string {
	if id, ok := ctx.Value(identityKey{}).([]string); ok {
		return id
	}
	return resolveIdentity(ctx, dir)
}

func resolveIdentity(ctx context.Context, dir string) []string {
	if email, _ := Run(ctx, dir, "config", "user.email"); email != "" {
		return nil
	}
	return []string{"-c", "user.name=set", "-c", "user.email=set@localhost"}
}

type identityKey struct{}

// WithIdentity returns ctx carrying the committer identity of set's
// commits in the repository at root, resolved once (see identity): the
// commits, merges and fast-forwards run with it then ask git for it no
// more. A run resolves it at its start; a user who configures an identity
// during the run gets it in the next one. Every worktree of the
// repository shares root's configuration (set enables no per-worktree
// configuration).
func WithIdentity(ctx context.Context, root string) context.Context {
	return context.WithValue(ctx, identityKey{}, resolveIdentity(ctx, root))
}

// CommitAll stages every change in dir and commits it with msg. It reports
// false when there was nothing to commit. During a merge it always commits,
// which concludes the merge.
func CommitAll(ctx context.Context, dir, msg string) (bool, error) {
	if _, err := Run(ctx, dir, "add", "-A"); err != nil {
		return false, err
	}
	merging := InMerge(ctx, dir)
	if !merging {
		if _, err := Run(ctx, dir, "diff", "--cached", "--quiet"); err == nil {
			return false, nil
		} else if exitCode(err) != 1 {
			return false, err
		}
	}
	args := append(identity(ctx, dir), "commit", "-q", "--no-verify", "-m", msg)
	if _, err := Run(ctx, dir, args...); err != nil {
		return false, err
	}
	return true, nil
}

// CommitTree makes a commit of tree with the given parent and message
// (git commit-tree), without touching any checkout, and returns its ID.
func CommitTree(ctx context.Context, dir, tree, parent, msg string) (string, error) {
	args := append(identity(ctx, dir), "commit-tree", tree, "-p", parent, "-m", msg)
	return Run(ctx, dir, args...)
}

// FindTrailer returns the newest commit on the first-parent history of rev
// whose message has the trailer line "key: value", or "" when there is
// none.
func FindTrailer(ctx context.Context, dir, rev, key, value string) (string, error) {
	return Run(ctx, dir, "log", "--first-parent", "-1", "--format=%H", "--extended-regexp",
		"--grep=^"+regexp.QuoteMeta(key+": "+value)+"$", rev)
}

// CommitMessage is the message of commit, as git log --format=%B gives
// it, without the blank lines around it.
func CommitMessage(ctx context.Context, dir, commit string) (string, error) {
	return Run(ctx, dir, "log", "-1", "--format=%B", commit+"^{commit}", "--")
}

package git

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Push mode (project.delivery) talks to one remote: it reads the remote's
// main, fetches it, and lands a change by pushing its candidate commit to
// the remote's main. Invariant: set never pushes with force; a push the
// remote does not take as a fast-forward is refused by the remote, and
// whatever someone else pushed stays. Credentials are git's own (its
// credential helpers, SSH): set passes none and stores none.

// HasRemote reports whether the repository at dir has a remote named
// remote.
func HasRemote(ctx context.Context, dir, remote string) bool {
	out, err := Run(ctx, dir, "remote")
	if err != nil {
		return false
	}
	for _, r := range strings.Fields(out) {
		if r == remote {
			return true
		}
	}
	return false
}

// RemoteURL is the URL the repository at dir fetches remote from, or "".
func RemoteURL(ctx context.Context, dir, remote string) string {
	out, err := Run(ctx, dir, "remote", "get-url", remote)
	if err != nil {
		return ""
	}
	return out
}

// RemoteRefError is a remote that set could not reach or that refused it.
// Auth is set when git said the remote refused the credentials: a
// configuration error for the user, never something to retry.
type RemoteRefError struct {
	Remote string
	Auth   bool
	Err    error
}

func (e *RemoteRefError) Error() string {
	if e.Auth {
		return fmt.Sprintf("the remote %s refused set's credentials (git's own: credential helper, SSH key): %v", e.Remote, e.Err)
	}
	return fmt.Sprintf("the remote %s: %v", e.Remote, e.Err)
}

func (e *RemoteRefError) Unwrap() error { return e.Err }

// authFailure reports whether git's message says the remote refused the
// credentials (HTTP 401/403, SSH publickey).
func authFailure(msg string) bool {
	for _, s := range []string{"Authentication failed", "Permission denied (publickey", "Permission to ", "returned error: 401", "returned error: 403",
		"could not read Username", "could not read Password", "terminal prompts disabled"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func remoteError(remote string, err error) error {
	var ge *Error
	if errors.As(err, &ge) && authFailure(ge.Stderr) {
		return &RemoteRefError{Remote: remote, Auth: true, Err: err}
	}
	return &RemoteRefError{Remote: remote, Err: err}
}

// remoteEnv keeps git from asking at a terminal for credentials: set runs
// unattended, and a prompt would hang the run.
var remoteEnv = []string{"GIT_TERMINAL_PROMPT=0"}

// RemoteTimeout bounds each fetch and push of push mode: a remote that
// has not answered within it (a host that takes the connection and says
// nothing) is an error naming the remote, not a run that hangs. It is
// generous: a push is of one change's commits onto a main the remote
// has, and a fetch of what others pushed since.
const RemoteTimeout = 5 * time.Minute

// remoteWaitDelay is how long a git talking to a remote, once stopped, is
// waited for its children (ssh, a credential helper) to let go of its
// output.
const remoteWaitDelay = 2 * time.Second

// runRemote runs a git that talks to remote, within timeout: past it,
// or once ctx is done, git is stopped and its children waited for no
// longer than remoteWaitDelay. Its errors are *RemoteRefErrors.
func runRemote(ctx context.Context, dir, remote string, timeout time.Duration, args ...string) (string, error) {
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := runEnv(tctx, dir, remoteEnv, remoteWaitDelay, args...)
	if err != nil {
		if ctx.Err() == nil && tctx.Err() != nil {
			return "", &RemoteRefError{Remote: remote, Err: fmt.Errorf("no answer within %s (git %s)", timeout, args[0])}
		}
		return "", remoteError(remote, err)
	}
	return out, nil
}

// LsRemoteBranch is the commit of branch on remote, asked of the remote
// itself (git ls-remote) within timeout; "" when the remote has no such
// branch.
func LsRemoteBranch(ctx context.Context, dir, remote, branch string, timeout time.Duration) (string, error) {
	out, err := runRemote(ctx, dir, remote, timeout, "ls-remote", "--heads", remote, "refs/heads/"+branch)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		sha, ref, ok := strings.Cut(line, "\t")
		if ok && ref == "refs/heads/"+branch {
			return sha, nil
		}
	}
	return "", nil
}

// TrackingRef is the ref under which FetchBranch keeps remote's branch.
func TrackingRef(remote, branch string) string {
	return "refs/remotes/" + remote + "/" + branch
}

// FetchBranch fetches branch from remote into its tracking ref
// (TrackingRef) and returns the commit the remote's branch is at. The
// tracking ref follows the remote wherever it went (a forced update on
// the remote's side included): it records what the remote has, and no
// local branch moves. A remote that does not answer within timeout is a
// *RemoteRefError.
func FetchBranch(ctx context.Context, dir, remote, branch string, timeout time.Duration) (string, error) {
	ref := TrackingRef(remote, branch)
	if _, err := runRemote(ctx, dir, remote, timeout, "fetch", "--no-tags", "--quiet", remote, "+refs/heads/"+branch+":"+ref); err != nil {
		return "", err
	}
	return RevParse(ctx, dir, ref)
}

// PushRejectedError is a push the remote refused because its branch is no
// longer an ancestor of the commit pushed: someone else pushed first.
type PushRejectedError struct {
	Remote, Branch, Commit string
	Err                    error
}

func (e *PushRejectedError) Error() string {
	return fmt.Sprintf("the remote %s refused %s on %s: its %s moved (%v)", e.Remote, short(e.Commit), e.Branch, e.Branch, e.Err)
}

func (e *PushRejectedError) Unwrap() error { return e.Err }

// PushFastForward pushes commit to branch on remote, where it replaces
// expected (a full SHA the caller read, which commit descends from), and
// nowhere else: the push carries git's lease on expected
// (--force-with-lease=<ref>:<expected>), so the remote takes it only
// while its branch is exactly at expected, and then it is a fast-forward;
// the refspec has no "+", so never a forced update. A branch that moved
// anywhere else, ahead (someone else pushed) or back (someone rewound
// it: a plain fast-forward push would bring back the commits they
// removed), refuses it: a *PushRejectedError. A refusal for credentials
// is a *RemoteRefError with Auth set, and a remote that does not answer
// within timeout a *RemoteRefError. On success the tracking ref
// (TrackingRef) is at commit.
func PushFastForward(ctx context.Context, dir, remote, branch, commit, expected string, timeout time.Duration) error {
	if err := PushBranch(ctx, dir, remote, branch, commit, expected, timeout); err != nil {
		return err
	}
	_, err := Run(ctx, dir, "update-ref", TrackingRef(remote, branch), commit)
	return err
}

// rejected reports whether git's push output says the remote refused
// an update that is no fast-forward.
// A remote whose ref another push held locked at the same moment says
// "cannot lock ref … is at X but expected Y": moved too. A lock file left
// behind ("Unable to create … .lock") is the remote's trouble, not a move.
func rejected(msg string) bool {
	for _, s := range []string{"[rejected]", "non-fast-forward", "fetch first", "stale info"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return strings.Contains(msg, "cannot lock ref") && strings.Contains(msg, "but expected")
}

// CountCommits is the number of commits reachable from head but not base.
func CountCommits(ctx context.Context, dir, base, head string) (int, error) {
	out, err := Run(ctx, dir, "rev-list", "--count", base+".."+head)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(out)
}

// PushBranch pushes commit to branch on remote, replacing expected there:
// the commit the caller read on the remote's branch (a full SHA), or ""
// for a branch the remote must not have. The push carries git's lease on
// expected (--force-with-lease=<ref>:<expected>): the remote takes it
// only while its branch is exactly expected, so an update that is no
// fast-forward (a change tested again on a newer main) replaces only the
// commit the caller read, never someone else's. A branch that is
// elsewhere refuses it: a *PushRejectedError. Credentials and timeout as
// PushFastForward.
func PushBranch(ctx context.Context, dir, remote, branch, commit, expected string, timeout time.Duration) error {
	ref := "refs/heads/" + branch
	_, err := runRemote(ctx, dir, remote, timeout, "push", "--no-verify", "--force-with-lease="+ref+":"+expected, remote, commit+":"+ref)
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) && !authFailure(ge.Stderr) && rejected(ge.Stderr) {
			return &PushRejectedError{Remote: remote, Branch: branch, Commit: commit, Err: ge}
		}
		return err
	}
	return nil
}

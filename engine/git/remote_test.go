package git

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// withBareRemote gives r a bare remote "origin" holding r's main, and a
// second clone of it (another teammate).
func withBareRemote(t *testing.T, r *repo) (bare, other string) {
	t.Helper()
	bare = filepath.Join(t.TempDir(), "remote.git")
	gitIn(t, r.dir, "init", "-q", "--bare", "-b", "main", bare)
	r.git("remote", "add", "origin", bare)
	r.git("push", "-q", "origin", "main")
	other = filepath.Join(t.TempDir(), "other")
	gitIn(t, r.dir, "clone", "-q", bare, other)
	return bare, other
}

func TestRemoteReadFetchPush(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	_, other := withBareRemote(t, r)
	if !HasRemote(ctx, r.dir, "origin") || HasRemote(ctx, r.dir, "upstream") {
		t.Fatal("HasRemote: origin is there, upstream is not")
	}
	main := r.git("rev-parse", "main")
	if got, err := LsRemoteBranch(ctx, r.dir, "origin", "main", 5*time.Second); err != nil || got != main {
		t.Fatalf("LsRemoteBranch = %q, %v; want %s", got, err, main)
	}
	if got, err := LsRemoteBranch(ctx, r.dir, "origin", "trunk", 5*time.Second); err != nil || got != "" {
		t.Fatalf("LsRemoteBranch of a missing branch = %q, %v", got, err)
	}

	// A fast-forward push lands, and the tracking ref follows it.
	r.write("a.txt", "a\n")
	a := r.commit("a")
	if err := PushFastForward(ctx, r.dir, "origin", "main", a, main, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := r.git("rev-parse", TrackingRef("origin", "main")); got != a {
		t.Fatalf("tracking ref at %s, want %s", got, a)
	}

	// Someone else pushes; set's next push is refused, never forced.
	gitIn(t, other, "pull", "-q", "origin", "main")
	writeIn(t, other, "b.txt", "b\n")
	gitIn(t, other, "add", "-A")
	gitIn(t, other, "commit", "-qm", "b")
	gitIn(t, other, "push", "-q", "origin", "main")
	theirs := gitIn(t, other, "rev-parse", "HEAD")
	r.write("c.txt", "c\n")
	c := r.commit("c")
	err := PushFastForward(ctx, r.dir, "origin", "main", c, a, 5*time.Second)
	var rej *PushRejectedError
	if !errors.As(err, &rej) {
		t.Fatalf("push over someone else's commit: %v (%T), want a *PushRejectedError", err, err)
	}
	if got, _ := LsRemoteBranch(ctx, r.dir, "origin", "main", 5*time.Second); got != theirs {
		t.Fatalf("the remote's main is %s after a refused push, want theirs %s", got, theirs)
	}
	got, err := FetchBranch(ctx, r.dir, "origin", "main", 5*time.Second)
	if err != nil || got != theirs {
		t.Fatalf("FetchBranch = %s, %v; want %s", got, err, theirs)
	}
	if cur := r.git("rev-parse", "main"); cur != c {
		t.Fatalf("FetchBranch moved main to %s", cur)
	}
}

func TestRemoteUnreachable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	r.git("remote", "add", "origin", filepath.Join(t.TempDir(), "nothing-here.git"))
	_, err := LsRemoteBranch(ctx, r.dir, "origin", "main", 5*time.Second)
	var re *RemoteRefError
	if !errors.As(err, &re) || re.Remote != "origin" || re.Auth {
		t.Fatalf("LsRemoteBranch of a missing remote: %v (%T)", err, err)
	}
	if _, err := FetchBranch(ctx, r.dir, "origin", "main", 5*time.Second); !errors.As(err, &re) {
		t.Fatalf("FetchBranch of a missing remote: %v (%T)", err, err)
	}
}

func TestAuthFailure(t *testing.T) {
	t.Parallel()
	for _, msg := range []string{
		"remote: Invalid username or password.\nfatal: Authentication failed for 'https://example.com/x.git/'",
		"git@github.com: Permission denied (publickey).\nfatal: Could not read from remote repository.",
		"fatal: unable to access 'https://example.com/x.git/': The requested URL returned error: 403",
	} {
		if !authFailure(msg) {
			t.Errorf("authFailure(%q) = false", msg)
		}
	}
	for _, msg := range []string{
		" ! [rejected]        main -> main (fetch first)",
		// A full SHA may hold "403" or "401".
		"git push origin e41e523c5f8b2dcdb0e45ee65bb684d6e1194039:refs/heads/main: remote: error: cannot lock ref 'refs/heads/main': Unable to create 'remote.git/refs/heads/main.lock': File exists.",
	} {
		if authFailure(msg) {
			t.Errorf("authFailure(%q) = true", msg)
		}
	}
	if rejected("remote: error: cannot lock ref 'refs/heads/main': Unable to create 'remote.git/refs/heads/main.lock': File exists.") {
		t.Error("a lock file left on the remote is taken for someone else's push")
	}
	if !rejected("remote: error: cannot lock ref 'refs/heads/main': is at 1111 but expected 2222") {
		t.Error("a push that lost the race for the remote's ref is not taken for someone else's push")
	}
}

// TestPushRefusedForCredentials: a remote that refuses the push for its
// credentials (here a hook that says so as a forge would) is a
// configuration error naming the remote, never a "someone else pushed".
func TestPushRefusedForCredentials(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	bare, _ := withBareRemote(t, r)
	hook := filepath.Join(bare, "hooks", "pre-receive")
	writeIn(t, filepath.Dir(hook), "pre-receive", "#!/bin/sh\necho 'Permission denied (publickey).' >&2\nexit 1\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	main := r.git("rev-parse", "main")
	r.write("a.txt", "a\n")
	a := r.commit("a")
	err := PushFastForward(ctx, r.dir, "origin", "main", a, main, 5*time.Second)
	var re *RemoteRefError
	if !errors.As(err, &re) || !re.Auth || re.Remote != "origin" {
		t.Fatalf("push refused for credentials: %v (%T), want a *RemoteRefError with Auth", err, err)
	}
	if !strings.Contains(err.Error(), "the remote origin refused set's credentials") {
		t.Errorf("the error does not name the remote: %v", err)
	}
}

// TestRemoteThatNeverAnswers: a remote that takes the connection and says
// nothing (here an ssh that sleeps, holding git's output open) stops the
// fetch, the push and the ls-remote within their timeout, with an error
// naming the remote; none of them hangs the run.
func TestRemoteThatNeverAnswers(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	r.git("remote", "add", "origin", "ssh://set.invalid/x.git")
	t.Setenv("GIT_SSH_COMMAND", "sleep 300 #")
	head := r.git("rev-parse", "main")
	const timeout = time.Second
	// The three wait out their timeout at the same time.
	type ended struct {
		err error
		d   time.Duration
	}
	calls := map[string]func() error{
		"fetch": func() error { _, err := FetchBranch(ctx, r.dir, "origin", "main", timeout); return err },
		"push":  func() error { return PushFastForward(ctx, r.dir, "origin", "main", head, head, timeout) },
		"ls-remote": func() error {
			_, err := LsRemoteBranch(ctx, r.dir, "origin", "main", timeout)
			return err
		},
	}
	done := map[string]chan ended{}
	for name, call := range calls {
		ch := make(chan ended, 1)
		done[name] = ch
		go func() {
			start := time.Now()
			err := call()
			ch <- ended{err, time.Since(start)}
		}()
	}
	stop := time.After(30 * time.Second)
	for name := range calls {
		select {
		case e := <-done[name]:
			var re *RemoteRefError
			if !errors.As(e.err, &re) || re.Remote != "origin" || !strings.Contains(e.err.Error(), "no answer within 1s") {
				t.Errorf("%s of a remote that never answers: %v (%T), want a *RemoteRefError saying so", name, e.err, e.err)
			}
			if e.d > 10*time.Second {
				t.Errorf("%s took %s", name, e.d)
			}
		case <-stop:
			t.Fatalf("%s of a remote that never answers still runs after 30s", name)
		}
	}
}

// TestPushRefusedOverARewoundRemote: someone rewound the remote's main
// (dropped a commit set's main holds). set's push, whose candidate
// descends from the dropped commit, would be a fast-forward of the
// rewound main and bring the commit back: the push pins the remote's main
// set read, so the remote refuses it and keeps what they pushed.
func TestPushRefusedOverARewoundRemote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	bare, _ := withBareRemote(t, r)
	before := r.git("rev-parse", "main")
	r.write("dropped.txt", "a secret\n")
	dropped := r.commit("dropped")
	if err := PushFastForward(ctx, r.dir, "origin", "main", dropped, before, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	gitIn(t, bare, "update-ref", "refs/heads/main", before) // their rewind
	r.write("c.txt", "c\n")
	c := r.commit("c")
	err := PushFastForward(ctx, r.dir, "origin", "main", c, dropped, 5*time.Second)
	var rej *PushRejectedError
	if !errors.As(err, &rej) {
		t.Fatalf("push over a rewound main: %v (%T), want a *PushRejectedError", err, err)
	}
	if got := gitIn(t, bare, "rev-parse", "main"); got != before {
		t.Fatalf("the remote's main is at %s after the push, want their rewind %s", got, before)
	}
}

// TestPushBranch: a branch push creates the branch only where it is
// absent, replaces (also by no fast-forward) only the commit set read
// there, and is refused over a commit someone else pushed.
func TestPushBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	_, other := withBareRemote(t, r)
	main := r.git("rev-parse", "main")
	r.write("a.txt", "a\n")
	a := r.commit("a")
	if err := PushBranch(ctx, r.dir, "origin", "set/x", a, "", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	// Absent was the lease: a second "new branch" push is refused.
	var rej *PushRejectedError
	if err := PushBranch(ctx, r.dir, "origin", "set/x", main, "", 5*time.Second); !errors.As(err, &rej) {
		t.Fatalf("push over an existing branch leased as absent: %v, want a *PushRejectedError", err)
	}
	// A commit that does not descend from a replaces it, leased on a.
	r.git("checkout", "-q", "-b", "again", main)
	r.write("b.txt", "b\n")
	b := r.commit("b")
	if err := PushBranch(ctx, r.dir, "origin", "set/x", b, a, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got, _ := LsRemoteBranch(ctx, r.dir, "origin", "set/x", 5*time.Second); got != b {
		t.Fatalf("set/x at %s, want %s", got, b)
	}
	// Someone else pushes to the branch: set's push leased on b is refused.
	gitIn(t, other, "fetch", "-q", "origin", "set/x")
	gitIn(t, other, "checkout", "-q", "-b", "set/x", "FETCH_HEAD")
	writeIn(t, other, "c.txt", "c\n")
	gitIn(t, other, "add", "-A")
	gitIn(t, other, "commit", "-qm", "c")
	gitIn(t, other, "push", "-q", "origin", "set/x")
	theirs := gitIn(t, other, "rev-parse", "HEAD")
	if err := PushBranch(ctx, r.dir, "origin", "set/x", a, b, 5*time.Second); !errors.As(err, &rej) {
		t.Fatalf("push over someone else's commit: %v, want a *PushRejectedError", err)
	}
	if got, _ := LsRemoteBranch(ctx, r.dir, "origin", "set/x", 5*time.Second); got != theirs {
		t.Fatalf("set/x at %s, want theirs %s", got, theirs)
	}
}

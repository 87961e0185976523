package git

import (
	"context"
	"errors"
	"testing"
)

func TestSquashCommitAndMoveBranchInABareRepository(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	bare, _ := withBareRemote(t, r)
	main := r.git("rev-parse", "main")

	// A branch with two commits, pushed; main moves on meanwhile.
	r.git("checkout", "-q", "-b", "topic")
	r.write("a.txt", "a\n")
	r.commit("a")
	r.write("b.txt", "b\n")
	topic := r.commit("b")
	r.git("push", "-q", "origin", "topic")
	r.git("checkout", "-q", "main")
	r.write("c.txt", "c\n")
	moved := r.commit("c")
	r.git("push", "-q", "origin", "main")

	squash, err := SquashCommit(ctx, bare, moved, topic, "topic (#1)", "GitHub", "noreply@github.com")
	if err != nil {
		t.Fatal(err)
	}
	if got := gitIn(t, bare, "rev-parse", squash+"^"); got != moved {
		t.Errorf("the squash's parent is %s, want the base %s", got, moved)
	}
	if got := gitIn(t, bare, "ls-tree", "--name-only", squash); got != "README.md\na.txt\nb.txt\nc.txt\nnotes.txt" {
		t.Errorf("the squash holds %q", got)
	}
	if got := gitIn(t, bare, "log", "-1", "--format=%cn <%ce> %s", squash); got != "GitHub <noreply@github.com> topic (#1)" {
		t.Errorf("the squash is %q", got)
	}
	if got := gitIn(t, bare, "rev-parse", "main"); got != moved {
		t.Fatalf("SquashCommit moved main to %s", got)
	}

	// The move is a compare-and-swap on the value read.
	if err := MoveBranch(ctx, bare, "main", squash, main); err == nil {
		t.Error("MoveBranch from a stale old value: no error")
	}
	if err := MoveBranch(ctx, bare, "main", squash, moved); err != nil {
		t.Fatal(err)
	}
	if got := gitIn(t, bare, "rev-parse", "main"); got != squash {
		t.Errorf("main at %s, want %s", got, squash)
	}
}

func TestSquashCommitThatConflicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	base := r.git("rev-parse", "HEAD")
	r.write("a.txt", "mine\n")
	mine := r.commit("mine")
	r.git("checkout", "-q", "-b", "theirs", base)
	r.write("a.txt", "theirs\n")
	theirs := r.commit("theirs")
	_, err := SquashCommit(ctx, r.dir, mine, theirs, "x", "GitHub", "noreply@github.com")
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Paths) != 1 || ce.Paths[0] != "a.txt" {
		t.Fatalf("SquashCommit of a conflict = %v (%#v), want a *ConflictError on a.txt", err, ce)
	}
}

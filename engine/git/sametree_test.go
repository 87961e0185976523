package git

import (
	"context"
	"testing"
)

func TestSameTreeComparesFilesNotHistory(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	base := r.git("rev-parse", "HEAD")
	r.write("a.txt", "a\n")
	r.commit("a")
	withA := r.git("rev-parse", "HEAD")
	// The same files again, by another commit on another parent.
	again := r.git("commit-tree", withA+"^{tree}", "-p", base, "-m", "a again")
	ctx := context.Background()
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{withA, again, true},
		{"HEAD", withA, true},
		{base, withA, false},
	} {
		got, err := SameTree(ctx, r.dir, tc.a, tc.b)
		if err != nil || got != tc.want {
			t.Errorf("SameTree(%s, %s) = %v, %v; want %v", tc.a, tc.b, got, err, tc.want)
		}
	}
	if _, err := SameTree(ctx, r.dir, base, "no-such-commit"); err == nil {
		t.Error("SameTree with a missing commit: no error")
	}
	tree, err := Tree(ctx, r.dir, again)
	if want := r.git("rev-parse", withA+"^{tree}"); err != nil || tree != want {
		t.Errorf("Tree = %q, %v; want %q", tree, err, want)
	}
}

func TestChangeBranch(t *testing.T) {
	t.Parallel()
	if got := ChangeBranch("add-greeting"); got != "set/add-greeting" {
		t.Errorf("ChangeBranch = %q", got)
	}
	for branch, want := range map[string]bool{"set/add-greeting": true, "main": false, "settings": false, "feature/set/x": false} {
		if got := IsChangeBranch(branch); got != want {
			t.Errorf("IsChangeBranch(%q) = %v, want %v", branch, got, want)
		}
	}
}

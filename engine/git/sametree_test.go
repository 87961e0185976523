package git

import (
	"context"
	"testing"
)

// TestSameTree: commits with the same files have the same tree, whatever
// their histories; a commit that changed a file has another.
func TestSameTree(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	first := r.git("rev-parse", "HEAD")
	r.git("commit", "-q", "--allow-empty", "-m", "no change")
	empty := r.git("rev-parse", "HEAD")
	r.write("f", "changed\n")
	changed := r.commit("changes f")
	if same, err := SameTree(ctx, r.dir, first, empty); !same || err != nil {
		t.Errorf("SameTree(first, empty commit) = %v, %v; want true", same, err)
	}
	if same, err := SameTree(ctx, r.dir, first, changed); same || err != nil {
		t.Errorf("SameTree(first, changed) = %v, %v; want false", same, err)
	}
	if _, err := SameTree(ctx, r.dir, first, "no-such-rev"); err == nil {
		t.Error("SameTree of a missing revision: no error")
	}
	if a, err := TreeID(ctx, r.dir, first); err != nil || a != r.git("rev-parse", empty+"^{tree}") {
		t.Errorf("TreeID(first) = %q, %v; want the tree of the empty commit after it", a, err)
	}
	if _, err := TreeID(ctx, r.dir, "no-such-rev"); err == nil {
		t.Error("TreeID of a missing revision: no error")
	}
}

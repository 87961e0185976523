package git

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestCommitFileTouchesNoCheckout: the commit holds the file (under the
// subdirectory it was named from) on top of the parent's tree, and the
// checkout, its index and its branch are as they were.
func TestCommitFileTouchesNoCheckout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	r.write("proj/set.cue", "package p\n")
	r.write("other.txt", "x\n")
	r.commit("skeleton")
	main := r.git("rev-parse", "HEAD")
	r.write("proj/set.cue", "package p // edited, not committed\n")
	r.git("add", "proj/set.cue")
	status := r.git("status", "--porcelain")

	c, err := CommitFile(ctx, filepath.Join(r.dir, "proj"), main, "learnings.cue", []byte("package p\n\n// learned\n"), "learnings: proposed")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.git("rev-parse", c+"^"); got != main {
		t.Errorf("parent = %s, want %s", got, main)
	}
	if got := r.git("show", c+":proj/learnings.cue"); got != "package p\n\n// learned" {
		t.Errorf("learnings.cue = %q", got)
	}
	if got := r.git("show", c+":proj/set.cue"); got != "package p" {
		t.Errorf("set.cue = %q, want main's", got)
	}
	if got := r.git("show", c+":other.txt"); got != "x" {
		t.Errorf("other.txt = %q", got)
	}
	if got := r.git("rev-parse", "HEAD"); got != main {
		t.Errorf("HEAD moved to %s", got)
	}
	if got := r.git("status", "--porcelain"); got != status {
		t.Errorf("status = %q, want %q", got, status)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "proj", "learnings.cue")); !os.IsNotExist(err) {
		t.Errorf("learnings.cue was written to the checkout: %v", err)
	}
}

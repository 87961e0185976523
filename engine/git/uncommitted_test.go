package git

import (
	"context"
	"testing"
)

// Uncommitted sees what `git add -A` would stage and what is staged, and
// not what is ignored.
func TestUncommitted(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	want := func(label string, dirty bool) {
		t.Helper()
		got, err := Uncommitted(ctx, r.dir)
		if err != nil || got != dirty {
			t.Errorf("%s: Uncommitted = %v, %v; want %v", label, got, err, dirty)
		}
	}
	want("clean", false)
	r.write(".gitignore", "build/\n")
	r.commit("ignore build/")
	r.write("build/out.bin", "x")
	want("an ignored file", false)
	r.write("new/dir/file.txt", "new\n")
	want("an untracked file in a new directory", true)
	r.git("add", "-A")
	want("a staged file", true)
	r.commit("add it")
	r.write("notes.txt", "changed\n")
	want("a changed tracked file", true)
	r.git("checkout", "--", "notes.txt")
	want("clean again", false)
}

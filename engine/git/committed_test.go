package git

import (
	"context"
	"maps"
	"path/filepath"
	"testing"
)

// NotCommittedOn names each file whose content main's tree does not hold,
// with how it stands apart, from the project's directory (a subdirectory
// of the repository here), and leaves out the committed and the missing.
func TestNotCommittedOn(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.write("proj/set.cue", "package p\n")
	r.write("proj/docs/spec.md", "# spec\n")
	r.write("proj/same.md", "same\n")
	r.commit("project")
	r.write("proj/docs/spec.md", "# spec, edited\n") // differs
	r.write("proj/new.cue", "package p\n")           // untracked
	r.write("proj/staged.cue", "package p\n")
	r.git("add", "proj/staged.cue") // in the index only
	r.git("switch", "-q", "-c", "side")
	r.write("proj/side.md", "side\n")
	r.git("add", "proj/side.md")
	r.git("commit", "-q", "-m", "side") // committed, but not on main
	r.write("proj/[glob].md", "x\n")    // untracked, a name pathspecs would glob

	got, err := NotCommittedOn(context.Background(), filepath.Join(r.dir, "proj"), "main",
		[]string{"set.cue", "docs/spec.md", "same.md", "new.cue", "staged.cue", "side.md", "[glob].md", "gone.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Drift{
		"docs/spec.md": DiffersFromBranch,
		"new.cue":      Untracked,
		"staged.cue":   NotOnBranch,
		"side.md":      NotOnBranch,
		"[glob].md":    Untracked,
	}
	if !maps.Equal(got, want) {
		t.Errorf("NotCommittedOn = %v, want %v", got, want)
	}
}

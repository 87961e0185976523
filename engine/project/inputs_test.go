package project

import "testing"

// The fix CheckInputsCommitted gives is pasted into a shell: a path the
// shell would split or expand is quoted, a plain one left as it is.
func TestShellWords(t *testing.T) {
	got := shellWords([]string{"set.cue", "docs/my spec.md", "specs/[a].md", "it's.md", "cue.mod/module.cue"})
	want := `set.cue 'docs/my spec.md' 'specs/[a].md' 'it'\''s.md' cue.mod/module.cue`
	if got != want {
		t.Errorf("shellWords = %s, want %s", got, want)
	}
}

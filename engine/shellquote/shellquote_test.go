package shellquote

import (
	"os/exec"
	"testing"
)

// A name the shell would split, expand or run is quoted, a plain one
// left as it is.
func TestWords(t *testing.T) {
	got := Words([]string{"set.cue", "docs/my spec.md", "specs/[a].md", "it's.md", "cue.mod/module.cue"})
	want := `set.cue 'docs/my spec.md' 'specs/[a].md' 'it'\''s.md' cue.mod/module.cue`
	if got != want {
		t.Errorf("Words = %s, want %s", got, want)
	}
}

// What sh reads back from a Word is the name, whatever is in it.
func TestWordReadsBack(t *testing.T) {
	for _, name := range []string{"plain", "", "a;touch pwned", "$(id)", "`id`", "it's", "a\nb", "*", "-n"} {
		out, err := exec.Command("sh", "-c", "printf %s "+Word(name)).Output()
		if err != nil || string(out) != name {
			t.Errorf("sh read %q back from %s: %q, %v", name, Word(name), out, err)
		}
	}
}

package merge

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A branch made again at a candidate that holds the fold of feat gets
// the fold undone: openspec/specs as on main before, the change folder
// back from the archive, the rest of the candidate kept; Unfolded knows
// the tip, and a commit on top of it is not.
func TestUnfoldUndoesTheCandidatesFold(t *testing.T) {
	f := newFixture(t, map[string]string{"openspec/specs/feat/spec.md": "old spec\n"})
	ctx := context.Background()
	f.write(f.wt, "feat.txt", "the feature\n")
	f.write(f.wt, "openspec/specs/feat/spec.md", "new spec\n")
	f.write(f.wt, "openspec/changes/archive/2026-11-27-feat/proposal.md", "why feat\n")
	candidate := f.commit(f.wt, "feat: add the feature\n\nSet-Change: feat")

	if err := Unfold(ctx, f.wt, "feat", candidate); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"feat.txt":                                 "the feature\n",
		"openspec/specs/feat/spec.md":              "old spec\n",
		"openspec/changes/feat/proposal.md":        "why feat\n",
		"openspec/changes/archive/2026-11-27-feat": "",
	} {
		data, err := os.ReadFile(filepath.Join(f.wt, filepath.FromSlash(path)))
		switch {
		case want == "" && err == nil:
			t.Errorf("%s is still there", path)
		case want != "" && string(data) != want:
			t.Errorf("%s holds %q (%v), want %q", path, data, err, want)
		}
	}
	if status := f.git(f.wt, "status", "--porcelain"); status != "" {
		t.Errorf("not committed:\n%s", status)
	}
	tip := f.git(f.wt, "rev-parse", "HEAD")
	if tip == candidate || !Unfolded(ctx, f.root, "feat", candidate, tip) || !Unfolded(ctx, f.root, "feat", candidate, candidate) {
		t.Errorf("Unfolded(%s) over %s: false", tip, candidate)
	}
	f.write(f.wt, "more.txt", "more\n")
	more := f.commit(f.wt, "more work")
	if Unfolded(ctx, f.root, "feat", candidate, more) {
		t.Error("a commit on top of the unfold counts as unfolded")
	}
}

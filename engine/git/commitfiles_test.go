package git

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCommitChangesHasPathAndTrailerValue(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.write("openspec/changes/greet/proposal.md", "p\n")
	r.write("openspec/specs/a/spec.md", "a\n")
	r.commit("add")
	r.remove("openspec/changes/greet/proposal.md")
	r.write("openspec/changes/archive/2026-01-01-greet/proposal.md", "p\n")
	r.write("openspec/specs/a/spec.md", "a2\n")
	r.write("outside.txt", "x\n")
	commit := r.commit("Archive greet\n\nSet-Archive: greet")
	ctx := context.Background()

	got, err := CommitChanges(ctx, r.dir, commit, "openspec/")
	if err != nil {
		t.Fatal(err)
	}
	want := []PathStatus{
		{'A', "openspec/changes/archive/2026-01-01-greet/proposal.md"},
		{'D', "openspec/changes/greet/proposal.md"},
		{'M', "openspec/specs/a/spec.md"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CommitChanges (-want +got):\n%s", diff)
	}
	for path, want := range map[string]bool{"openspec/changes/greet": false, "openspec/changes/archive": true, "outside.txt": true} {
		if has, err := HasPath(ctx, r.dir, commit, path); err != nil || has != want {
			t.Errorf("HasPath(%s) = %v, %v; want %v", path, has, err, want)
		}
	}
	if v, err := TrailerValue(ctx, r.dir, "HEAD", "Set-Archive"); err != nil || v != "greet" {
		t.Errorf("TrailerValue = %q, %v; want greet", v, err)
	}
	if v, err := TrailerValue(ctx, r.dir, "HEAD^", "Set-Archive"); err != nil || v != "" {
		t.Errorf("TrailerValue of a commit without it = %q, %v; want none", v, err)
	}
}

func TestResetKeepRefusesToLoseAnEdit(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	base := r.git("rev-parse", "HEAD")
	r.write("notes.txt", "changed\n")
	r.commit("change notes")
	r.write("notes.txt", "edited, not committed\n")
	ctx := context.Background()
	if err := ResetKeep(ctx, r.dir, base); err == nil {
		t.Fatal("ResetKeep over an edit the move changes: no error")
	}
	if got := r.read("notes.txt"); got != "edited, not committed\n" {
		t.Errorf("after the refused ResetKeep notes.txt = %q", got)
	}
	if err := ResetHard(ctx, r.dir, base); err != nil {
		t.Fatal(err)
	}
	if got := r.read("notes.txt"); got != "line 1\nline 2\nline 3\n" {
		t.Errorf("after ResetHard notes.txt = %q", got)
	}
}

package git

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDirsAtListsOneLevelOfTheCommit(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.write("openspec/changes/add-x/proposal.md", "x\n")
	r.write("openspec/changes/archive/2026-01-01-old/proposal.md", "old\n")
	r.write("openspec/changes/README.md", "not a folder\n")
	r.commit("changes")
	main := r.git("rev-parse", "HEAD")
	r.write("openspec/changes/new/proposal.md", "not committed\n")

	got, err := DirsAt(context.Background(), r.dir, main, "openspec/changes")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"add-x", "archive"}, got); diff != "" {
		t.Errorf("DirsAt (-want +got):\n%s", diff)
	}
	none, err := DirsAt(context.Background(), r.dir, main, "nowhere")
	if err != nil || len(none) != 0 {
		t.Errorf("DirsAt of a missing prefix = %v, %v", none, err)
	}
}

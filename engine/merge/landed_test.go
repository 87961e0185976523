package merge

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/spec"
)

// TestLandedOn reads back, from main's history, each change's commit and
// the requirements its message lists, as squashMessage writes them.
func TestLandedOn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	commit := func(msg string) string {
		t.Helper()
		f.git(f.root, "commit", "-q", "--allow-empty", "-m", msg)
		return f.git(f.root, "rev-parse", "HEAD")
	}
	first := commit(squashMessage(Input{
		Change: plan.Change{Name: "greet", Description: "Greet"},
		Reqs:   []spec.Requirement{{ID: "REQ-GREET-01", Title: "Greet"}, {ID: "REQ-GREET-02", Title: "Greet loudly"}},
	}))
	commit("a commit of a person\n\n- REQ-NOT-01: not set's\n")
	second := commit(squashMessage(Input{Change: plan.Change{Name: "tools"}}))
	got, err := LandedOn(context.Background(), f.root, "main")
	if err != nil {
		t.Fatal(err)
	}
	want := []Landed{
		{Change: "tools", Commit: second},
		{Change: "greet", Commit: first, Requirements: []string{"REQ-GREET-01", "REQ-GREET-02"},
			Titles: map[string]string{"REQ-GREET-01": "Greet", "REQ-GREET-02": "Greet loudly"}, Title: "Greet"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LandedOn (-want +got):\n%s", diff)
	}
}

package github

import (
	"context"
	"strconv"
	"testing"

	"github.com/set-engine/set/engine/forge/githubtest"
)

// TestLookLeavesOutAChangeRequestTheReviewerApproved: a reviewer who
// requested changes and then approved has approved; another reviewer's
// request, and one made again after an approval, still count.
func TestLookLeavesOutAChangeRequestTheReviewerApproved(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{})
	ctx := context.Background()
	pr, _ := f.open("a")
	if _, err := f.server.RequestChanges(1, "bob", "no"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.server.RequestChanges(1, "carol", "not yet"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.server.Approve(1, "bob", "fine after all"); err != nil {
		t.Fatal(err)
	}
	look, err := f.client.Look(ctx, pr)
	if err != nil || len(look.ChangesRequested) != 1 || look.ChangesRequested[0].Author != "carol" {
		t.Fatalf("Look = %+v, %v; want carol's review only", look.ChangesRequested, err)
	}
	if _, err := f.server.Approve(1, "carol", "ok"); err != nil {
		t.Fatal(err)
	}
	again, err := f.server.RequestChanges(1, "carol", "one more thing")
	if err != nil {
		t.Fatal(err)
	}
	look, err = f.client.Look(ctx, pr)
	if err != nil || len(look.ChangesRequested) != 1 || look.ChangesRequested[0].ID != strconv.FormatInt(again, 10) {
		t.Fatalf("Look = %+v, %v; want carol's second request only", look.ChangesRequested, err)
	}
}

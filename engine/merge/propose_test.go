package merge

import (
	"strings"
	"testing"

	"github.com/set-engine/set/engine/forge"
	"github.com/set-engine/set/engine/journal"
)

// TestStatuses: the candidate's statuses are its own integration
// attempt's gates, then the verify gates the integration stack does not
// run, each gate once; a gate that failed without blocking, or checked
// nothing, did not stop the change.
func TestStatuses(t *testing.T) {
	got := statuses([]journal.VerifyGateData{
		{Stage: journal.StageVerify, Gate: "lint", Result: "pass", DurationMS: 1200, Attempt: 2},
		{Stage: journal.StageVerify, Gate: "test", Result: "pass", DurationMS: 3000, Attempt: 2},
		{Stage: journal.StageVerify, Gate: "review", Result: "warn", DurationMS: 500, Attempt: 2},
		{Stage: journal.StageIntegration, Gate: "test", Result: "fail", Attempt: 1},
		{Stage: journal.StageIntegration, Gate: "test", Result: "pass", DurationMS: 4000, Attempt: 2},
		{Stage: journal.StageIntegration, Gate: "docs", Result: "skip", Reason: "no docs", Attempt: 2},
	}, 2)
	want := []forge.Status{
		{Context: "set/test", State: forge.StatusSuccess, Description: "passed in 4s"},
		{Context: "set/docs", State: forge.StatusSuccess, Description: "skipped: no docs"},
		{Context: "set/lint", State: forge.StatusSuccess, Description: "verify: passed in 1.2s"},
		{Context: "set/review", State: forge.StatusSuccess, Description: "verify: failed in 500ms, not blocking"},
	}
	if len(got) != len(want) {
		t.Fatalf("statuses = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("status %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestBranchTakenSaysHowWithAnOpenPullRequest: a branch someone pushed
// to while its pull request is open is put back at set's last push, not
// deleted (deleting it closes the pull request, and the change fails as
// rejected); a branch with no pull request may be deleted.
func TestBranchTakenSaysHowWithAnOpenPullRequest(t *testing.T) {
	open := (&BranchTakenError{Remote: "origin", Branch: "set/alpha", Commit: "1111111111aaaa", PullRequest: 7, Pushed: "2222222222bbbb"}).Error()
	for _, want := range []string{"git push --force-with-lease=refs/heads/set/alpha:1111111111aaaa origin 2222222222bbbb:refs/heads/set/alpha", "deleting the branch would close pull request #7"} {
		if !strings.Contains(open, want) {
			t.Errorf("%s\nsays nothing of %q", open, want)
		}
	}
	if strings.Contains(open, "--delete") {
		t.Errorf("%s\nsays to delete the branch of an open pull request", open)
	}
	if none := (&BranchTakenError{Remote: "origin", Branch: "set/alpha", Commit: "1111111111aaaa"}).Error(); !strings.Contains(none, "git push origin --delete set/alpha") {
		t.Errorf("%s\nsays nothing of deleting the branch", none)
	}
}

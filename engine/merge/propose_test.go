package merge

import (
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

package state

import (
	"testing"

	"github.com/hexops/autogold/v2"

	"github.com/set-engine/set/engine/journal"
)

// TestLifecycleGolden pins the change lifecycle: a change to it shows in
// review as a change of this golden.
func TestLifecycleGolden(t *testing.T) {
	autogold.ExpectFile(t, autogold.Raw(Lifecycle()))
}

func TestLifecycleNamesKnownStatuses(t *testing.T) {
	for from, next := range transitions {
		if !from.Valid() {
			t.Errorf("the lifecycle has unknown status %q", from)
		}
		for _, to := range next {
			if !to.Valid() {
				t.Errorf("%s → unknown status %q", from, to)
			}
			if to == from {
				t.Errorf("%s → itself: a change does not move to where it is", from)
			}
		}
	}
	// Every failure and every block can be retried, and only they go
	// back to pending.
	for _, s := range Statuses() {
		if want := s.Failed() || s == DepBlocked; s.CanBecome(Pending) != want {
			t.Errorf("%s → pending: %v, want %v", s, s.CanBecome(Pending), want)
		}
	}
	if err := CheckTransition(Archived, Pending); err == nil {
		t.Error("an archived change went back to pending")
	}
	if err := CheckTransition(Verifying, Queued); err != nil {
		t.Error(err)
	}
}

// TestRetryRestartsBudgets: a failed change retried by a new run (→
// pending) starts its retry and iteration budgets again.
func TestRetryRestartsBudgets(t *testing.T) {
	steps := append(lifecycle[:2:2],
		step{"add-login", to(Pending, Dispatched, "")},
		step{"add-login", to(Dispatched, Implementing, "")},
		step{"add-login", journal.AgentIterationData{Iteration: 3}},
		step{"add-login", to(Implementing, Verifying, "")},
		step{"add-login", journal.RetryScheduledData{Stage: "verify", RetryContext: "boom"}},
		step{"add-login", to(Verifying, FailedRetryBudget, "spent")},
		step{"add-login", to(FailedRetryBudget, Pending, "retried by a new setctl apply")},
	)
	_, events := writeJournal(t, steps)
	s, err := Rebuild(events)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Changes["add-login"]
	if c.Status != Pending || c.IterationBase != 3 || c.VerifyAttempts != 0 || c.RetryContext != "" || c.Error != "" {
		t.Fatalf("retried change = %+v", c)
	}
}

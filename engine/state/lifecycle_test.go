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

// TestConflictCountsApart: a merge conflict sends the change back on the
// conflict stage: it counts in ConflictAttempts, not in the verify or
// integration retries, a resumed run hears of it as a conflict, and a
// retry from pending starts it again. A journal from before the conflict
// stage (a conflict scheduled on the integration stage) still counts it
// there.
func TestConflictCountsApart(t *testing.T) {
	conflict := journal.ChangeIntegrationFailedData{Reason: "conflict", Paths: []string{"README.md"}, RetryContext: "merge it", Attempt: 1}
	steps := append(lifecycle[:2:2],
		step{"add-login", to(Pending, Dispatched, "")},
		step{"add-login", to(Dispatched, Implementing, "")},
		step{"add-login", to(Implementing, Verifying, "")},
		step{"add-login", to(Verifying, Queued, "")},
		step{"add-login", to(Queued, Integrating, "")},
		step{"add-login", conflict},
		step{"add-login", to(Integrating, IntegrationFailed, "conflict")},
	)
	_, events := writeJournal(t, steps)
	s, err := Rebuild(events)
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Changes["add-login"]; c.RetryStage != StageConflict || c.RetryContext != "merge it" {
		t.Fatalf("after the conflict: retry stage %q, context %q", c.RetryStage, c.RetryContext)
	}
	steps = append(steps,
		step{"add-login", journal.RetryScheduledData{Stage: StageConflict, Attempt: 1, Budget: 6, Reason: "conflict", RetryContext: "merge it"}},
		step{"add-login", to(IntegrationFailed, Implementing, "")},
		step{"add-login", to(Implementing, Verifying, "")},
		step{"add-login", to(Verifying, Queued, "")},
		step{"add-login", to(Queued, Integrating, "")},
		step{"add-login", conflict},
		step{"add-login", to(Integrating, IntegrationFailed, "conflict")},
		// A journal of an earlier set: the conflict on the integration stage.
		step{"add-login", journal.RetryScheduledData{Stage: StageIntegration, Attempt: 1, Budget: 2, Reason: "conflict", RetryContext: "merge it"}},
	)
	_, events = writeJournal(t, steps)
	if s, err = Rebuild(events); err != nil {
		t.Fatal(err)
	}
	c := s.Changes["add-login"]
	if c.ConflictAttempts != 1 || c.IntegrationAttempts != 1 || c.VerifyAttempts != 0 || c.RetryStage != StageIntegration {
		t.Fatalf("conflicts %d, integration %d, verify %d, stage %q; want 1, 1, 0, integration",
			c.ConflictAttempts, c.IntegrationAttempts, c.VerifyAttempts, c.RetryStage)
	}
	steps = append(steps,
		step{"add-login", to(IntegrationFailed, FailedRetryBudget, "spent")},
		step{"add-login", to(FailedRetryBudget, Pending, "retried by a new setctl apply")},
	)
	_, events = writeJournal(t, steps)
	if s, err = Rebuild(events); err != nil {
		t.Fatal(err)
	}
	if c := s.Changes["add-login"]; c.ConflictAttempts != 0 || c.IntegrationAttempts != 0 {
		t.Fatalf("a retried change kept its conflicts: %+v", c)
	}
}

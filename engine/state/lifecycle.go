package state

import (
	"fmt"
	"slices"
)

// transitions is the change lifecycle: for every status, the statuses a
// change in it may go to. A STATE_CHANGE not in it is a bug of the engine
// (Apply refuses it); a status absent from it goes nowhere.
//
// The way to main is pending → dispatched → implementing → verifying →
// queued → integrating → merged → archived. A blocking gate failure goes
// back to the agent (verify-failed or integration-failed → implementing)
// while the stage's retry budget lasts. A worker's change (dispatched to
// integration-failed) may fail at any point for a panic or for wall time
// spent; the agent loop ends implementing on its iteration and token
// budgets, a stall or an agent error. A change restarted after a crash may
// be found on main while queued or integrating (→ merged). A pending
// change whose dependency failed is dep-blocked. Failed and dep-blocked
// changes go back to pending when a new `setctl apply` retries them.
// Archived is final. A worker's change may be paused (by a sentinel rule,
// or by setctl pause) and goes back, when resumed, to implementing or
// verifying (the status it was paused in, see Change.PausedFrom); its wall
// time may end while it is paused.
//
// In pull-request mode a change whose integration stack passed goes
// integrating → in-review (its pull request opened) instead of merged:
// the forge merges it (→ merged) or a person closes it (→
// failed:rejected); a review that requests changes or a failed check
// sends it back to its agent (→ integration-failed → implementing, on
// the integration retry budget; or failed:retry_budget_exhausted), and
// it comes back through the queue to the same pull request. A
// rejected change, like any failure, goes back to pending when a new
// `setctl apply` retries it.
var transitions = map[Status][]Status{
	Pending:    {Dispatched, DepBlocked, FailedAgentError},
	Dispatched: {Implementing, Paused, FailedWallTime, FailedAgentError},
	// (failed:token_budget_exhausted is in journals of a set whose token
	// budget failed a change; the sentinel's over_budget rule pauses it.)
	Implementing: {Verifying, Paused, FailedIterationBudget, FailedTokenBudget, FailedWallTime, FailedStalled, FailedAgentError},
	Verifying:    {Queued, VerifyFailed, Paused, FailedRetryBudget, FailedWallTime, FailedStalled, FailedAgentError},
	VerifyFailed: {Implementing, Paused, FailedWallTime, FailedAgentError},
	Queued:       {Integrating, Merged},
	// integrating → queued: the merge queue integrates the change again
	// (a change ahead of it failed, or it conflicts with one).
	Integrating: {Merged, IntegrationFailed, Queued, InReview},
	// in-review → queued: the pull request conflicts with the main,
	// which moved; the change is integrated again onto it.
	InReview:          {Merged, IntegrationFailed, FailedRejected, Queued},
	IntegrationFailed: {Implementing, Paused, FailedRetryBudget, FailedWallTime, FailedAgentError},
	Merged:            {Archived},
	Paused:            {Implementing, Verifying, FailedWallTime, FailedAgentError},
	DepBlocked:        {Pending},

	FailedRetryBudget:     {Pending},
	FailedIterationBudget: {Pending},
	FailedTokenBudget:     {Pending},
	FailedWallTime:        {Pending},
	FailedStalled:         {Pending},
	FailedAgentError:      {Pending},
	FailedRejected:        {Pending},
}

// CanBecome reports whether a change in status s may go to status to: the
// transition is in the lifecycle.
func (s Status) CanBecome(to Status) bool {
	return slices.Contains(transitions[s], to)
}

// CheckTransition returns an error unless a change in status from may go
// to status to. Writers check a transition with it before they record it.
func CheckTransition(from, to Status) error {
	if !to.Valid() {
		return fmt.Errorf("unknown status %q", to)
	}
	if !from.CanBecome(to) {
		return fmt.Errorf("%s → %s is not a transition of the change lifecycle", from, to)
	}
	return nil
}

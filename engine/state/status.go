package state

import "strings"

// Status is where a change stands (spec.Status is how a requirement
// stands against main, another thing).
type Status string

// The change statuses. A change starts pending; archived, dep-blocked and
// the failed:* statuses are terminal for a run.
const (
	Pending           Status = "pending"
	Dispatched        Status = "dispatched"
	Implementing      Status = "implementing"
	Verifying         Status = "verifying"
	VerifyFailed      Status = "verify-failed"
	Queued            Status = "queued"
	Integrating       Status = "integrating"
	IntegrationFailed Status = "integration-failed"
	// InReview: in pull-request mode, the change's pull request is open
	// on the forge, which merges or closes it.
	InReview Status = "in-review"
	Merged   Status = "merged"
	Archived Status = "archived"
	Paused   Status = "paused"
	// DepBlocked: a change it depends on failed.
	DepBlocked Status = "dep-blocked"

	// FailedRetryBudget: a blocking gate failed with the stage's retry
	// budget (budgets.retries.verify, .integration or .conflicts) spent.
	FailedRetryBudget Status = "failed:retry_budget_exhausted"
	// FailedIterationBudget: the agent used budgets.iterations without
	// finishing.
	FailedIterationBudget Status = "failed:iteration_budget_exhausted"
	// FailedTokenBudget: the change used its size's budgets.tokens.
	FailedTokenBudget Status = "failed:token_budget_exhausted"
	// FailedWallTime: the change was still at work when budgets.wallTime
	// was spent.
	FailedWallTime   Status = "failed:wall_time_exhausted"
	FailedStalled    Status = "failed:stalled"
	FailedAgentError Status = "failed:agent_error"
	// FailedRejected: in pull-request mode, the change's pull request was
	// closed without being merged.
	FailedRejected Status = "failed:rejected"
)

// failedPrefix starts every failed status.
const failedPrefix = "failed:"

// Statuses lists every status, in lifecycle order.
func Statuses() []Status {
	return []Status{
		Pending, Dispatched, Implementing, Verifying, VerifyFailed, Queued,
		Integrating, IntegrationFailed, InReview, Merged, Archived, Paused, DepBlocked,
		FailedRetryBudget, FailedIterationBudget, FailedTokenBudget, FailedWallTime,
		FailedStalled, FailedAgentError, FailedRejected,
	}
}

// Valid reports whether s is one of Statuses.
func (s Status) Valid() bool {
	for _, v := range Statuses() {
		if s == v {
			return true
		}
	}
	return false
}

// Terminal reports whether a change in status s is done for the run:
// archived, dep-blocked or failed.
func (s Status) Terminal() bool {
	return s == Archived || s == DepBlocked || s.Failed()
}

// Failed reports whether s is one of the failed:* statuses.
func (s Status) Failed() bool { return strings.HasPrefix(string(s), failedPrefix) }

// Active reports whether a change in status s is in flight: dispatched to
// its worktree and not yet merged, failed or paused. A change in review
// is not: it waits for the forge, not for a worker or the merge queue.
func (s Status) Active() bool {
	switch s {
	case Dispatched, Implementing, Verifying, VerifyFailed, Queued, Integrating, IntegrationFailed:
		return true
	}
	return false
}

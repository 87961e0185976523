// Package state is the projection of a run's journal: where every change
// stands, rebuilt from events.jsonl at any time and snapshotted to
// state.json. It also holds the run lock that keeps a project to one
// `setctl apply` at a time.
//
// The journal is the source of truth. State is a pure function of the
// events it has applied: replaying the same events in Seq order gives a
// deep-equal State, whether applied one by one as they happen, rebuilt in
// one go from events.jsonl, or resumed from a saved snapshot.
package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm/usage"
	"github.com/set-engine/set/engine/plan"
)

// FormatVersion is the version of state.json this build writes and reads.
const FormatVersion = 1

// Stages of a change's gates and retries, as named in events.
// StageConflict names no gates: it is the retry stage of a merge
// conflict, which has a budget of its own (RETRY_SCHEDULED).
const (
	StageVerify      = journal.StageVerify
	StageIntegration = journal.StageIntegration
	// StageBaseline is the stage of a gate judging main before the first
	// dispatch (baseline.Stage).
	StageBaseline = "baseline"
	StageConflict = journal.StageConflict
)

// State is where a run stands after the events up to LastSeq
// (sentinel.state is a rule's ladder for one change, another thing).
type State struct {
	Version     int    `json:"version"`
	Run         string `json:"run"`
	Fingerprint string `json:"fingerprint"`
	// LastSeq is the Seq of the last event applied; events up to it are
	// ignored by Apply.
	LastSeq int64 `json:"lastSeq"`
	// Started is when the latest run started: its first RUN_STARTED, kept
	// when the run is resumed, so that a resumed run is timed as a whole.
	// Updated is the time of the last event applied.
	Started  time.Time `json:"started"`
	Updated  time.Time `json:"updated"`
	Finished bool      `json:"finished"`
	// Result is RUN_FINISHED's result: "success", "failed" or
	// "interrupted"; "" while a run is going.
	Result string `json:"result"`
	// Order is the plan order of the changes. It lists every key of
	// Changes exactly once.
	Order   []string           `json:"order"`
	Changes map[string]*Change `json:"changes"`
	// Plan identifies the latest PLAN_CREATED: the changes it named and
	// the fingerprint of the configuration and spec it was made from.
	Plan PlanIdentity `json:"plan"`
	// Accepted maps a gate to the failures main had that the run accepts
	// (BASELINE_ACCEPTED): a change fails that gate only on failures not
	// among them. A new run (RUN_STARTED, not resumed) accepts nothing.
	Accepted map[string][]string `json:"accepted,omitempty"`
	// PID is the process of the latest run's setctl apply, MaxParallel
	// how many changes it works on at once, and MainBranch the branch it
	// moves (RUN_STARTED; "" when the journal does not say).
	PID         int    `json:"pid,omitempty"`
	MaxParallel int    `json:"maxParallel,omitempty"`
	MainBranch  string `json:"mainBranch,omitempty"`
	// Budgets are the budgets of the latest run; nil when its RUN_STARTED
	// did not record them.
	Budgets *journal.Budgets `json:"budgets,omitempty"`
	// CrossCutting are the latest run's crossCutting globs (RUN_STARTED):
	// changes whose scopes may touch one are not at work at once.
	CrossCutting []string `json:"crossCutting,omitempty"`
	// Usage sums the model calls of no change (the planner's), by role.
	Usage map[string]Usage `json:"usage,omitempty"`
	// RunUsage sums every model call of the latest run, of a change or
	// of none; a new run (RUN_STARTED, not resumed) starts again from 0.
	RunUsage Usage `json:"runUsage,omitzero"`
	// Replans counts the latest run's replan cycles (REPLANNED); a new
	// run (RUN_STARTED, not resumed) starts again from 0.
	Replans int `json:"replans,omitempty"`
	// Baseline is the gate judging main now, before the run dispatches
	// anything (BASELINE_GATE_STARTED, until its BASELINE_GATE): an
	// Activity of kind ActivityGate in stage StageBaseline. nil when no
	// gate judges main, and always once the run is over.
	Baseline *Activity `json:"baseline,omitempty"`
}

// PlanIdentity is what tells two plans apart when a run resumes: the same
// changes, from the same configuration and spec files. (git HEAD and
// main's living specs are left out: a run moves main itself.)
type PlanIdentity struct {
	Changes []string          `json:"changes"`
	Config  string            `json:"config"`
	Specs   map[string]string `json:"specs"`
	// Work is the plan's Work of each change (plan.Plan.Work), by name.
	Work map[string]string `json:"work,omitempty"`
}

// Change is where one change stands: the projection of its events. The
// change itself, as planned, is a config.Change (plan.Change); report.Change
// is this as setctl status shows it.
type Change struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	// Since is when the change took its status (when it was planned,
	// for a change still pending).
	Since time.Time `json:"since"`
	// Size and Requirements are the plan's: the size its token budget
	// goes by, and the IDs of the requirements it implements.
	Size         string   `json:"size,omitempty"`
	Requirements []string `json:"requirements"`
	// Activity is what runs for the change now; nil when nothing does.
	Activity *Activity `json:"activity,omitempty"`
	// Gates counts its gate verdicts; GateResults is the latest verdict
	// of each of its gates, by "<stage>/<gate>": a gate run again (a
	// retry, a resume, a merge-conflict round) counts there once.
	Gates       GateCounts        `json:"gates"`
	GateResults map[string]string `json:"gateResults,omitempty"`
	// Usage sums its model calls by role ("implement": its agent's).
	Usage map[string]Usage `json:"usage,omitempty"`
	// TimeInMS is, per status, the milliseconds the change spent in it
	// while a run was going; ClockStart is when the interval not yet
	// counted began (zero when none is running: no run is going, or the
	// status is terminal). See TimeIn.
	TimeInMS   map[Status]int64 `json:"timeInMs,omitempty"`
	ClockStart time.Time        `json:"clockStart,omitzero"`
	// Iteration is the number of the last agent iteration (1-based).
	// Numbers never go back: a retry from pending and a later plan that
	// starts the change again (continueNumbers) go on from it, and a new
	// run from an iteration an earlier run left unfinished
	// (skipUnfinishedIteration).
	Iteration int `json:"iteration"`
	// StartedIteration is the number of the last agent iteration started
	// (AGENT_SESSION_DECISION): one more than Iteration while an
	// iteration runs or after one was interrupted before its
	// AGENT_ITERATION, else equal to it (or 0, in a journal without
	// decisions: the report takes the larger of the two). It stays when
	// the run ends, and when a plan starts the change again.
	StartedIteration int `json:"startedIteration,omitempty"`
	// Agent is the adapter of its last agent iteration started ("claude",
	// "codex", "exec", "replay"), "" before one, or in a journal that did
	// not record it: an exec agent reports no model calls, so its
	// change's tokens say nothing of its work.
	Agent string `json:"agent,omitempty"`
	// IterationBase is Iteration when the change was last retried after a
	// failure, or started again by a later plan: the iteration budget
	// counts from it.
	IterationBase int `json:"iterationBase"`
	// VerifyAttempts, IntegrationAttempts and ConflictAttempts count the
	// retries used, per stage (RETRY_SCHEDULED events): a merge conflict
	// counts in ConflictAttempts only (in a journal from before the
	// conflict stage, in IntegrationAttempts, as it was charged then).
	VerifyAttempts      int `json:"verifyAttempts"`
	IntegrationAttempts int `json:"integrationAttempts"`
	ConflictAttempts    int `json:"conflictAttempts,omitempty"`
	// VerifyRound is the attempt number of the change's last verify
	// round: the highest of its verify gates' GATE_STARTED and
	// VERIFY_GATE events. It never goes back, also when a merge conflict
	// or a retry from pending sends the change through verify again, or
	// a later plan starts the change again (continueNumbers), so the
	// next round (VerifyRound+1) has its own number and logs in every run
	// of the project.
	VerifyRound int `json:"verifyRound,omitempty"`
	// Tokens and CostUSD sum the change's LLM_CALL events.
	Tokens    usage.Tokens `json:"tokens"`
	CostUSD   float64      `json:"costUsd"`
	Worktree  string       `json:"worktree,omitempty"`
	Branch    string       `json:"branch,omitempty"`
	Base      string       `json:"base,omitempty"`
	SessionID string       `json:"sessionId,omitempty"`
	// LastGate is "<stage>/<gate>" of the last VERIFY_GATE event and
	// LastResult its result.
	LastGate   string `json:"lastGate,omitempty"`
	LastResult string `json:"lastResult,omitempty"`
	// RetryContext is the retry context of the last failure: the one the
	// agent's next iteration is given, until a retry of the change from
	// pending clears it. RetryStage is the stage that failure was in
	// ("verify", "integration" or "conflict"): a run resumed while the
	// agent works on it gives it the same retry context, counted against
	// that stage.
	RetryContext string `json:"retryContext,omitempty"`
	RetryStage   string `json:"retryStage,omitempty"`
	// IterationContext is what the last agent iteration told the next
	// one of where it stopped (AGENT_ITERATION's Next), while the agent
	// is still at work on the change (implementing, or paused from it):
	// a run resumed there gives it to the next iteration in place of
	// RetryContext.
	IterationContext string `json:"iterationContext,omitempty"`
	// QueuedHead is the verified head the change last entered the merge
	// queue with (MERGE_QUEUED): each integration attempt starts from it.
	QueuedHead string `json:"queuedHead,omitempty"`
	// IntegrationTries counts the merge queue's integration attempts of
	// the change: the highest attempt of its INTEGRATION_ATTEMPT events
	// and integration gates, across runs, also those before a later plan
	// started it again (continueNumbers), so the next attempt
	// (IntegrationTries+1) has its own number and logs.
	IntegrationTries int    `json:"integrationTries,omitempty"`
	MergedCommit     string `json:"mergedCommit,omitempty"`
	ArchiveCommit    string `json:"archiveCommit,omitempty"`
	// PullRequest is, in pull-request mode, the change's pull request
	// (PULL_REQUEST_OPENED) and what of it was sent back to the agent;
	// nil before one was opened, and again once a retry from pending
	// starts over a change whose pull request was closed
	// (failed:rejected). A change that failed otherwise keeps it: that
	// pull request may still be open, or have been merged since, and the
	// retry looks at it first (merge.Propose), neither opening a second
	// one nor sending its reviews back again.
	PullRequest *PullRequest `json:"pullRequest,omitempty"`
	// Pushed are the commits set pushed to the remote branch
	// set/<change> (PUSHING with a Branch), oldest first: that branch is
	// set's only while it holds one of them, or nothing.
	Pushed []string `json:"pushed,omitempty"`
	// Error is why the change failed, is blocked or is paused; "" in any
	// other status.
	Error string `json:"error,omitempty"`
	// PausedFrom is the status a paused change was paused in, the one a
	// resume returns it to ("" unless paused).
	PausedFrom Status `json:"pausedFrom,omitempty"`
	// Restarts counts the sentinel's restarts and redispatches of the
	// change (SENTINEL_ACTION).
	Restarts int `json:"restarts,omitempty"`
	// Work is what the latest plan naming the change asked of it
	// (plan.Plan.Work): its progress is kept only by a plan that asks the
	// same.
	Work      string   `json:"work,omitempty"`
	DependsOn []string `json:"dependsOn"`
	// Scope is the plan's: the path globs the change may touch (none:
	// any file).
	Scope     []string  `json:"scope,omitempty"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// PullRequest is a change's pull request as the journal has it.
type PullRequest struct {
	Number int    `json:"number"`
	ID     string `json:"id"`
	URL    string `json:"url"`
	Branch string `json:"branch"`
	// Head is the candidate it was last opened or updated with, and
	// Attempt that candidate's integration attempt.
	Head    string `json:"head"`
	Attempt int    `json:"attempt,omitempty"`
	// BranchTip is where the change's local branch went back to then
	// (PULL_REQUEST_OPENED): a branch still there holds nothing the
	// pull request lacks.
	BranchTip string `json:"branchTip,omitempty"`
	// Way is how the forge merges it ("" for a person), with the merge
	// queue's state of the entry.
	Way        string `json:"way,omitempty"`
	QueueState string `json:"queueState,omitempty"`
	// Sent are the forge IDs of the reviews and checks sent back to the
	// agent (PULL_REQUEST_FEEDBACK), in the order they were: a resumed
	// run sends none of them again.
	Sent []string `json:"sent,omitempty"`
	// Sending are those of Sent journaled while the change was in review
	// and since: a run stopped before it sent the change back to its
	// agent with them leaves them here, and the next run sends them.
	Sending []string `json:"sending,omitempty"`
}

// New returns the state before any event.
func New() *State {
	return &State{Version: FormatVersion, Changes: map[string]*Change{}}
}

// Apply applies e to s. Events must come in Seq order: one with a Seq at or
// below s.LastSeq was applied already and is ignored, so replaying a journal
// over a snapshot is harmless; a gap in Seq is fine. An event that names a
// change s does not know, whose payload does not decode, or a STATE_CHANGE
// that does not start from the change's status or is no transition of the
// lifecycle (see CanBecome), is an error naming its Seq, and leaves s
// unchanged.
func Apply(s *State, e journal.Event) error {
	if e.Seq <= s.LastSeq {
		return nil
	}
	var c *Change
	if e.Change != "" {
		if c = s.Changes[e.Change]; c == nil {
			return fmt.Errorf("event %d (%s): unknown change %q", e.Seq, e.Type, e.Change)
		}
	}
	// GATE_SET_EXPANDED, MONITOR_HEARTBEAT,
	// BUDGET_EXCEEDED, REPAIRED, and types of a newer set have no entry:
	// they are recorded, but no field of the projection depends on them.
	// Likewise a RETRY_SCHEDULED of a newer set's stage counts against no
	// budget (applyRetryScheduled).
	// (BASELINE_GATE's verdicts are cached in .set/baseline.json; the
	// projection only ends the Baseline activity with it.)
	failed, _, err := projection.Handle(target{s, c}, e)
	if err != nil {
		return err
	}
	if failed != nil {
		return failed
	}
	if s.Version == 0 {
		s.Version = FormatVersion
	}
	at := e.Time.UTC()
	s.LastSeq, s.Updated = e.Seq, at
	if c != nil {
		c.UpdatedAt = at
	}
	return nil
}

// target is what an event applies to: the state, and the change the
// event names (nil when it names none).
type target struct {
	s *State
	c *Change
}

// projection is what each event type does to the state: the entry of a
// type applies an event of it, or returns why it cannot. Each entry
// checks everything before it changes the state. The views of setctl
// describe events from a table of the same kind (journal.Table).
var projection = journal.NewTable(
	runHandler(applyPlanCreated),
	runHandler(applyRunStarted),
	runHandler(applyBaselineAccepted),
	runHandler(applyBaselineGateStarted),
	runHandler(applyBaselineGate),
	runHandler(applyRunFinished),
	// LLM_CALL of no change (the planner's) counts against no change.
	runHandler(applyLLMCall),
	runHandler(func(s *State, _ *Change, _ journal.Event, d journal.ReplannedData) error {
		s.Replans = d.Cycle
		return nil
	}),

	changeHandlerAt(applyStateChange),
	changeHandler(applyDispatch),
	changeHandler(func(c *Change, d journal.MergeQueuedData) error {
		c.QueuedHead = d.Head
		return nil
	}),
	changeHandler(func(c *Change, d journal.IntegrationAttemptData) error {
		c.IntegrationTries = max(c.IntegrationTries, d.Attempt)
		return nil
	}),
	changeHandlerAt(applySessionDecision),
	changeHandlerAt(applyIteration),
	changeHandlerAt(applyGateStarted),
	changeHandlerAt(applyVerifyGate),
	changeHandler(applyRetryScheduled),
	changeHandler(applyIntegrationFailed),
	changeHandler(applyMerged),
	changeHandler(applyArchived),
	changeHandler(func(c *Change, d journal.PushingData) error {
		if d.Branch != "" {
			c.Pushed = append(c.Pushed, d.Commit)
		}
		return nil
	}),
	changeHandler(func(c *Change, d journal.PullRequestOpenedData) error {
		pr := &PullRequest{Number: d.Number, ID: d.ID, URL: d.URL, Branch: d.Branch, Head: d.Head, BranchTip: d.BranchTip, Attempt: d.Attempt, Way: d.Way, QueueState: d.QueueState}
		if old := c.PullRequest; old != nil && old.Number == d.Number {
			pr.Sent, pr.Sending = old.Sent, old.Sending
		}
		c.PullRequest = pr
		return nil
	}),
	changeHandler(func(c *Change, d journal.PullRequestFeedbackData) error {
		if c.PullRequest == nil {
			return errors.New("feedback on no pull request")
		}
		c.PullRequest.Sent = append(c.PullRequest.Sent, d.ID)
		c.PullRequest.Sending = append(c.PullRequest.Sending, d.ID)
		return nil
	}),
	changeHandler(applySentinelAction),
)

// runHandler handles events of payload T that may or may not name a
// change (c is nil when they do not). An error of apply is named by the
// event.
func runHandler[T journal.Payload](apply func(s *State, c *Change, e journal.Event, d T) error) journal.Entry[target, error] {
	return journal.On(func(t target, e journal.Event, d T) error {
		if err := apply(t.s, t.c, e, d); err != nil {
			return fmt.Errorf("event %d (%s): %w", e.Seq, e.Type, err)
		}
		return nil
	})
}

// changeOnly handles events of payload T that must name a change: one
// that names none is an error.
func changeOnly[T journal.Payload](apply func(s *State, c *Change, e journal.Event, d T) error) journal.Entry[target, error] {
	return runHandler(func(s *State, c *Change, e journal.Event, d T) error {
		if c == nil {
			return errors.New("names no change")
		}
		return apply(s, c, e, d)
	})
}

// changeHandler handles events of payload T that must name a change.
func changeHandler[T journal.Payload](apply func(c *Change, d T) error) journal.Entry[target, error] {
	return changeOnly(func(_ *State, c *Change, _ journal.Event, d T) error { return apply(c, d) })
}

// changeHandlerAt handles events of payload T that must name a change,
// and need the state and the event's time.
func changeHandlerAt[T journal.Payload](apply func(s *State, c *Change, at time.Time, d T) error) journal.Entry[target, error] {
	return changeOnly(func(s *State, c *Change, e journal.Event, d T) error { return apply(s, c, e.Time.UTC(), d) })
}

func applyPlanCreated(s *State, _ *Change, e journal.Event, d journal.PlanCreatedData) error {
	return applyPlan(s, d, e.Time.UTC())
}

// applyRunStarted starts a run. What a killed run (one without
// RUN_FINISHED) left is settled first: its activities are over, and its
// changes' clocks stop at its last event.
func applyRunStarted(s *State, _ *Change, e journal.Event, d journal.RunStartedData) error {
	at := e.Time.UTC()
	for _, c := range s.Changes {
		c.stopClock(s.Updated)
		c.Activity = nil
	}
	s.Baseline = nil
	if e.Run != s.Run {
		for _, c := range s.Changes {
			c.skipUnfinishedIteration()
		}
	}
	if !d.Resumed || e.Run != s.Run || s.Started.IsZero() {
		s.Started = at
	}
	s.Run, s.Fingerprint = e.Run, d.Fingerprint
	s.Finished, s.Result = false, ""
	s.PID, s.MaxParallel, s.MainBranch, s.Budgets = d.PID, d.MaxParallel, d.MainBranch, d.Budgets
	s.CrossCutting = d.CrossCutting
	if !d.Resumed {
		s.Accepted, s.Replans, s.RunUsage = nil, 0, Usage{}
	}
	for _, c := range s.Changes {
		c.startClock(s, at)
	}
	return nil
}

// applyBaselineGateStarted starts the Baseline activity: a gate judges
// main.
func applyBaselineGateStarted(s *State, _ *Change, e journal.Event, d journal.BaselineGateStartedData) error {
	if d.Gate == "" {
		return errors.New("names no gate")
	}
	s.Baseline = &Activity{Kind: ActivityGate, Stage: StageBaseline, Gate: d.Gate, Command: d.Command, Log: d.Log, Since: e.Time.UTC()}
	return nil
}

// applyBaselineGate ends the Baseline activity of the gate whose verdict
// it is.
func applyBaselineGate(s *State, _ *Change, _ journal.Event, d journal.BaselineGateData) error {
	if s.Baseline != nil && s.Baseline.Gate == d.Gate {
		s.Baseline = nil
	}
	return nil
}

func applyBaselineAccepted(s *State, _ *Change, _ journal.Event, d journal.BaselineAcceptedData) error {
	if d.Gate == "" {
		return errors.New("names no gate")
	}
	if s.Accepted == nil {
		s.Accepted = map[string][]string{}
	}
	s.Accepted[d.Gate] = d.Failures
	return nil
}

// applyRunFinished ends the run: nothing runs any more, and no change's
// clock counts until the next run.
func applyRunFinished(s *State, _ *Change, e journal.Event, d journal.RunFinishedData) error {
	s.Finished, s.Result, s.Baseline = true, d.Result, nil
	for _, c := range s.Changes {
		c.stopClock(e.Time.UTC())
		c.Activity = nil
	}
	return nil
}

func applyLLMCall(s *State, c *Change, _ journal.Event, d journal.LLMCallData) error {
	s.RunUsage = s.RunUsage.add(d)
	if c == nil {
		s.Usage = addUsage(s.Usage, d)
		return nil
	}
	c.Tokens = c.Tokens.Add(d.Tokens)
	c.CostUSD += d.CostUSD
	c.Usage = addUsage(c.Usage, d)
	return nil
}

// Calls counts the change's model calls (its LLM_CALL events), of every
// role: 0 when its agent reported no usage and nothing else called a
// model for it.
func (c *Change) Calls() int {
	n := 0
	for _, u := range c.Usage {
		n += u.Calls
	}
	return n
}

// applyStateChange moves the change along the lifecycle. The event's From
// must be the change's status: a journal whose STATE_CHANGEs do not chain
// was not written by one engine.
func applyStateChange(s *State, c *Change, at time.Time, d journal.StateChangeData) error {
	from, to := Status(d.From), Status(d.To)
	if !to.Valid() {
		return fmt.Errorf("unknown status %q", d.To)
	}
	if from != c.Status {
		return fmt.Errorf("change %s: from %q, but it is %s", c.Name, d.From, c.Status)
	}
	if err := CheckTransition(from, to); err != nil {
		return fmt.Errorf("change %s: %w", c.Name, err)
	}
	if to == Pending {
		// A retry of a failed or blocked change: its budgets start again.
		c.IterationBase = c.Iteration
		c.VerifyAttempts, c.IntegrationAttempts, c.ConflictAttempts = 0, 0, 0
		c.RetryContext, c.RetryStage = "", ""
		if from == FailedRejected {
			c.PullRequest = nil
		}
	}
	if from == InReview && c.PullRequest != nil {
		c.PullRequest.Sending = nil // it left review: what was sent went
	}
	if to != Implementing && to != Paused {
		c.IterationContext = "" // the agent's work ended
	}
	c.stopClock(at)
	c.Status, c.Error, c.Since, c.PausedFrom = to, "", at, ""
	if to.Failed() || to == DepBlocked || to == Paused {
		c.Error = d.Reason
	}
	if to == Paused {
		c.PausedFrom = from
		if from == VerifyFailed || from == IntegrationFailed || from == Dispatched {
			c.PausedFrom = Implementing
		}
	}
	c.startClock(s, at)
	c.endActivity(at)
	return nil
}

func applySentinelAction(c *Change, d journal.SentinelActionData) error {
	if d.Action == "restart" || d.Action == "redispatch" {
		c.Restarts++
	}
	return nil
}

func applyDispatch(c *Change, d journal.DispatchData) error {
	c.Worktree, c.Branch, c.Base = d.Worktree, d.Branch, d.Base
	if d.Redispatch != "" {
		c.SessionID = ""
	}
	return nil
}

// applySessionDecision starts an agent iteration: the decision comes
// right before the agent runs.
func applySessionDecision(_ *State, c *Change, at time.Time, d journal.AgentSessionDecisionData) error {
	c.SessionID = d.SessionID
	n := d.Iteration
	if n == 0 { // a journal that did not record it
		n = c.Iteration + 1
	}
	c.StartedIteration = n
	if d.Adapter != "" {
		c.Agent = d.Adapter
	}
	c.Activity = &Activity{Kind: ActivityAgent, Iteration: n, Agent: d.Adapter, Model: d.Model, Log: d.Log, Since: at}
	return nil
}

func applyIteration(_ *State, c *Change, at time.Time, d journal.AgentIterationData) error {
	c.Iteration = d.Iteration
	c.IterationContext = d.Next
	if d.SessionID != "" {
		c.SessionID = d.SessionID
	}
	if c.Activity != nil && c.Activity.Kind == ActivityAgent {
		c.endActivity(at)
	}
	return nil
}

func applyGateStarted(_ *State, c *Change, at time.Time, d journal.GateStartedData) error {
	c.countGateRun(d.Stage, d.Attempt)
	c.Activity = &Activity{
		Kind: ActivityGate, Stage: d.Stage, Gate: d.Gate, Attempt: d.Attempt,
		Command: d.Command, Log: d.Log, Since: at,
	}
	return nil
}

// continueNumbers gives c, a change started again by a later plan, the
// numbers of prev, the earlier change of its name: its agent iterations,
// verify rounds and integration attempts go on from prev's, and its
// iteration budget counts from there (IterationBase). These numbers name
// the change's logs and prompts (rundir.Layout.AgentLog, Prompt,
// GateLog), and the journal still names prev's, so numbers that started
// again at 1 would write the new runs over them (explain would quote a
// later run's output under an earlier run's verdict, and setctl logs
// --iteration find either).
func (c *Change) continueNumbers(prev *Change) {
	c.VerifyRound, c.IntegrationTries = prev.VerifyRound, prev.IntegrationTries
	// An iteration prev started and never finished named its log too.
	n := max(prev.Iteration, prev.StartedIteration)
	c.Iteration, c.StartedIteration, c.IterationBase = n, n, n
}

// skipUnfinishedIteration makes the iteration an earlier run started and
// never finished (killed or interrupted before its AGENT_ITERATION) one a
// new run does not run again under its number: that run's events name
// its prompt and log, which stay its own (rundir's invariant). Resuming
// the same run runs it again under its number. The iteration is not
// counted against the budget: IterationBase moves with Iteration.
func (c *Change) skipUnfinishedIteration() {
	if gap := c.StartedIteration - c.Iteration; gap > 0 {
		c.Iteration += gap
		c.IterationBase += gap
	}
}

// countGateRun keeps VerifyRound the highest attempt of the change's
// verify gates, and IntegrationTries at least that of its integration
// gates (a journal from before INTEGRATION_ATTEMPT numbered them without
// it).
func (c *Change) countGateRun(stage string, attempt int) {
	switch stage {
	case StageVerify:
		c.VerifyRound = max(c.VerifyRound, attempt)
	case StageIntegration:
		c.IntegrationTries = max(c.IntegrationTries, attempt)
	}
}

func applyVerifyGate(_ *State, c *Change, at time.Time, d journal.VerifyGateData) error {
	c.countGateRun(d.Stage, d.Attempt)
	c.LastGate, c.LastResult = d.Stage+"/"+d.Gate, d.Result
	if d.Result == "fail" {
		c.RetryContext, c.RetryStage = d.RetryContext, d.Stage
	}
	if c.GateResults == nil {
		c.GateResults = map[string]string{}
	}
	c.GateResults[c.LastGate] = d.Result
	c.Gates.count(d.Result)
	if a := c.Activity; a != nil && a.Kind == ActivityGate && a.Gate == d.Gate && a.Stage == d.Stage {
		c.endActivity(at)
	}
	return nil
}

// applyRetryScheduled counts a retry against its stage. A stage this set
// does not know (a newer set's) counts against no budget it knows: the
// retry is recorded (its context and stage, for the resumed prompt) and
// reading the journal goes on.
func applyRetryScheduled(c *Change, d journal.RetryScheduledData) error {
	if n := c.retries(d.Stage); n != nil {
		*n++
	}
	c.RetryContext, c.RetryStage = d.RetryContext, d.Stage
	return nil
}

// RetriesUsed is how many retries c spent in a RETRY_SCHEDULED stage
// (StageVerify, StageIntegration, StageConflict); 0 for a stage this set
// does not know.
func (c *Change) RetriesUsed(stage string) int {
	if n := c.retries(stage); n != nil {
		return *n
	}
	return 0
}

// retries is c's count of the retries of stage, the one place that maps
// a stage to its count; nil for a stage this set does not know.
func (c *Change) retries(stage string) *int {
	switch stage {
	case StageVerify:
		return &c.VerifyAttempts
	case StageIntegration:
		return &c.IntegrationAttempts
	case StageConflict:
		return &c.ConflictAttempts
	}
	return nil
}

func applyIntegrationFailed(c *Change, d journal.ChangeIntegrationFailedData) error {
	c.RetryContext, c.RetryStage = d.RetryContext, StageIntegration
	if d.Reason == journal.ReasonConflict {
		c.RetryStage = StageConflict
	}
	return nil
}

func applyMerged(c *Change, d journal.MergedData) error {
	c.MergedCommit = d.Commit
	return nil
}

func applyArchived(c *Change, d journal.ArchivedData) error {
	c.ArchiveCommit = d.Commit
	return nil
}

// applyPlan sets the changes of a plan. A later plan keeps the progress of
// a change it names again only when it asks the change for the same Work
// and the change has not reached main: a plan names only work main does
// not have, so a merged or archived change of an earlier plan, or one that
// was asked for other work, starts again, pending, keeping only the
// numbers that name its logs (continueNumbers). New changes start
// pending; changes it no longer names are kept, after it in Order.
func applyPlan(s *State, d journal.PlanCreatedData, at time.Time) error {
	p := &plan.Plan{}
	if len(d.Plan) > 0 && string(d.Plan) != "null" {
		var err error
		if p, err = plan.Decode(d.Plan); err != nil {
			return err
		}
	} else {
		// No plan file: the names alone, without dependencies.
		for _, name := range d.Changes {
			p.Changes = append(p.Changes, plan.Change{Name: name})
		}
	}
	seen := map[string]bool{}
	var order []string
	for _, pc := range p.Changes {
		if pc.Name == "" {
			return fmt.Errorf("plan: a change has no name")
		}
		if seen[pc.Name] {
			return fmt.Errorf("plan: change %q appears twice", pc.Name)
		}
		seen[pc.Name] = true
		order = append(order, pc.Name)
	}

	if s.Changes == nil {
		s.Changes = map[string]*Change{}
	}
	work := map[string]string{}
	for _, pc := range p.Changes {
		if w := p.Work(pc.Name); w != "" && len(d.Plan) > 0 {
			work[pc.Name] = w
		}
		// A change keeps its progress into a new plan only for the same
		// work, and never once it is on main.
		c := s.Changes[pc.Name]
		if c == nil || c.Work != work[pc.Name] || c.Status == Merged || c.Status == Archived {
			fresh := &Change{Name: pc.Name, Status: Pending, Work: work[pc.Name], Since: at, UpdatedAt: at}
			if c != nil {
				fresh.continueNumbers(c)
			}
			c = fresh
			c.startClock(s, at)
			s.Changes[pc.Name] = c
		}
		c.DependsOn, c.Size, c.Requirements, c.Scope = pc.DependsOn, pc.Size, pc.Requirements, pc.Scope
	}
	for _, name := range s.Order {
		if !seen[name] {
			order = append(order, name)
		}
	}
	s.Order = order
	s.Plan = PlanIdentity{Config: p.Fingerprint.Config, Specs: p.Fingerprint.Specs}
	if len(work) > 0 {
		s.Plan.Work = work
	}
	for _, pc := range p.Changes {
		s.Plan.Changes = append(s.Plan.Changes, pc.Name)
	}
	return nil
}

// Rebuild applies events, which must be in strictly increasing Seq order
// (as a journal file holds them), to a new State.
func Rebuild(events []journal.Event) (*State, error) {
	s := New()
	for i, e := range events {
		if i > 0 && e.Seq <= events[i-1].Seq {
			return nil, fmt.Errorf("event %d follows event %d: the journal is out of order", e.Seq, events[i-1].Seq)
		}
		if err := Apply(s, e); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Read rebuilds the state of a project from the journal in its run
// directory setDir (.set/events.jsonl). It is how every reader of a
// project's run learns where it stands. A project that never ran (no
// journal) is at the state before any event, New().
func Read(setDir string) (*State, error) {
	path := filepath.Join(setDir, journal.EventsFile)
	events, err := journal.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return New(), nil
	}
	if err != nil {
		return nil, err
	}
	s, err := Rebuild(events)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

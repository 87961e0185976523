// Package journal holds the typed events of a run and the append-only,
// fsync'd JSONL files they are written to. The journal is the source of
// truth of a run: the state is a projection of it.
package journal

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/set-engine/set/engine/llm/usage"
)

// Type names an event.
type Type string

// The event types, which docs/architecture.md lists with what each
// records.
const (
	RunStarted              Type = "RUN_STARTED"
	PlanCreated             Type = "PLAN_CREATED"
	StateChange             Type = "STATE_CHANGE"
	Dispatch                Type = "DISPATCH"
	AgentSessionDecision    Type = "AGENT_SESSION_DECISION"
	AgentIteration          Type = "AGENT_ITERATION"
	LLMCall                 Type = "LLM_CALL"
	GateSetExpanded         Type = "GATE_SET_EXPANDED"
	VerifyGate              Type = "VERIFY_GATE"
	RetryScheduled          Type = "RETRY_SCHEDULED"
	MergeQueued             Type = "MERGE_QUEUED"
	ChangeIntegrationFailed Type = "CHANGE_INTEGRATION_FAILED"
	Merged                  Type = "MERGED"
	Archived                Type = "ARCHIVED"
	MonitorHeartbeat        Type = "MONITOR_HEARTBEAT"
	BudgetExceeded          Type = "BUDGET_EXCEEDED"
	RunFinished             Type = "RUN_FINISHED"
	// BaselineGate and BaselineAccepted record the judgement of main
	// before the first dispatch (the baseline), added to the events set
	// was designed with (docs/architecture.md).
	BaselineGate     Type = "BASELINE_GATE"
	BaselineAccepted Type = "BASELINE_ACCEPTED"
	// BaselineGateStarted records that a gate starts judging main's
	// tree (a verdict taken from the cache runs nothing and has none),
	// added to the events set was designed with (docs/architecture.md):
	// it is how the views know that the run waits for the baseline, and
	// for which gate (its BASELINE_GATE verdict ends it).
	BaselineGateStarted Type = "BASELINE_GATE_STARTED"
	// Repaired records what a resumed run found broken in the repository
	// by the crash of the run before it, and removed, added to the events
	// set was designed with (docs/architecture.md).
	Repaired Type = "REPAIRED"
	// GateStarted records that a gate of a change starts running, with
	// its command, added to the events set was designed with
	// (docs/architecture.md): with AGENT_SESSION_DECISION, which opens an
	// agent iteration, it is how the views know what a change is doing
	// now (the VERIFY_GATE verdict ends it).
	GateStarted Type = "GATE_STARTED"
	// SentinelAction records what the sentinel did to a change: a rule
	// fired (warn, restart, redispatch, fail, pause), with the facts that
	// fired it and the step of its ladder.
	SentinelAction Type = "SENTINEL_ACTION"
	// Control records a request of `setctl pause` or `setctl resume`, or
	// of the dashboard (pause, resume, stop), that the running apply
	// took, with who asked; added to the events set was designed with
	// (docs/architecture.md).
	Control Type = "CONTROL"
	// Replanned records a replan cycle (planner.replan: "auto"): the
	// requirements no merged change covered, the changes dropped for
	// them, and the changes the planner added; a PLAN_CREATED with the
	// new plan follows it, unless the planner failed (Error).
	Replanned Type = "REPLANNED"
	// IntegrationAttempt records that the merge queue starts integrating
	// a change: onto main, or onto the candidates of the changes ahead of
	// it (mergeQueue.speculative), added to the events set was designed
	// with (docs/architecture.md). MERGED names the attempt main took.
	IntegrationAttempt Type = "INTEGRATION_ATTEMPT"
	// GitDirChanged records what changed in the repository's shared git
	// directory, among what makes git run programs, while no run watched
	// it: since the snapshot of a run killed before its end, added to the
	// events set was designed with (docs/architecture.md). set cannot
	// tell an agent's doing from the user's there, so the run leaves it
	// in place and names it, rather than failing a change for it.
	GitDirChanged Type = "GIT_DIR_CHANGED"
	// Pushing records, in push mode (project.delivery), the candidate
	// commit set is about to push to the remote's main, before the push:
	// the intent. Whether it landed is the remote's to say: a resumed run
	// fetches the remote's main and finds the change's commit there (or
	// not), so a change is never pushed twice. Added to the events set was
	// designed with (docs/architecture.md).
	Pushing Type = "PUSHING"
	// PullRequestOpened records, in pull-request mode (project.delivery),
	// that a change's candidate was pushed as the branch set/<change> and
	// its pull request is open on the forge, its gates posted as commit
	// statuses and, with forge.autoMerge, handed to the forge's merge. The
	// change is in review until the forge merges or closes it. It is
	// journaled again, for the same pull request and head, when a merge
	// request the forge did not take is asked again and taken. Added to
	// the events set was designed with (docs/architecture.md).
	PullRequestOpened Type = "PULL_REQUEST_OPENED"
	// PullRequestFeedback records a review that requested changes, or a
	// check that failed, on a change's pull request, which set sends back
	// to the change's agent: each is sent once, by its forge ID, also
	// across runs. Added to the events set was designed with
	// (docs/architecture.md).
	PullRequestFeedback Type = "PULL_REQUEST_FEEDBACK"
)

// Types lists every event type, in the order declared above, for readers
// that must handle each one (a test keeps it complete).
func Types() []Type {
	return []Type{
		RunStarted, PlanCreated, StateChange, Dispatch, AgentSessionDecision, AgentIteration, LLMCall,
		GateSetExpanded, VerifyGate, RetryScheduled, MergeQueued, ChangeIntegrationFailed, Merged,
		Archived, MonitorHeartbeat, BudgetExceeded, RunFinished, BaselineGate, BaselineAccepted, BaselineGateStarted,
		Repaired, GateStarted, SentinelAction, Control, Replanned, IntegrationAttempt, GitDirChanged, Pushing,
		PullRequestOpened, PullRequestFeedback,
	}
}

// Event is one line of the journal. Seq is 1 for the first event of a
// project and grows by one per event, across runs.
type Event struct {
	Seq    int64           `json:"seq"`
	Time   time.Time       `json:"time"`
	Type   Type            `json:"type"`
	Run    string          `json:"run"`
	Change string          `json:"change,omitempty"`
	Data   json.RawMessage `json:"data"`
}

// Payload is the typed data of one event type.
type Payload interface {
	EventType() Type
}

// Decode returns the event's payload as T, which must be the payload type
// of the event's type.
func Decode[T Payload](e Event) (T, error) {
	var p T
	if p.EventType() != e.Type {
		return p, fmt.Errorf("event %d is %s, not %s", e.Seq, e.Type, p.EventType())
	}
	if err := json.Unmarshal(e.Data, &p); err != nil {
		return p, fmt.Errorf("event %d (%s): %w", e.Seq, e.Type, err)
	}
	return p, nil
}

type RunStartedData struct {
	PID         int      `json:"pid"`
	Fingerprint string   `json:"fingerprint"`
	Changes     []string `json:"changes"`
	MaxParallel int      `json:"maxParallel"`
	// Resumed is set when the journal already held events of an
	// unfinished run.
	Resumed bool `json:"resumed"`
	// MainBranch is the branch the run moves, and Budgets the budgets it
	// gives each change; empty in journals of a set that did not record
	// them.
	MainBranch string   `json:"mainBranch,omitempty"`
	Budgets    *Budgets `json:"budgets,omitempty"`
	// CrossCutting are the crossCutting globs the run dispatches by: two
	// changes whose scopes may touch one are not at work at once.
	CrossCutting []string `json:"crossCutting,omitempty"`
	// Learnings are the names of the learnings the run enforces
	// (config.Project.Adopted): the first run that names one is where
	// it was adopted (setctl learn --report measures from there).
	Learnings []string `json:"learnings,omitempty"`
}

// The stages of RETRY_SCHEDULED: what sent a change back to its agent,
// each with a retry budget of its own (Budgets.Retries).
const (
	StageVerify      = "verify"
	StageIntegration = "integration"
	StageConflict    = "conflict"
)

// The reasons of CHANGE_INTEGRATION_FAILED: a merge conflict with main,
// or a red integration gate.
const (
	ReasonConflict = "conflict"
	ReasonGate     = "gate"
	// ReasonReview and ReasonCheck: in pull-request mode, a review of the
	// change's pull request requested changes, or a check of it failed
	// on the forge (PULL_REQUEST_FEEDBACK).
	ReasonReview = "review"
	ReasonCheck  = "check"
)

// Retries is the retry budget of a RETRY_SCHEDULED stage (StageVerify,
// StageIntegration, StageConflict): the one place that maps a stage to
// its budget. 0 for a stage this set does not know, or when b is nil.
func (b *Budgets) Retries(stage string) int {
	if b == nil {
		return 0
	}
	switch stage {
	case StageVerify:
		return b.RetriesVerify
	case StageIntegration:
		return b.RetriesIntegration
	case StageConflict:
		return b.RetriesConflicts
	}
	return 0
}

// Budgets are the limits a run puts on each change (set.cue's budgets,
// config.Budgets), as recorded when the run starts, so that views show what a change has
// left against the budgets it runs under.
type Budgets struct {
	// RetriesVerify and RetriesIntegration are the retries per stage,
	// RetriesConflicts the merge conflicts a change may go back to its
	// agent for (0 in journals that did not record it).
	RetriesVerify      int `json:"retriesVerify"`
	RetriesIntegration int `json:"retriesIntegration"`
	RetriesConflicts   int `json:"retriesConflicts,omitempty"`
	// Iterations is the agent iterations a change may use.
	Iterations int `json:"iterations"`
	// Tokens maps a change size (S, M, L) to its token budget.
	Tokens map[string]int64 `json:"tokens,omitempty"`
	// WallTimeMS bounds a change's time at work; 0 is no bound.
	WallTimeMS int64 `json:"wallTimeMs,omitempty"`
}

type PlanCreatedData struct {
	Strategy     string   `json:"strategy"`
	Fingerprint  string   `json:"fingerprint"`
	Changes      []string `json:"changes"`
	Requirements int      `json:"requirements"`
	// Plan is the plan file's JSON.
	Plan json.RawMessage `json:"plan"`
	// Learnings are the names of the learnings the plan used (plan.Used):
	// those a model planner was given (conventions and planning
	// learnings), and, whatever the strategy, the planning learnings
	// whose serialise globs keep its changes apart at dispatch.
	Learnings []string `json:"learnings,omitempty"`
}

// ReplannedData is a REPLANNED event.
type ReplannedData struct {
	// Cycle counts the run's replans from 1.
	Cycle int `json:"cycle"`
	// Uncovered are the requirement IDs no merged change covered.
	Uncovered []string `json:"uncovered"`
	// Dropped are the failed or blocked changes that held them.
	Dropped []string `json:"dropped"`
	// Added are the new changes, in plan order; empty when Error is set.
	Added []string `json:"added,omitempty"`
	// Error says why the planner gave no valid changes.
	Error string `json:"error,omitempty"`
}

type StateChangeData struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Reason string `json:"reason,omitempty"`
}

type DispatchData struct {
	Worktree string `json:"worktree"`
	Branch   string `json:"branch"`
	// Base is the commit of main the branch was created from.
	Base string `json:"base"`
	// Reused is set when an existing worktree was taken over on resume.
	Reused bool `json:"reused,omitempty"`
	// Redispatch, when set, says why the sentinel gave the change a
	// fresh worktree from its branch, and a fresh agent session.
	Redispatch string `json:"redispatch,omitempty"`
}

// AgentSessionDecisionData opens an agent iteration: the agent starts
// right after it, and the iteration's AGENT_ITERATION ends it.
type AgentSessionDecisionData struct {
	Decision  string `json:"decision"` // "new" or "resume"
	SessionID string `json:"sessionId,omitempty"`
	Reason    string `json:"reason"`
	// Iteration is the iteration that starts; Adapter and Model are the
	// agent that runs it ("claude", "codex", "exec", "replay"; Model may
	// be ""), Log where its output goes, relative to the project. They
	// are empty in journals of a set that did not record them.
	Iteration int    `json:"iteration,omitempty"`
	Adapter   string `json:"adapter,omitempty"`
	Model     string `json:"model,omitempty"`
	Log       string `json:"log,omitempty"`
	// Permissions is the permission mode the agent runs with and why
	// ("acceptEdits (running as root without IS_SANDBOX=1; …)"), on the
	// first iteration of a run of a claude or codex agent; "" otherwise.
	Permissions string `json:"permissions,omitempty"`
	// Learnings are the names of the convention learnings the
	// iteration's prompt carried; Siblings the signatures
	// (learn.Episode.Signature) of the episodes of the run's other
	// changes, at work or done, that the prompt handed on.
	Learnings []string `json:"learnings,omitempty"`
	Siblings  []string `json:"siblings,omitempty"`
}

type AgentIterationData struct {
	Iteration int `json:"iteration"`
	// Result is "done", "not-done", "stopped" (the sentinel stopped it;
	// Error names the rule), "error", "api-error" (the model API or its
	// transport failed; Error is the provider's message) or "interrupted"
	// ("stalled" in journals of a set before the sentinel).
	Result   string `json:"result"`
	ExitCode int    `json:"exitCode"`
	// Signal names the signal that ended the agent's process ("SIGKILL"),
	// "" when it exited by itself.
	Signal     string `json:"signal,omitempty"`
	DurationMS int64  `json:"durationMs"`
	// Commits is the number of commits the branch has beyond its base
	// after the iteration.
	Commits int `json:"commits"`
	// Head is the branch's commit after the iteration (what the agent
	// and the commit of its leftovers left); "" in journals of a set that
	// did not record it. From the change's DISPATCH base or the head
	// before, it is what the iteration committed (the dashboard's diff
	// of a round).
	Head      string       `json:"head,omitempty"`
	Tokens    usage.Tokens `json:"tokens"`
	SessionID string       `json:"sessionId,omitempty"`
	Prompt    string       `json:"prompt"` // path of the prompt file, relative to the project
	Log       string       `json:"log"`    // path of the iteration's log, relative to the project
	// Error is why the iteration failed: the adapter's error when the
	// agent could not run ("error"), or, when it exited non-zero, "exit N"
	// and the last line of its output, at most 200 bytes
	// ("exit 2: sh: 0: cannot open agent.sh: No such file").
	Error string `json:"error,omitempty"`
	// Next is what the change's next iteration is told of where this one
	// stopped (its retry context), "" when it is told nothing: a run
	// resumed before that iteration ran gives it the same.
	Next string `json:"next,omitempty"`
}

type LLMCallData struct {
	Role  string `json:"role"` // "implement", "plan", "review", "verify"
	Model string `json:"model"`
	// Transport is how the model was reached: "claude", "codex",
	// "anthropic" or "openai" (engine/llm); "" for an agent's iteration.
	Transport  string       `json:"transport,omitempty"`
	Iteration  int          `json:"iteration,omitempty"`
	Tokens     usage.Tokens `json:"tokens"`
	CostUSD    float64      `json:"costUsd,omitempty"`
	DurationMS int64        `json:"durationMs,omitempty"`
	// Error is why the call failed (a fallback may have answered
	// instead); "" for a call that answered.
	Error string `json:"error,omitempty"`
}

type GateSetExpandedData struct {
	Stage     string   `json:"stage"`
	Gate      string   `json:"gate"`
	Condition string   `json:"condition"`
	Files     []string `json:"files,omitempty"`
}

type VerifyGateData struct {
	Stage  string `json:"stage"` // "verify" or "integration"
	Gate   string `json:"gate"`
	Kind   string `json:"kind"`
	Mode   string `json:"mode"`
	Runner string `json:"runner"`
	// Base is the runner's base (the image or rootfs of a container
	// runner; "host" for the host).
	Base string `json:"base,omitempty"`
	// Result is "pass", "fail", "warn" (failed, not blocking), "skip" or
	// "error" (the gate could not run).
	Result       string `json:"result"`
	ExitCode     int    `json:"exitCode"`
	DurationMS   int64  `json:"durationMs"`
	Log          string `json:"log,omitempty"`
	Reason       string `json:"reason,omitempty"`
	RetryContext string `json:"retryContext,omitempty"`
	// Failures are the failures the gate's failures pattern named in its
	// output (the first 20); empty when it has no
	// pattern or named none.
	Failures []string `json:"failures,omitempty"`
	// Attempt numbers the change's runs of the stage, from 1, and names
	// the gate's log: no two runs share one, in any run of the project. A
	// verify run's is one more than the highest before it
	// (state.Change.VerifyRound), whatever sent the change back (a failed
	// gate, a merge conflict, a retry of the failed change, a run resumed
	// mid-stack, a later plan that starts the change again); an
	// integration run's is its INTEGRATION_ATTEMPT's, one more than the
	// highest before it (state.Change.IntegrationTries). A journal
	// written before numbers went on across plans may repeat one after
	// a PLAN_CREATED.
	Attempt int `json:"attempt"`
}

// GateStartedData is a gate of a change's stage starting; the gate's
// VERIFY_GATE of the same stage and attempt ends it.
type GateStartedData struct {
	Stage   string `json:"stage"` // "verify" or "integration"
	Gate    string `json:"gate"`
	Kind    string `json:"kind"`
	Runner  string `json:"runner,omitempty"`
	Attempt int    `json:"attempt"`
	// Command is an exec gate's command line, as configured; empty for a
	// built-in gate.
	Command []string `json:"command,omitempty"`
	Log     string   `json:"log,omitempty"`
}

// RetryScheduledData sends a change back to its agent. Stage is what
// sent it, and whose budget it counts against: "verify" (a blocking
// verify gate), "integration" (a red integration stack) or "conflict"
// (a merge conflict with main; in journals before budgets.retries.
// conflicts, a conflict's stage was "integration", reason "conflict").
type RetryScheduledData struct {
	Stage        string `json:"stage"`
	Attempt      int    `json:"attempt"`
	Budget       int    `json:"budget"`
	Reason       string `json:"reason"`
	RetryContext string `json:"retryContext"`
}

type MergeQueuedData struct {
	// Head is the verified commit of the change's branch.
	Head string `json:"head"`
}

type ChangeIntegrationFailedData struct {
	Reason       string   `json:"reason"` // "conflict", "gate", "review" or "check"
	Paths        []string `json:"paths,omitempty"`
	Gate         string   `json:"gate,omitempty"`
	RetryContext string   `json:"retryContext"`
	Attempt      int      `json:"attempt"`
}

type MergedData struct {
	// Commit is main after the fast-forward, the change's one commit;
	// Previous is main before.
	Commit   string `json:"commit"`
	Previous string `json:"previous"`
	// Attempt is the integration attempt (INTEGRATION_ATTEMPT) whose
	// candidate main took; 0 when a restart found the commit on main.
	Attempt int `json:"attempt,omitempty"`
	// PullRequest is, in pull-request mode, the number of the pull
	// request the forge merged: Commit is then the commit the forge made
	// on the remote's main (a squash, merge or rebased commit, not the
	// candidate) and Previous the local main before it followed.
	PullRequest int `json:"pullRequest,omitempty"`
	// Union lists the append-only files (mergeUnion, or merge=union in
	// .gitattributes) in which merging main into the change conflicted
	// and that set resolved as a union of both sides' lines, without the
	// agent.
	Union []string `json:"union,omitempty"`
}

// IntegrationAttemptData is one integration attempt of a change by the
// merge queue. Its outcome is the change's next integration event:
// MERGED (main took it), CHANGE_INTEGRATION_FAILED, or a STATE_CHANGE back
// to queued (a change ahead failed, or the change conflicts with one: it
// is integrated again).
type IntegrationAttemptData struct {
	Attempt int `json:"attempt"`
	// Onto is the commit the change is merged onto: main's head, or the
	// candidate of the last change of Ahead, the changes ahead of it in
	// the queue that main does not hold yet.
	Onto  string   `json:"onto"`
	Ahead []string `json:"ahead,omitempty"`
}

// ArchivedData is the OpenSpec fold of a merged change. The fold is part
// of the change's one commit on main, so ARCHIVED follows MERGED and names
// the same commit.
type ArchivedData struct {
	Commit string `json:"commit,omitempty"`
	// Capabilities are those whose living spec openspec/specs/<capability>
	// the fold updated, and ArchiveDir where the change folder went.
	Capabilities []string `json:"capabilities,omitempty"`
	ArchiveDir   string   `json:"archiveDir,omitempty"`
	// Skipped says why nothing was folded (no OpenSpec delta, or one that
	// does not fold and stays in openspec/changes/).
	Skipped string `json:"skipped,omitempty"`
}

type MonitorHeartbeatData struct {
	Active []string `json:"active"`
	Queued []string `json:"queued"`
}

type BudgetExceededData struct {
	// Budget is "tokens", "runTokens", "verify", "integration",
	// "conflicts", "iterations" or "wallTime".
	Budget string `json:"budget"`
	Used   int64  `json:"used"`
	Limit  int64  `json:"limit"`
	// Field is the set.cue field that sets the budget
	// ("budgets.tokens.M"); "" in journals that did not record it.
	Field string `json:"field,omitempty"`
}

// SentinelActionData is one firing of a sentinel rule on a change.
type SentinelActionData struct {
	Rule string `json:"rule"`
	// Action is "warn", "restart", "redispatch", "fail" or "pause".
	Action string `json:"action"`
	// Step is the step of the rule's ladder that fired (1-based), of
	// Steps.
	Step  int `json:"step"`
	Steps int `json:"steps"`
	// When is the rule's condition; Facts the live facts of the change
	// that made it hold, as the condition saw them.
	When  string          `json:"when"`
	Facts json.RawMessage `json:"facts"`
	// BackoffMS is how long a restart waits before the next iteration.
	BackoffMS int64 `json:"backoffMs,omitempty"`
	// Grace names the grace glob that held the rules back before, if the
	// firing follows one ("" when none).
	Grace string `json:"grace,omitempty"`
}

// ControlData is a request of `setctl pause` or `setctl resume` (or of the
// dashboard) that the running apply took, and what it did with it.
type ControlData struct {
	// Action is "pause", "resume" or "stop"; Change the change asked for,
	// "" for --all (and for a stop, which is the run's).
	Action string `json:"action"`
	Change string `json:"change,omitempty"`
	// By is who asked (control.Request.By); "" in the journals of the
	// versions before it was recorded.
	By string `json:"by,omitempty"`
	// Changes are the changes the request moved; Skipped says, by
	// change, why one it named was left as it was.
	Changes []string          `json:"changes"`
	Skipped map[string]string `json:"skipped,omitempty"`
	// ID is the request's own ID, which `setctl pause` waits to see.
	ID string `json:"id"`
}

type RunFinishedData struct {
	// Result is "success" (every change merged), "failed" (some change
	// failed or is blocked), "paused" (none failed, and the ones not
	// merged are paused: a later setctl apply resumes them), "open"
	// (none failed, and the ones not merged are in review, their pull
	// requests open: a later setctl apply watches them again), or
	// "interrupted".
	Result     string         `json:"result"`
	Statuses   map[string]int `json:"statuses"`
	DurationMS int64          `json:"durationMs"`
}

// BaselineGateData is one exec gate's verdict on main's tree before the
// run dispatches anything.
type BaselineGateData struct {
	Gate string `json:"gate"`
	// Tree is the git tree of main the gate judged.
	Tree string `json:"tree"`
	// Mode is "run" when some stack of the plan blocks on the gate (a
	// failure on main then stops the run), else "warn".
	Mode string `json:"mode"`
	// Result is "pass", "fail", or "skip" for a gate whose command
	// checked nothing (gate.SkipMarker; Reason says why).
	Result     string `json:"result"`
	ExitCode   int    `json:"exitCode"`
	DurationMS int64  `json:"durationMs"`
	// Cached is set when the verdict is the one recorded earlier for the
	// same tree and gate definition (.set/baseline.json): nothing ran.
	Cached bool   `json:"cached,omitempty"`
	Log    string `json:"log,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Failures are what the gate's failures pattern found in the output
	// of a failing run.
	Failures []string `json:"failures,omitempty"`
	// Base is what the gate ran on: "host", or a container runner's base
	// ("rootfs ./rootfs"); empty in a verdict judged before set recorded
	// it.
	Base string `json:"base,omitempty"`
	// OnHost is the result of the gate run again on the host, on the same
	// tree, after it failed in a container ("pass": the base lacks
	// something the host has); empty when it did not run there.
	OnHost string `json:"onHost,omitempty"`
	// HostLog is that host run's log, relative to the project.
	HostLog string `json:"hostLog,omitempty"`
}

// BaselineGateStartedData is an exec gate starting to judge main's tree
// before the run dispatches anything; its BASELINE_GATE follows.
type BaselineGateStartedData struct {
	Gate string `json:"gate"`
	// Tree is the git tree of main the gate judges.
	Tree string `json:"tree"`
	// Command is the gate's command line, as configured.
	Command []string `json:"command,omitempty"`
	Runner  string   `json:"runner,omitempty"`
	// Log is the file its output goes to, relative to the project.
	Log string `json:"log,omitempty"`
}

// BaselineAcceptedData records that the run accepts the failures a gate
// has on main (setctl apply --accept-baseline): for the rest of the run,
// that gate fails a change only on failures not in Failures.
type BaselineAcceptedData struct {
	Gate string `json:"gate"`
	// Tree is the git tree of main the failures were found on.
	Tree string `json:"tree"`
	// Failures are every failure of the gate the run accepts, sorted.
	Failures []string `json:"failures"`
}

// RepairedData is what a resumed run repaired of what a killed run left
// half-way: stale git lock files or processes left running (events of no
// change, which removes or kills them), a fast-forward of main's checkout
// (an event of no change, which finishes it), or a change's worktree half
// created or half removed (an event of that change, which removes it; the
// run then makes it again from the change's branch).
type RepairedData struct {
	// Problem says what was wrong: "stale git locks", "processes of the
	// interrupted run left running", the interrupted fast-forward, or
	// what is wrong with the worktree.
	Problem string `json:"problem"`
	// Removed are the paths removed, relative to the project's root, or
	// the process groups killed ("process group 1234 (codex exec …)").
	Removed []string `json:"removed,omitempty"`
	// Done says what the run did, when it did more than remove paths.
	Done string `json:"done,omitempty"`
}

// GitDirChangedData is what a run found changed in the repository's
// shared git directory (see git.ExecSnapshot) since the snapshot the run
// before it took, which was killed (SIGKILL, a crash) before it could
// check it: what one of its agents did then, or what the user did while
// no run was going. It is an event of no change. The run leaves it as it
// is and watches the git directory from there.
type GitDirChangedData struct {
	Changes []GitDirChange `json:"changes"`
}

// GitDirChange is one change GIT_DIR_CHANGED names.
type GitDirChange struct {
	// What names it as messages do ("hook post-commit added",
	// `core.hooksPath set to "/tmp/h"`).
	What string `json:"what"`
	// Path is the file it is in, relative to the repository's top
	// (".git/hooks/post-commit", ".git/config").
	Path string `json:"path"`
	// Do says what to do when it is not the user's own.
	Do string `json:"do"`
}

// PushingData is the push of a change's candidate to the remote's main
// that set is about to make (see Pushing). Its outcome is MERGED (the
// remote took it) or a STATE_CHANGE back to queued (the remote's main
// had moved: the change is integrated again onto it).
type PushingData struct {
	Remote string `json:"remote"`
	// Branch is the remote branch pushed: "" for the main, set/<change>
	// in pull-request mode (Previous is then the head set pushed there
	// last, "" when the branch was absent).
	Branch string `json:"branch,omitempty"`
	// Commit is the candidate pushed; Previous the remote's main it
	// fast-forwards (the candidate's parent).
	Commit   string `json:"commit"`
	Previous string `json:"previous"`
	Attempt  int    `json:"attempt"`
}

// PullRequestOpenedData is a change's pull request, opened (or, for a
// change tested again, updated) with its candidate as head.
type PullRequestOpenedData struct {
	// Number, ID and URL are the forge's (forge.PullRequest).
	Number int    `json:"number"`
	ID     string `json:"id"`
	URL    string `json:"url"`
	// Branch is the head branch (set/<change>) and Head the candidate
	// commit pushed there, whose integration stack passed; Base the main.
	Branch string `json:"branch"`
	Head   string `json:"head"`
	Base   string `json:"base"`
	// Attempt is the integration attempt whose candidate Head is.
	Attempt int `json:"attempt"`
	// Statuses are the commit statuses posted on Head, "set/<gate>".
	Statuses []string `json:"statuses,omitempty"`
	// Way is how the forge merges it when it was handed to the forge's
	// merge (forge.autoMerge): "merge-queue" or "auto-merge" with the
	// queue entry's state and position; "" when a person merges it.
	Way        string `json:"way,omitempty"`
	QueueState string `json:"queueState,omitempty"`
	Position   int    `json:"position,omitempty"`
	// MergeRefused says why the forge did not take the merge request
	// (a check that failed at once, a queue that refused it): the pull
	// request stays open, watched, for a person or the agent.
	MergeRefused string `json:"mergeRefused,omitempty"`
	// BranchTip is the commit the change's local branch went back to
	// once the pull request was opened: the merge of main into it,
	// without the fold, whose tree is Head's but for the fold. While the
	// branch is there it holds nothing the pull request lacks, and once
	// the forge merged the pull request it may go.
	BranchTip string `json:"branchTip,omitempty"`
}

// The kinds of PULL_REQUEST_FEEDBACK.
const (
	FeedbackReview = "review"
	FeedbackCheck  = "check"
)

// PullRequestFeedbackData is one review that requested changes or one
// failed check of a change's pull request, sent back to its agent (the
// CHANGE_INTEGRATION_FAILED and RETRY_SCHEDULED that follow carry the
// retry context).
type PullRequestFeedbackData struct {
	Number int `json:"number"`
	// Kind is FeedbackReview or FeedbackCheck; ID the forge's ID of the
	// review or check, by which it is sent once.
	Kind string `json:"kind"`
	ID   string `json:"id"`
	// By is the review's author or the check's name; Commit what it
	// judged.
	By     string `json:"by"`
	Commit string `json:"commit,omitempty"`
	URL    string `json:"url,omitempty"`
}

func (PullRequestOpenedData) EventType() Type       { return PullRequestOpened }
func (PullRequestFeedbackData) EventType() Type     { return PullRequestFeedback }
func (PushingData) EventType() Type                 { return Pushing }
func (GitDirChangedData) EventType() Type           { return GitDirChanged }
func (RunStartedData) EventType() Type              { return RunStarted }
func (PlanCreatedData) EventType() Type             { return PlanCreated }
func (ReplannedData) EventType() Type               { return Replanned }
func (StateChangeData) EventType() Type             { return StateChange }
func (DispatchData) EventType() Type                { return Dispatch }
func (AgentSessionDecisionData) EventType() Type    { return AgentSessionDecision }
func (AgentIterationData) EventType() Type          { return AgentIteration }
func (LLMCallData) EventType() Type                 { return LLMCall }
func (GateSetExpandedData) EventType() Type         { return GateSetExpanded }
func (VerifyGateData) EventType() Type              { return VerifyGate }
func (RetryScheduledData) EventType() Type          { return RetryScheduled }
func (MergeQueuedData) EventType() Type             { return MergeQueued }
func (IntegrationAttemptData) EventType() Type      { return IntegrationAttempt }
func (ChangeIntegrationFailedData) EventType() Type { return ChangeIntegrationFailed }
func (MergedData) EventType() Type                  { return Merged }
func (ArchivedData) EventType() Type                { return Archived }
func (MonitorHeartbeatData) EventType() Type        { return MonitorHeartbeat }
func (BudgetExceededData) EventType() Type          { return BudgetExceeded }
func (RunFinishedData) EventType() Type             { return RunFinished }
func (BaselineGateData) EventType() Type            { return BaselineGate }
func (BaselineAcceptedData) EventType() Type        { return BaselineAccepted }
func (BaselineGateStartedData) EventType() Type     { return BaselineGateStarted }
func (RepairedData) EventType() Type                { return Repaired }
func (GateStartedData) EventType() Type             { return GateStarted }
func (SentinelActionData) EventType() Type          { return SentinelAction }
func (ControlData) EventType() Type                 { return Control }

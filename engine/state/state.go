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
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/set-engine/set/engine/journal"
)

// FormatVersion is the version of state.json this build writes and reads.
const FormatVersion = 1

// Stages of a change's gates and retries, as named in events.
const (
	StageVerify      = "verify"
	StageIntegration = "integration"
)

// State is where a run stands after the events up to LastSeq.
type State struct {
	Version     int    `json:"version"`
	Run         string `json:"run"`
	Fingerprint string `json:"fingerprint"`
	// LastSeq is the Seq of the last event applied; events up to it are
	// ignored by Apply.
	LastSeq int64 `json:"lastSeq"`
	// Started is when the latest run started; Updated is the time of the
	// last event applied.
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
}

// PlanIdentity is what tells two plans apart when a run resumes: the same
// changes, from the same configuration and spec files. (git HEAD is left
// out: a run moves main itself.)
type PlanIdentity struct {
	Changes []string          `json:"changes"`
	Config  string            `json:"config"`
	Specs   map[string]string `json:"specs"`
}

// Change is where one change stands.
type Change struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	// Iteration is the number of the last agent iteration (1-based).
	Iteration int `json:"iteration"`
	// IterationBase is Iteration when the change was last retried after a
	// failure: the iteration budget counts from it.
	IterationBase int `json:"iterationBase"`
	// VerifyAttempts and IntegrationAttempts count the retries used, per
	// stage (RETRY_SCHEDULED events).
	VerifyAttempts      int `json:"verifyAttempts"`
	IntegrationAttempts int `json:"integrationAttempts"`
	// Tokens and CostUSD sum the change's LLM_CALL events.
	Tokens    journal.Tokens `json:"tokens"`
	CostUSD   float64        `json:"costUsd"`
	Worktree  string         `json:"worktree,omitempty"`
	Branch    string         `json:"branch,omitempty"`
	Base      string         `json:"base,omitempty"`
	SessionID string         `json:"sessionId,omitempty"`
	// LastGate is "<stage>/<gate>" of the last VERIFY_GATE event and
	// LastResult its result.
	LastGate   string `json:"lastGate,omitempty"`
	LastResult string `json:"lastResult,omitempty"`
	// RetryContext is the retry context of the last failure: the one the
	// agent's next iteration is given.
	RetryContext  string `json:"retryContext,omitempty"`
	MergedCommit  string `json:"mergedCommit,omitempty"`
	ArchiveCommit string `json:"archiveCommit,omitempty"`
	// Error is why the change failed or is blocked; "" in any other
	// status.
	Error     string    `json:"error,omitempty"`
	DependsOn []string  `json:"dependsOn"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// New returns the state before any event.
func New() *State {
	return &State{Version: FormatVersion, Changes: map[string]*Change{}}
}

// planChanges is the part of a plan file the projection needs.
type planChanges struct {
	Changes     []planChange `json:"changes"`
	Fingerprint struct {
		Config string            `json:"config"`
		Specs  map[string]string `json:"specs"`
	} `json:"fingerprint"`
}

type planChange struct {
	Name      string   `json:"name"`
	DependsOn []string `json:"dependsOn"`
}

// Apply applies e to s. Events must come in Seq order: one with a Seq at or
// below s.LastSeq was applied already and is ignored, so replaying a journal
// over a snapshot is harmless; a gap in Seq is fine. An event that names a
// change s does not know, or whose payload does not decode, is an error
// naming its Seq, and leaves s unchanged.
func Apply(s *State, e journal.Event) error {
	if e.Seq <= s.LastSeq {
		return nil
	}
	at := e.Time.UTC()
	var c *Change
	if e.Change != "" {
		if c = s.Changes[e.Change]; c == nil {
			return fmt.Errorf("event %d (%s): unknown change %q", e.Seq, e.Type, e.Change)
		}
	}
	needChange := func() error {
		if c == nil {
			return fmt.Errorf("event %d (%s): names no change", e.Seq, e.Type)
		}
		return nil
	}

	// Each case decodes and checks everything before it changes s.
	switch e.Type {
	case journal.PlanCreated:
		d, err := journal.Decode[journal.PlanCreatedData](e)
		if err != nil {
			return err
		}
		if err := applyPlan(s, d, at); err != nil {
			return fmt.Errorf("event %d (%s): %w", e.Seq, e.Type, err)
		}
	case journal.RunStarted:
		d, err := journal.Decode[journal.RunStartedData](e)
		if err != nil {
			return err
		}
		s.Run, s.Fingerprint, s.Started = e.Run, d.Fingerprint, at
		s.Finished, s.Result = false, ""
		if !d.Resumed {
			s.Accepted = nil
		}
	case journal.StateChange:
		d, err := journal.Decode[journal.StateChangeData](e)
		if err != nil {
			return err
		}
		if err := needChange(); err != nil {
			return err
		}
		to := Status(d.To)
		if !to.Valid() {
			return fmt.Errorf("event %d (%s): unknown status %q", e.Seq, e.Type, d.To)
		}
		if to == Pending && (c.Status.Failed() || c.Status == DepBlocked) {
			// A retry of a failed change: its budgets start again.
			c.IterationBase = c.Iteration
			c.VerifyAttempts, c.IntegrationAttempts = 0, 0
			c.RetryContext = ""
		}
		c.Status, c.Error = to, ""
		if to.Failed() || to == DepBlocked {
			c.Error = d.Reason
		}
	case journal.Dispatch:
		d, err := journal.Decode[journal.DispatchData](e)
		if err != nil {
			return err
		}
		if err := needChange(); err != nil {
			return err
		}
		c.Worktree, c.Branch, c.Base = d.Worktree, d.Branch, d.Base
	case journal.AgentSessionDecision:
		d, err := journal.Decode[journal.AgentSessionDecisionData](e)
		if err != nil {
			return err
		}
		if err := needChange(); err != nil {
			return err
		}
		c.SessionID = d.SessionID
	case journal.AgentIteration:
		d, err := journal.Decode[journal.AgentIterationData](e)
		if err != nil {
			return err
		}
		if err := needChange(); err != nil {
			return err
		}
		c.Iteration = d.Iteration
		if d.SessionID != "" {
			c.SessionID = d.SessionID
		}
	case journal.LLMCall:
		d, err := journal.Decode[journal.LLMCallData](e)
		if err != nil {
			return err
		}
		// A call of no change (the planner's) counts against no change.
		if c != nil {
			c.Tokens = c.Tokens.Add(d.Tokens)
			c.CostUSD += d.CostUSD
		}
	case journal.VerifyGate:
		d, err := journal.Decode[journal.VerifyGateData](e)
		if err != nil {
			return err
		}
		if err := needChange(); err != nil {
			return err
		}
		c.LastGate, c.LastResult = d.Stage+"/"+d.Gate, d.Result
		if d.Result == "fail" {
			c.RetryContext = d.RetryContext
		}
	case journal.RetryScheduled:
		d, err := journal.Decode[journal.RetryScheduledData](e)
		if err != nil {
			return err
		}
		if err := needChange(); err != nil {
			return err
		}
		switch d.Stage {
		case StageVerify:
			c.VerifyAttempts++
		case StageIntegration:
			c.IntegrationAttempts++
		default:
			return fmt.Errorf("event %d (%s): unknown stage %q", e.Seq, e.Type, d.Stage)
		}
		c.RetryContext = d.RetryContext
	case journal.ChangeIntegrationFailed:
		d, err := journal.Decode[journal.ChangeIntegrationFailedData](e)
		if err != nil {
			return err
		}
		if err := needChange(); err != nil {
			return err
		}
		c.RetryContext = d.RetryContext
	case journal.Merged:
		d, err := journal.Decode[journal.MergedData](e)
		if err != nil {
			return err
		}
		if err := needChange(); err != nil {
			return err
		}
		c.MergedCommit = d.Commit
	case journal.Archived:
		d, err := journal.Decode[journal.ArchivedData](e)
		if err != nil {
			return err
		}
		if err := needChange(); err != nil {
			return err
		}
		c.ArchiveCommit = d.Commit
	case journal.BaselineAccepted:
		d, err := journal.Decode[journal.BaselineAcceptedData](e)
		if err != nil {
			return err
		}
		if d.Gate == "" {
			return fmt.Errorf("event %d (%s): names no gate", e.Seq, e.Type)
		}
		if s.Accepted == nil {
			s.Accepted = map[string][]string{}
		}
		s.Accepted[d.Gate] = d.Failures
	case journal.RunFinished:
		d, err := journal.Decode[journal.RunFinishedData](e)
		if err != nil {
			return err
		}
		s.Finished, s.Result = true, d.Result
	default:
		// GATE_SET_EXPANDED, MERGE_QUEUED, SENTINEL_ACTION,
		// MONITOR_HEARTBEAT, BUDGET_EXCEEDED, BASELINE_GATE (main's
		// verdicts are cached in .set/baseline.json), and types of a newer set:
		// recorded, but no field of the projection depends on them.
	}

	if s.Version == 0 {
		s.Version = FormatVersion
	}
	s.LastSeq, s.Updated = e.Seq, at
	if c != nil {
		c.UpdatedAt = at
	}
	return nil
}

// applyPlan sets the changes of a plan. A later plan (a replan, or the plan
// of a resumed run) keeps the progress of the changes it names again; new
// ones start pending; changes it no longer names are kept, after it in
// Order.
func applyPlan(s *State, d journal.PlanCreatedData, at time.Time) error {
	var p planChanges
	if len(d.Plan) > 0 && string(d.Plan) != "null" {
		if err := json.Unmarshal(d.Plan, &p); err != nil {
			return fmt.Errorf("plan: %w", err)
		}
	} else {
		// No plan file: the names alone, without dependencies.
		for _, name := range d.Changes {
			p.Changes = append(p.Changes, planChange{Name: name})
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
	for _, pc := range p.Changes {
		if c := s.Changes[pc.Name]; c != nil {
			c.DependsOn = pc.DependsOn
			continue
		}
		s.Changes[pc.Name] = &Change{Name: pc.Name, Status: Pending, DependsOn: pc.DependsOn, UpdatedAt: at}
	}
	for _, name := range s.Order {
		if !seen[name] {
			order = append(order, name)
		}
	}
	s.Order = order
	s.Plan = PlanIdentity{Config: p.Fingerprint.Config, Specs: p.Fingerprint.Specs}
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

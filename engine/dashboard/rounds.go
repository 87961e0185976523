package dashboard

import (
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
)

// The stages of a Round.
const (
	StageVerify      = "verify"
	StageIntegration = "integration"
)

// Round is one verify round (the change's verify stack on what its agent
// iterations left) or one integration attempt (its integration stack on
// the merge of main into it) of a change, as its events tell it: the
// gates judged it, its verdict, and what was handed back to the agent.
type Round struct {
	// Stage is StageVerify or StageIntegration; Attempt the gates'
	// attempt (VERIFY_GATE's): rounds of one stage have distinct
	// attempts, in journal order.
	Stage   string `json:"stage"`
	Attempt int    `json:"attempt"`
	// Iterations are the agent iterations whose work the verify round
	// judged: those since the round before.
	Iterations []int `json:"iterations,omitempty"`
	// Gates are its VERIFY_GATE events, in journal order.
	Gates []journal.Event `json:"gates"`
	// Verdict is "running" (not over yet), "pass", "fail" (a gate failed
	// or could not run), "merged" (main took the attempt), or an
	// integration's failure reason (CHANGE_INTEGRATION_FAILED's:
	// "conflict", "gate", "review", "check"), "requeued" (integrated
	// again: a change ahead failed, or the remote's main moved), "in
	// review" (its pull request awaits the forge), or "stopped" (the
	// change left the stage otherwise: paused, failed, the run ended).
	Verdict string `json:"verdict"`
	// Handback is what was handed back to the agent after it: its
	// RETRY_SCHEDULED (the retry context, its budget), nil when nothing
	// was; Failure its CHANGE_INTEGRATION_FAILED.
	Handback *journal.Event `json:"handback,omitempty"`
	Failure  *journal.Event `json:"failure,omitempty"`
	// From and To are the commits its diff spans: for a verify round, the
	// branch before its agent iterations (the DISPATCH base, or the head
	// the round before judged) and after them; for a merged integration
	// attempt, main before and after. Either is "" when the journal does
	// not say (a journal of a set that did not record heads), and then
	// the round has no diff.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// PullRequest is the number of the pull request the attempt opened
	// or updated (pull-request delivery), 0 without one; PullRequestURL
	// its page, as the forge gave it.
	PullRequest    int    `json:"pullRequest,omitempty"`
	PullRequestURL string `json:"pullRequestUrl,omitempty"`
	// Start is when its first agent iteration began (a verify round's),
	// or the change went to integrating (an integration attempt's; its
	// first gate in a journal without); End its last event.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// HasDiff says whether the journal names both ends of the round's diff.
func (r Round) HasDiff() bool { return r.From != "" && r.To != "" && r.From != r.To }

// Rounds are the verify rounds and integration attempts of a change, in
// the order they began, from events (the change's, in journal order).
// Every VERIFY_GATE of the change is in exactly one round.
func Rounds(events []journal.Event) []Round {
	rs := &rounder{}
	for _, e := range events {
		rs.add(e)
	}
	if rs.rounds == nil {
		return []Round{}
	}
	return rs.rounds
}

// rounder is Rounds being read.
type rounder struct {
	rounds []Round
	// head is the branch's last known commit; judged the head the last
	// verify round judged (where the next one's diff starts).
	head, judged string
	// iterations are the agent iterations since the last verify round,
	// the first begun at begun.
	iterations []int
	begun      time.Time
	// integrating is when the change last went to integrating: where
	// its next integration attempt begins.
	integrating time.Time
}

// find is the index of the round of stage and attempt, -1 when none.
func (rs *rounder) find(stage string, attempt int) int {
	for i := len(rs.rounds) - 1; i >= 0; i-- {
		if rs.rounds[i].Stage == stage && rs.rounds[i].Attempt == attempt {
			return i
		}
	}
	return -1
}

// last is the index of the latest round of stage, -1 when none.
func (rs *rounder) last(stage string) int {
	for i := len(rs.rounds) - 1; i >= 0; i-- {
		if rs.rounds[i].Stage == stage {
			return i
		}
	}
	return -1
}

// round is the round of stage and attempt, begun at e when it is new.
func (rs *rounder) round(stage string, attempt int, e journal.Event) *Round {
	if i := rs.find(stage, attempt); i >= 0 {
		return &rs.rounds[i]
	}
	r := Round{Stage: stage, Attempt: attempt, Gates: []journal.Event{}, Verdict: "running", Start: e.Time, End: e.Time}
	switch {
	case stage == StageVerify:
		r.Iterations, rs.iterations = rs.iterations, nil
		if !rs.begun.IsZero() {
			r.Start, rs.begun = rs.begun, time.Time{}
		}
		r.From, r.To = rs.judged, rs.head
		rs.judged = rs.head
	case !rs.integrating.IsZero():
		r.Start, rs.integrating = rs.integrating, time.Time{}
	}
	rs.rounds = append(rs.rounds, r)
	return &rs.rounds[len(rs.rounds)-1]
}

// outcome is the integration attempt an outcome (a merge, a failure)
// naming attempt ends: that attempt's round, else the latest integration
// round (one that names none, as a merge a restart found does), else a
// new one begun at e.
func (rs *rounder) outcome(attempt int, e journal.Event) *Round {
	i := rs.find(StageIntegration, attempt)
	if i < 0 {
		i = rs.last(StageIntegration)
	}
	if i < 0 {
		return rs.round(StageIntegration, attempt, e)
	}
	return &rs.rounds[i]
}

func (rs *rounder) add(e journal.Event) {
	switch e.Type {
	case journal.Dispatch:
		d, err := journal.Decode[journal.DispatchData](e)
		if err == nil && rs.head == "" {
			rs.head, rs.judged = d.Base, d.Base
		}
	case journal.AgentSessionDecision:
		if rs.begun.IsZero() {
			rs.begun = e.Time
		}
	case journal.AgentIteration:
		d, err := journal.Decode[journal.AgentIterationData](e)
		if err != nil {
			return
		}
		if rs.begun.IsZero() {
			rs.begun = e.Time.Add(-time.Duration(d.DurationMS) * time.Millisecond)
		}
		rs.iterations = append(rs.iterations, d.Iteration)
		if d.Head != "" {
			rs.head = d.Head
		}
	case journal.GateStarted:
		d, err := journal.Decode[journal.GateStartedData](e)
		if err == nil {
			rs.round(d.Stage, d.Attempt, e)
		}
	case journal.IntegrationAttempt:
		d, err := journal.Decode[journal.IntegrationAttemptData](e)
		if err == nil {
			rs.round(StageIntegration, d.Attempt, e)
		}
	case journal.VerifyGate:
		d, err := journal.Decode[journal.VerifyGateData](e)
		if err != nil {
			return
		}
		r := rs.round(d.Stage, d.Attempt, e)
		r.Gates = append(r.Gates, e)
		r.End = e.Time
		if d.Result == "fail" || d.Result == "error" {
			r.Verdict = "fail"
		}
	case journal.RetryScheduled:
		d, err := journal.Decode[journal.RetryScheduledData](e)
		if err != nil {
			return
		}
		stage := StageIntegration
		if d.Stage == StageVerify {
			stage = StageVerify
		}
		if i := rs.last(stage); i >= 0 {
			ev := e
			rs.rounds[i].Handback, rs.rounds[i].End = &ev, e.Time
		}
	case journal.ChangeIntegrationFailed:
		d, err := journal.Decode[journal.ChangeIntegrationFailedData](e)
		if err != nil {
			return
		}
		ev := e
		r := rs.outcome(d.Attempt, e)
		r.Failure, r.Verdict, r.End = &ev, d.Reason, e.Time
	case journal.PullRequestOpened:
		d, err := journal.Decode[journal.PullRequestOpenedData](e)
		if err != nil {
			return
		}
		if i := rs.find(StageIntegration, d.Attempt); i >= 0 {
			rs.rounds[i].PullRequest, rs.rounds[i].PullRequestURL = d.Number, d.URL
		}
	case journal.Merged:
		d, err := journal.Decode[journal.MergedData](e)
		if err != nil {
			return
		}
		r := rs.outcome(d.Attempt, e)
		r.Verdict, r.From, r.To, r.End = "merged", d.Previous, d.Commit, e.Time
		if d.PullRequest != 0 {
			r.PullRequest = d.PullRequest
		}
	case journal.StateChange:
		d, err := journal.Decode[journal.StateChangeData](e)
		if err != nil {
			return
		}
		if state.Status(d.To) == state.Integrating {
			rs.integrating = e.Time
		}
		// A stage's round is over once the change leaves the stage.
		switch state.Status(d.From) {
		case state.Verifying:
			rs.close(StageVerify, state.Status(d.To), e.Time)
		case state.Integrating:
			rs.close(StageIntegration, state.Status(d.To), e.Time)
		}
	}
}

// close ends the latest round of stage, if it still runs, as the change
// leaves the stage for to: a verify round passed when the change goes to
// the merge queue, an integration attempt was requeued or went to review;
// anything else stopped it.
func (rs *rounder) close(stage string, to state.Status, at time.Time) {
	i := rs.last(stage)
	if i < 0 || rs.rounds[i].Verdict != "running" {
		return
	}
	r := &rs.rounds[i]
	r.End = at
	switch {
	case stage == StageVerify && to == state.Queued:
		r.Verdict = "pass"
	case stage == StageIntegration && to == state.Queued:
		r.Verdict = "requeued"
	case stage == StageIntegration && to == state.InReview:
		r.Verdict = "in review"
	default:
		r.Verdict = "stopped"
	}
}

// Band is a round of a change on the timeline: the span of time from its
// first agent iteration to its verdict and what went back to the agent,
// which the page draws behind the round's spans.
type Band struct {
	Change     string    `json:"change"`
	Stage      string    `json:"stage"`
	Attempt    int       `json:"attempt"`
	Iterations []int     `json:"iterations,omitempty"`
	Verdict    string    `json:"verdict"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
}

// bands are the rounds of every change of events (a run's journal), as
// the timeline draws them; a round still running ends at end.
func bands(events []journal.Event, end time.Time) []Band {
	byChange := map[string][]journal.Event{}
	var order []string
	for _, e := range events {
		if e.Change == "" {
			continue
		}
		if _, ok := byChange[e.Change]; !ok {
			order = append(order, e.Change)
		}
		byChange[e.Change] = append(byChange[e.Change], e)
	}
	out := []Band{}
	for _, c := range order {
		for _, r := range Rounds(byChange[c]) {
			b := Band{Change: c, Stage: r.Stage, Attempt: r.Attempt, Iterations: r.Iterations, Verdict: r.Verdict, Start: r.Start, End: r.End}
			if r.Verdict == "running" && end.After(b.End) {
				b.End = end
			}
			out = append(out, b)
		}
	}
	return out
}

package state

import (
	"strings"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm/usage"
)

// What the views of a run (setctl status, explain, the run report) read
// beyond a change's status: what runs for it now, its gate verdicts, its
// model usage by role and the time it spent in each status. Like the rest
// of State they are a pure function of the events.

// Activity kinds: what runs for a change.
const (
	// ActivityAgent: an agent iteration (from its AGENT_SESSION_DECISION
	// to its AGENT_ITERATION).
	ActivityAgent = "agent"
	// ActivityGate: a gate (from its GATE_STARTED to its VERIFY_GATE).
	ActivityGate = "gate"
	// ActivityIntegrate: the merge queue integrates the change (merging
	// main into its branch, the OpenSpec fold, the fast-forward of main)
	// while no integration gate runs.
	ActivityIntegrate = "integrate"
)

// Activity is what runs for a change now (report.Activity shows it). It is what the journal last said
// started and has not said ended; a run that was killed leaves its last
// activity behind until the next RUN_STARTED, so a view tells the two
// apart with the run's liveness, not with the activity.
type Activity struct {
	// Kind is ActivityAgent, ActivityGate or ActivityIntegrate.
	Kind string `json:"kind"`
	// Stage, Gate and Attempt name a gate's run.
	Stage   string `json:"stage,omitempty"`
	Gate    string `json:"gate,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	// Iteration is an agent's iteration, Agent its adapter and Model
	// its model ("" when the journal does not say).
	Iteration int    `json:"iteration,omitempty"`
	Agent     string `json:"agent,omitempty"`
	Model     string `json:"model,omitempty"`
	// Command is an exec gate's command line, as configured.
	Command []string `json:"command,omitempty"`
	// Log is the file its output goes to, relative to the project.
	Log   string    `json:"log,omitempty"`
	Since time.Time `json:"since"`
}

// Name is the activity as the views name it: "agent", "gate:<name>" or
// "integrate".
func (a Activity) Name() string {
	if a.Kind == ActivityGate {
		return "gate:" + a.Gate
	}
	return a.Kind
}

// CommandLine is Command as one line, "" when there is none.
func (a Activity) CommandLine() string { return strings.Join(a.Command, " ") }

// GateCounts counts a change's gate verdicts (VERIFY_GATE), in both
// stages and over every attempt.
type GateCounts struct {
	Passed int `json:"passed"`
	// Failed counts blocking failures and gates that could not run.
	Failed int `json:"failed"`
	// Warned counts failures of gates that do not block.
	Warned  int `json:"warned"`
	Skipped int `json:"skipped"`
}

// Latest counts the verdicts of results (Change.GateResults): each gate
// by its latest verdict in each stage.
func Latest(results map[string]string) GateCounts {
	var g GateCounts
	for _, r := range results {
		g.count(r)
	}
	return g
}

// count counts one verdict.
func (g *GateCounts) count(result string) {
	switch result {
	case "pass":
		g.Passed++
	case "fail", "error":
		g.Failed++
	case "warn":
		g.Warned++
	case "skip":
		g.Skipped++
	}
}

// Runs is how many gate runs the verdicts count: every one but the
// skipped.
func (g GateCounts) Runs() int { return g.Passed + g.Failed + g.Warned }

// Usage sums model calls (LLM_CALL events).
type Usage struct {
	Calls   int          `json:"calls"`
	Tokens  usage.Tokens `json:"tokens"`
	CostUSD float64      `json:"costUsd"`
}

// add counts one call.
func (u Usage) add(d journal.LLMCallData) Usage {
	return Usage{Calls: u.Calls + 1, Tokens: u.Tokens.Add(d.Tokens), CostUSD: u.CostUSD + d.CostUSD}
}

// addUsage counts the call d in m, by its role, and returns m.
func addUsage(m map[string]Usage, d journal.LLMCallData) map[string]Usage {
	if m == nil {
		m = map[string]Usage{}
	}
	m[d.Role] = m[d.Role].add(d)
	return m
}

// running reports whether s is within a run: started and not finished.
func (s *State) running() bool { return s.Run != "" && !s.Finished }

// stopClock adds the time since c.ClockStart to the status c is in and
// stops the clock.
func (c *Change) stopClock(at time.Time) {
	if c.ClockStart.IsZero() {
		return
	}
	if c.TimeInMS == nil {
		c.TimeInMS = map[Status]int64{}
	}
	c.TimeInMS[c.Status] += max(at.Sub(c.ClockStart), 0).Milliseconds()
	c.ClockStart = time.Time{}
}

// startClock starts counting the time c spends in its status, unless the
// status is terminal or no run is going.
func (c *Change) startClock(s *State, at time.Time) {
	if s.running() && !c.Status.Terminal() {
		c.ClockStart = at
	}
}

// TimeIn is the time c spent in status st up to now: the intervals
// counted, and the one running when st is c's status and a run is going.
func (c *Change) TimeIn(st Status, now time.Time) time.Duration {
	d := time.Duration(c.TimeInMS[st]) * time.Millisecond
	if st == c.Status && !c.ClockStart.IsZero() && now.After(c.ClockStart) {
		d += now.Sub(c.ClockStart)
	}
	return d
}

// endActivity ends what ran for c: while integrating, the merge queue's
// own work goes on.
func (c *Change) endActivity(at time.Time) {
	c.Activity = nil
	if c.Status == Integrating {
		c.Activity = &Activity{Kind: ActivityIntegrate, Since: at}
	}
}

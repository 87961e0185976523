package state

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm/usage"
)

// activityRun is the engine's order of events for one change: the run
// starts, the agent works, two gates run, the merge queue integrates with
// one integration gate; the run is killed there, and a second apply
// resumes it and lands the change.
var activityRun = []step{
	{"", journal.RunStartedData{PID: 7, MaxParallel: 1, MainBranch: "trunk", Budgets: &journal.Budgets{RetriesVerify: 2, Tokens: map[string]int64{"S": 100}}}}, // 1
	{"", journal.PlanCreatedData{Plan: json.RawMessage(`{"version":1,"changes":[{"name":"a","size":"S","requirements":["REQ-1"],"dependsOn":[]}]}`)}},
	{"a", to(Pending, Dispatched, "")},
	{"a", to(Dispatched, Implementing, "")},
	{"a", journal.AgentSessionDecisionData{Decision: "new", Reason: "first iteration", Iteration: 1, Adapter: "exec", Log: ".set/logs/a/agent-1.log"}}, // 5
	{"a", journal.AgentIterationData{Iteration: 1, Result: "done"}},
	{"a", to(Implementing, Verifying, "")},
	{"a", journal.VerifyGateData{Stage: "verify", Gate: "lint", Result: "skip", Reason: "when: false"}},
	{"a", journal.GateStartedData{Stage: "verify", Gate: "test", Kind: "exec", Attempt: 1, Command: []string{"go", "test", "./..."}, Log: ".set/logs/a/verify-test-1.log"}},
	{"a", journal.VerifyGateData{Stage: "verify", Gate: "test", Result: "pass", Attempt: 1}}, // 10
	{"a", to(Verifying, Queued, "")},
	{"a", to(Queued, Integrating, "")},
	{"a", journal.GateStartedData{Stage: "integration", Gate: "test", Kind: "exec", Attempt: 1, Command: []string{"go", "test", "./..."}}},
	// killed here; resumed at 20 (the clock of events.jsonl jumps)
	{"", journal.RunStartedData{PID: 8, MaxParallel: 1, Resumed: true}},
	{"a", journal.GateStartedData{Stage: "integration", Gate: "test", Kind: "exec", Attempt: 1}}, // 15
	{"a", journal.VerifyGateData{Stage: "integration", Gate: "test", Result: "pass", Attempt: 1}},
	{"a", to(Integrating, Merged, "")},
	{"a", to(Merged, Archived, "")},
	{"", journal.RunFinishedData{Result: "success"}},
}

func TestActivityAlongTheWay(t *testing.T) {
	_, events := writeJournal(t, activityRun)
	want := map[int64]string{
		4:  "",
		5:  "agent 1 exec .set/logs/a/agent-1.log",
		6:  "",
		8:  "", // a skipped gate never ran
		9:  "gate:test verify 1 go test ./... .set/logs/a/verify-test-1.log",
		10: "",
		12: "integrate",
		13: "gate:test integration 1 go test ./...",
		14: "", // a new run: what the killed one ran is over
		15: "gate:test integration 1",
		16: "integrate",
		17: "",
	}
	s := New()
	for _, e := range events {
		if err := Apply(s, e); err != nil {
			t.Fatal(err)
		}
		w, ok := want[e.Seq]
		if !ok {
			continue
		}
		got := ""
		if a := s.Changes["a"].Activity; a != nil {
			got = a.Name()
			for _, f := range []string{a.Stage, itoa(a.Attempt), itoa(a.Iteration), a.Agent, a.CommandLine(), a.Log} {
				if f != "" {
					got += " " + f
				}
			}
			if !a.Since.Equal(e.Time) {
				t.Errorf("after event %d: activity since %s, want the event's time", e.Seq, a.Since)
			}
		}
		if got != w {
			t.Errorf("after event %d (%s): activity %q, want %q", e.Seq, e.Type, got, w)
		}
	}
	c := s.Changes["a"]
	if c.Gates != (GateCounts{Passed: 2, Skipped: 1}) || c.Gates.Runs() != 2 {
		t.Errorf("gates = %+v", c.Gates)
	}
	if s.PID != 8 || s.Budgets != nil || s.MainBranch != "" {
		t.Errorf("PID %d, main branch %q, budgets %+v: want the resumed run's, which recorded none", s.PID, s.MainBranch, s.Budgets)
	}
}

// itoa is n in decimal, "" for 0.
func itoa(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// The time a change spends in a status counts only while a run is going:
// a killed run's clock stops at its last event, a finished run's at
// RUN_FINISHED, and the next run starts it again.
func TestTimeInCountsRunsOnly(t *testing.T) {
	_, events := writeJournal(t, activityRun)
	// The resumed run starts 100s after the kill.
	for i := 13; i < len(events); i++ {
		events[i].Time = events[i].Time.Add(100 * time.Second)
	}
	s, err := Rebuild(events[:13])
	if err != nil {
		t.Fatal(err)
	}
	c := s.Changes["a"]
	if c.ClockStart != at(12) {
		t.Fatalf("clock of the integrating change started at %s, want %s", c.ClockStart, at(12))
	}
	if got := c.TimeIn(Integrating, at(13).Add(500*time.Millisecond)); got != 1500*time.Millisecond {
		t.Errorf("time integrating, while the run goes = %s, want 1.5s", got)
	}
	s, err = Rebuild(events)
	if err != nil {
		t.Fatal(err)
	}
	c = s.Changes["a"]
	want := map[Status]int64{
		Pending: 1000, Dispatched: 1000, Implementing: 3000, Verifying: 4000, Queued: 1000,
		// 12 → 13 (the killed run's last event), then 114 → 117.
		Integrating: 1000 + 3000,
		Merged:      1000,
	}
	if !reflect.DeepEqual(c.TimeInMS, want) {
		t.Errorf("TimeInMS = %v\nwant       %v", c.TimeInMS, want)
	}
	if !c.ClockStart.IsZero() || c.TimeIn(Archived, at(1000)) != 0 {
		t.Errorf("an archived change's clock runs: %s", c.ClockStart)
	}
}

// Model calls are summed by role, a change's with it and the planner's
// with the run.
func TestUsageByRole(t *testing.T) {
	_, events := writeJournal(t, []step{
		activityRun[0], activityRun[1],
		{"", journal.LLMCallData{Role: "plan", Tokens: usage.Tokens{Input: 10}, CostUSD: 0.01}},
		{"a", journal.LLMCallData{Role: "implement", Tokens: usage.Tokens{Input: 5, Output: 1}, CostUSD: 0.5}},
		{"a", journal.LLMCallData{Role: "implement", Tokens: usage.Tokens{Input: 5, CacheRead: 2}, CostUSD: 0.25}},
	})
	s, err := Rebuild(events)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]Usage{"plan": {Calls: 1, Tokens: usage.Tokens{Input: 10}, CostUSD: 0.01}}; !reflect.DeepEqual(s.Usage, want) {
		t.Errorf("run usage = %+v", s.Usage)
	}
	want := map[string]Usage{"implement": {Calls: 2, Tokens: usage.Tokens{Input: 10, Output: 1, CacheRead: 2}, CostUSD: 0.75}}
	if c := s.Changes["a"]; !reflect.DeepEqual(c.Usage, want) || c.Tokens.Total() != 13 {
		t.Errorf("change usage = %+v, tokens %+v", c.Usage, c.Tokens)
	}
}

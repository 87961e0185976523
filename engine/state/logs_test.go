package state

import (
	"encoding/json"
	"testing"

	"github.com/set-engine/set/engine/journal"
)

func logEvents(t *testing.T, payloads ...journal.Payload) []journal.Event {
	t.Helper()
	var events []journal.Event
	for i, p := range payloads {
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, journal.Event{Seq: int64(i + 1), Type: p.EventType(), Change: "greet", Data: data})
	}
	return events
}

func TestLogsAndPickLog(t *testing.T) {
	logs, err := Logs(logEvents(t,
		journal.AgentSessionDecisionData{Iteration: 1, Log: ".set/logs/greet/agent-1.log"},
		journal.AgentIterationData{Iteration: 1, Result: "done", Log: ".set/logs/greet/agent-1.log"},
		journal.GateStartedData{Stage: "verify", Gate: "test", Attempt: 1, Log: ".set/logs/greet/verify-test-1.log"},
		journal.VerifyGateData{Stage: "verify", Gate: "test", Attempt: 1, Result: "fail", Log: ".set/logs/greet/verify-test-1.log"},
		journal.AgentSessionDecisionData{Iteration: 2, Log: ".set/logs/greet/agent-2.log"},
		journal.MergeQueuedData{Head: "abc"}, // names no log
	))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"agent, iteration 1: done", "verify test, attempt 1: fail", "agent, iteration 2: running"}
	if len(logs) != len(want) {
		t.Fatalf("Logs = %v, want %v", logs, want)
	}
	for i, l := range logs {
		if l.String() != want[i] {
			t.Errorf("log %d = %q, want %q", i, l, want[i])
		}
	}

	c := &Change{Name: "greet", Status: Implementing, Activity: &Activity{Log: ".set/logs/greet/verify-test-1.log"}}
	for _, tc := range []struct {
		running bool
		q       LogQuery
		want    string // the log's path, or the error
	}{
		{true, LogQuery{}, ".set/logs/greet/verify-test-1.log"}, // what runs now
		{false, LogQuery{}, ".set/logs/greet/agent-2.log"},      // the latest
		{false, LogQuery{Agent: true, N: 1}, ".set/logs/greet/agent-1.log"},
		{false, LogQuery{Gate: "verify/test"}, ".set/logs/greet/verify-test-1.log"},
		{false, LogQuery{Gate: "tset"}, "change greet has no log of gate tset; did you mean test? (its gates: test)"},
		{false, LogQuery{Agent: true, N: 3}, "change greet has no log of iteration 3 (it has iterations 1 and 2)"},
		{false, LogQuery{Gate: "test", N: 2}, "change greet has no log of attempt 2 (it has attempt 1)"},
	} {
		got, err := PickLog(c, tc.running, logs, tc.q)
		gotS := got.Path
		if err != nil {
			gotS = err.Error()
		}
		if gotS != tc.want {
			t.Errorf("PickLog(running %v, %+v) = %q, want %q", tc.running, tc.q, gotS, tc.want)
		}
	}
	if _, err := PickLog(&Change{Name: "greet", Status: Pending}, false, nil, LogQuery{}); err == nil || err.Error() != "change greet has no log yet: it is pending" {
		t.Errorf("PickLog without logs: %v", err)
	}
}

// An event whose payload does not decode is an error of Logs, not a log
// without a path.
func TestLogsUndecodable(t *testing.T) {
	bad := journal.Event{Seq: 4, Type: journal.VerifyGate, Change: "greet", Data: json.RawMessage(`{"attempt":"one"}`)}
	if _, err := Logs([]journal.Event{bad}); err == nil {
		t.Error("Logs of an undecodable VERIFY_GATE: no error")
	}
}

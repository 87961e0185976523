package main

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/set-engine/set/engine/journal"
)

// TestReusedLogs: in a journal written before gate numbers went on
// across plans, a later plan's verify round 1 wrote over run 1's
// verify-test-1.log; explain must not quote that file under run 1's
// verdict. A log named once, and the GATE_STARTED before its own
// verdict, are not reused.
func TestReusedLogs(t *testing.T) {
	var events []journal.Event
	add := func(p journal.Payload) {
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, journal.Event{Seq: int64(len(events) + 1), Type: p.EventType(), Change: "greet", Data: data})
	}
	log1, log2 := ".set/logs/greet/verify-test-1.log", ".set/logs/greet/verify-test-2.log"
	add(journal.GateStartedData{Stage: "verify", Gate: "test", Attempt: 1, Log: log1})                // 0
	add(journal.VerifyGateData{Stage: "verify", Gate: "test", Result: "fail", Attempt: 1, Log: log1}) // 1: run 1, written over
	add(journal.GateStartedData{Stage: "verify", Gate: "test", Attempt: 2, Log: log2})                // 2
	add(journal.VerifyGateData{Stage: "verify", Gate: "test", Result: "fail", Attempt: 2, Log: log2}) // 3: run 1, its own
	add(journal.PlanCreatedData{})                                                                    // 4
	add(journal.GateStartedData{Stage: "verify", Gate: "test", Attempt: 1, Log: log1})                // 5: run 2 numbers from 1 again
	add(journal.VerifyGateData{Stage: "verify", Gate: "test", Result: "pass", Attempt: 1, Log: log1}) // 6: run 2, the file's
	got := slices.Sorted(maps.Keys(reusedLogs(events)))
	if want := []int{1}; !slices.Equal(got, want) {
		t.Errorf("reusedLogs = %v, want %v", got, want)
	}
}

package main

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/set-engine/set/engine/history"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm/usage"
	"github.com/set-engine/set/engine/rundir"
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

// TestOwnChange: explain counts a run's own work on a change. greet goes
// on from run-1 into run-2 under the same work, so the projection at
// run-2's end counts both runs; run-2's story counts one iteration, one
// gate run, no retry and its own tokens.
func TestOwnChange(t *testing.T) {
	var events []journal.Event
	add := func(run, change string, p journal.Payload) {
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, journal.Event{Seq: int64(len(events) + 1), Run: run, Type: p.EventType(), Change: change, Data: data})
	}
	add("run-1", "", journal.RunStartedData{})
	add("run-1", "", journal.PlanCreatedData{Changes: []string{"greet"}})
	add("run-1", "greet", journal.AgentIterationData{Iteration: 1, Result: "done"})
	add("run-1", "greet", journal.VerifyGateData{Stage: "verify", Gate: "test", Result: "fail", Attempt: 1})
	add("run-1", "greet", journal.RetryScheduledData{Stage: "verify", Attempt: 1, Budget: 3})
	add("run-1", "greet", journal.LLMCallData{Role: "implement", Tokens: usage.Tokens{Input: 100}})
	add("run-1", "", journal.RunFinishedData{Result: "failed"})
	add("run-2", "", journal.RunStartedData{})
	add("run-2", "", journal.PlanCreatedData{Changes: []string{"greet"}})
	add("run-2", "greet", journal.AgentIterationData{Iteration: 2, Result: "done"})
	add("run-2", "greet", journal.VerifyGateData{Stage: "verify", Gate: "test", Result: "pass", Attempt: 2})
	add("run-2", "greet", journal.LLMCallData{Role: "implement", Tokens: usage.Tokens{Input: 50}})
	add("run-2", "", journal.RunFinishedData{Result: "success"})

	layout := rundir.New(t.TempDir())
	v := &runView{layout: layout, View: history.ViewOf(layout.Dir(), events)}
	for _, c := range []struct {
		run                        int
		iterations, gates, retries int
		tokens                     int64
	}{
		{0, 1, 1, 1, 100},
		{1, 1, 1, 0, 50},
	} {
		if err := v.Show(v.Runs[c.run]); err != nil {
			t.Fatal(err)
		}
		rc, err := ownChange(v, "greet", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if rc.Iteration != c.iterations || rc.Gates.Runs != c.gates || rc.Retries.Verify.Used != int64(c.retries) || rc.Tokens.Used != c.tokens {
			t.Errorf("%s: %d iterations, %d gate runs, %d verify retries, %d tokens; want %d, %d, %d, %d", v.Run.ID,
				rc.Iteration, rc.Gates.Runs, rc.Retries.Verify.Used, rc.Tokens.Used, c.iterations, c.gates, c.retries, c.tokens)
		}
	}
	if c := v.State.Changes["greet"]; c.Iteration != 2 || c.Gates.Runs() != 2 {
		t.Fatalf("greet did not go on from run-1 into run-2: %+v", c)
	}
}

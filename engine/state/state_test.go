package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm/usage"
	"github.com/set-engine/set/engine/plan"
)

var t0 = time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)

// at is the time of event seq in the scripted runs: the clock ticks one
// second per event.
func at(seq int) time.Time { return t0.Add(time.Duration(seq) * time.Second) }

type step struct {
	change string
	p      journal.Payload
}

func to(from, to Status, reason string) journal.StateChangeData {
	return journal.StateChangeData{From: string(from), To: string(to), Reason: reason}
}

const testPlan = `{
  "version": 1,
  "fingerprint": {"sum": "fp-1", "config": "cfg-1", "specs": {"docs/spec.md": "spec-1"}},
  "changes": [
    {"name": "add-login", "type": "feature", "size": "S", "requirements": ["REQ-1"], "dependsOn": []},
    {"name": "add-logout", "type": "feature", "size": "S", "requirements": ["REQ-2"], "dependsOn": ["add-login"]}
  ]
}`

// testWork is the Work testPlan asks of a change.
func testWork(change string) string {
	p, err := plan.Decode([]byte(testPlan))
	if err != nil {
		panic(err)
	}
	return p.Work(change)
}

// lifecycle is a run: add-login goes from pending to archived with one
// verify retry; add-logout stalls and fails.
var lifecycle = []step{
	{"", journal.PlanCreatedData{Strategy: "static", Fingerprint: "fp-1", Changes: []string{"add-login", "add-logout"}, Plan: json.RawMessage(testPlan)}},
	{"", journal.RunStartedData{PID: 42, Fingerprint: "fp-1", Changes: []string{"add-login", "add-logout"}, MaxParallel: 2}},
	{"", journal.LLMCallData{Role: "plan", Model: "m", Tokens: usage.Tokens{Input: 999}}},
	{"add-login", to(Pending, Dispatched, "")},
	{"add-login", journal.DispatchData{Worktree: ".set/worktrees/add-login", Branch: "set/add-login", Base: "base0"}},
	{"add-login", journal.AgentSessionDecisionData{Decision: "new", Reason: "first iteration"}},
	{"add-login", to(Dispatched, Implementing, "")},
	{"add-login", journal.AgentIterationData{Iteration: 1, Result: "done", SessionID: "sess-1", Tokens: usage.Tokens{Input: 100, Output: 20}}},
	{"add-login", journal.LLMCallData{Role: "implement", Model: "m", Iteration: 1, Tokens: usage.Tokens{Input: 100, Output: 20, CacheRead: 5}, CostUSD: 0.5}},
	{"add-login", to(Implementing, Verifying, "")},
	{"add-login", journal.VerifyGateData{Stage: "verify", Gate: "build", Result: "pass", Attempt: 1}},
	{"add-login", journal.VerifyGateData{Stage: "verify", Gate: "test", Result: "fail", ExitCode: 1, RetryContext: "TestLogin: want 200, got 500", Attempt: 1}},
	{"add-login", to(Verifying, VerifyFailed, "gate test failed")},
	{"add-login", journal.RetryScheduledData{Stage: "verify", Attempt: 1, Budget: 3, Reason: "gate test failed", RetryContext: "TestLogin: want 200, got 500"}},
	{"add-login", to(VerifyFailed, Implementing, "")},
	{"add-login", journal.AgentSessionDecisionData{Decision: "resume", SessionID: "sess-1", Reason: "retry"}},
	{"add-login", journal.AgentIterationData{Iteration: 2, Result: "done", Tokens: usage.Tokens{Input: 50, Output: 10}}},
	{"add-login", journal.LLMCallData{Role: "implement", Model: "m", Iteration: 2, Tokens: usage.Tokens{Input: 50, Output: 10}, CostUSD: 0.25}},
	{"add-login", to(Implementing, Verifying, "")},
	{"add-login", journal.VerifyGateData{Stage: "verify", Gate: "build", Result: "pass", Attempt: 2}},
	{"add-login", journal.VerifyGateData{Stage: "verify", Gate: "test", Result: "pass", Attempt: 2}},
	{"add-login", to(Verifying, Queued, "")},
	{"add-login", journal.MergeQueuedData{Head: "head1"}},
	{"add-login", to(Queued, Integrating, "")},
	{"add-login", journal.VerifyGateData{Stage: "integration", Gate: "test", Result: "pass", Attempt: 1}},
	{"add-login", journal.MergedData{Commit: "merge1", Previous: "base0"}},
	{"add-login", to(Integrating, Merged, "")},
	{"add-login", journal.ArchivedData{Commit: "archive1", Capabilities: []string{"auth"}}},
	{"add-login", to(Merged, Archived, "")},
	{"add-logout", to(Pending, Dispatched, "")},
	{"add-logout", journal.DispatchData{Worktree: ".set/worktrees/add-logout", Branch: "set/add-logout", Base: "merge1"}},
	{"add-logout", to(Dispatched, Implementing, "")},
	{"add-logout", to(Implementing, FailedStalled, "no output for 600s")},
	{"", journal.MonitorHeartbeatData{}},
	{"", journal.RunFinishedData{Result: "failed", Statuses: map[string]int{"archived": 1, "failed:stalled": 1}}},
}

// wantLifecycle is the state after lifecycle (events 1..35).
func wantLifecycle() *State {
	return &State{
		Version:     FormatVersion,
		Run:         "run-1",
		Fingerprint: "fp-1",
		LastSeq:     35,
		Started:     at(2),
		Updated:     at(35),
		Finished:    true,
		Result:      "failed",
		Order:       []string{"add-login", "add-logout"},
		PID:         42,
		MaxParallel: 2,
		Usage:       map[string]Usage{"plan": {Calls: 1, Tokens: usage.Tokens{Input: 999}}},
		RunUsage:    Usage{Calls: 3, Tokens: usage.Tokens{Input: 1149, Output: 30, CacheRead: 5}, CostUSD: 0.75},
		Plan: PlanIdentity{
			Changes: []string{"add-login", "add-logout"},
			Config:  "cfg-1",
			Specs:   map[string]string{"docs/spec.md": "spec-1"},
			Work:    map[string]string{"add-login": testWork("add-login"), "add-logout": testWork("add-logout")},
		},
		Changes: map[string]*Change{
			"add-login": {
				Name:         "add-login",
				Status:       Archived,
				Since:        at(29),
				Size:         "S",
				Requirements: []string{"REQ-1"},
				Gates:        GateCounts{Passed: 4, Failed: 1},
				// The retry's verdicts replace the first round's.
				GateResults: map[string]string{"verify/build": "pass", "verify/test": "pass", "integration/test": "pass"},
				Usage:       map[string]Usage{"implement": {Calls: 2, Tokens: usage.Tokens{Input: 150, Output: 30, CacheRead: 5}, CostUSD: 0.75}},
				// The run starts at 2; each status until archived at 29.
				TimeInMS: map[Status]int64{
					Pending: 2000, Dispatched: 3000, Implementing: 3000 + 4000, Verifying: 3000 + 3000,
					VerifyFailed: 2000, Queued: 2000, Integrating: 3000, Merged: 2000,
				},
				Iteration:           2,
				StartedIteration:    2,
				VerifyAttempts:      1,
				IntegrationAttempts: 0,
				VerifyRound:         2,
				IntegrationTries:    1,
				Tokens:              usage.Tokens{Input: 150, Output: 30, CacheRead: 5},
				CostUSD:             0.75,
				Worktree:            ".set/worktrees/add-login",
				Branch:              "set/add-login",
				Base:                "base0",
				SessionID:           "sess-1",
				LastGate:            "integration/test",
				LastResult:          "pass",
				RetryContext:        "TestLogin: want 200, got 500",
				RetryStage:          "verify",
				QueuedHead:          "head1",
				MergedCommit:        "merge1",
				ArchiveCommit:       "archive1",
				Work:                testWork("add-login"),
				DependsOn:           []string{},
				UpdatedAt:           at(29),
			},
			"add-logout": {
				Name:         "add-logout",
				Status:       FailedStalled,
				Since:        at(33),
				Size:         "S",
				Requirements: []string{"REQ-2"},
				TimeInMS:     map[Status]int64{Pending: 28000, Dispatched: 2000, Implementing: 1000},
				Worktree:     ".set/worktrees/add-logout",
				Branch:       "set/add-logout",
				Base:         "merge1",
				Error:        "no output for 600s",
				Work:         testWork("add-logout"),
				DependsOn:    []string{"add-login"},
				UpdatedAt:    at(33),
			},
		},
	}
}

// writeJournal appends steps to a journal in a new run directory and
// returns the directory and the events as committed.
func writeJournal(t *testing.T, steps []step) (string, []journal.Event) {
	t.Helper()
	dir := t.TempDir()
	n := 0
	w, err := journal.Open(dir, "run-1", journal.WithClock(func() time.Time {
		n++
		return at(n)
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var events []journal.Event
	for _, s := range steps {
		e, err := w.Append(s.change, s.p)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	return dir, events
}

func applyAll(t *testing.T, s *State, events []journal.Event) {
	t.Helper()
	for _, e := range events {
		if err := Apply(s, e); err != nil {
			t.Fatal(err)
		}
	}
}

func assertState(t *testing.T, what string, got, want *State) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Fatalf("%s:\n%s\nwant:\n%s", what, g, w)
	}
}

func TestLifecycle(t *testing.T) {
	_, events := writeJournal(t, lifecycle)
	s := New()
	applyAll(t, s, events)
	assertState(t, "state after the lifecycle", s, wantLifecycle())
}

func TestStatusAlongTheWay(t *testing.T) {
	_, events := writeJournal(t, lifecycle)
	s := New()
	want := map[int64]Status{1: Pending, 4: Dispatched, 13: VerifyFailed, 22: Queued, 27: Merged, 29: Archived}
	for _, e := range events {
		if err := Apply(s, e); err != nil {
			t.Fatal(err)
		}
		if st, ok := want[e.Seq]; ok && s.Changes["add-login"].Status != st {
			t.Errorf("after event %d: status %s, want %s", e.Seq, s.Changes["add-login"].Status, st)
		}
	}
}

// TestRebuildFromJournal is the acceptance test of the journal as source of
// truth: state.json deleted, the same state comes back from events.jsonl.
func TestRebuildFromJournal(t *testing.T) {
	dir, events := writeJournal(t, lifecycle)

	incremental := New()
	applyAll(t, incremental, events)

	rebuilt, err := Rebuild(events)
	if err != nil {
		t.Fatal(err)
	}
	assertState(t, "Rebuild", rebuilt, incremental)

	statePath := filepath.Join(dir, "state.json")
	if err := Save(statePath, incremental); err != nil {
		t.Fatal(err)
	}
	saved, err := Load(statePath)
	if err != nil {
		t.Fatal(err)
	}
	assertState(t, "Load(Save(s))", saved, incremental)

	if err := os.Remove(statePath); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(statePath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Load of a deleted state.json = %v, want ErrNotExist", err)
	}
	fromFile, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	assertState(t, "Read after deleting state.json", fromFile, saved)
}

// Read of a run directory without a journal (a project that never ran) is
// the state before any event; a damaged journal is an error naming it.
func TestReadWithoutJournal(t *testing.T) {
	dir := t.TempDir()
	st, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	assertState(t, "Read without a journal", st, New())
	path := filepath.Join(dir, journal.EventsFile)
	if err := os.WriteFile(path, []byte("not json\n{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Read of a damaged journal = %v, want an error naming %s", err, path)
	}
}

// A snapshot taken at any point, plus the whole journal replayed over it,
// gives the state of the whole journal.
func TestResumeFromSnapshot(t *testing.T) {
	dir, events := writeJournal(t, lifecycle)
	want, _ := Rebuild(events)
	statePath := filepath.Join(dir, "state.json")
	for k := range events {
		snap, err := Rebuild(events[:k])
		if err != nil {
			t.Fatal(err)
		}
		if err := Save(statePath, snap); err != nil {
			t.Fatal(err)
		}
		s, err := Load(statePath)
		if err != nil {
			t.Fatal(err)
		}
		applyAll(t, s, events)
		assertState(t, fmt.Sprintf("snapshot after %d events, journal replayed", k), s, want)
	}
}

func TestApplyIsIdempotent(t *testing.T) {
	_, events := writeJournal(t, lifecycle)
	once, _ := Rebuild(events)

	twice := New()
	for _, e := range events {
		for range 2 {
			if err := Apply(twice, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	assertState(t, "each event applied twice", twice, once)

	// A whole replay over the final state changes nothing either.
	applyAll(t, twice, events)
	assertState(t, "journal replayed over the final state", twice, once)
}

func TestApplyErrors(t *testing.T) {
	_, events := writeJournal(t, lifecycle[:2])
	base, _ := Rebuild(events)
	ev := func(seq int64, change string, p journal.Payload) journal.Event {
		data, _ := json.Marshal(p)
		return journal.Event{Seq: seq, Time: at(int(seq)), Type: p.EventType(), Run: "run-1", Change: change, Data: data}
	}
	tests := []struct {
		name string
		e    journal.Event
		want string
	}{
		{"unknown change", ev(7, "nope", to(Pending, Dispatched, "")), `event 7 (STATE_CHANGE): unknown change "nope"`},
		{"no change", ev(7, "", journal.MergedData{Commit: "x"}), `event 7 (MERGED): names no change`},
		{"unknown status", ev(7, "add-login", to(Pending, "bogus", "")), `event 7 (STATE_CHANGE): unknown status "bogus"`},
		{"from another status", ev(7, "add-login", to(Implementing, Verifying, "")), `event 7 (STATE_CHANGE): change add-login: from "implementing", but it is pending`},
		{"not in the lifecycle", ev(7, "add-login", to(Pending, Merged, "")), `event 7 (STATE_CHANGE): change add-login: pending → merged is not a transition of the change lifecycle`},
		{"no skipping to the end", ev(7, "add-login", to(Pending, Archived, "")), `pending → archived is not a transition`},
		{"bad payload", journal.Event{Seq: 7, Type: journal.Merged, Change: "add-login", Data: []byte(`{"commit":1}`)}, `event 7 (MERGED)`},
		{"accepted without a gate", ev(7, "", journal.BaselineAcceptedData{Failures: []string{"x"}}), `event 7 (BASELINE_ACCEPTED): names no gate`},
		{"duplicate in plan", ev(7, "", journal.PlanCreatedData{Plan: json.RawMessage(`{"version":1,"changes":[{"name":"a"},{"name":"a"}]}`)}), `event 7 (PLAN_CREATED): plan: change "a" appears twice`},
		{"plan of another version", ev(7, "", journal.PlanCreatedData{Plan: json.RawMessage(`{"version":2,"changes":[]}`)}), `event 7 (PLAN_CREATED): plan file version 2 is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := Rebuild(events)
			err := Apply(s, tt.e)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Apply error = %v, want it to contain %q", err, tt.want)
			}
			assertState(t, "state after a failed Apply", s, base)
		})
	}
}

// TestRetryOfAnUnknownStage: a RETRY_SCHEDULED of a stage this set does
// not know (a newer set's) is recorded, counted against no budget this set
// knows, and reading the journal goes on, as Apply promises for what a
// newer set writes; the stages it knows each count their own retries.
func TestRetryOfAnUnknownStage(t *testing.T) {
	_, events := writeJournal(t, lifecycle[:2])
	s, err := Rebuild(events)
	if err != nil {
		t.Fatal(err)
	}
	seq := s.LastSeq
	for _, p := range []journal.RetryScheduledData{
		{Stage: StageVerify, Attempt: 1}, {Stage: StageConflict, Attempt: 1}, {Stage: StageConflict, Attempt: 2},
		{Stage: StageIntegration, Attempt: 1}, {Stage: StageIntegration, Attempt: 2}, {Stage: StageIntegration, Attempt: 3},
		{Stage: "deploy", Attempt: 1, RetryContext: "the canary failed"},
	} {
		seq++
		data, _ := json.Marshal(p)
		e := journal.Event{Seq: seq, Time: at(int(seq)), Type: p.EventType(), Run: "run-1", Change: "add-login", Data: data}
		if err := Apply(s, e); err != nil {
			t.Fatalf("Apply(%s): %v", p.Stage, err)
		}
	}
	c := s.Changes["add-login"]
	if s.LastSeq != seq {
		t.Errorf("LastSeq = %d, want %d", s.LastSeq, seq)
	}
	if c.RetryStage != "deploy" || c.RetryContext != "the canary failed" {
		t.Errorf("retry recorded as stage %q, context %q", c.RetryStage, c.RetryContext)
	}
	for stage, want := range map[string]int{StageVerify: 1, StageConflict: 2, StageIntegration: 3, "deploy": 0, "": 0} {
		if got := c.RetriesUsed(stage); got != want {
			t.Errorf("RetriesUsed(%q) = %d, want %d", stage, got, want)
		}
	}
	if c.VerifyAttempts != 1 || c.ConflictAttempts != 2 || c.IntegrationAttempts != 3 {
		t.Errorf("attempts verify %d, conflict %d, integration %d; want 1, 2, 3", c.VerifyAttempts, c.ConflictAttempts, c.IntegrationAttempts)
	}
}

// TestBaselineAccepted: main's accepted failures hold for the run that
// accepted them, resumed or not, and a new run starts without them;
// BASELINE_GATE verdicts change nothing of the projection.
func TestBaselineAccepted(t *testing.T) {
	steps := append([]step{}, lifecycle[:2]...)
	steps = append(steps,
		step{"", journal.BaselineGateData{Gate: "fmt", Tree: "t1", Mode: "run", Result: "fail", ExitCode: 1, Failures: []string{"a.go"}}},
		step{"", journal.BaselineAcceptedData{Gate: "fmt", Tree: "t1", Failures: []string{"a.go"}}},
		step{"", journal.RunStartedData{Fingerprint: "fp-1", Resumed: true}},
		step{"", journal.BaselineAcceptedData{Gate: "fmt", Tree: "t2", Failures: []string{"a.go", "b.go"}}},
		step{"", journal.BaselineAcceptedData{Gate: "test", Tree: "t2", Failures: []string{"TestX"}}},
	)
	dir, events := writeJournal(t, steps)
	s, err := Rebuild(events[:3])
	if err != nil {
		t.Fatal(err)
	}
	if s.Accepted != nil {
		t.Errorf("a verdict alone accepts nothing: %v", s.Accepted)
	}
	s, _ = Rebuild(events)
	want := map[string][]string{"fmt": {"a.go", "b.go"}, "test": {"TestX"}}
	if !reflect.DeepEqual(s.Accepted, want) {
		t.Errorf("accepted after a resumed run = %v, want %v", s.Accepted, want)
	}
	statePath := filepath.Join(dir, "state.json")
	if err := Save(statePath, s); err != nil {
		t.Fatal(err)
	}
	saved, err := Load(statePath)
	if err != nil {
		t.Fatal(err)
	}
	assertState(t, "Load(Save(s))", saved, s)

	_, more := writeJournal(t, append(steps, step{"", journal.RunStartedData{Fingerprint: "fp-2"}}))
	if s, _ := Rebuild(more); s.Accepted != nil {
		t.Errorf("a new run keeps %v", s.Accepted)
	}
}

// TestBaselineActivity: the gate judging main is the run's Baseline from
// its BASELINE_GATE_STARTED to its verdict; a run that ends or starts
// again has none running.
func TestBaselineActivity(t *testing.T) {
	steps := append([]step{}, lifecycle[:2]...)
	steps = append(steps,
		step{"", journal.BaselineGateData{Gate: "build", Tree: "t1", Mode: "run", Result: "pass", Cached: true}},
		step{"", journal.BaselineGateStartedData{Gate: "test", Tree: "t1", Command: []string{"go", "test", "./..."}, Runner: "host", Log: ".set/logs/_baseline/test.log"}},
		step{"", journal.BaselineGateData{Gate: "test", Tree: "t1", Mode: "run", Result: "pass"}},
		step{"", journal.BaselineGateStartedData{Gate: "vet", Tree: "t1"}},
		step{"", journal.RunFinishedData{Result: "interrupted"}},
		step{"", journal.BaselineGateStartedData{Gate: "vet", Tree: "t1"}},
		step{"", journal.RunStartedData{Fingerprint: "fp-1", Resumed: true}},
	)
	_, events := writeJournal(t, steps)
	for n, want := range map[int]*Activity{
		3: nil, // a verdict judged before runs nothing
		4: {Kind: ActivityGate, Stage: StageBaseline, Gate: "test", Command: []string{"go", "test", "./..."}, Log: ".set/logs/_baseline/test.log", Since: at(4)},
		5: nil,
		6: {Kind: ActivityGate, Stage: StageBaseline, Gate: "vet", Since: at(6)},
		7: nil,
		8: {Kind: ActivityGate, Stage: StageBaseline, Gate: "vet", Since: at(8)},
		9: nil,
	} {
		s, err := Rebuild(events[:n])
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(s.Baseline, want) {
			t.Errorf("after %d events, Baseline = %+v, want %+v", n, s.Baseline, want)
		}
	}
	_, bad := writeJournal(t, append(steps[:2:2], step{"", journal.BaselineGateStartedData{}}))
	if _, err := Rebuild(bad); err == nil || !strings.Contains(err.Error(), "names no gate") {
		t.Errorf("a start of no gate: %v", err)
	}
}

func TestGapInSeqIsFine(t *testing.T) {
	_, events := writeJournal(t, lifecycle[:4])
	events[3].Seq = 10 // events 4..9 are another change's, in its journal
	s, err := Rebuild(events)
	if err != nil {
		t.Fatal(err)
	}
	if s.LastSeq != 10 || s.Changes["add-login"].Status != Dispatched {
		t.Fatalf("LastSeq %d, status %s", s.LastSeq, s.Changes["add-login"].Status)
	}
}

func TestRebuildRefusesDisorder(t *testing.T) {
	_, events := writeJournal(t, lifecycle[:4])
	events[2], events[3] = events[3], events[2]
	if _, err := Rebuild(events); err == nil || !strings.Contains(err.Error(), "event 3 follows event 4") {
		t.Fatalf("Rebuild error = %v", err)
	}
}

func TestReplanKeepsProgress(t *testing.T) {
	replan := `{"version": 1, "changes": [
		{"name": "add-login", "requirements": ["REQ-1"], "dependsOn": []},
		{"name": "add-signup", "dependsOn": ["add-login"]}
	]}`
	steps := append(lifecycle[:5:5],
		step{"", journal.PlanCreatedData{Plan: json.RawMessage(replan)}},
	)
	_, events := writeJournal(t, steps)
	s, err := Rebuild(events)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Changes["add-login"]; got.Status != Dispatched || got.Branch != "set/add-login" {
		t.Fatalf("add-login lost its progress: %+v", got)
	}
	if got := s.Changes["add-signup"]; got.Status != Pending || !reflect.DeepEqual(got.DependsOn, []string{"add-login"}) {
		t.Fatalf("add-signup = %+v", got)
	}
	if want := []string{"add-login", "add-signup", "add-logout"}; !reflect.DeepEqual(s.Order, want) {
		t.Fatalf("Order = %v, want %v", s.Order, want)
	}
}

// TestReplanRestartsOtherWork: a new plan that asks a change for other
// work, or names a change that reached main (so main no longer has its
// work), starts it again; .set/ never makes new work look done.
func TestReplanRestartsOtherWork(t *testing.T) {
	replan := `{"version": 1, "changes": [
		{"name": "add-login", "requirements": ["REQ-1"], "dependsOn": []},
		{"name": "add-logout", "requirements": ["REQ-2", "REQ-3"], "dependsOn": ["add-login"]}
	]}`
	steps := append(slices.Clone(lifecycle), step{"", journal.PlanCreatedData{Plan: json.RawMessage(replan)}})
	_, events := writeJournal(t, steps)
	s, err := Rebuild(events)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"add-login", "add-logout"} {
		// Its iteration numbers go on (TestPlanAgainContinuesNumbers), but
		// none of its iterations counts against the new work's budget.
		if got := s.Changes[name]; got.Status != Pending || got.Branch != "" || got.Iteration != got.IterationBase ||
			got.SessionID != "" || got.Tokens.Total() != 0 || got.VerifyAttempts != 0 || got.Gates != (GateCounts{}) {
			t.Errorf("%s kept the progress of other work: %+v", name, got)
		}
	}
	p, _ := plan.Decode([]byte(replan))
	if got := s.Changes["add-logout"].Work; got != p.Work("add-logout") || got == testWork("add-logout") {
		t.Errorf("add-logout's Work is %s, want the new plan's", got)
	}
}

// TestPlanAgainContinuesNumbers: a change a later plan starts again
// (other work, or work main no longer has) starts its progress from
// nothing, but its agent iterations and gate runs go on numbering from
// the earlier change's, since the journal still names the logs and
// prompts those numbers named: a new apply's first iteration of
// add-login is 3 (agent-3.log, prompt-3.md) and its first verify round
// 3 (verify-test-3.log), not 1 again. An iteration started and cut
// short (add-logout's 1) keeps its number too.
func TestPlanAgainContinuesNumbers(t *testing.T) {
	replan := `{"version": 1, "changes": [
		{"name": "add-login", "requirements": ["REQ-1"], "dependsOn": []},
		{"name": "add-logout", "requirements": ["REQ-2", "REQ-3"], "dependsOn": ["add-login"]}
	]}`
	steps := slices.Clone(lifecycle)
	i := slices.Index(steps, step{"add-logout", to(Dispatched, Implementing, "")})
	steps = slices.Insert(steps, i+1, step{"add-logout", journal.AgentSessionDecisionData{Decision: "new", Iteration: 1}})
	steps = append(steps,
		step{"", journal.PlanCreatedData{Plan: json.RawMessage(replan)}},
		step{"", journal.RunStartedData{PID: 43, Changes: []string{"add-login", "add-logout"}}},
	)
	_, events := writeJournal(t, steps)
	s, err := Rebuild(events)
	if err != nil {
		t.Fatal(err)
	}
	login := s.Changes["add-login"]
	if login.Status != Pending || login.VerifyAttempts != 0 || login.Gates != (GateCounts{}) || login.Tokens.Total() != 0 {
		t.Errorf("add-login kept the progress of other work: %+v", login)
	}
	if login.Iteration != 2 || login.IterationBase != 2 || login.VerifyRound != 2 || login.IntegrationTries != 1 {
		t.Errorf("add-login: Iteration %d (base %d), VerifyRound %d, IntegrationTries %d; want 2 (2), 2 and 1, the earlier run's",
			login.Iteration, login.IterationBase, login.VerifyRound, login.IntegrationTries)
	}
	if logout := s.Changes["add-logout"]; logout.Iteration != 1 || logout.IterationBase != 1 {
		t.Errorf("add-logout: Iteration %d (base %d), want 1 (1): its cut-short iteration 1 named a log", logout.Iteration, logout.IterationBase)
	}

	// The new run's iterations and rounds go on from there; the state it
	// journals rebuilds to the same numbers.
	steps = append(steps,
		step{"add-login", journal.AgentSessionDecisionData{Decision: "new", Iteration: login.Iteration + 1}},
		step{"add-login", journal.AgentIterationData{Iteration: login.Iteration + 1, Result: "done"}},
		step{"add-login", journal.GateStartedData{Stage: "verify", Gate: "test", Attempt: login.VerifyRound + 1}},
		step{"add-login", journal.VerifyGateData{Stage: "verify", Gate: "test", Result: "pass", Attempt: login.VerifyRound + 1}},
		step{"add-login", journal.IntegrationAttemptData{Attempt: login.IntegrationTries + 1}},
	)
	_, events = writeJournal(t, steps)
	if s, err = Rebuild(events); err != nil {
		t.Fatal(err)
	}
	if got := s.Changes["add-login"]; got.Iteration != 3 || got.IterationBase != 2 || got.VerifyRound != 3 || got.IntegrationTries != 2 {
		t.Errorf("add-login after the new run's work: Iteration %d (base %d), VerifyRound %d, IntegrationTries %d; want 3 (2), 3 and 2",
			got.Iteration, got.IterationBase, got.VerifyRound, got.IntegrationTries)
	}
}

// TestGateNumbersOfAnOlderJournal: a journal written before gate numbers
// went on across plans numbered the new plan's rounds from 1 again, and
// its integration gates without INTEGRATION_ATTEMPT. It still reads, and
// the next round gets a number none of its runs had.
func TestGateNumbersOfAnOlderJournal(t *testing.T) {
	replan := `{"version": 1, "changes": [
		{"name": "add-login", "requirements": ["REQ-1"], "dependsOn": []}
	]}`
	steps := append(slices.Clone(lifecycle),
		step{"", journal.PlanCreatedData{Plan: json.RawMessage(replan)}},
		step{"add-login", journal.VerifyGateData{Stage: "verify", Gate: "test", Result: "fail", Attempt: 1}},
		step{"add-login", journal.VerifyGateData{Stage: "integration", Gate: "test", Result: "fail", Attempt: 1}},
	)
	_, events := writeJournal(t, steps)
	s, err := Rebuild(events)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Changes["add-login"]; got.VerifyRound != 2 || got.IntegrationTries != 1 {
		t.Errorf("add-login: VerifyRound %d, IntegrationTries %d; want 2 and 1", got.VerifyRound, got.IntegrationTries)
	}
}

func TestPlanWithoutPlanFile(t *testing.T) {
	_, events := writeJournal(t, []step{{"", journal.PlanCreatedData{Changes: []string{"b", "a"}}}})
	s, err := Rebuild(events)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Order, []string{"b", "a"}) || s.Changes["a"].Status != Pending {
		t.Fatalf("state = %+v", s)
	}
}

func TestLoadRefusesOtherVersions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	os.WriteFile(path, []byte(`{"version": 99}`), 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "state file version 99 is not supported") {
		t.Fatalf("Load error = %v", err)
	}
}

func TestStatusClasses(t *testing.T) {
	type classes struct{ terminal, failed, active bool }
	want := map[Status]classes{
		Pending:               {},
		Dispatched:            {active: true},
		Implementing:          {active: true},
		Verifying:             {active: true},
		VerifyFailed:          {active: true},
		Queued:                {active: true},
		Integrating:           {active: true},
		IntegrationFailed:     {active: true},
		InReview:              {},
		Merged:                {},
		Archived:              {terminal: true},
		Paused:                {},
		DepBlocked:            {terminal: true},
		FailedRetryBudget:     {terminal: true, failed: true},
		FailedIterationBudget: {terminal: true, failed: true},
		FailedTokenBudget:     {terminal: true, failed: true},
		FailedWallTime:        {terminal: true, failed: true},
		FailedStalled:         {terminal: true, failed: true},
		FailedAgentError:      {terminal: true, failed: true},
		FailedRejected:        {terminal: true, failed: true},
	}
	if len(Statuses()) != len(want) {
		t.Fatalf("Statuses() has %d entries, want %d", len(Statuses()), len(want))
	}
	for _, s := range Statuses() {
		w, ok := want[s]
		if !ok {
			t.Fatalf("unexpected status %s", s)
		}
		if got := (classes{s.Terminal(), s.Failed(), s.Active()}); got != w {
			t.Errorf("%s: terminal/failed/active = %+v, want %+v", s, got, w)
		}
		if !s.Valid() {
			t.Errorf("%s is not Valid", s)
		}
	}
	if Status("failed:bogus").Valid() || Status("").Valid() {
		t.Error("an unknown status is Valid")
	}
}

// TestResumedRunKeepsItsStart: a resumed run is timed from its first
// RUN_STARTED (the summary and the report give the run as a whole); a new
// run starts the clock again.
func TestResumedRunKeepsItsStart(t *testing.T) {
	steps := append([]step{}, lifecycle[:2]...)
	steps = append(steps, step{"", journal.RunStartedData{Fingerprint: "fp-1", Resumed: true}})
	_, events := writeJournal(t, steps)
	first := events[1].Time.UTC()
	s, err := Rebuild(events)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Started.Equal(first) {
		t.Errorf("a resumed run started at %v, want its first RUN_STARTED's %v", s.Started, first)
	}
	_, more := writeJournal(t, append(steps, step{"", journal.RunStartedData{Fingerprint: "fp-2"}}))
	if s, _ := Rebuild(more); !s.Started.Equal(more[len(more)-1].Time.UTC()) {
		t.Errorf("a new run started at %v, want its own RUN_STARTED's %v", s.Started, more[len(more)-1].Time)
	}
}

// TestResumedRunNumbersPastCutShortGates: a run killed while a gate ran
// (its GATE_STARTED journaled, no verdict) or while an integration
// attempt was under way leaves those numbers taken: the resumed run's
// next verify round and integration attempt each get a number of their
// own, so they do not write over the cut-short runs' logs.
func TestResumedRunNumbersPastCutShortGates(t *testing.T) {
	steps := append(slices.Clone(lifecycle[:5]),
		step{"add-login", journal.AgentSessionDecisionData{Decision: "new", Iteration: 1}},
		step{"add-login", to(Dispatched, Implementing, "")},
		step{"add-login", journal.AgentIterationData{Iteration: 1, Result: "done"}},
		step{"add-login", to(Implementing, Verifying, "")},
		step{"add-login", journal.GateStartedData{Stage: "verify", Gate: "test", Attempt: 1, Log: ".set/logs/add-login/verify-test-1.log"}},
		step{"", journal.RunStartedData{Fingerprint: "fp-1", Resumed: true}},
	)
	_, events := writeJournal(t, steps)
	s, err := Rebuild(events)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Changes["add-login"].VerifyRound; got != 1 {
		t.Errorf("after a verify gate cut short, VerifyRound = %d, want 1 (the resumed round is 2)", got)
	}

	steps = append(steps,
		step{"add-login", journal.VerifyGateData{Stage: "verify", Gate: "test", Result: "pass", Attempt: 2}},
		step{"add-login", to(Verifying, Queued, "")},
		step{"add-login", to(Queued, Integrating, "")},
		step{"add-login", journal.IntegrationAttemptData{Attempt: 1}},
		step{"", journal.RunStartedData{Fingerprint: "fp-1", Resumed: true}},
	)
	_, events = writeJournal(t, steps)
	if s, err = Rebuild(events); err != nil {
		t.Fatal(err)
	}
	if got := s.Changes["add-login"]; got.VerifyRound != 2 || got.IntegrationTries != 1 {
		t.Errorf("after an integration attempt cut short: VerifyRound %d, IntegrationTries %d; want 2 and 1", got.VerifyRound, got.IntegrationTries)
	}
}

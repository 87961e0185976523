package report

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hexops/autogold/v2"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm/usage"
	"github.com/set-engine/set/engine/state"
)

// recorded is the projection of the recorded run that the CLI's views are
// pinned on (testdata/script/views_recorded.txtar).
func recorded(t *testing.T) *state.State {
	t.Helper()
	a, err := txtar.ParseFile("../../testdata/script/views_recorded.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range a.Files {
		if f.Name != ".set/events.jsonl" {
			continue
		}
		var events []journal.Event
		for _, line := range bytes.Split(bytes.TrimSpace(f.Data), []byte("\n")) {
			var e journal.Event
			if err := json.Unmarshal(line, &e); err != nil {
				t.Fatal(err)
			}
			events = append(events, e)
		}
		s, err := state.Rebuild(events)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Fatal("the archive has no .set/events.jsonl")
	return nil
}

// TestMarkdownOfRecordedRun pins the run report of the recorded run, as
// the run writes it to .set/report.md at its end.
func TestMarkdownOfRecordedRun(t *testing.T) {
	s := recorded(t)
	var b bytes.Buffer
	// A finished run's report is the same whenever it is made.
	if err := Markdown(&b, Build(s, Liveness{}, time.Now())); err != nil {
		t.Fatal(err)
	}
	autogold.ExpectFile(t, autogold.Raw(b.String()))
}

// The run's state comes from the lock first: a run whose apply is gone is
// not running, whatever its last events say.
func TestRunState(t *testing.T) {
	finished := recorded(t)
	unfinished := recorded(t)
	unfinished.Finished, unfinished.Result = false, ""
	for _, tt := range []struct {
		name  string
		s     *state.State
		live  Liveness
		state string
		pid   int
	}{
		{"never ran", state.New(), Liveness{}, NoRun, 0},
		{"first apply starting", state.New(), Liveness{Held: true, PID: 7}, Starting, 7},
		{"finished", finished, Liveness{}, Finished, 4242},
		{"next apply starting", finished, Liveness{Held: true, PID: 8}, Starting, 8},
		{"running", unfinished, Liveness{Held: true, PID: 9}, Running, 9},
		{"apply gone", unfinished, Liveness{}, NotRunning, 4242},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := Build(tt.s, tt.live, time.Now())
			if r.Run.State != tt.state || r.Run.PID != tt.pid {
				t.Errorf("state %q, PID %d; want %q, %d", r.Run.State, r.Run.PID, tt.state, tt.pid)
			}
		})
	}
}

// What a change waits for, and why, in each place it can wait.
func TestWaiting(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := state.New()
	s.Run, s.MaxParallel = "r", 2
	s.Budgets = &journal.Budgets{RetriesVerify: 3, RetriesIntegration: 2}
	add := func(name string, st state.Status, since int, deps ...string) *state.Change {
		c := &state.Change{Name: name, Status: st, Since: t0.Add(time.Duration(since) * time.Second), DependsOn: deps}
		s.Changes[name] = c
		s.Order = append(s.Order, name)
		return c
	}
	add("base", state.Implementing, 0)
	add("after-base", state.Pending, 0, "base")
	add("free", state.Pending, 0)
	add("merging", state.Integrating, 1)
	add("queued-first", state.Queued, 2)
	add("queued-second", state.Queued, 3)
	add("retrying", state.VerifyFailed, 4).VerifyAttempts = 2
	add("landing", state.Merged, 5)
	add("done", state.Archived, 6)
	add("failed", state.FailedStalled, 6).Error = "no output for 10m"
	for name, want := range map[string]string{
		"base":          "",
		"after-base":    "its dependency to reach main: base (implementing)",
		"free":          "a free slot: 2 changes at work, at most 2 at once",
		"merging":       "",
		"queued-first":  "the merge queue: behind merging",
		"queued-second": "the merge queue: behind merging and queued-first",
		"retrying":      "its agent: verify failed, retry 2 of 3",
		"landing":       "its archive: main holds it, the run is recording the fold",
		"done":          "",
		"failed":        "",
	} {
		if got := Waiting(s, s.Changes[name], Running); got != want {
			t.Errorf("%s waits for %q, want %q", name, got, want)
		}
	}
	// Once the apply is gone, nothing moves until the next one.
	if got, want := Waiting(s, s.Changes["free"], NotRunning), "a `setctl apply` to dispatch it"; got != want {
		t.Errorf("free, not running: %q, want %q", got, want)
	}
	if got, want := Waiting(s, s.Changes["base"], NotRunning), "a `setctl apply` to continue: the run stopped while it was implementing"; got != want {
		t.Errorf("base, not running: %q, want %q", got, want)
	}
	// A dependency is named while it is not on main, even with the run
	// stopped.
	if got := Waiting(s, s.Changes["after-base"], NotRunning); !strings.HasPrefix(got, "its dependency to reach main") {
		t.Errorf("after-base, not running: %q", got)
	}
	// While a gate judges main, before any dispatch, a change free to go
	// waits for the baseline, not for a slot; the run shows the gate.
	s.MainBranch = "trunk"
	s.Baseline = &state.Activity{Kind: state.ActivityGate, Stage: state.StageBaseline, Gate: "test", Command: []string{"go", "test"}, Log: ".set/logs/_baseline/test.log", Since: t0}
	if got, want := Waiting(s, s.Changes["free"], Running), "the baseline: gate test runs on trunk before any change is dispatched"; got != want {
		t.Errorf("free, during the baseline: %q, want %q", got, want)
	}
	if got, want := Waiting(s, s.Changes["after-base"], Running), "its dependency to reach main: base (implementing)"; got != want {
		t.Errorf("after-base, during the baseline: %q, want %q", got, want)
	}
	r := Build(s, Liveness{Held: true, PID: 1}, t0.Add(time.Second))
	want := &Activity{Name: "gate:test", Stage: "baseline", Command: "go test", Log: ".set/logs/_baseline/test.log", Since: t0}
	if !reflect.DeepEqual(r.Run.Baseline, want) || r.Run.Waiting != "the baseline: gate test runs on trunk before any change is dispatched" {
		t.Errorf("run's baseline %+v, waiting %q; want %+v", r.Run.Baseline, r.Run.Waiting, want)
	}
	if r := Build(s, Liveness{}, t0.Add(time.Second)); r.Run.Baseline != nil || r.Run.Waiting != "" {
		t.Errorf("a run that is gone shows a baseline gate: %+v, %q", r.Run.Baseline, r.Run.Waiting)
	}
}

// An activity shows only while the run's apply runs: a killed run's last
// activity is history, not work.
func TestActivityOnlyWhileRunning(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := state.New()
	s.Run, s.Plan.Changes, s.Order = "r", []string{"a"}, []string{"a"}
	s.Changes["a"] = &state.Change{Name: "a", Status: state.Verifying, Since: t0, ClockStart: t0,
		Activity: &state.Activity{Kind: state.ActivityGate, Stage: "verify", Gate: "test", Attempt: 1, Command: []string{"go", "test", "./..."}, Since: t0}}
	s.Updated = t0.Add(time.Minute)
	now := t0.Add(2 * time.Minute)
	r := Build(s, Liveness{Held: true, PID: 1}, now)
	want := &Activity{Name: "gate:test", Stage: "verify", Attempt: 1, Command: "go test ./...", Since: t0}
	if got := r.Changes[0].Activity; got == nil || *got != *want {
		t.Errorf("running: activity %+v, want %+v", got, want)
	}
	if r.Changes[0].Stages.VerifyMS != 2*time.Minute.Milliseconds() || r.Changes[0].AgeMS != 2*time.Minute.Milliseconds() {
		t.Errorf("running: times run to now: %+v, age %d", r.Changes[0].Stages, r.Changes[0].AgeMS)
	}
	r = Build(s, Liveness{}, now)
	if got := r.Changes[0].Activity; got != nil {
		t.Errorf("not running: activity %+v", got)
	}
	if r.Changes[0].Stages.VerifyMS != time.Minute.Milliseconds() {
		t.Errorf("not running: times run to the last event: %+v", r.Changes[0].Stages)
	}
}

// apply applies payloads to s as events one second apart from t0, each
// naming its change ("" for none).
func apply(t *testing.T, s *state.State, t0 time.Time, steps ...any) {
	t.Helper()
	for i := 0; i < len(steps); i += 2 {
		seq := s.LastSeq + 1
		p := steps[i+1].(journal.Payload)
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		e := journal.Event{Seq: seq, Time: t0.Add(time.Duration(seq) * time.Second), Type: p.EventType(), Run: "r", Change: steps[i].(string), Data: data}
		if err := state.Apply(s, e); err != nil {
			t.Fatal(err)
		}
	}
}

// A change whose agent iteration was interrupted is at that iteration,
// once the run is over as while it ran: it did not go back to 0.
func TestIterationInterrupted(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, end := range []string{"interrupted", "killed"} {
		s := state.New()
		apply(t, s, t0,
			"", journal.PlanCreatedData{Changes: []string{"a"}},
			"", journal.RunStartedData{PID: 7, MaxParallel: 1},
			"a", journal.StateChangeData{From: "pending", To: "dispatched"},
			"a", journal.AgentSessionDecisionData{Decision: "new", Iteration: 1, Adapter: "exec"},
			"a", journal.StateChangeData{From: "dispatched", To: "implementing"},
		)
		if got := Build(s, Liveness{Held: true, PID: 7}, t0.Add(time.Minute)).Changes[0].Iteration; got != 1 {
			t.Errorf("running: iteration %d, want 1", got)
		}
		if end == "interrupted" {
			apply(t, s, t0, "", journal.RunFinishedData{Result: "interrupted"})
		}
		if got := Build(s, Liveness{}, t0.Add(time.Minute)).Changes[0].Iteration; got != 1 {
			t.Errorf("%s: iteration %d, want 1", end, got)
		}
	}
}

// A gate run again after a pause and resume counts once in Latest, by
// its latest verdict; every run still counts in Runs.
func TestGatesLatest(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := state.New()
	round := func(attempt int, test string) []any {
		return []any{
			"a", journal.VerifyGateData{Stage: "verify", Gate: "build", Result: "pass", Attempt: attempt},
			"a", journal.VerifyGateData{Stage: "verify", Gate: "test", Result: test, Attempt: attempt},
		}
	}
	steps := []any{
		"", journal.PlanCreatedData{Changes: []string{"a"}},
		"", journal.RunStartedData{PID: 7, MaxParallel: 1},
		"a", journal.StateChangeData{From: "pending", To: "dispatched"},
		"a", journal.StateChangeData{From: "dispatched", To: "implementing"},
		"a", journal.StateChangeData{From: "implementing", To: "verifying"},
	}
	steps = append(steps, round(1, "fail")...)
	steps = append(steps,
		"a", journal.StateChangeData{From: "verifying", To: "paused", Reason: "paused by the user"},
		"a", journal.StateChangeData{From: "paused", To: "implementing"},
		"a", journal.StateChangeData{From: "implementing", To: "verifying"},
	)
	steps = append(steps, round(2, "pass")...)
	steps = append(steps, "a", journal.VerifyGateData{Stage: "integration", Gate: "test", Result: "pass", Attempt: 1})
	apply(t, s, t0, steps...)
	g := Build(s, Liveness{Held: true, PID: 7}, t0.Add(time.Minute)).Changes[0].Gates
	if want := (Verdicts{Passed: 3}); g.Latest != want {
		t.Errorf("latest %+v, want %+v", g.Latest, want)
	}
	if g.Runs != 5 || g.Passed != 4 || g.Failed != 1 {
		t.Errorf("runs %d, passed %d, failed %d; want 5, 4, 1", g.Runs, g.Passed, g.Failed)
	}
}

// AGE is the time in its status until now, also once the run is over,
// and for a change done its age at its end: not the few milliseconds
// from its last status to the run's last event.
func TestAge(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := state.New()
	apply(t, s, t0,
		"", journal.PlanCreatedData{Changes: []string{"done", "waits"}},
		"", journal.RunStartedData{PID: 7, MaxParallel: 1},
		"done", journal.StateChangeData{From: "pending", To: "dispatched"},
		"done", journal.StateChangeData{From: "dispatched", To: "implementing"},
		"done", journal.StateChangeData{From: "implementing", To: "failed:stalled", Reason: "no output"},
		"", journal.RunFinishedData{Result: "failed"},
	)
	// done: planned at 1, the run from 2, failed at 5 (the run's last
	// event at 6); waits: pending since 1.
	now := t0.Add(time.Hour)
	r := Build(s, Liveness{}, now)
	if got, want := r.Changes[0].AgeMS, (3 * time.Second).Milliseconds(); got != want {
		t.Errorf("done: age %dms, want %dms", got, want)
	}
	if got, want := r.Changes[1].AgeMS, now.Sub(t0.Add(time.Second)).Milliseconds(); got != want {
		t.Errorf("waits: age %dms, want %dms", got, want)
	}
}

// A merged change has done its work: its AGE is the time it took to
// reach main, not the time since, while its archive is still to come or
// the run still goes.
func TestAgeOfAMergedChange(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := state.New()
	apply(t, s, t0,
		"", journal.PlanCreatedData{Changes: []string{"m"}},
		"", journal.RunStartedData{PID: 7, MaxParallel: 1},
		"m", journal.StateChangeData{From: "pending", To: "dispatched"},
		"m", journal.StateChangeData{From: "dispatched", To: "implementing"},
		"m", journal.StateChangeData{From: "implementing", To: "verifying"},
		"m", journal.StateChangeData{From: "verifying", To: "queued"},
		"m", journal.StateChangeData{From: "queued", To: "integrating"},
		"m", journal.StateChangeData{From: "integrating", To: "merged"},
	)
	// Planned at 1, the run from 2, merged at 8.
	for _, now := range []time.Time{t0.Add(9 * time.Second), t0.Add(time.Hour)} {
		r := Build(s, Liveness{Held: true, PID: 7}, now)
		if got, want := r.Changes[0].AgeMS, (6 * time.Second).Milliseconds(); got != want {
			t.Errorf("at %s: age %dms, want %dms", now.Sub(t0), got, want)
		}
	}
}

// TestWaitingAfterAConflict: a change sent back for a merge conflict
// waits for its agent to resolve it, counted on the conflicts budget; one
// whose integration stack failed, on the integration budget.
func TestWaitingAfterAConflict(t *testing.T) {
	s := state.New()
	s.Run, s.MaxParallel = "r", 2
	s.Budgets = &journal.Budgets{RetriesVerify: 3, RetriesIntegration: 2, RetriesConflicts: 6}
	red := &state.Change{Name: "red", Status: state.IntegrationFailed, IntegrationAttempts: 1, RetryStage: state.StageIntegration}
	conflicted := &state.Change{Name: "conflicted", Status: state.IntegrationFailed, ConflictAttempts: 3, RetryStage: state.StageConflict}
	for c, want := range map[*state.Change]string{
		red:        "its agent: integration failed, retry 1 of 2",
		conflicted: "its agent: to resolve a merge conflict, conflict 3 of 6",
	} {
		if got := Waiting(s, c, Running); got != want {
			t.Errorf("%s waits for %q, want %q", c.Name, got, want)
		}
	}
	rc := change(s, conflicted, Run{State: Running}, time.Time{}, time.Time{})
	if want := (Budgeted{Used: 3, Budget: 6}); rc.Retries.Conflicts != want || rc.Retries.Integration.Used != 0 {
		t.Errorf("retries = %+v, want conflicts %+v and no integration retry", rc.Retries, want)
	}
}

// A change whose agent reported no usage (an exec agent: no LLM_CALL)
// says its tokens and cost are not reported, not that it used none of
// its budget; a change with a model call says what it used, also when
// the call reported 0 tokens.
func TestTokensNotReported(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := state.New()
	apply(t, s, t0,
		"", journal.PlanCreatedData{Changes: []string{"quiet", "told", "zero"}},
		"", journal.RunStartedData{PID: 7, MaxParallel: 3},
		"quiet", journal.AgentSessionDecisionData{Decision: "new", Iteration: 1, Adapter: "exec"},
		"told", journal.AgentSessionDecisionData{Decision: "new", Iteration: 1, Adapter: "claude"},
		"told", journal.LLMCallData{Role: "implement", Model: "m", Iteration: 1, Tokens: usage.Tokens{Input: 1200, Output: 300}, CostUSD: 0.25},
		"zero", journal.AgentSessionDecisionData{Decision: "new", Iteration: 1, Adapter: "replay"},
		"zero", journal.LLMCallData{Role: "implement", Model: "m", Iteration: 1},
	)
	type shown struct {
		Calls                  int
		Cell, Cost, InSentence string
	}
	got := map[string]shown{}
	for _, c := range Build(s, Liveness{}, t0.Add(time.Minute)).Changes {
		got[c.Name] = shown{c.Calls, TokensCell(c), CostCell(c), TokensAndCost(c)}
	}
	want := map[string]shown{
		"quiet": {0, "-", "-", "tokens and cost not reported"},
		"told":  {1, "1.5k", "$0.25", "1.5k tokens, $0.25"},
		"zero":  {1, "0", "$0.00", "0 tokens, $0.00"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

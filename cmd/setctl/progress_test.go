package main

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm/usage"
	"github.com/set-engine/set/engine/orchestrator"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/state"
)

func TestTerminalOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		tty  bool
		env  map[string]string
		want terminal
	}{
		{"pipe", false, nil, terminal{}},
		{"pipe, colour asked", false, map[string]string{"TERM": "xterm"}, terminal{}},
		{"terminal", true, map[string]string{"TERM": "xterm"}, terminal{live: true, color: true}},
		{"terminal without TERM", true, nil, terminal{live: true, color: true}},
		{"NO_COLOR: same lines, no colour", true, map[string]string{"NO_COLOR": "1"}, terminal{live: true}},
		{"dumb terminal: cannot redraw", true, map[string]string{"TERM": "dumb"}, terminal{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := terminalOf(tc.tty, func(k string) string { return tc.env[k] })
			if got != tc.want {
				t.Errorf("terminalOf(%v, %v) = %+v, want %+v", tc.tty, tc.env, got, tc.want)
			}
		})
	}
}

// sgr matches the colour escapes (Select Graphic Rendition).
var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestProgressNoColorSameLines: on a terminal, NO_COLOR takes the colours
// away and nothing else: the live view prints the very same lines.
func TestProgressNoColorSameLines(t *testing.T) {
	p := &plan.Plan{Changes: []plan.Change{{Name: "greet"}, {Name: "bye"}}}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { return t0.Add(90 * time.Second) }
	events := progressRun(t, t0)
	show := func(term terminal) string {
		var out bytes.Buffer
		pr := newProgress(&out, p, "main", term, clock, 0)
		for _, e := range events {
			pr.event(e)
		}
		pr.close()
		return out.String()
	}
	colored := show(terminal{live: true, color: true})
	plain := show(terminal{live: true})
	if !sgr.MatchString(colored) {
		t.Fatalf("the colour view has no colour:\n%q", colored)
	}
	if sgr.MatchString(plain) {
		t.Errorf("the NO_COLOR view has colour:\n%q", plain)
	}
	if !strings.Contains(plain, "\x1b[") {
		t.Errorf("the NO_COLOR view on a terminal is not live (no redraws):\n%q", plain)
	}
	if got := sgr.ReplaceAllString(colored, ""); got != plain {
		t.Errorf("NO_COLOR changed the lines:\nwith colour (escapes removed):\n%s\nwith NO_COLOR:\n%s", got, plain)
	}
}

// progressRun is a run of greet (archived) and bye (out of verify
// retries), as the engine journals it.
func progressRun(t *testing.T, t0 time.Time) []journal.Event {
	steps := []struct {
		change string
		p      journal.Payload
	}{
		{"", journal.RunStartedData{Changes: []string{"greet", "bye"}, MaxParallel: 2}},
		{"", journal.PlanCreatedData{Changes: []string{"greet", "bye"}}},
		{"greet", journal.StateChangeData{From: "pending", To: "dispatched"}},
		{"greet", journal.StateChangeData{From: "dispatched", To: "implementing"}},
		{"greet", journal.LLMCallData{Role: "implement", Iteration: 1, Tokens: usage.Tokens{Input: 1000, Output: 500}}},
		{"greet", journal.AgentIterationData{Iteration: 1, Result: "done", Tokens: usage.Tokens{Input: 1000, Output: 500}}},
		{"greet", journal.StateChangeData{From: "implementing", To: "verifying"}},
		{"greet", journal.VerifyGateData{Stage: "verify", Gate: "test", Result: "pass", DurationMS: 1200}},
		{"bye", journal.StateChangeData{From: "pending", To: "dispatched"}},
		{"bye", journal.StateChangeData{From: "dispatched", To: "implementing"}},
		{"bye", journal.StateChangeData{From: "implementing", To: "verifying"}},
		{"bye", journal.VerifyGateData{Stage: "verify", Gate: "vet", Result: "fail", Reason: "exit status 1", Log: ".set/logs/bye/verify-vet-1.log"}},
		{"bye", journal.StateChangeData{From: "verifying", To: "verify-failed"}},
		{"bye", journal.RetryScheduledData{Stage: "verify", Attempt: 1, Budget: 1}},
		{"greet", journal.StateChangeData{From: "verifying", To: "queued"}},
		{"greet", journal.StateChangeData{From: "queued", To: "integrating"}},
		{"greet", journal.MergedData{Commit: "0123456789abcdef", Previous: "fedcba9876543210"}},
		{"greet", journal.StateChangeData{From: "integrating", To: "merged"}},
		{"greet", journal.StateChangeData{From: "merged", To: "archived"}},
		{"bye", journal.StateChangeData{From: "verify-failed", To: "implementing"}},
		{"bye", journal.StateChangeData{From: "implementing", To: "verifying"}},
		{"bye", journal.VerifyGateData{Stage: "verify", Gate: "vet", Result: "fail", Reason: "exit status 1", Attempt: 2}},
		{"bye", journal.StateChangeData{From: "verifying", To: "failed:retry_budget_exhausted", Reason: "1 retry"}},
	}
	events := make([]journal.Event, len(steps))
	for i, s := range steps {
		events[i] = testEvent(t, int64(i+1), t0, s.change, s.p)
	}
	return events
}

// TestProgressRowsAreTheProjection: the live rows and the summary show
// the projected status, retries and tokens of each change, applied with
// state.Apply on top of the state the run started from.
func TestProgressRowsAreTheProjection(t *testing.T) {
	p := &plan.Plan{Changes: []plan.Change{{Name: "greet"}, {Name: "bye"}}}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	events := progressRun(t, t0)
	var out bytes.Buffer
	pr := newProgress(&out, p, "main", terminal{live: true}, func() time.Time { return t0.Add(time.Minute) }, 0)
	for _, e := range events[:8] {
		pr.event(e)
	}
	if got, want := pr.liveLine(pr.change("greet"), pr.rows["greet"]), "  greet  verifying · verify test · 1.5k tokens · 1m0s"; got != want {
		t.Errorf("greet, verifying:\n%q\nwant\n%q", got, want)
	}
	for _, e := range events[8:] {
		pr.event(e)
	}
	pr.close()
	if pr.stErr != nil {
		t.Fatal(pr.stErr)
	}
	for name, want := range map[string]string{
		"greet": "  greet  archived · 1.5k tokens",
		"bye":   "  bye    failed:retry_budget_exhausted · 1 retry",
	} {
		if got := pr.liveLine(pr.change(name), pr.rows[name]); got != want {
			t.Errorf("%s at the end:\n%q\nwant\n%q", name, got, want)
		}
	}
	out.Reset()
	pr.summary(&orchestrator.Summary{Result: "failed", Statuses: map[string]state.Status{"greet": state.Archived, "bye": state.FailedRetryBudget}}, "0123456789abcdef")
	want := `
Run failed in 0s.
  greet  archived     1.5k tokens
  bye    failed:retry_budget_exhausted 1 retry

main is at 0123456789. Events: .set/events.jsonl · state: .set/state.json · logs: .set/logs/
`
	if out.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", out.String(), want)
	}

	// A resumed run starts from the journal's state: its retries and
	// tokens count on from there.
	seeded, err := state.Rebuild(events[:14])
	if err != nil {
		t.Fatal(err)
	}
	resumed := newProgress(io.Discard, p, "main", terminal{}, time.Now, 0)
	resumed.seed(seeded)
	for _, e := range events[10:] { // replayed events are ignored
		resumed.event(e)
	}
	resumed.close()
	if got := resumed.change("bye"); retries(got) != 1 || got.Status != state.FailedRetryBudget {
		t.Errorf("bye after a resumed run: %+v", got)
	}
}

// TestProgressLostTrack: an event the projection refuses (a bug) freezes
// the rows where they stood, and the summary says so.
func TestProgressLostTrack(t *testing.T) {
	p := &plan.Plan{Changes: []plan.Change{{Name: "greet"}}}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var out bytes.Buffer
	pr := newProgress(&out, p, "main", terminal{}, time.Now, 0)
	pr.event(testEvent(t, 1, t0, "", journal.PlanCreatedData{Changes: []string{"greet"}}))
	pr.event(testEvent(t, 2, t0, "greet", journal.StateChangeData{From: "pending", To: "merged"}))
	pr.event(testEvent(t, 3, t0, "greet", journal.StateChangeData{From: "pending", To: "dispatched"}))
	pr.close()
	if got := pr.change("greet").Status; got != state.Pending {
		t.Errorf("greet = %s after the refused event, want pending", got)
	}
	out.Reset()
	pr.summary(&orchestrator.Summary{Result: "failed", Statuses: map[string]state.Status{"greet": state.Pending}}, "abc")
	if want := "The view lost track of the run (event 2 (STATE_CHANGE): change greet: pending → merged is not a transition of the change lifecycle)"; !strings.Contains(out.String(), want) {
		t.Errorf("summary:\n%s\nwant it to contain\n%s", out.String(), want)
	}
}

func testEvent(t *testing.T, seq int64, at time.Time, change string, p journal.Payload) journal.Event {
	t.Helper()
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return journal.Event{Seq: seq, Time: at, Type: p.EventType(), Run: "20260102T030405Z", Change: change, Data: data}
}

// TestDescribeEveryEvent: every event type of engine/journal has its own
// line, which the plain view and the JSON stream share.
func TestDescribeEveryEvent(t *testing.T) {
	for _, typ := range journal.Types() {
		if !eventLines.Handles(typ) {
			t.Errorf("eventLines has no entry for %s", typ)
		}
		e := journal.Event{Seq: 1, Type: typ, Data: []byte("{}")}
		l := describeEvent(e, "main", noColors)
		if l.text == "" || l.text == strings.ToLower(string(typ)) {
			t.Errorf("%s has no description (%q)", typ, l.text)
		}
		if l.level != "info" && l.level != "warn" && l.level != "error" {
			t.Errorf("%s: level %q", typ, l.level)
		}
	}
}

// TestDescribeUndecodable: an event whose payload does not decode is
// described by the error, as an error, never as a line of zero values.
func TestDescribeUndecodable(t *testing.T) {
	e := journal.Event{Seq: 7, Type: journal.Merged, Data: []byte(`{"commit":1}`)}
	got := describeEvent(e, "main", noColors)
	want := "cannot describe event 7 (MERGED): json: cannot unmarshal number into Go struct field MergedData.commit of type string"
	if got.text != want || got.level != "error" || !got.shown {
		t.Errorf("describeEvent = %+v, want a shown error line %q", got, want)
	}
}

// TestEventLevels: a failure is an error, what does not block or goes
// back to the agent a warning, in the JSON stream as in the plain view.
func TestEventLevels(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		p     journal.Payload
		level string
	}{
		{journal.BaselineGateData{Gate: "test", Mode: "run", Result: "fail"}, "error"},
		{journal.BaselineGateData{Gate: "test", Mode: "warn", Result: "fail"}, "warn"},
		{journal.BaselineGateData{Gate: "test", Mode: "run", Result: "pass"}, "info"},
		{journal.BaselineAcceptedData{Gate: "test", Failures: []string{"TestA"}}, "warn"},
		{journal.VerifyGateData{Gate: "vet", Result: "fail"}, "error"},
		{journal.VerifyGateData{Gate: "vet", Result: "warn"}, "warn"},
		{journal.VerifyGateData{Gate: "vet", Result: "pass"}, "info"},
		{journal.StateChangeData{From: "verifying", To: "failed:retry_budget_exhausted"}, "error"},
		{journal.StateChangeData{From: "pending", To: "dispatched"}, "info"},
		{journal.AgentIterationData{Result: "stalled"}, "error"},
		{journal.RetryScheduledData{Stage: "verify"}, "warn"},
		{journal.BudgetExceededData{Budget: "tokens"}, "error"},
		{journal.RunFinishedData{Result: "interrupted"}, "warn"},
		{journal.RunFinishedData{Result: "failed"}, "error"},
		{journal.RunFinishedData{Result: "success"}, "info"},
		{journal.RepairedData{Problem: "stale git locks", Removed: []string{".git/index.lock"}}, "warn"},
	} {
		e := testEvent(t, 1, t0, "greet", tc.p)
		if got := describeEvent(e, "main", noColors); got.level != tc.level {
			t.Errorf("%s %s: level %q (%s), want %q", e.Type, e.Data, got.level, got.text, tc.level)
		}
	}
}

// TestDescribeRepaired: what a resumed run repaired is named, path by
// path.
func TestDescribeRepaired(t *testing.T) {
	e := testEvent(t, 1, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "", journal.RepairedData{
		Problem: "stale git locks", Removed: []string{".git/HEAD.lock", ".git/worktrees/greet/index.lock"}})
	want := "repaired after a crash: stale git locks; removed .git/HEAD.lock, .git/worktrees/greet/index.lock"
	if got := describeEvent(e, "main", noColors); got.text != want {
		t.Errorf("text = %q, want %q", got.text, want)
	}
	e = testEvent(t, 2, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "", journal.RepairedData{
		Problem: "the fast-forward of main from 0123456789ab to 456789abcdef was interrupted with its checkout half-way (greet.txt)",
		Done:    "finished it: main is at 456789abcdef"})
	want = "repaired after a crash: the fast-forward of main from 0123456789ab to 456789abcdef was interrupted with its checkout half-way (greet.txt); finished it: main is at 456789abcdef"
	if got := describeEvent(e, "main", noColors); got.text != want {
		t.Errorf("text = %q, want %q", got.text, want)
	}
}

// TestDescribeBaselineBaseLacks: a baseline gate red in a container that
// passes on the host says its base lacks something, naming the base and
// the host run's log.
func TestDescribeBaselineBaseLacks(t *testing.T) {
	e := testEvent(t, 1, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "", journal.BaselineGateData{
		Gate: "test", Mode: "run", Result: "fail", Reason: "exit code 1", DurationMS: 1200, Log: ".set/logs/_baseline/test.log",
		Base: "rootfs ./rootfs", OnHost: "pass", HostLog: ".set/logs/_baseline/test.host.log"})
	want := "baseline test: FAIL on main: exit code 1 (1.2s); log .set/logs/_baseline/test.log; " +
		"passes on the host (log .set/logs/_baseline/test.host.log): the base (rootfs ./rootfs) lacks something"
	if got := describeEvent(e, "main", noColors); got.text != want || got.level != "error" {
		t.Errorf("describeEvent = %+v, want %q", got, want)
	}
}

// TestDescribePullRequestFeedback: a change a review or a failed check of
// its pull request sent back to its agent says which, not "integration
// failed: " with no gate.
func TestDescribePullRequestFeedback(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for reason, want := range map[string]string{
		journal.ReasonReview: "a review of its pull request requested changes",
		journal.ReasonCheck:  "a check of its pull request failed",
	} {
		e := testEvent(t, 1, t0, "greet", journal.ChangeIntegrationFailedData{Reason: reason, RetryContext: "..."})
		if got := describeEvent(e, "main", noColors); got.text != want || got.level != "warn" {
			t.Errorf("%s: %q (%s), want %q (warn)", reason, got.text, got.level, want)
		}
	}
}

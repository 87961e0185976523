package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/plan"
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
	events := []journal.Event{
		testEvent(t, 1, t0, "", journal.RunStartedData{Changes: []string{"greet", "bye"}, MaxParallel: 2}),
		testEvent(t, 2, t0, "greet", journal.StateChangeData{From: "pending", To: "verifying"}),
		testEvent(t, 3, t0, "greet", journal.VerifyGateData{Stage: "verify", Gate: "test", Result: "pass", DurationMS: 1200}),
		testEvent(t, 4, t0, "bye", journal.StateChangeData{From: "pending", To: "verifying"}),
		testEvent(t, 5, t0, "bye", journal.VerifyGateData{Stage: "verify", Gate: "vet", Result: "fail", Reason: "exit status 1", Log: ".set/logs/bye/verify-vet-1.log"}),
		testEvent(t, 6, t0, "bye", journal.RetryScheduledData{Stage: "verify", Attempt: 1, Budget: 3}),
		testEvent(t, 7, t0, "greet", journal.MergedData{Commit: "0123456789abcdef", Previous: "fedcba9876543210"}),
		testEvent(t, 8, t0, "greet", journal.StateChangeData{From: "merged", To: "archived"}),
		testEvent(t, 9, t0, "bye", journal.StateChangeData{From: "verifying", To: "failed:retry_budget_exhausted", Reason: "3 retries"}),
	}
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
		{journal.SentinelActionData{Rule: "stalled", Action: "restart"}, "warn"},
		{journal.BudgetExceededData{Budget: "tokens"}, "error"},
		{journal.RunFinishedData{Result: "interrupted"}, "warn"},
		{journal.RunFinishedData{Result: "failed"}, "error"},
		{journal.RunFinishedData{Result: "success"}, "info"},
	} {
		e := testEvent(t, 1, t0, "greet", tc.p)
		if got := describeEvent(e, "main", noColors); got.level != tc.level {
			t.Errorf("%s %s: level %q (%s), want %q", e.Type, e.Data, got.level, got.text, tc.level)
		}
	}
}

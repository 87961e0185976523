package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/set-engine/set/engine/coverage"
	"github.com/set-engine/set/engine/report"
	"github.com/set-engine/set/engine/spec"
	"github.com/set-engine/set/engine/state"
)

// TestRuns: the runs endpoint lists every run of the journal, the latest
// first, as history.Summaries has them; an exec agent's run has no model
// call; every other endpoint shows the run ?run= names.
func TestRuns(t *testing.T) {
	f := newFixture(t)
	f.twoRuns()
	_, ts := serveProject(t, f, Project{})

	v := getOK[RunsView](t, ts, "/api/p/0/runs")
	if v.Latest != "run-2" || len(v.Runs) != 2 || v.Runs[0].ID != "run-2" || v.Runs[1].ID != "run-1" {
		t.Fatalf("runs = %+v, want run-2 (latest) then run-1", v)
	}
	r2, r1 := v.Runs[0], v.Runs[1]
	if r2.State != report.Running || r2.Changes != 1 || r2.Merged != 0 || r2.Usage.Calls != 0 {
		t.Errorf("run-2 = %+v, want running, 1 change, none merged, no model call", r2)
	}
	if r1.State != report.Finished || r1.Result != "success" || r1.Changes != 2 || r1.Merged != 2 || r1.Usage.Calls != 3 || r1.DurationMS != 40000 {
		t.Errorf("run-1 = %+v, want finished: success, 2 of 2 merged, 3 model calls, 40s", r1)
	}

	var o Overview
	get(t, ts, "/api/p/0/overview?run=run-1", &o)
	if o.Report.Run.ID != "run-1" || o.Report.Run.State != report.Finished || len(o.Report.Changes) != 2 {
		t.Errorf("run-1's overview: run %+v, %d changes", o.Report.Run, len(o.Report.Changes))
	}
	var tl TimelineView
	get(t, ts, "/api/p/0/timeline?run=run-1", &tl)
	for _, sp := range tl.Spans {
		if sp.Change == "shout" {
			t.Errorf("run-1's timeline has run-2's span %+v", sp)
		}
	}
	// The latest run's timeline starts with it: run-1's spans are not on
	// its axis.
	get(t, ts, "/api/p/0/timeline", &tl)
	if len(tl.Spans) == 0 {
		t.Errorf("run-2's timeline has no span")
	}
	for _, sp := range tl.Spans {
		if sp.Change == "greet" || sp.Change == "farewell" {
			t.Errorf("run-2's timeline has run-1's span %+v", sp)
		}
	}
	if code := get(t, ts, "/api/p/0/change/shout?run=run-1", nil); code != http.StatusNotFound {
		t.Errorf("run-2's change in run-1: %d, want 404", code)
	}
	if code := get(t, ts, "/api/p/0/overview?run=run-9", nil); code != http.StatusNotFound {
		t.Errorf("a run the journal lacks: %d, want 404", code)
	}
}

func TestRunsOfAProjectThatNeverRan(t *testing.T) {
	_, ts := serveProject(t, &fixture{root: t.TempDir(), now: testStart}, Project{})
	v := getOK[RunsView](t, ts, "/api/p/0/runs")
	if v.Latest != "" || v.Runs == nil || len(v.Runs) != 0 {
		t.Errorf("runs = %+v, want none (an empty list)", v)
	}
}

// TestStop: Stop ends every stream with a "stopped" event that says why,
// the streams opened after it too, and the log streams; the server then
// shuts down without cutting a connection.
func TestStop(t *testing.T) {
	f := newFixture(t)
	f.lock()
	f.start()
	s, ts := serveProject(t, f, Project{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := readSSE(t, ctx, ts.URL+"/api/p/0/stream")
	next(t, stream, "overview")
	logs := readSSE(t, ctx, ts.URL+"/api/p/0/log/stream?path=.set/logs/greet/agent-1.log")
	next(t, logs, "log")

	const reason = "The run ended; this dashboard stopped with its `setctl apply`."
	s.Stop(reason)
	s.Stop("a second Stop does nothing")
	var st Stopped
	json.Unmarshal([]byte(next(t, stream, "stopped")), &st)
	if st.Reason != reason {
		t.Errorf("stopped: %+v, want reason %q", st, reason)
	}
	for _, ch := range []<-chan sseEvent{stream, logs} {
		select {
		case ev, ok := <-ch:
			if ok {
				t.Errorf("after Stop the stream sent %+v", ev)
			}
		case <-time.After(5 * time.Second):
			t.Error("a stream goes on after Stop")
		}
	}
	late := readSSE(t, ctx, ts.URL+"/api/p/0/stream")
	next(t, late, "overview")
	json.Unmarshal([]byte(next(t, late, "stopped")), &st)
	if st.Reason != reason {
		t.Errorf("a stream opened after Stop: %+v", st)
	}

	done := make(chan struct{})
	go func() { ts.Config.Shutdown(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the server does not shut down after Stop")
	}
}

// TestRequirementsEndpoint: the requirements endpoint gives every row of
// the project's RequirementsFunc with the latest run's state, its status
// ("uncovered" for a requirement whose change failed for good) and where
// it stands in words, counted by status; without a RequirementsFunc, or
// when it fails, it says why.
func TestRequirementsEndpoint(t *testing.T) {
	f := newFixture(t)
	f.start()
	var seen *state.State
	rows := func(st *state.State) ([]coverage.Row, error) {
		seen = st
		return []coverage.Row{
			{ID: "REQ-GREET-01", Title: "Greet", Status: spec.Implemented, Change: "greet", Commit: "abcdef0123456789", Tests: []string{"greet_test.go:5"}},
			{ID: "REQ-BYE-01", Title: "Bye", Status: spec.New, Change: "farewell", Why: "farewell is failed:verify", Uncovered: true},
			{ID: "REQ-OLD-01", Title: "Old", Status: spec.Removed, Change: "retire", Why: "planned in retire"},
		}, nil
	}
	_, ts := serveProject(t, f, Project{Requirements: rows})
	v := getOK[RequirementsView](t, ts, "/api/p/0/requirements?run=run-1")
	if seen == nil || seen.Changes["greet"] == nil || seen.Changes["greet"].Status != state.Implementing {
		t.Errorf("the RequirementsFunc was not given the latest run's state: %+v", seen)
	}
	want := []struct{ id, status, detail string }{
		{"REQ-GREET-01", "implemented", "by greet in abcdef012345; tested in greet_test.go:5"},
		{"REQ-BYE-01", Uncovered, "farewell is failed:verify"},
		{"REQ-OLD-01", "removed", "planned in retire"},
	}
	if len(v.Rows) != len(want) || v.Error != "" {
		t.Fatalf("rows = %+v, error %q", v.Rows, v.Error)
	}
	for i, w := range want {
		if r := v.Rows[i]; r.ID != w.id || r.Status != w.status || r.Detail != w.detail {
			t.Errorf("row %d = %s %s %q, want %s %s %q", i, r.ID, r.Status, r.Detail, w.id, w.status, w.detail)
		}
	}
	if v.Counts["implemented"] != 1 || v.Counts[Uncovered] != 1 || v.Counts["removed"] != 1 || v.Counts["new"] != 0 {
		t.Errorf("counts = %v", v.Counts)
	}
	if v.Note == "" {
		t.Error("no note for the uncovered requirement")
	}

	_, none := serveProject(t, f, Project{})
	v = RequirementsView{}
	get(t, none, "/api/p/0/requirements", &v)
	if v.Error == "" || v.Rows == nil || len(v.Rows) != 0 {
		t.Errorf("without a RequirementsFunc: %+v", v)
	}
	_, failing := serveProject(t, f, Project{Requirements: func(*state.State) ([]coverage.Row, error) {
		return nil, errors.New("set.cue does not load")
	}})
	v = RequirementsView{}
	get(t, failing, "/api/p/0/requirements", &v)
	if v.Error != "set.cue does not load" {
		t.Errorf("a failing RequirementsFunc: %+v", v)
	}
}

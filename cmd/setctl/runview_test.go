package main

import (
	"testing"
	"time"

	"github.com/set-engine/set/engine/report"
)

func TestAgo(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second:                   "0s ago", // a clock a little behind the journal's
		12 * time.Second:               "12s ago",
		3*time.Minute + 59*time.Second: "3m ago",
		2*time.Hour + 5*time.Minute:    "2h5m ago",
		75 * time.Hour:                 "3d ago",
	} {
		if got := ago(d); got != want {
			t.Errorf("ago(%s) = %q, want %q", d, got, want)
		}
	}
	if got := age(90 * time.Second); got != "1m" {
		t.Errorf("age(90s) = %q", got)
	}
}

func TestRunLine(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := t0.Add(3*time.Minute + 10*time.Second)
	for _, tt := range []struct {
		run  report.Run
		want string
	}{
		{report.Run{State: report.NoRun}, "no run yet: `setctl apply` starts one"},
		{report.Run{State: report.Starting, PID: 7}, "starting (PID 7)"},
		{report.Run{State: report.Running, PID: 7, LastEvent: now.Add(-12 * time.Second), Changes: 3, OnMain: 1}, "running (PID 7, last heartbeat 12s ago), 1 of 3 changes on main"},
		{report.Run{State: report.NotRunning, PID: 7, LastEvent: t0}, "not running (last heartbeat 3m ago): its setctl apply is gone; `setctl apply` continues the run"},
		{report.Run{State: report.Finished, Result: "success", DurationMS: 95_000, Changes: 1, OnMain: 1}, "finished: success in 1m35s, 1 of 1 change on main"},
	} {
		if got := runLine(tt.run, now); got != tt.want {
			t.Errorf("runLine(%s) = %q\nwant %q", tt.run.State, got, tt.want)
		}
	}
}

func TestActivityCell(t *testing.T) {
	for _, tt := range []struct {
		a    *report.Activity
		want string
	}{
		{nil, "-"},
		{&report.Activity{Name: "agent", Iteration: 2, Command: "claude opus"}, "agent #2 (claude opus)"},
		{&report.Activity{Name: "integrate"}, "integrate"},
		// A gate by its name, not by its profile's shell wrapper.
		{&report.Activity{Name: "gate:test", Stage: "verify", Attempt: 1, Command: "sh -c pkgs=$(go list ./...) || exit; test -z \"$pkgs\" || go test $pkgs"}, "gate:test"},
		{&report.Activity{Name: "agent", Iteration: 1, Command: "claude claude-opus-4-1-with-a-very-long-model-name"}, "agent #1 (claude claude-opus-4-1-with-a-very-long…)"},
	} {
		if got := activityCell(tt.a); got != tt.want {
			t.Errorf("activityCell(%+v) = %q, want %q", tt.a, got, tt.want)
		}
	}
}

package orchestrator

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/control"
	"github.com/set-engine/set/engine/state"
)

// TestStopARunningApply: the dashboard's stop request ends the run as
// Ctrl-C does: the agent is ended, the run is recorded as interrupted,
// the CONTROL event says who asked, no retry is spent, and the next
// apply continues the run to main.
func TestStopARunningApply(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.change("slow")
	// The agent works until the stop (the resumed run takes up the
	// interrupted iteration again).
	stopped := filepath.Join(f.root, "stopped")
	a := f.agentScript(`if [ ! -e ` + stopped + ` ]; then echo started; sleep 30; fi
echo $change > $change.txt
`)
	ended := f.applyInBackground(a)
	waitFor(t, f, func(st *state.State) bool {
		c := st.Changes["slow"]
		return c != nil && c.Activity != nil && c.Activity.Kind == state.ActivityAgent
	})
	const by = "dashboard (user alice, 127.0.0.1)"
	req, err := control.Append(filepath.Join(f.root, ".set", "control.jsonl"), control.Request{Action: control.Stop, By: by})
	if err != nil {
		t.Fatal(err)
	}
	sum := ended(20*time.Second, "the run did not stop")
	if sum.Result != "interrupted" {
		t.Fatalf("run %s, want interrupted: %v", sum.Result, sum.Statuses)
	}
	stops := f.controls()
	if len(stops) != 1 || stops[0].Action != control.Stop || stops[0].By != by || stops[0].ID != req.ID {
		t.Fatalf("CONTROL events = %+v", stops)
	}
	st, err := state.Read(filepath.Join(f.root, ".set"))
	if err != nil {
		t.Fatal(err)
	}
	if used := st.Changes["slow"].RetriesUsed(state.StageVerify); used != 0 {
		t.Errorf("the stop spent %d verify retries", used)
	}

	if err := os.WriteFile(stopped, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err = f.apply(context.Background(), a)
	if err != nil || sum.Result != "success" {
		t.Fatalf("the next apply: %v, %v", sum, err)
	}
}

// TestStopDuringTheBaseline: a stop that comes while the baseline judges
// main, before the loop runs, ends the run as Ctrl-C does there: the
// gate is ended, and the run is recorded as interrupted, with the stop
// journaled.
func TestStopDuringTheBaseline(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.change("slow")
	started := filepath.Join(f.root, "baseline-started")
	f.project.Gates["check"] = config.Gate{Kind: "exec", Mode: "run", Order: 10,
		Run: []string{"sh", "-c", "touch " + started + "; sleep 30"}}
	a := f.agentScript("echo $change > $change.txt\n")
	ended := f.applyInBackground(a)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the baseline's gate did not start")
		}
	}
	if _, err := control.Append(filepath.Join(f.root, ".set", "control.jsonl"), control.Request{Action: control.Stop, By: "dashboard (user alice, 127.0.0.1)"}); err != nil {
		t.Fatal(err)
	}
	sum := ended(20*time.Second, "the run did not stop during its baseline")
	if sum.Result != "interrupted" {
		t.Fatalf("run %s, want interrupted", sum.Result)
	}
	if stops := f.controls(); len(stops) != 1 {
		t.Errorf("CONTROL events = %+v, want the stop's", stops)
	}
}

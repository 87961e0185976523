package orchestrator

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/set-engine/set/engine/state"
)

// TestSettleFinishedWritesWhatAKillSkipped: an apply killed after it
// journaled RUN_FINISHED, before it wrote state.json and report.md, left
// them behind the journal; the next apply, with nothing to do, writes
// them as the journal has the run. A snapshot in step is left alone.
func TestSettleFinishedWritesWhatAKillSkipped(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.change("alpha")
	f.applySucceeds(f.agentScript(`echo ok > alpha.txt`))
	setDir := filepath.Join(f.root, ".set")
	statePath, reportPath := filepath.Join(setDir, "state.json"), filepath.Join(setDir, "report.md")

	// The snapshot of a moment before the end, as a kill would leave it.
	behind, err := state.Load(statePath)
	if err != nil {
		t.Fatal(err)
	}
	behind.LastSeq--
	behind.Finished = false
	data, err := state.Encode(behind)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(statePath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(reportPath); err != nil {
		t.Fatal(err)
	}

	if err := SettleFinished(f.root); err != nil {
		t.Fatal(err)
	}
	want, err := state.Read(setDir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := state.Load(statePath)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("state.json after SettleFinished is not the journal's state:\n%+v\nwant\n%+v", got, want)
	}
	if _, err := os.Stat(reportPath); err != nil {
		t.Errorf("report.md was not written again: %v", err)
	}

	// In step: nothing is written.
	before, _ := os.Stat(statePath)
	if err := SettleFinished(f.root); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(statePath); !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("SettleFinished rewrote a state.json in step with the journal")
	}
}

package orchestrator

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/set-engine/set/engine/history"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/prune"
	"github.com/set-engine/set/engine/rundir"
)

// TestHistoryKeep: with history.keep 1, a new run removes, before it
// starts, every run but the newest one, and says so (OnPrune); a resumed
// run removes nothing. Each run's report stays in its own folder until
// then.
func TestHistoryKeep(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.project.History.Keep = 1
	var pruned []prune.Result
	f.onPrune = func(r prune.Result) { pruned = append(pruned, r) }
	a := f.agentScript(`echo "good" > "$change.txt"; echo "test for REQ" > "${change}_test.txt"` + "\n")
	// Each apply starts an hour after the last: run IDs are start times.
	hour := 0
	newRun := func(change string) {
		t.Helper()
		hour++
		shift := time.Duration(hour) * time.Hour
		f.now = func() time.Time { return time.Now().Add(shift) }
		f.plan = &plan.Plan{Version: plan.FormatVersion, Project: "fixture", Strategy: "explicit",
			Fingerprint: plan.Fingerprint{Config: change, Specs: map[string]string{}}}
		f.change(change)
		f.applySucceeds(a)
	}
	runIDs := func() []string {
		var ids []string
		for _, r := range history.Runs(f.events()) {
			ids = append(ids, r.ID)
		}
		return ids
	}

	newRun("one")
	newRun("two")
	if ids := runIDs(); len(ids) != 2 || len(pruned) != 0 {
		t.Fatalf("after two runs: runs %v, pruned %+v", ids, pruned)
	}
	first := runIDs()[0]
	if _, err := os.Stat(rundir.New(f.root).RunReport(first)); err != nil {
		t.Fatalf("the first run's report: %v", err)
	}

	newRun("three")
	ids := runIDs()
	if len(ids) != 2 || ids[0] == first || len(pruned) != 1 || len(pruned[0].Runs) != 1 || pruned[0].Runs[0].ID != first {
		t.Fatalf("after the third run: runs %v, pruned %+v", ids, pruned)
	}
	if _, err := os.Stat(rundir.New(f.root).Run(first)); !os.IsNotExist(err) {
		t.Errorf("the first run's folder is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.root, ".set", "logs", "one")); !os.IsNotExist(err) {
		t.Errorf("the logs of the first run's change are still there: %v", err)
	}

	// The same plan again resumes the third run: nothing is removed.
	sum := f.applySucceeds(a)
	if again := runIDs(); !sum.Resumed || len(again) != 2 || again[1] != ids[1] || len(pruned) != 1 {
		t.Errorf("after a resumed run (resumed: %v): runs %v, pruned %+v", sum.Resumed, again, pruned)
	}
}

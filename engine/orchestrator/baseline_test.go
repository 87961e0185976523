package orchestrator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/baseline"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
)

// redMain puts content the fixture's check gate rejects on main, and
// makes the gate count its runs in the returned file.
func redMain(f *fixture) (runs string) {
	f.t.Helper()
	runs = filepath.Join(f.t.TempDir(), "runs")
	g := f.project.Gates["check"]
	g.Run = []string{"sh", "-c", "echo run >> " + runs + "; ! grep -rl bad --include='*.txt' . || { echo 'found bad content'; exit 1; }"}
	f.project.Gates["check"] = g
	f.write("bad.txt", "bad from before\n")
	f.git("add", "-A")
	f.git("commit", "-q", "-m", "bad content on main")
	return runs
}

func lines(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}

// baselineEvents are the run's BASELINE_GATE payloads.
func baselineEvents(t *testing.T, events []journal.Event) []journal.BaselineGateData {
	t.Helper()
	var out []journal.BaselineGateData
	for _, e := range events {
		if e.Type == journal.BaselineGate {
			d, err := journal.Decode[journal.BaselineGateData](e)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, d)
		}
	}
	return out
}

// TestBaselineRedStopsBeforeDispatch: a blocking gate red on main stops
// the run before any change is dispatched, and a second apply on the same
// main takes the cached verdict and runs no gate.
func TestBaselineRedStopsBeforeDispatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	runs := redMain(f)
	f.change("alpha")
	ran := filepath.Join(t.TempDir(), "agent-ran")
	a := f.agentScript("touch " + ran + "\necho good > alpha.txt\n")

	for attempt := 1; attempt <= 2; attempt++ {
		sum, err := f.apply(context.Background(), a)
		var red *baseline.RedError
		if !errors.As(err, &red) || sum == nil || sum.Result != "failed" || sum.Statuses["alpha"] != state.Pending {
			t.Fatalf("apply %d: summary %+v, error %v; want a *baseline.RedError and the failed run's summary", attempt, sum, err)
		}
		if len(red.Gates) != 1 || red.Gates[0].Gate != "check" || red.Gates[0].Comparable() {
			t.Errorf("apply %d: red gates %+v", attempt, red.Gates)
		}
		if !strings.Contains(err.Error(), "found bad content") || !strings.Contains(err.Error(), "setctl apply --accept-baseline") {
			t.Errorf("apply %d: message lacks the output or the choices:\n%s", attempt, err)
		}
	}
	if n := lines(t, runs); n != 1 {
		t.Errorf("the gate ran %d times over two applies on the same main, want 1", n)
	}
	ev := f.events()
	if n := count(ev, journal.Dispatch, "alpha"); n != 0 {
		t.Errorf("%d DISPATCH events, want none", n)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the agent ran")
	}
	if _, err := os.Stat(filepath.Join(f.root, ".set", "baseline")); !os.IsNotExist(err) {
		t.Errorf("the baseline checkout is still there: %v", err)
	}
	b := baselineEvents(t, ev)
	if len(b) != 2 || b[0].Cached || !b[1].Cached || b[0].Result != "fail" || b[0].Mode != "run" || b[0].Tree != f.git("rev-parse", "main^{tree}") {
		t.Errorf("BASELINE_GATE events %+v", b)
	}
	if st := f.state(); !st.Finished || st.Result != "failed" || st.Changes["alpha"].Status != state.Pending {
		t.Errorf("state: finished %v, result %q, alpha %s", st.Finished, st.Result, st.Changes["alpha"].Status)
	}

	// Main fixed: a new tree, judged anew, and the run goes on.
	f.git("rm", "-q", "bad.txt")
	f.git("commit", "-q", "-m", "fix main")
	sum, err := f.apply(context.Background(), a)
	if err != nil || sum.Result != "success" {
		t.Fatalf("after fixing main: %+v, %v", sum, err)
	}
	if n := lines(t, runs); n < 2 {
		t.Errorf("the fixed main was not judged (gate runs: %d)", n)
	}
}

// TestBaselineWarnGateDoesNotStop: a gate every stack runs in mode "warn"
// is reported red on main, and the run goes on.
func TestBaselineWarnGateDoesNotStop(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	redMain(f)
	f.project.Stacks["feature"] = config.Stack{"check": {Mode: config.ModeWarn}}
	f.project.Integration = config.Stack{"check": {Mode: config.ModeWarn}}
	f.change("alpha")
	sum, err := f.apply(context.Background(), f.agentScript("echo good > alpha.txt\n"))
	if err != nil || sum.Result != "success" {
		t.Fatalf("%+v, %v", sum, err)
	}
	if b := baselineEvents(t, f.events()); len(b) != 1 || b[0].Result != "fail" || b[0].Mode != "warn" {
		t.Errorf("BASELINE_GATE events %+v", b)
	}
}

// TestBaselineAccepted: with AcceptBaseline, main's failures are
// journaled and a change fails only on new ones; a resumed run, without
// the option and on a main the run moved, judges the same way.
func TestBaselineAccepted(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a run with failures accepted on main, then a resumed run; TestBaselineRedStopsBeforeDispatch covers the baseline")
	}
	t.Parallel()
	f := newFixture(t)
	redMain(f)
	g := f.project.Gates["check"]
	g.Failures = `^\./(\S+\.txt)$`
	f.project.Gates["check"] = g
	f.project.Budgets.Retries.Verify = 0
	f.change("alpha")
	f.change("beta")
	fixed := filepath.Join(t.TempDir(), "fixed")
	a := f.agentScript(`
if [ "$change" = beta ] && [ ! -f "` + fixed + `" ]; then echo bad > beta.txt; else echo good > "$change.txt"; fi
`)
	f.project.MaxParallel = 1
	f.acceptBaseline = true
	sum, err := f.apply(context.Background(), a)
	f.acceptBaseline = false
	if err != nil {
		t.Fatal(err)
	}
	if sum.Statuses["alpha"] != state.Archived || sum.Statuses["beta"] != state.FailedRetryBudget {
		t.Fatalf("statuses %v", sum.Statuses)
	}
	ev := f.events()
	var accepted []journal.BaselineAcceptedData
	for _, e := range ev {
		if e.Type == journal.BaselineAccepted {
			d, _ := journal.Decode[journal.BaselineAcceptedData](e)
			accepted = append(accepted, d)
		}
	}
	if len(accepted) != 1 || accepted[0].Gate != "check" || !slices.Equal(accepted[0].Failures, []string{"bad.txt"}) {
		t.Fatalf("BASELINE_ACCEPTED events %+v", accepted)
	}
	judged := map[string]int{}
	for _, e := range ev {
		if e.Type != journal.VerifyGate {
			continue
		}
		d, _ := journal.Decode[journal.VerifyGateData](e)
		judged[e.Change]++
		switch {
		case e.Change == "alpha" && (d.Result != "pass" || d.Reason != "exit code 1: 1 failure also on main, accepted"):
			t.Errorf("alpha %s %s: %s, %q", d.Stage, d.Gate, d.Result, d.Reason)
		case e.Change == "beta" && (d.Result != "fail" || !strings.Contains(d.RetryContext, "\n- beta.txt\n") || strings.Contains(d.RetryContext, "bad.txt")):
			t.Errorf("beta %s %s: %s, retry context:\n%s", d.Stage, d.Gate, d.Result, d.RetryContext)
		}
	}
	// alpha: verify and integration; beta: verify, failed.
	if judged["alpha"] != 2 || judged["beta"] != 1 {
		t.Errorf("VERIFY_GATE events per change: %v", judged)
	}

	// The next apply resumes the run on a main that alpha moved: main is
	// judged again, its failure is the accepted one, and beta is judged
	// against it without the option.
	if err := os.WriteFile(fixed, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err = f.apply(context.Background(), a)
	if err != nil || !sum.Resumed || sum.Statuses["beta"] != state.Archived {
		t.Fatalf("resumed run: %+v, %v", sum, err)
	}
	ev = f.events()
	b := baselineEvents(t, ev)
	if len(b) != 2 || b[1].Cached || b[1].Tree == b[0].Tree {
		t.Errorf("main was not judged again on its new tree: %+v", b)
	}
	// The resumed run says why it goes on with check red on main: the
	// failures accepted before, on the tree judged now.
	accepted = nil
	for _, e := range ev {
		if e.Type == journal.BaselineAccepted {
			d, _ := journal.Decode[journal.BaselineAcceptedData](e)
			accepted = append(accepted, d)
		}
	}
	if len(accepted) != 2 || accepted[1].Gate != "check" || !slices.Equal(accepted[1].Failures, []string{"bad.txt"}) || len(b) == 2 && accepted[1].Tree != b[1].Tree {
		t.Errorf("BASELINE_ACCEPTED events %+v, want the first run's and the same failures again on the new tree", accepted)
	}
	if st := f.state(); !slices.Equal(st.Accepted["check"], []string{"bad.txt"}) {
		t.Errorf("state accepts %v", st.Accepted)
	}
}

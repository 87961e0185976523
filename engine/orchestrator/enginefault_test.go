package orchestrator

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/runner"
	"github.com/set-engine/set/engine/runner/dagger"
	"github.com/set-engine/set/engine/runner/host"
	"github.com/set-engine/set/engine/state"
)

// faultyEngine runs gates on the host, except that the engine it stands
// for fails under faults gates it runs in a change's worktree, after the
// first skip of them, with the *dagger.EngineFault the dagger runner
// returns then.
type faultyEngine struct {
	runner.Runner
	mu      sync.Mutex
	skip    int
	faults  int
	faulted []string // the commands it failed
}

func (r *faultyEngine) Exec(ctx context.Context, e runner.Exec) (runner.ExecResult, error) {
	r.mu.Lock()
	fault := r.faults > 0 && strings.Contains(e.Dir, string(filepath.Separator)+"worktrees"+string(filepath.Separator))
	if fault && r.skip > 0 {
		r.skip, fault = r.skip-1, false
	}
	if fault {
		r.faults--
		r.faulted = append(r.faulted, strings.Join(e.Argv, " "))
	}
	r.mu.Unlock()
	if fault {
		return runner.ExecResult{ExitCode: -1}, &dagger.EngineFault{Engine: "tcp://engine.test:1234 via /usr/bin/dagger",
			What: "stopped answering during the gate", Err: errors.New("it did not answer a version query within 10s")}
	}
	return r.Runner.Exec(ctx, e)
}

// TestEngineFaultIsARunError: an engine that fails under a gate ends the
// run with a run error naming the engine; no retry is scheduled, no
// budget spent, and the agent is not sent back. The next apply resumes
// the change where it was and runs the gate again: it passes, without a
// retry, and the agent ran once in all.
func TestEngineFaultIsARunError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stage string
		skip  int // the worktree's gates before the fault
	}{{"verify", 0}, {"integration", 1}} {
		t.Run(tc.stage, func(t *testing.T) {
			t.Parallel()
			testEngineFault(t, tc.stage, tc.skip)
		})
	}
}

func testEngineFault(t *testing.T, stage string, skip int) {
	f := newFixture(t)
	f.change("alpha")
	a := f.agentScript(`
echo good > alpha.txt
echo "test for REQ" > alpha_test.txt
`)
	engine := &faultyEngine{Runner: host.New(), skip: skip, faults: 1}
	f.runners = map[string]runner.Runner{"host": engine}
	sum, err := f.apply(context.Background(), a)
	if !dagger.IsEngineFault(err) {
		t.Fatalf("apply = %+v, %v; want a run error that is an EngineFault", sum, err)
	}
	for _, want := range []string{stage + " gate check of alpha could not run", "the Dagger engine tcp://engine.test:1234 via /usr/bin/dagger stopped answering during the gate", "run `setctl apply` again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("run error lacks %q:\n%v", want, err)
		}
	}
	if len(engine.faulted) != 1 {
		t.Fatalf("the engine failed under %q, want one gate", engine.faulted)
	}
	ev := f.events()
	if n := count(ev, journal.RetryScheduled, "alpha"); n != 0 {
		t.Errorf("%d retries scheduled for an engine fault, want none", n)
	}
	if n := count(ev, journal.AgentIteration, "alpha"); n != 1 {
		t.Errorf("the agent ran %d times, want once: an engine fault tells it nothing", n)
	}
	st := f.state().Changes["alpha"]
	if st.RetriesUsed(state.StageVerify) != 0 || st.RetriesUsed(state.StageIntegration) != 0 || st.RetryContext != "" || st.Status.Terminal() {
		t.Errorf("alpha after the fault: %s, %d verify and %d integration retries spent, retry context %q", st.Status,
			st.RetriesUsed(state.StageVerify), st.RetriesUsed(state.StageIntegration), st.RetryContext)
	}

	sum = f.applySucceeds(a)
	if !sum.Resumed {
		t.Errorf("not resumed: %+v", sum)
	}
	ev = f.events()
	if n := count(ev, journal.RetryScheduled, "alpha"); n != 0 {
		t.Errorf("%d retries scheduled, want none", n)
	}
	if n := count(ev, journal.AgentIteration, "alpha"); n != 1 {
		t.Errorf("the agent ran %d times in all, want once: the resumed run runs the gate again, not the agent", n)
	}
	st = f.state().Changes["alpha"]
	if st.Status != state.Archived || st.RetriesUsed(state.StageVerify) != 0 || st.RetriesUsed(state.StageIntegration) != 0 {
		t.Errorf("alpha: %s, %d verify and %d integration retries spent, want archived with none", st.Status,
			st.RetriesUsed(state.StageVerify), st.RetriesUsed(state.StageIntegration))
	}
}

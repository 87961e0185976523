package orchestrator

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/control"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
)

// rule adds a sentinel rule to the fixture's project.
func (f *fixture) rule(name string, r config.SentinelRule) {
	if f.project.Sentinel.Rules == nil {
		f.project.Sentinel.Rules = map[string]config.SentinelRule{}
	}
	if r.Every == 0 {
		r.Every = config.Duration(time.Minute)
	}
	if r.Fails == "" {
		r.Fails = "stalled"
	}
	f.project.Sentinel.Rules[name] = r
}

// actions lists the SENTINEL_ACTION events of change as "rule:action".
func actions(events []journal.Event, change string) []string {
	var out []string
	for _, e := range events {
		if e.Type == journal.SentinelAction && e.Change == change {
			d, _ := journal.Decode[journal.SentinelActionData](e)
			out = append(out, d.Rule+":"+d.Action)
		}
	}
	return out
}

// TestSentinelStallLadder: an agent that hangs silently is taken up the
// stall rule's ladder one firing at a time: warned, restarted in its
// session, redispatched on a fresh worktree, and failed:stalled.
func TestSentinelStallLadder(t *testing.T) {
	f := newFixture(t)
	f.rule("stall", config.SentinelRule{
		When:   `activity == "agent" && secondsSinceOutput > 0.3`,
		Ladder: []string{"warn", "restart", "redispatch", "fail"}, Every: config.Duration(300 * time.Millisecond),
	})
	f.change("silent")
	sum, err := f.apply(context.Background(), f.agentScript("sleep 30\n"))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Statuses["silent"] != state.FailedStalled {
		t.Fatalf("silent = %s", sum.Statuses["silent"])
	}
	ev := f.events()
	want := []string{"stall:warn", "stall:restart", "stall:redispatch", "stall:fail"}
	if got := actions(ev, "silent"); !slices.Equal(got, want) {
		t.Fatalf("sentinel actions = %v, want %v", got, want)
	}
	var stopped, redispatched int
	for _, e := range ev {
		switch e.Type {
		case journal.AgentIteration:
			if d, _ := journal.Decode[journal.AgentIterationData](e); d.Result == "stopped" {
				stopped++
			}
		case journal.Dispatch:
			if d, _ := journal.Decode[journal.DispatchData](e); d.Redispatch != "" {
				redispatched++
			}
		}
	}
	// The warning kills nothing; restart, redispatch and fail each stop
	// the iteration that runs.
	if stopped != 3 || redispatched != 1 {
		t.Errorf("stopped iterations %d (want 3), redispatches %d (want 1)", stopped, redispatched)
	}
	if c := f.state().Changes["silent"]; c.Restarts != 2 || !strings.Contains(c.Error, "sentinel rule stall") {
		t.Errorf("silent: restarts %d, error %q", c.Restarts, c.Error)
	}
}

// TestSentinelOutputIsProgress: an agent that keeps printing is never
// counted as stalled, however long it works.
func TestSentinelOutputIsProgress(t *testing.T) {
	f := newFixture(t)
	f.rule("stall", config.SentinelRule{
		When:   `activity == "agent" && secondsSinceOutput > 0.4`,
		Ladder: []string{"warn", "fail"}, Every: config.Duration(100 * time.Millisecond),
	})
	f.change("chatty")
	sum, err := f.apply(context.Background(), f.agentScript(
		"for i in 1 2 3 4 5 6 7 8; do echo working $i; sleep 0.15; done\necho $change > $change.txt\n"))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Statuses["chatty"] != state.Archived {
		t.Fatalf("chatty = %s", sum.Statuses["chatty"])
	}
	if got := actions(f.events(), "chatty"); len(got) != 0 {
		t.Errorf("sentinel actions = %v, want none", got)
	}
}

// TestSentinelOverBudgetPausesAndResumes: a change over its token budget
// is paused where it is (worktree and session kept) and the run ends
// paused; the next apply, with the budget raised, resumes it to main.
func TestSentinelOverBudgetPausesAndResumes(t *testing.T) {
	f := newFixture(t)
	f.rule("over_budget", config.SentinelRule{When: `tokenBudget > 0 && tokensUsed >= tokenBudget`, Action: "pause"})
	f.project.Budgets.Tokens["S"] = 10 // the instant agent reports 15 per iteration
	f.change("greedy")
	sum, err := f.apply(context.Background(), instantAgent{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Result != "paused" || sum.Statuses["greedy"] != state.Paused {
		t.Fatalf("run %s, greedy %s", sum.Result, sum.Statuses["greedy"])
	}
	c := f.state().Changes["greedy"]
	if !strings.Contains(c.Error, "budgets.tokens.S") || c.PausedFrom != state.Verifying {
		t.Errorf("greedy: error %q, paused from %q", c.Error, c.PausedFrom)
	}
	if n := count(f.events(), journal.BudgetExceeded, "greedy"); n != 1 {
		t.Errorf("BUDGET_EXCEEDED events = %d", n)
	}

	// The same budget pauses it again, with no agent run.
	before := count(f.events(), journal.AgentIteration, "greedy")
	if sum, err = f.apply(context.Background(), instantAgent{}); err != nil || sum.Result != "paused" {
		t.Fatalf("second apply: %v, %+v", err, sum)
	}
	if n := count(f.events(), journal.AgentIteration, "greedy"); n != before {
		t.Errorf("a change still over budget ran its agent again")
	}

	f.project.Budgets.Tokens["S"] = 1000
	if sum, err = f.apply(context.Background(), instantAgent{}); err != nil {
		t.Fatal(err)
	}
	if sum.Result != "success" || !sum.Resumed || sum.Statuses["greedy"] != state.Archived {
		t.Fatalf("after raising the budget: %+v", sum)
	}
	if n := count(f.events(), journal.PlanCreated, ""); n != 1 {
		t.Errorf("PLAN_CREATED events = %d, want 1 (no new plan)", n)
	}
}

// TestPauseAndResumeARunningApply: setctl pause's request stops the
// change's agent and pauses it; the run waits; setctl resume's request
// takes it to main.
func TestPauseAndResumeARunningApply(t *testing.T) {
	f := newFixture(t)
	f.change("slow")
	// The first iteration waits to be paused; the next one finishes.
	a := f.agentScript(`if [ "$iteration" = 1 ]; then echo started; sleep 30; fi
echo $change > $change.txt
`)
	done := make(chan error, 1)
	var sum *Summary
	go func() {
		var err error
		sum, err = f.apply(context.Background(), a)
		done <- err
	}()
	ctl := filepath.Join(f.root, ".set", "control.jsonl")
	waitFor(t, f, func(st *state.State) bool {
		c := st.Changes["slow"]
		return c != nil && c.Activity != nil && c.Activity.Kind == state.ActivityAgent
	})
	if _, err := control.Append(ctl, control.Request{Action: control.Pause, Change: "slow"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, f, func(st *state.State) bool { return st.Changes["slow"].Status == state.Paused })
	if _, err := control.Append(ctl, control.Request{Action: control.Resume, Change: "slow"}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end after the resume")
	}
	if sum.Result != "success" {
		t.Fatalf("run %s: %v", sum.Result, sum.Statuses)
	}
	var controls []string
	for _, e := range f.events() {
		if e.Type == journal.Control {
			d, _ := journal.Decode[journal.ControlData](e)
			controls = append(controls, d.Action+" "+strings.Join(d.Changes, ","))
		}
	}
	if !slices.Equal(controls, []string{"pause slow", "resume slow"}) {
		t.Errorf("CONTROL events = %v", controls)
	}
}

// waitFor waits until the run's journal, projected, satisfies ok.
func waitFor(t *testing.T, f *fixture, ok func(*state.State) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if st, err := state.Read(filepath.Join(f.root, ".set")); err == nil && ok(st) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("timed out waiting for the run")
}

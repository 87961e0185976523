package orchestrator

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/agent"
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
	t.Parallel()
	f := newFixture(t)
	f.change("slow")
	// The first iteration waits to be paused; the next one finishes.
	a := f.agentScript(`if [ "$iteration" = 1 ]; then echo started; sleep 30; fi
echo $change > $change.txt
`)
	ended := f.applyInBackground(a)
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
	sum := ended(60*time.Second, "the run did not end after the resume")
	if sum.Result != "success" {
		t.Fatalf("run %s: %v", sum.Result, sum.Statuses)
	}
	var controls []string
	for _, d := range f.controls() {
		controls = append(controls, d.Action+" "+strings.Join(d.Changes, ","))
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

// TestSentinelNoticesACrashAtOnce: an agent killed by a signal is seen by
// the wait on its process, not by a timer: the crash rule acts well
// under a second after the death.
func TestSentinelNoticesACrashAtOnce(t *testing.T) {
	f := newFixture(t)
	f.rule("crash", config.SentinelRule{When: `lastExit.signal != ""`, Ladder: []string{"restart", "fail"}})
	f.change("fragile")
	died := filepath.Join(t.TempDir(), "died")
	sum, err := f.apply(context.Background(), f.agentScript(`date +%s.%N >> `+died+`
kill -KILL $$
`))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Statuses["fragile"] != state.FailedStalled {
		t.Fatalf("fragile = %s", sum.Statuses["fragile"])
	}
	deaths := strings.Fields(readFile(t, filepath.Dir(died), "died"))
	var acted []time.Time
	for _, e := range f.events() {
		if e.Type == journal.SentinelAction && e.Change == "fragile" {
			acted = append(acted, e.Time)
		}
		if e.Type == journal.AgentIteration {
			if d, _ := journal.Decode[journal.AgentIterationData](e); d.Signal != "SIGKILL" {
				t.Errorf("iteration %d: signal %q, want SIGKILL", d.Iteration, d.Signal)
			}
		}
	}
	if len(deaths) != 2 || len(acted) != 2 {
		t.Fatalf("%d deaths, %d sentinel actions; want 2 of each", len(deaths), len(acted))
	}
	for i, d := range deaths {
		sec, frac, _ := strings.Cut(d, ".")
		at := parseUnix(t, sec, frac)
		if lag := acted[i].Sub(at); lag >= time.Second || lag < 0 {
			t.Errorf("crash %d: the sentinel acted %v after the death, want < 1s", i+1, lag)
		} else {
			t.Logf("crash %d: the sentinel acted %v after the death", i+1, lag)
		}
	}
}

func parseUnix(t *testing.T, sec, nsec string) time.Time {
	t.Helper()
	s, err1 := strconv.ParseInt(sec, 10, 64)
	n, err2 := strconv.ParseInt(nsec, 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("bad time %s.%s", sec, nsec)
	}
	return time.Unix(s, n)
}

// fakeClaude is the claude adapter running script, a stand-in for Claude
// Code that prints a stream-json run.
func (f *fixture) fakeClaude(t *testing.T, script string) agent.Adapter {
	path := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return &agent.Claude{Prefix: []string{"sh", path}}
}

// TestSentinelRetriesAnAPIErrorThenFails: an agent whose model API fails
// is restarted with backoff by the api_error rule, and the change ends
// failed:agent_error with the provider's message.
func TestSentinelRetriesAnAPIErrorThenFails(t *testing.T) {
	f := newFixture(t)
	f.rule("api_error", config.SentinelRule{When: `lastExit.apiError`, Ladder: []string{"restart", "restart", "fail"},
		Backoff: config.Duration(50 * time.Millisecond), Fails: "agent_error"})
	f.change("unlucky")
	stream, err := filepath.Abs("../agent/testdata/claude-api-error.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := f.apply(context.Background(), f.fakeClaude(t, "cat "+stream+"\nexit 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Statuses["unlucky"] != state.FailedAgentError {
		for _, e := range f.events() {
			t.Log(string(e.Type), string(e.Data))
		}
		t.Fatalf("unlucky = %s", sum.Statuses["unlucky"])
	}
	msg := `API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	if c := f.state().Changes["unlucky"]; !strings.Contains(c.Error, msg) {
		t.Errorf("error %q does not give the provider's message", c.Error)
	}
	var backoffs []int64
	for _, e := range f.events() {
		if e.Type == journal.SentinelAction {
			d, _ := journal.Decode[journal.SentinelActionData](e)
			backoffs = append(backoffs, d.BackoffMS)
		}
	}
	if !slices.Equal(backoffs, []int64{50, 100, 0}) {
		t.Errorf("backoffs %v, want [50 100 0]", backoffs)
	}
	if n := count(f.events(), journal.RetryScheduled, "unlucky"); n != 0 {
		t.Errorf("%d verify retries spent on API errors", n)
	}
}

// TestSentinelGraceHoldsASlowInstall: a silent `npm install` the agent
// runs is held back by a grace glob, and the stall rule stays quiet; the
// same run without the grace is failed as stalled.
func TestSentinelGraceHoldsASlowInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two runs of a silent install, with and without a grace; TestSentinelStallLadder covers the sentinel")
	}
	success, err := filepath.Abs("../agent/testdata/claude-success.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	script := `printf '%s\n' '{"type":"system","subtype":"init","session_id":"s-1","tools":["Bash"],"model":"m"}'
printf '%s\n' '{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"npm install --no-audit"}}]},"session_id":"s-1"}'
sleep 1
printf '%s\n' '{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"added 1 package"}]},"session_id":"s-1"}'
echo done > slow.txt
grep '"type":"result"' ` + success + "\n"
	for _, tt := range []struct {
		grace map[string]config.Duration
		want  state.Status
		fired []string
	}{
		{map[string]config.Duration{"agent:*npm install*": config.Duration(10 * time.Second)}, state.Archived, nil},
		{nil, state.FailedStalled, []string{"stall:warn", "stall:fail"}},
	} {
		f := newFixture(t)
		f.rule("stall", config.SentinelRule{When: `activity == "agent" && secondsSinceOutput > 0.3`,
			Ladder: []string{"warn", "fail"}, Every: config.Duration(200 * time.Millisecond), Graced: true})
		f.project.Sentinel.Grace = tt.grace
		f.change("slow")
		sum, err := f.apply(context.Background(), f.fakeClaude(t, script))
		if err != nil {
			t.Fatal(err)
		}
		if got := actions(f.events(), "slow"); sum.Statuses["slow"] != tt.want || !slices.Equal(got, tt.fired) {
			t.Errorf("grace %v: slow = %s, sentinel actions %v; want %s, %v", tt.grace, sum.Statuses["slow"], got, tt.want, tt.fired)
		}
	}
}

// TestRunTokenBudgetHoldsNewDispatches: once the run's changes have spent
// budgets.tokens.run, nothing new is dispatched and the run ends paused;
// with the budget raised, the next apply dispatches the rest.
func TestRunTokenBudgetHoldsNewDispatches(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.project.MaxParallel = 1
	f.project.Budgets.Tokens["run"] = 10 // the instant agent reports 15 per iteration
	f.change("first")
	f.change("second")
	sum, err := f.apply(context.Background(), instantAgent{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Result != "paused" || sum.Statuses["first"] != state.Archived || sum.Statuses["second"] != state.Pending {
		t.Fatalf("run %s: %v", sum.Result, sum.Statuses)
	}
	var spent []journal.BudgetExceededData
	for _, e := range f.events() {
		if e.Type == journal.BudgetExceeded {
			d, _ := journal.Decode[journal.BudgetExceededData](e)
			spent = append(spent, d)
		}
	}
	if len(spent) != 1 || spent[0].Budget != "runTokens" || spent[0].Used != 15 || spent[0].Field != "budgets.tokens.run" {
		t.Errorf("BUDGET_EXCEEDED = %+v", spent)
	}
	f.project.Budgets.Tokens["run"] = 1000
	if sum, err = f.apply(context.Background(), instantAgent{}); err != nil || sum.Result != "success" {
		t.Fatalf("after raising the budget: %v, %+v", err, sum)
	}
}

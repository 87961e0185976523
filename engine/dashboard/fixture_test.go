package dashboard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm/usage"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/state"
)

// testPlan is a plan of two changes: farewell depends on greet.
const testPlan = `{"version": 1, "project": "demo", "strategy": "static", "fingerprint": {},
	"changes": [
		{"name": "greet", "type": "feature", "size": "S", "requirements": ["REQ-GREET-01"], "dependsOn": []},
		{"name": "farewell", "type": "feature", "size": "S", "requirements": ["REQ-BYE-01"], "dependsOn": ["greet"]}
	], "requirements": []}`

// testStart is when the fixture's run starts.
var testStart = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

// fixture is a project whose journal a test writes as a run would: its
// clock moves one second per event.
type fixture struct {
	t      *testing.T
	root   string
	layout rundir.Layout
	w      *journal.Writer

	// sha are the commits the journal names: made-up IDs, or a real
	// repository's (withRepo).
	sha fixtureSHAs

	mu  sync.Mutex
	now time.Time
}

// fixtureSHAs are the commits of the fixture's run: main at the start
// (base), greet's branch after its two iterations (greet1, greet2),
// main once greet merged (greetMain), farewell's branch after its
// iteration and main once it merged.
type fixtureSHAs struct {
	base, greet1, greet2, greetMain, farewell1, farewellMain string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, root: t.TempDir(), now: testStart, sha: fixtureSHAs{
		base: "0123456789abcdef", greet1: "1111111111111111", greet2: "fedcba9876543210", greetMain: "abcdef0123456789",
		farewell1: "2222222222222222", farewellMain: "9999999999999999",
	}}
	f.layout = rundir.New(f.root)
	w, err := journal.Open(f.layout.Dir(), "run-1", journal.WithClock(f.tick))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	f.w = w
	return f
}

// tick is the journal's clock: one second later at every event.
func (f *fixture) tick() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(time.Second)
	return f.now
}

// clock is the time of the last event.
func (f *fixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fixture) add(change string, p journal.Payload) {
	f.t.Helper()
	if _, err := f.w.Append(change, p); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) to(change string, from, to state.Status) {
	f.t.Helper()
	f.add(change, journal.StateChangeData{From: string(from), To: string(to)})
}

// writeLog writes a log of the run at rel.
func (f *fixture) writeLog(rel, text string) {
	f.t.Helper()
	path := filepath.Join(f.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// lock holds the project's run lock, as a running apply does, until the
// test ends or release is called.
func (f *fixture) lock() (release func()) {
	f.t.Helper()
	l, err := state.AcquireLock(f.layout.Dir())
	if err != nil {
		f.t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { l.Release() }) }
	f.t.Cleanup(release)
	return release
}

// start journals the plan and the run's start (begin), and sends greet
// to its agent (dispatch).
func (f *fixture) start() {
	f.begin()
	f.dispatch()
}

// begin journals the plan and the run's start: nothing is dispatched.
func (f *fixture) begin() {
	f.add("", journal.PlanCreatedData{Strategy: "static", Changes: []string{"greet", "farewell"}, Requirements: 2, Plan: json.RawMessage(testPlan)})
	f.add("", journal.RunStartedData{PID: os.Getpid(), Changes: []string{"greet", "farewell"}, MaxParallel: 2, MainBranch: "main",
		Budgets: &journal.Budgets{RetriesVerify: 2, RetriesIntegration: 2, Iterations: 5, Tokens: map[string]int64{"S": 200000}}})
	f.add("", journal.LLMCallData{Role: "plan", Model: "opus", Tokens: usage.Tokens{Input: 3000, Output: 800}, CostUSD: 0.04, DurationMS: 900})
}

// dispatch sends greet to its agent: greet is implementing, farewell
// waits for it.
func (f *fixture) dispatch() {
	f.to("greet", state.Pending, state.Dispatched)
	f.add("greet", journal.DispatchData{Worktree: ".set/worktrees/greet", Branch: "set/greet", Base: f.sha.base})
	f.writeLog(".set/logs/greet/agent-1.log", "reading the spec\nwriting greet.go\n")
	f.add("greet", journal.AgentSessionDecisionData{Decision: "new", Reason: "first iteration", Iteration: 1, Adapter: "exec", Log: ".set/logs/greet/agent-1.log"})
	f.to("greet", state.Dispatched, state.Implementing)
}

// toMerged takes greet from implementing to merged: a failing test gate,
// a retry with its context, a second iteration, the merge queue, main.
func (f *fixture) toMerged() {
	f.add("greet", journal.AgentIterationData{Iteration: 1, Result: "done", DurationMS: 1000, Commits: 1, Head: f.sha.greet1, Tokens: usage.Tokens{Input: 40000, Output: 9000},
		Prompt: ".set/changes/greet/prompt-1.md", Log: ".set/logs/greet/agent-1.log"})
	f.add("greet", journal.LLMCallData{Role: "implement", Model: "sonnet", Iteration: 1, Tokens: usage.Tokens{Input: 40000, Output: 9000}, CostUSD: 0.31, DurationMS: 1000})
	f.to("greet", state.Implementing, state.Verifying)
	f.writeLog(".set/logs/greet/verify-test-1.log", "--- FAIL: TestGreet (0.00s)\n    greet_test.go:9: got \"hi\", want \"hello\"\nFAIL\n")
	f.add("greet", journal.GateStartedData{Stage: "verify", Gate: "test", Kind: "exec", Attempt: 1, Command: []string{"go", "test", "./..."}, Log: ".set/logs/greet/verify-test-1.log"})
	f.add("greet", journal.VerifyGateData{Stage: "verify", Gate: "test", Kind: "exec", Mode: "run", Runner: "host", Result: "fail", ExitCode: 1, DurationMS: 1000,
		Log: ".set/logs/greet/verify-test-1.log", Reason: "exit 1", RetryContext: "TestGreet failed: got \"hi\", want \"hello\"", Attempt: 1})
	f.add("greet", journal.RetryScheduledData{Stage: "verify", Attempt: 1, Budget: 2, Reason: "test failed", RetryContext: "TestGreet failed: got \"hi\", want \"hello\""})
	f.to("greet", state.Verifying, state.VerifyFailed)
	f.add("greet", journal.SentinelActionData{Rule: "slow_verify", Action: "warn", Step: 1, Steps: 2, When: `activity == "gate:test" && activitySeconds > 30`, Facts: []byte(`{"activity":"gate:test"}`)})
	f.writeLog(".set/logs/greet/agent-2.log", "fixing the greeting\n")
	f.add("greet", journal.AgentSessionDecisionData{Decision: "resume", Reason: "retry after verify", Iteration: 2, Adapter: "exec", Log: ".set/logs/greet/agent-2.log"})
	f.to("greet", state.VerifyFailed, state.Implementing)
	f.add("greet", journal.AgentIterationData{Iteration: 2, Result: "done", DurationMS: 1000, Commits: 2, Head: f.sha.greet2, Tokens: usage.Tokens{Input: 20000, Output: 4000},
		Prompt: ".set/changes/greet/prompt-2.md", Log: ".set/logs/greet/agent-2.log"})
	f.add("greet", journal.LLMCallData{Role: "implement", Model: "sonnet", Iteration: 2, Tokens: usage.Tokens{Input: 20000, Output: 4000}, CostUSD: 0.12, DurationMS: 1000})
	f.to("greet", state.Implementing, state.Verifying)
	f.add("greet", journal.GateStartedData{Stage: "verify", Gate: "test", Kind: "exec", Attempt: 2, Command: []string{"go", "test", "./..."}, Log: ".set/logs/greet/verify-test-2.log"})
	f.add("greet", journal.VerifyGateData{Stage: "verify", Gate: "test", Kind: "exec", Mode: "run", Runner: "host", Result: "pass", DurationMS: 1000, Log: ".set/logs/greet/verify-test-2.log", Attempt: 2})
	f.to("greet", state.Verifying, state.Queued)
	f.add("greet", journal.MergeQueuedData{Head: f.sha.greet2})
	f.to("greet", state.Queued, state.Integrating)
	f.add("greet", journal.VerifyGateData{Stage: "integration", Gate: "test", Kind: "exec", Mode: "run", Runner: "host", Result: "pass", DurationMS: 1000, Attempt: 1})
	f.add("greet", journal.MergedData{Commit: f.sha.greetMain, Previous: f.sha.base})
	f.to("greet", state.Integrating, state.Merged)
}

// finish archives greet, runs farewell to main and ends the run.
func (f *fixture) finish() {
	f.add("greet", journal.ArchivedData{Commit: f.sha.greetMain, Capabilities: []string{"greet"}, ArchiveDir: "openspec/changes/archive/2026-03-04-greet"})
	f.to("greet", state.Merged, state.Archived)
	f.to("farewell", state.Pending, state.Dispatched)
	f.add("farewell", journal.AgentSessionDecisionData{Decision: "new", Reason: "first iteration", Iteration: 1, Adapter: "exec", Log: ".set/logs/farewell/agent-1.log"})
	f.to("farewell", state.Dispatched, state.Implementing)
	f.add("farewell", journal.AgentIterationData{Iteration: 1, Result: "done", DurationMS: 1000, Commits: 1, Head: f.sha.farewell1, Log: ".set/logs/farewell/agent-1.log"})
	f.to("farewell", state.Implementing, state.Verifying)
	f.add("farewell", journal.VerifyGateData{Stage: "verify", Gate: "test", Kind: "exec", Mode: "run", Runner: "host", Result: "pass", DurationMS: 1000, Attempt: 1})
	f.to("farewell", state.Verifying, state.Queued)
	f.to("farewell", state.Queued, state.Integrating)
	f.add("farewell", journal.MergedData{Commit: f.sha.farewellMain, Previous: f.sha.greetMain})
	f.to("farewell", state.Integrating, state.Merged)
	f.to("farewell", state.Merged, state.Archived)
	f.add("", journal.RunFinishedData{Result: "success", Statuses: map[string]int{"archived": 2}, DurationMS: 60000})
}

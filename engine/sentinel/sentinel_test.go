package sentinel

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/cond"
	"github.com/set-engine/set/engine/config"
)

// defaults are the rules and grace of stdlib/sentinel.cue, written out
// (TestStdlibDefaults checks they are the stdlib's).
func defaults() config.Sentinel {
	minute := config.Duration(time.Minute)
	ladder := func(steps ...string) []string { return steps }
	return config.Sentinel{
		Heartbeat: config.Duration(30 * time.Second),
		Rules: map[string]config.SentinelRule{
			"stall": {
				When:   `activity == "agent" && secondsSinceOutput > 120`,
				Ladder: ladder("warn", "restart", "redispatch", "fail"), Every: minute, Graced: true, Fails: "stalled",
			},
			"crash": {
				When:   `lastExit.signal != ""`,
				Ladder: ladder("restart", "redispatch", "fail"), Every: minute, Graced: true, Fails: "stalled",
			},
			"api_error": {
				When:   `lastExit.apiError`,
				Ladder: ladder("restart", "restart", "restart", "fail"), Every: minute, Fails: "agent_error",
				Backoff: config.Duration(10 * time.Second),
			},
			"near_budget": {
				When:   `tokenBudget > 0 && tokensUsed >= tokenBudget * 0.8`,
				Ladder: ladder("warn"), Every: minute, Fails: "stalled",
			},
			"over_budget": {
				When:   `tokenBudget > 0 && tokensUsed >= tokenBudget`,
				Ladder: ladder("pause"), Every: minute, Fails: "stalled",
			},
		},
		Grace: map[string]config.Duration{
			"agent:*npm install*":     config.Duration(10 * time.Minute),
			"agent:*go mod download*": config.Duration(10 * time.Minute),
			"agent:*cargo build*":     config.Duration(10 * time.Minute),
		},
	}
}

func compile(t testing.TB, cfg config.Sentinel) *Rules {
	t.Helper()
	r, err := Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// clock is an injected time: the tests advance it, nothing sleeps.
type clock struct{ now time.Time }

func (c *clock) advance(d time.Duration) time.Time {
	c.now = c.now.Add(d)
	return c.now
}

func newClock() *clock { return &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

// fired renders firings as "rule step/steps action", plus the backoff
// when there is one, for comparison.
func fired(t *testing.T, fs []Firing, err error) []string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range fs {
		s := fmt.Sprintf("%s %d/%d %s", f.Rule, f.Step, f.Steps, f.Action)
		if f.Backoff > 0 {
			s += " after " + f.Backoff.String()
		}
		out = append(out, s)
	}
	return out
}

// step is one evaluation of a scenario: advance the clock, then evaluate
// facts (or call Progress), and expect these firings.
type step struct {
	after    time.Duration
	facts    cond.SentinelEnv
	progress bool
	want     []string
}

func run(t *testing.T, w *Watch, steps []step) {
	t.Helper()
	c := newClock()
	for i, s := range steps {
		now := c.advance(s.after)
		if s.progress {
			w.Progress()
		}
		fs, err := w.Evaluate(s.facts, now)
		got := fired(t, fs, err)
		if !slices.Equal(got, s.want) {
			t.Errorf("step %d (+%s, %+v): fired %q, want %q", i, s.after, s.facts, got, s.want)
		}
	}
}

func silent(seconds float64) cond.SentinelEnv {
	return cond.SentinelEnv{Status: "implementing", Activity: "agent", ActivitySeconds: seconds, SecondsSinceOutput: seconds}
}

func talking() cond.SentinelEnv {
	return cond.SentinelEnv{Status: "implementing", Activity: "agent", ActivitySeconds: 500, SecondsSinceOutput: 1}
}

// The stall ladder climbs once per `every` while the agent stays silent,
// stops at its last step, and a new edge takes the last step again.
func TestStallLadderClimbsWhileHolding(t *testing.T) {
	w := compile(t, defaults()).Watch()
	run(t, w, []step{
		{after: 0, facts: silent(10)},
		{after: 111 * time.Second, facts: silent(121), want: []string{"stall 1/4 warn"}},
		{after: 30 * time.Second, facts: silent(151)},
		{after: 30 * time.Second, facts: silent(181), want: []string{"stall 2/4 restart"}},
		{after: 59 * time.Second, facts: silent(240)},
		{after: time.Second, facts: silent(241), want: []string{"stall 3/4 redispatch"}},
		{after: time.Minute, facts: silent(301), want: []string{"stall 4/4 fail"}},
		// Holding never repeats the last step.
		{after: time.Minute, facts: silent(361)},
		{after: time.Hour, facts: silent(3961)},
		// A new edge does.
		{after: time.Second, facts: talking()},
		{after: time.Second, facts: silent(130), want: []string{"stall 4/4 fail"}},
	})
}

// Each new edge climbs one step, however soon it comes.
func TestStallLadderClimbsOnEdges(t *testing.T) {
	w := compile(t, defaults()).Watch()
	run(t, w, []step{
		{after: 0, facts: silent(121), want: []string{"stall 1/4 warn"}},
		{after: time.Second, facts: talking()},
		{after: time.Second, facts: silent(121), want: []string{"stall 2/4 restart"}},
		{after: time.Second, facts: talking()},
		{after: time.Second, facts: silent(121), want: []string{"stall 3/4 redispatch"}},
		{after: time.Second, facts: talking()},
		{after: time.Second, facts: silent(121), want: []string{"stall 4/4 fail"}},
	})
}

// Progress puts the ladder back at its foot; a condition that still
// holds needs a new edge to fire, and then fires the first step.
func TestProgressResetsTheLadder(t *testing.T) {
	w := compile(t, defaults()).Watch()
	run(t, w, []step{
		{after: 0, facts: silent(121), want: []string{"stall 1/4 warn"}},
		{after: time.Minute, facts: silent(181), want: []string{"stall 2/4 restart"}},
		{after: time.Second, facts: silent(182), progress: true},
		{after: time.Hour, facts: silent(3782)},
		{after: time.Second, facts: talking()},
		{after: time.Second, facts: silent(121), want: []string{"stall 1/4 warn"}},
		{after: time.Minute, facts: silent(181), want: []string{"stall 2/4 restart"}},
	})
}

// A grace glob holds the graced rules while the slow activity runs, for
// at most its duration; the rules that are not graced are not held.
func TestGraceHoldsGracedRules(t *testing.T) {
	r := compile(t, defaults())
	install := func(seconds float64, tokens int64) cond.SentinelEnv {
		f := silent(seconds)
		f.Command = "npm install --no-audit"
		f.TokensUsed, f.TokenBudget = tokens, 1000
		return f
	}
	if got := r.Held(install(200, 0)); got != "agent:*npm install*" {
		t.Fatalf("Held(npm install after 200s) = %q, want agent:*npm install*", got)
	}
	if got := r.Held(install(600, 0)); got != "" {
		t.Fatalf("Held(npm install after 600s) = %q, want none: the grace is 10m", got)
	}
	w := r.Watch()
	run(t, w, []step{
		{after: 0, facts: install(130, 0)},
		{after: time.Minute, facts: install(190, 0)},
		// near_budget is not graced: it fires during the install.
		{after: 4 * time.Minute, facts: install(430, 850), want: []string{"near_budget 1/1 warn"}},
		{after: 169 * time.Second, facts: install(599, 850)},
		// The grace runs out: the stall rule was never evaluated, so it
		// fires its first step.
		{after: time.Second, facts: install(600, 850), want: []string{"stall 1/4 warn"}},
		{after: time.Minute, facts: install(660, 850), want: []string{"stall 2/4 restart"}},
	})
}

// A grace holds the rule's state untouched: a ladder climbed before the
// slow activity continues after it, and holding time spent under grace
// climbs nothing.
func TestGraceLeavesStateUntouched(t *testing.T) {
	cfg := defaults()
	cfg.Grace["gate:test"] = config.Duration(5 * time.Minute)
	cfg.Rules["slow_gate"] = config.SentinelRule{
		When: `activity startsWith "gate:" && activitySeconds > 60`, Ladder: []string{"warn", "fail"},
		Every: config.Duration(time.Minute), Graced: true, Fails: "stalled",
	}
	gate := func(seconds float64) cond.SentinelEnv {
		return cond.SentinelEnv{Status: "verifying", Activity: "gate:test", Command: "go test ./...", ActivitySeconds: seconds, SecondsSinceOutput: seconds}
	}
	lint := func(seconds float64) cond.SentinelEnv {
		f := gate(seconds)
		f.Activity, f.Command = "gate:lint", "golangci-lint run"
		return f
	}
	w := compile(t, cfg).Watch()
	run(t, w, []step{
		{after: 0, facts: lint(61), want: []string{"slow_gate 1/2 warn"}},
		// gate:test matches the glob as a whole activity: held for 5m.
		{after: 2 * time.Minute, facts: gate(120)},
		{after: 2 * time.Minute, facts: gate(240)},
		{after: time.Minute, facts: gate(300), want: []string{"slow_gate 2/2 fail"}},
	})
}

// A one-step rule fires once per edge, however long its condition holds.
func TestOneStepRuleFiresOnEdges(t *testing.T) {
	w := compile(t, defaults()).Watch()
	budget := func(used int64) cond.SentinelEnv {
		return cond.SentinelEnv{Status: "implementing", Activity: "agent", SecondsSinceOutput: 1, TokensUsed: used, TokenBudget: 1000}
	}
	run(t, w, []step{
		{after: 0, facts: budget(500)},
		{after: time.Second, facts: budget(800), want: []string{"near_budget 1/1 warn"}},
		{after: time.Hour, facts: budget(900)},
		{after: time.Second, facts: budget(1000), want: []string{"over_budget 1/1 pause"}},
		{after: time.Hour, facts: budget(1200)},
		// The budget is raised: both stop holding; spent again, both fire
		// again.
		{after: time.Second, facts: budget(100)},
		{after: time.Second, facts: budget(1500), want: []string{"near_budget 1/1 warn", "over_budget 1/1 pause"}},
	})
}

// Restarts of a rule with a backoff wait twice as long each time; a fail
// step has none; progress starts the doubling over.
func TestBackoffDoubles(t *testing.T) {
	w := compile(t, defaults()).Watch()
	apiError := cond.SentinelEnv{Status: "implementing", Iterations: 1, LastExit: cond.Exit{Code: 1, APIError: true}}
	running := cond.SentinelEnv{Status: "implementing", Activity: "agent", Iterations: 2}
	run(t, w, []step{
		{after: 0, facts: apiError, want: []string{"api_error 1/4 restart after 10s"}},
		{after: time.Second, facts: running},
		{after: time.Second, facts: apiError, want: []string{"api_error 2/4 restart after 20s"}},
		{after: time.Second, facts: running},
		{after: time.Second, facts: apiError, want: []string{"api_error 3/4 restart after 40s"}},
		{after: time.Second, facts: running},
		{after: time.Second, facts: apiError, want: []string{"api_error 4/4 fail"}},
		{after: time.Second, facts: running, progress: true},
		{after: time.Second, facts: apiError, want: []string{"api_error 1/4 restart after 10s"}},
	})
	fs, err := w.Evaluate(running, newClock().now)
	if err != nil || len(fs) != 0 {
		t.Fatalf("running: %v, %v", fs, err)
	}
	fs, _ = w.Evaluate(apiError, newClock().now)
	if len(fs) != 1 || fs[0].Fails != "agent_error" || fs[0].Facts != apiError {
		t.Errorf("firing = %+v, want api_error's fails and the facts it fired on", fs)
	}
}

func TestDoubledSaturates(t *testing.T) {
	if got := doubled(10*time.Second, 3); got != 80*time.Second {
		t.Errorf("doubled(10s, 3) = %s", got)
	}
	if got := doubled(time.Hour, 100); got != time.Duration(1<<63-1) {
		t.Errorf("doubled(1h, 100) = %s, want the longest duration", got)
	}
	if got := doubled(0, 5); got != 0 {
		t.Errorf("doubled(0, 5) = %s", got)
	}
}

// Rules fire in name order, each with its own ladder.
func TestFiringsInRuleOrder(t *testing.T) {
	r := compile(t, defaults())
	if got, want := r.Names(), []string{"api_error", "crash", "near_budget", "over_budget", "stall"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
	f := silent(500)
	f.LastExit = cond.Exit{Code: -1, Signal: "SIGKILL", APIError: true}
	f.TokensUsed, f.TokenBudget = 2000, 1000
	fs, err := r.Watch().Evaluate(f, newClock().now)
	got := fired(t, fs, err)
	want := []string{"api_error 1/4 restart after 10s", "crash 1/3 restart", "near_budget 1/1 warn", "over_budget 1/1 pause", "stall 1/4 warn"}
	if !slices.Equal(got, want) {
		t.Errorf("fired %q, want %q", got, want)
	}
}

// A `when` that fails at run time is named in the error; the other rules
// still fire.
func TestEvaluateError(t *testing.T) {
	cfg := defaults()
	cfg.Rules["modulo"] = config.SentinelRule{When: `retries.verify % iterations == 0`, Ladder: []string{"warn"}, Fails: "stalled"}
	w := compile(t, cfg).Watch()
	fs, err := w.Evaluate(silent(121), newClock().now)
	if err == nil || !strings.Contains(err.Error(), "sentinel rule modulo: ") {
		t.Errorf("error = %v, want it to name the rule modulo", err)
	}
	if len(fs) != 1 || fs[0].Rule != "stall" {
		t.Errorf("firings = %+v, want stall's", fs)
	}
}

func TestGlobs(t *testing.T) {
	tests := []struct {
		glob, activity, command string
		want                    bool
	}{
		{"agent:*npm install*", "agent", "npm install", true},
		{"agent:*npm install*", "agent", "cd web/app && npm install --no-audit", true},
		{"agent:*npm install*", "agent", "npm ci", false},
		{"agent:*npm install*", "gate:test", "npm install", false},
		{"gate:test", "gate:test", "go test ./...", true},
		{"gate:test", "gate:test-e2e", "", false},
		{"gate:*", "gate:lint", "", true},
		{"gate:?est", "gate:test", "", true},
		{"gate:?est", "gate:ttest", "", false},
		{"agent:go test ./...", "agent", "go test ./...", true},
		{"agent:go test ./...", "agent", "go test ./a/b", false},
		{"agent:*(x)*", "agent", "echo (x)", true},
		{"*", "integrate", "", true},
	}
	for _, tt := range tests {
		r := compile(t, config.Sentinel{Grace: map[string]config.Duration{tt.glob: config.Duration(time.Minute)}})
		f := cond.SentinelEnv{Activity: tt.activity, Command: tt.command, ActivitySeconds: 1}
		if got := r.Held(f) == tt.glob; got != tt.want {
			t.Errorf("glob %q on activity %q, command %q: held = %v, want %v", tt.glob, tt.activity, tt.command, got, tt.want)
		}
	}
	r := compile(t, config.Sentinel{Grace: map[string]config.Duration{"*": config.Duration(time.Minute)}})
	if got := r.Held(cond.SentinelEnv{ActivitySeconds: 1}); got != "" {
		t.Errorf("no activity is held by %q", got)
	}
}

func TestCompileErrors(t *testing.T) {
	rule := func(mod func(*config.SentinelRule)) config.Sentinel {
		r := config.SentinelRule{When: `secondsSinceOutput > 60`, Ladder: []string{"warn", "fail"}, Every: config.Duration(time.Minute), Fails: "stalled"}
		mod(&r)
		return config.Sentinel{Rules: map[string]config.SentinelRule{"silent": r}}
	}
	tests := []struct {
		name string
		cfg  config.Sentinel
		want string
	}{
		{"bad expression", rule(func(r *config.SentinelRule) { r.When = `secondsSinceOutput >` }),
			"project.sentinel.rules.silent.when: condition"},
		{"unknown fact", rule(func(r *config.SentinelRule) { r.When = `secondsSinceOuput > 60` }),
			"project.sentinel.rules.silent.when: condition \"secondsSinceOuput > 60\": unknown name secondsSinceOuput; names: activity,"},
		{"not a bool", rule(func(r *config.SentinelRule) { r.When = `tokensUsed` }),
			"project.sentinel.rules.silent.when: condition \"tokensUsed\": expected bool, but got number"},
		{"action and ladder", rule(func(r *config.SentinelRule) { r.Action = "warn" }),
			"project.sentinel.rules.silent.ladder: a rule takes an action or a ladder, not both"},
		{"no step", rule(func(r *config.SentinelRule) { r.Ladder = nil }),
			"project.sentinel.rules.silent: the rule has neither an action nor a ladder"},
		{"unknown action", rule(func(r *config.SentinelRule) { r.Ladder = []string{"warn", "explode"} }),
			`project.sentinel.rules.silent.ladder: unknown action "explode" (known: warn, restart, redispatch, fail, pause)`},
		{"unknown failure", rule(func(r *config.SentinelRule) { r.Fails = "crashed" }),
			`project.sentinel.rules.silent.fails: unknown failure "crashed" (known: stalled, agent_error)`},
		{"fail step without fails", rule(func(r *config.SentinelRule) { r.Fails = "" }),
			`project.sentinel.rules.silent.fails: unknown failure "" (known: stalled, agent_error)`},
		{"negative every", rule(func(r *config.SentinelRule) { r.Every = -1 }),
			"project.sentinel.rules.silent.every: negative duration -1ns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Compile error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	// Every problem is reported.
	cfg := rule(func(r *config.SentinelRule) { r.When, r.Fails = `x`, "crashed" })
	_, err := Compile(cfg)
	if err == nil || !strings.Contains(err.Error(), ".when: ") || !strings.Contains(err.Error(), ".fails: ") {
		t.Errorf("Compile error = %v, want both the when and the fails named", err)
	}
	// A rule without a fail step needs no fails.
	if _, err := Compile(rule(func(r *config.SentinelRule) { r.Ladder, r.Fails = []string{"warn"}, "" })); err != nil {
		t.Errorf("a warn-only rule without fails: %v", err)
	}
}

// BenchmarkEvaluate evaluates the five default rules on a silent agent.
func BenchmarkEvaluate(b *testing.B) {
	w := compile(b, defaults()).Watch()
	f := silent(30)
	f.Command = "go build ./..."
	f.TokensUsed, f.TokenBudget = 1000, 2_000_000
	now := newClock().now
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.Evaluate(f, now); err != nil {
			b.Fatal(err)
		}
	}
}

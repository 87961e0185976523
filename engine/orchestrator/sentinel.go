package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/set-engine/set/engine/agent"
	"github.com/set-engine/set/engine/cond"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/sentinel"
	"github.com/set-engine/set/engine/state"
)

// watches are the sentinel of a run: the watch of each change a worker
// took in this run, and the run's sentinel tick. It owns mu, which guards
// byChange (a watch's own fields are under the watch's mu, and no watch's
// mu is held when mu is taken). errs carries the sentinel's first run
// error (the journal failing) to the loop, which ends the run with it;
// later ones are dropped. It is safe for concurrent use.
type watches struct {
	rules   *sentinel.Rules
	rec     *recorder
	project *config.Project
	now     func() time.Time

	mu       sync.Mutex
	byChange map[string]*watch

	errs     chan error
	failOnce sync.Once
}

func newWatches(rules *sentinel.Rules, rec *recorder, project *config.Project, now func() time.Time) *watches {
	return &watches{rules: rules, rec: rec, project: project, now: now, byChange: map[string]*watch{}, errs: make(chan error, 1)}
}

// watch is the sentinel of one change while a worker works on it: it
// keeps the live facts the journal does not hold (the last output, the
// command the agent runs, the last exit), evaluates the project's rules
// on them, and acts on what fires. It is the change's agent.Steering.
//
// Rules are evaluated after each event of the change (recorder.emit calls
// watches.observe, in the emitting goroutine, so a decision taken at an
// iteration boundary is there when the loop looks) and on the run's
// sentinel tick, for the facts that change with time alone. A stop
// (restart, redispatch, fail, pause) cancels the running agent iteration
// or gate stack with the *agent.Stop as the cause and stays pending until
// the worker takes it.
type watch struct {
	set    *watches
	change string
	// tokenBudget and tokenField are the change's token budget and the
	// set.cue field that sets it.
	tokenBudget int64
	tokenField  string

	mu      sync.Mutex
	ladders *sentinel.Watch
	// lastOutput is when the agent (or the gate) last wrote output, or
	// when it started; command is the agent's current command line.
	lastOutput time.Time
	command    string
	// iteration is when the running agent iteration started (zero
	// outside one); lastExit how the last one ended (zero while one
	// runs).
	iteration time.Time
	lastExit  cond.Exit
	// lastError is the error of the last iteration ("" when none, and
	// while one runs): the provider's message of an API error.
	lastError string
	// commits is the number of commits of the branch the last iteration
	// left: more is progress.
	commits int
	// cancel stops what runs now (an agent iteration or a gate stack);
	// nil when nothing does.
	cancel context.CancelCauseFunc
	// pending is the stop not yet taken by the worker.
	pending *agent.Stop
	// held is the grace glob that held the rules back at the last
	// evaluation ("" when none).
	held string
	// busy is set while an evaluation acts: an event it records does not
	// evaluate again.
	busy bool
}

// of returns the watch of change c, making it on first use. Every worker
// of the change in this run shares it, so a ladder climbs across
// redispatches.
func (ws *watches) of(c plan.Change) *watch {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w := ws.byChange[c.Name]
	if w == nil {
		w = &watch{set: ws, change: c.Name, tokenBudget: tokenBudget(ws.project, c), tokenField: tokenField(c),
			ladders: ws.rules.Watch(), lastOutput: ws.now()}
		ws.byChange[c.Name] = w
	}
	return w
}

// forget forgets the watch of a change that is archived: the sentinel's
// tick evaluates the changes that may still work, not every change the
// run has seen.
func (ws *watches) forget(change string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	delete(ws.byChange, change)
}

// tick evaluates the rules of every watched change, for the facts that
// change with time alone.
func (ws *watches) tick() {
	ws.mu.Lock()
	all := make([]*watch, 0, len(ws.byChange))
	for _, w := range ws.byChange {
		all = append(all, w)
	}
	ws.mu.Unlock()
	for _, w := range all {
		if err := w.evaluate(); err != nil {
			ws.fail(err)
		}
	}
}

// observe shows the event of a change to its watch, if a worker took the
// change in this run.
func (ws *watches) observe(e journal.Event) {
	ws.mu.Lock()
	w := ws.byChange[e.Change]
	ws.mu.Unlock()
	if w != nil {
		w.observe(e)
	}
}

// stop stops change's work with s, if a worker took the change in this
// run (see watch.stop).
func (ws *watches) stop(change string, s *agent.Stop) {
	ws.mu.Lock()
	w := ws.byChange[change]
	ws.mu.Unlock()
	if w != nil {
		w.stop(s)
	}
}

// fail sends the sentinel's first run error to the loop (see errs).
func (ws *watches) fail(err error) {
	ws.failOnce.Do(func() { ws.errs <- err })
}

// failed is the sentinel's first run error if it was sent and not yet
// taken, nil otherwise: the loop looks once per turn, so that an error
// sent as the last worker reported is not lost when the loop would end.
func (ws *watches) failed() error {
	select {
	case err := <-ws.errs:
		return err
	default:
		return nil
	}
}

// Iteration is agent.Steering's: the iteration runs on a context the
// sentinel can stop.
func (w *watch) Iteration(ctx context.Context, _ int) (context.Context, func()) {
	run, cancel := context.WithCancelCause(ctx)
	w.mu.Lock()
	w.cancel = cancel
	if w.pending != nil {
		// Decided as the iteration opened: it stops at once.
		cancel(w.pending)
	}
	w.mu.Unlock()
	return run, func() {
		w.mu.Lock()
		w.cancel, w.iteration, w.command = nil, time.Time{}, ""
		w.mu.Unlock()
		cancel(nil)
	}
}

// activity runs a gate stack on a context the sentinel can stop; done
// ends it.
func (w *watch) activity(ctx context.Context) (context.Context, func()) {
	run, cancel := context.WithCancelCause(ctx)
	w.mu.Lock()
	w.cancel, w.lastOutput = cancel, w.set.now()
	w.mu.Unlock()
	return run, func() {
		w.mu.Lock()
		w.cancel = nil
		w.mu.Unlock()
		cancel(nil)
	}
}

// Take is agent.Steering's: the pending stop, taken.
func (w *watch) Take() *agent.Stop {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.pending
	w.pending = nil
	return s
}

// Output is agent.Steering's: the agent wrote output, which is progress
// for the rules about output.
func (w *watch) Output() {
	w.mu.Lock()
	w.lastOutput = w.set.now()
	w.ladders.Output()
	w.mu.Unlock()
}

// Command is agent.Steering's.
func (w *watch) Command(line string) {
	w.mu.Lock()
	w.command = line
	w.mu.Unlock()
}

// observe evaluates the rules after event e of the change was recorded.
// A new commit (an iteration that added one) or a passed gate is
// progress: it resets the ladders first.
func (w *watch) observe(e journal.Event) {
	switch e.Type {
	case journal.AgentSessionDecision:
		// An iteration opens: its clocks start now, and the last exit is
		// over.
		w.mu.Lock()
		now := w.set.now()
		w.iteration, w.lastOutput, w.command, w.lastExit, w.lastError = now, now, "", cond.Exit{}, ""
		w.mu.Unlock()
	case journal.GateStarted:
		// A gate's output is its log's: the gate's silence counts from
		// its start.
		w.mu.Lock()
		w.lastOutput = w.set.now()
		w.mu.Unlock()
	case journal.AgentIteration:
		d, err := journal.Decode[journal.AgentIterationData](e)
		if err == nil {
			w.mu.Lock()
			w.lastError = d.Error
			// An iteration the sentinel stopped did not crash: its
			// signal is the sentinel's.
			w.lastExit = cond.Exit{}
			if d.Result != "stopped" {
				w.lastExit = cond.Exit{Code: d.ExitCode, Signal: d.Signal, APIError: d.Result == "api-error"}
			}
			w.mu.Unlock()
		}
		if err == nil && w.committed(d.Commits) {
			w.progress()
		}
	case journal.VerifyGate:
		if d, err := journal.Decode[journal.VerifyGateData](e); err == nil && d.Result == "pass" {
			w.progress()
		}
	case journal.SentinelAction:
		return
	}
	if err := w.evaluate(); err != nil {
		w.set.fail(err)
	}
}

// committed reports whether the branch has more commits than the last
// iteration left, and remembers how many it has.
func (w *watch) committed(commits int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	more := commits > w.commits
	w.commits = commits
	return more
}

func (w *watch) progress() {
	w.mu.Lock()
	w.ladders.Progress()
	w.mu.Unlock()
}

// facts are the change's live facts now.
func (w *watch) facts(c state.Change, now time.Time) cond.SentinelEnv {
	f := cond.SentinelEnv{
		Status:             string(c.Status),
		Iterations:         c.Iteration,
		TokensUsed:         c.Tokens.Total(),
		TokenBudget:        w.tokenBudget,
		Retries:            cond.Retries{Verify: c.VerifyAttempts, Integration: c.IntegrationAttempts, Conflicts: c.ConflictAttempts},
		Restarts:           c.Restarts,
		LastExit:           w.lastExit,
		SecondsSinceOutput: seconds(now.Sub(w.lastOutput)),
		Command:            w.command,
	}
	if a := c.Activity; a != nil {
		f.Activity = a.Name()
		f.ActivitySeconds = seconds(now.Sub(a.Since))
		if a.Kind == state.ActivityGate {
			f.Command = a.CommandLine()
		}
	}
	if !w.iteration.IsZero() {
		f.IterationSeconds = seconds(now.Sub(w.iteration))
	}
	return f
}

func seconds(d time.Duration) float64 { return max(d.Seconds(), 0) }

// evaluate evaluates the rules on the change's facts now and acts on
// every firing: each is journaled as SENTINEL_ACTION, and a stop is left
// pending and stops what runs.
func (w *watch) evaluate() error {
	c := w.set.rec.change(w.change)
	if !c.Status.Active() || c.Status == state.Queued || c.Status == state.Integrating {
		return nil
	}
	w.mu.Lock()
	// While a stop waits to be taken, what it stops is winding down: its
	// facts decide nothing more.
	if w.busy || w.pending != nil {
		w.mu.Unlock()
		return nil
	}
	now := w.set.now()
	f := w.facts(c, now)
	held := w.set.rules.Held(f)
	firings, err := w.ladders.Evaluate(f, now)
	graced := w.held
	w.held = held
	w.busy = len(firings) > 0
	w.mu.Unlock()
	if err != nil || len(firings) == 0 {
		return err
	}
	defer func() {
		w.mu.Lock()
		w.busy = false
		w.mu.Unlock()
	}()
	for _, fire := range firings {
		if err := w.act(fire, graced); err != nil {
			return err
		}
	}
	return nil
}

// act journals one firing and carries out its action.
func (w *watch) act(fire sentinel.Firing, graced string) error {
	facts, err := json.Marshal(fire.Facts)
	if err != nil {
		return err
	}
	if err := w.set.rec.emit(w.change, journal.SentinelActionData{
		Rule: fire.Rule, Action: string(fire.Action), Step: fire.Step, Steps: fire.Steps,
		When: fire.When, Facts: facts, BackoffMS: fire.Backoff.Milliseconds(), Grace: graced,
	}); err != nil {
		return err
	}
	if fire.Action == sentinel.Warn {
		return nil
	}
	stop := &agent.Stop{
		Action: string(fire.Action), Rule: fire.Rule, Fails: fire.Fails, Backoff: fire.Backoff,
		Reason: fmt.Sprintf("sentinel rule %s (%s) fired: %s", fire.Rule, fire.When, describe(fire.Facts)),
	}
	w.mu.Lock()
	if w.lastError != "" {
		stop.Reason += "; last iteration: " + w.lastError
	}
	w.mu.Unlock()
	if fire.Action == sentinel.Pause && fire.Facts.TokenBudget > 0 && fire.Facts.TokensUsed >= fire.Facts.TokenBudget {
		stop.Reason = fmt.Sprintf("token budget spent: %d of %d tokens (%s); raise it in set.cue, commit set.cue, and run setctl apply again",
			fire.Facts.TokensUsed, fire.Facts.TokenBudget, w.tokenField)
	}
	w.stop(stop)
	return nil
}

// stop leaves s pending, replacing a weaker pending stop, and stops what
// runs.
func (w *watch) stop(s *agent.Stop) {
	w.mu.Lock()
	if w.pending == nil || strength[s.Action] >= strength[w.pending.Action] {
		w.pending = s
	}
	cancel := w.cancel
	w.mu.Unlock()
	if cancel != nil {
		cancel(s)
	}
}

// strength orders the stops: a pending stop is replaced only by one at
// least as strong.
var strength = map[string]int{"restart": 1, "redispatch": 2, "pause": 3, "fail": 4}

// describe is the facts a rule reads most, in a line.
func describe(f cond.SentinelEnv) string {
	parts := []string{"activity " + orNone(f.Activity)}
	if f.Command != "" {
		parts = append(parts, "command "+f.Command)
	}
	parts = append(parts, fmt.Sprintf("%.0fs since output", f.SecondsSinceOutput))
	if f.LastExit.Signal != "" {
		parts = append(parts, "killed by "+f.LastExit.Signal)
	} else if f.LastExit.Code != 0 {
		parts = append(parts, fmt.Sprintf("exit %d", f.LastExit.Code))
	}
	if f.LastExit.APIError {
		parts = append(parts, "model API error")
	}
	return strings.Join(parts, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// tokenBudget is the token budget of change c, by its size.
func tokenBudget(p *config.Project, c plan.Change) int64 {
	return int64(p.Budgets.Tokens[c.Size])
}

// tokenField is the set.cue field of change c's token budget.
func tokenField(c plan.Change) string {
	return "budgets.tokens." + c.Size
}

// heartbeat is the interval of MONITOR_HEARTBEAT (sentinel.heartbeat),
// 30 seconds when the project sets none.
func heartbeat(p *config.Project) time.Duration {
	if d := p.Sentinel.Heartbeat.D(); d > 0 {
		return d
	}
	return 30 * time.Second
}

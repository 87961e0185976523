// Package sentinel decides, from the live facts of a running change, which
// supervision rules of set.cue fire and which step of their ladder each
// takes. It is pure: no goroutines, no I/O, no clock of its own. The caller
// keeps the facts (cond.SentinelEnv), calls Watch.Evaluate when they change
// or time passes, and carries out the actions of the firings it gets back.
//
// The rules of one project compile once into Rules, which every change
// shares; each change has its own Watch, which holds the ladder state of
// every rule for that change.
//
// Semantics, per rule, at each Evaluate:
//
//   - Grace. A grace glob matches when it matches the whole activity
//     ("gate:test") or the activity, a colon and the command
//     ("agent:npm install"); in a glob `*` matches any run of characters
//     (slashes and spaces included) and `?` one character. While a glob
//     matches and the activity has run for less than the glob's duration,
//     the rules with graced set are held: not evaluated, their state
//     untouched, as if this evaluation had not happened.
//   - Edge. When `when` holds now and did not at the rule's previous
//     evaluation (or the rule was never evaluated), the rule climbs one
//     step, step = min(step+1, len(ladder)), and fires that step. An action
//     is a ladder of one step, so it fires on every edge.
//   - Holding. While `when` keeps holding, the rule climbs and fires the
//     next step once `every` has passed since its last firing, but only
//     while steps remain: holding never repeats the last step, a new edge
//     does.
//   - Progress. Watch.Progress (a new commit, a passed gate) puts every
//     rule back before its first step; Watch.Output (new output) puts back
//     the rules whose `when` reads secondsSinceOutput, the rules about
//     output (an agent that prints an API error and exits has made no
//     progress for the rules about its exits). Neither forgets whether
//     `when` held: a rule whose condition still holds fires again only on
//     a new edge.
//   - Backoff. A restart step of a rule with a backoff waits
//     backoff×2^(k-1), k being the restarts this rule has fired since its
//     last reset (this one included).
package sentinel

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/set-engine/set/engine/cond"
	"github.com/set-engine/set/engine/config"
)

// Action is what a firing asks the caller to do (schema.#SentinelAction).
type Action string

// The actions a ladder step can take.
const (
	// Warn journals the firing and shows it in the live view.
	Warn Action = "warn"
	// Restart kills the agent iteration's process group and starts a new
	// iteration in the same session.
	Restart Action = "restart"
	// Redispatch starts a fresh session on a fresh worktree from the
	// change's branch.
	Redispatch Action = "redispatch"
	// Fail ends the change with failed:<Firing.Fails>.
	Fail Action = "fail"
	// Pause stops the change where it is, keeping its worktree and
	// session, until it is resumed.
	Pause Action = "pause"
)

var actions = []Action{Warn, Restart, Redispatch, Fail, Pause}

// The failed statuses a fail step can give (config.SentinelRule.Fails).
var failures = []string{"stalled", "agent_error"}

// Rules are the compiled rules and grace of a project's sentinel. Immutable;
// safe for concurrent use.
type Rules struct {
	// rules are sorted by name: the order of evaluation and of firings.
	rules []rule
	// grace is sorted by glob, so Held names the same glob every time.
	grace []grace
}

type rule struct {
	name    string
	when    *cond.Condition
	ladder  []Action // at least one step
	every   time.Duration
	graced  bool
	fails   string
	backoff time.Duration
}

type grace struct {
	glob    string
	pattern *regexp.Regexp
	hold    time.Duration
}

// Compile compiles cfg. Rules are evaluated in name order. An error names
// the field (project.sentinel.rules.NAME.when, …); every problem is
// reported, joined.
func Compile(cfg config.Sentinel) (*Rules, error) {
	var errs []error
	fail := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("project.sentinel.%s: %s", field, fmt.Sprintf(format, args...)))
	}
	r := &Rules{}
	for _, name := range slices.Sorted(maps.Keys(cfg.Rules)) {
		c := cfg.Rules[name]
		field := "rules." + name
		when, err := cond.CompileSentinel(c.When)
		if err != nil {
			fail(field+".when", "%v", err)
		}
		var steps []string
		switch {
		case c.Action != "" && len(c.Ladder) > 0:
			fail(field+".ladder", "a rule takes an action or a ladder, not both")
		case c.Action != "":
			steps = []string{c.Action}
		case len(c.Ladder) > 0:
			steps = c.Ladder
		default:
			fail(field, "the rule has neither an action nor a ladder")
		}
		ladder := make([]Action, len(steps))
		for i, s := range steps {
			ladder[i] = Action(s)
			if !slices.Contains(actions, ladder[i]) {
				fail(field+".ladder", "unknown action %q (known: %s)", s, strings.Join(actionNames(), ", "))
			}
		}
		if (c.Fails != "" || slices.Contains(ladder, Fail)) && !slices.Contains(failures, c.Fails) {
			fail(field+".fails", "unknown failure %q (known: %s)", c.Fails, strings.Join(failures, ", "))
		}
		if c.Every < 0 {
			fail(field+".every", "negative duration %s", c.Every)
		}
		if c.Backoff < 0 {
			fail(field+".backoff", "negative duration %s", c.Backoff)
		}
		r.rules = append(r.rules, rule{
			name: name, when: when, ladder: ladder, every: c.Every.D(),
			graced: c.Graced, fails: c.Fails, backoff: c.Backoff.D(),
		})
	}
	for _, glob := range slices.Sorted(maps.Keys(cfg.Grace)) {
		r.grace = append(r.grace, grace{glob: glob, pattern: globPattern(glob), hold: cfg.Grace[glob].D()})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return r, nil
}

func actionNames() []string {
	out := make([]string, len(actions))
	for i, a := range actions {
		out[i] = string(a)
	}
	return out
}

// globPattern turns a grace glob into a regular expression over the whole
// string: `*` any run of characters, newlines included; `?` one character;
// everything else itself.
func globPattern(glob string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for _, r := range glob {
		switch r {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`)$`)
	return regexp.MustCompile(b.String())
}

// Names lists the rule names, sorted.
func (r *Rules) Names() []string {
	out := make([]string, len(r.rules))
	for i, ru := range r.rules {
		out[i] = ru.name
	}
	return out
}

// Held reports the grace glob that holds rules back for f, if any ("" when
// none): the first glob, in sorted order, that matches f's activity (alone
// or with its command) while f.ActivitySeconds is below its duration.
func (r *Rules) Held(f cond.SentinelEnv) string {
	if f.Activity == "" {
		return ""
	}
	withCommand := f.Activity + ":" + f.Command
	for _, g := range r.grace {
		if f.ActivitySeconds < g.hold.Seconds() && (g.pattern.MatchString(f.Activity) || g.pattern.MatchString(withCommand)) {
			return g.glob
		}
	}
	return ""
}

// Firing is one rule firing: the step of its ladder it climbed to.
type Firing struct {
	Rule string
	// When is the rule's condition, as written.
	When string
	// Step is the 1-based step of the ladder the rule climbed to.
	Step int
	// Steps is the ladder's length.
	Steps  int
	Action Action
	// Fails is the rule's fails ("stalled" | "agent_error"): the status a
	// Fail gives, failed:<Fails>. It may be "" for a rule without a fail
	// step.
	Fails string
	// Backoff is, for a Restart, how long to wait before restarting
	// (backoff×2^(k-1), k = the restarts of this rule since its last
	// reset, this one included); 0 when none.
	Backoff time.Duration
	// Facts are the facts the rule fired on.
	Facts cond.SentinelEnv
}

// Watch is the ladder state of one change. Not safe for concurrent use
// (the caller serialises calls per change). orchestrator.watch holds the
// Watch of a change at work.
type Watch struct {
	rules *Rules
	// states holds one state per rule, in the order of rules.rules.
	states []state
}

// state is the ladder state of one rule for one change.
type state struct {
	// evaluated is set once `when` has been evaluated; held is what it
	// gave then. Progress keeps both, so an edge is still needed.
	evaluated, held bool
	// step is the ladder step last fired since the last reset, 0 before
	// the first.
	step int
	// fired is when step fired.
	fired time.Time
	// restarts counts the Restart steps fired since the last reset.
	restarts int
}

// Watch returns a fresh watch over these rules: every rule never
// evaluated, before its first step.
func (r *Rules) Watch() *Watch {
	return &Watch{rules: r, states: make([]state, len(r.rules))}
}

// Evaluate evaluates every rule on f at now and returns the firings, in
// rule order. A rule whose `when` fails to evaluate keeps its state and is
// named in the error; the other rules are evaluated and their firings
// returned all the same.
func (w *Watch) Evaluate(f cond.SentinelEnv, now time.Time) ([]Firing, error) {
	var firings []Firing
	var errs []error
	held := w.rules.Held(f) != ""
	for i := range w.rules.rules {
		ru, st := &w.rules.rules[i], &w.states[i]
		if held && ru.graced {
			continue
		}
		holds, err := ru.when.Eval(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("sentinel rule %s: %w", ru.name, err))
			continue
		}
		edge := holds && (!st.evaluated || !st.held)
		climb := holds && !edge && st.step > 0 && st.step < len(ru.ladder) && now.Sub(st.fired) >= ru.every
		st.evaluated, st.held = true, holds
		if !edge && !climb {
			continue
		}
		st.step = min(st.step+1, len(ru.ladder))
		st.fired = now
		firing := Firing{
			Rule: ru.name, When: ru.when.Source(), Step: st.step, Steps: len(ru.ladder), Action: ru.ladder[st.step-1],
			Fails: ru.fails, Facts: f,
		}
		if firing.Action == Restart {
			st.restarts++
			firing.Backoff = doubled(ru.backoff, st.restarts-1)
		}
		firings = append(firings, firing)
	}
	return firings, errors.Join(errs...)
}

// doubled is d×2^n, saturated at the longest time.Duration.
func doubled(d time.Duration, n int) time.Duration {
	for range n {
		if d > math.MaxInt64/2 {
			return math.MaxInt64
		}
		d *= 2
	}
	return d
}

// Progress puts every rule of the watch back before its first step (new
// output, a new commit, a passed gate). Whether each `when` held at its
// last evaluation is kept, so a rule fires again only on a new edge.
func (w *Watch) Progress() {
	for i := range w.states {
		w.states[i].reset()
	}
}

// Output resets the rules whose `when` reads secondsSinceOutput: new
// output is progress for them.
func (w *Watch) Output() {
	for i := range w.states {
		if w.rules.rules[i].when.Reads("secondsSinceOutput") {
			w.states[i].reset()
		}
	}
}

// reset puts the rule back before its first step.
func (st *state) reset() { st.step, st.fired, st.restarts = 0, time.Time{}, 0 }

package main

import (
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/fatih/color"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/orchestrator"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/state"
)

// progress shows a run as it happens. On a terminal it keeps a live line
// per change (status, current gate, retries, tokens, time) under the
// notable events; elsewhere it prints one timestamped line per notable
// event. Colour is separate from the live view: NO_COLOR changes colours,
// never which lines are printed. It only reads events: what it shows is
// what the journal says.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	live  bool
	main  string // the project's main branch
	now   func() time.Time
	names []string // plan order
	width int
	rows  map[string]*row
	drawn int // lines of the live block on screen
	start time.Time
	stop  chan struct{}
	done  chan struct{}
	// closed: the live block is gone for good (the summary follows).
	closed bool

	red, green, yellow, dim *color.Color
}

// row is the live view of one change.
type row struct {
	status  string
	gate    string
	retries int
	tokens  int64
	since   time.Time
}

// redrawEvery is how often the live block is redrawn, so that elapsed
// times move.
const redrawEvery = time.Second

// newProgress shows the run of p, which moves mainBranch, on w as term
// allows. On a live terminal it redraws every tick (redrawEvery; zero:
// only on events), with times from now.
func newProgress(w io.Writer, p *plan.Plan, mainBranch string, term terminal, now func() time.Time, tick time.Duration) *progress {
	pr := &progress{
		w: w, live: term.live, main: mainBranch, now: now, rows: map[string]*row{}, start: now(),
		stop: make(chan struct{}), done: make(chan struct{}),
		red: color.New(color.FgRed), green: color.New(color.FgGreen), yellow: color.New(color.FgYellow), dim: color.New(color.Faint),
	}
	for _, c := range []*color.Color{pr.red, pr.green, pr.yellow, pr.dim} {
		if term.color {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	for _, c := range p.Changes {
		pr.names = append(pr.names, c.Name)
		pr.rows[c.Name] = &row{status: "pending"}
		pr.width = max(pr.width, len(c.Name))
	}
	go pr.tick(tick)
	return pr
}

// seed starts the rows from the state a previous run left, so that a
// resumed run shows where each change already stands.
func (p *progress) seed(st *state.State) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, r := range p.rows {
		if c := st.Changes[name]; c != nil {
			r.status = string(c.Status)
			r.tokens = c.Tokens.Total()
			r.retries = c.VerifyAttempts + c.IntegrationAttempts
		}
	}
}

// tick redraws the live block every interval so elapsed times move.
func (p *progress) tick(interval time.Duration) {
	defer close(p.done)
	if !p.live || interval <= 0 {
		<-p.stop
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.redraw(nil)
			p.mu.Unlock()
		}
	}
}

func (p *progress) close() {
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearBlock()
	p.closed = true
}

// event takes one journal event.
func (p *progress) event(e journal.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	msg := p.take(e)
	if !p.live {
		if msg != "" {
			fmt.Fprintf(p.w, "%s %-*s  %s\n", e.Time.Local().Format("15:04:05"), p.width, e.Change, msg)
		}
		return
	}
	var lines []string
	if msg != "" && p.notable(e) {
		lines = append(lines, fmt.Sprintf("%s %-*s  %s", p.dim.Sprint(e.Time.Local().Format("15:04:05")), p.width, e.Change, msg))
	}
	p.redraw(lines)
}

// notice prints line to w (stderr, typically the same terminal), above
// the live block.
func (p *progress) notice(w io.Writer, line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.live || p.closed {
		fmt.Fprintln(w, line)
		return
	}
	p.clearBlock()
	fmt.Fprintln(w, line)
	p.redraw(nil)
}

// message takes one journal event and returns the line the plain view
// prints for it, without the time ("" for an event it does not print).
func (p *progress) message(e journal.Event) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.take(e)
}

// take updates the view from e and returns its line, if any. p.mu is
// held.
func (p *progress) take(e journal.Event) string {
	r := p.rows[e.Change]
	if r == nil && e.Change != "" {
		r = &row{}
		p.rows[e.Change] = r
	}
	return p.describe(e, r)
}

// notable events stay on screen above the live block: progress through
// main, and every failure.
func (p *progress) notable(e journal.Event) bool {
	switch e.Type {
	case journal.StateChange:
		d, _ := journal.Decode[journal.StateChangeData](e)
		return state.Status(d.To).Failed() || state.Status(d.To) == state.DepBlocked
	case journal.VerifyGate:
		d, _ := journal.Decode[journal.VerifyGateData](e)
		return d.Result == "fail" || d.Result == "error" || d.Result == "warn"
	case journal.AgentIteration:
		d, _ := journal.Decode[journal.AgentIterationData](e)
		return d.Result == "stalled" || d.Result == "error"
	case journal.AgentSessionDecision, journal.LLMCall, journal.MonitorHeartbeat, journal.MergeQueued:
		return false
	}
	return true
}

// describe updates r from e and returns the line to print for it, if any.
func (p *progress) describe(e journal.Event, r *row) string {
	switch e.Type {
	case journal.RunStarted:
		d, _ := journal.Decode[journal.RunStartedData](e)
		verb := "started"
		if d.Resumed {
			verb = "resumed"
		}
		return fmt.Sprintf("run %s %s: %s, up to %d at once", e.Run, verb, plural(len(d.Changes), "change"), d.MaxParallel)
	case journal.StateChange:
		d, _ := journal.Decode[journal.StateChangeData](e)
		r.status, r.since = d.To, e.Time
		if d.To != "implementing" && d.To != "verifying" {
			r.gate = ""
		}
		switch {
		case strings.HasPrefix(d.To, "failed"), d.To == "dep-blocked":
			return p.red.Sprintf("%s: %s", d.To, d.Reason)
		case d.To == "queued", d.To == "integrating":
			return d.To
		}
	case journal.Dispatch:
		d, _ := journal.Decode[journal.DispatchData](e)
		verb := "dispatched to"
		if d.Reused {
			verb = "resumed in"
		}
		return fmt.Sprintf("%s %s (branch %s from %s)", verb, d.Worktree, d.Branch, shortSHA(d.Base))
	case journal.AgentIteration:
		d, _ := journal.Decode[journal.AgentIterationData](e)
		r.tokens += d.Tokens.Total()
		msg := fmt.Sprintf("iteration %d: %s (%s, %s tokens, %s)", d.Iteration, d.Result, ms(d.DurationMS), tokens(d.Tokens.Total()), plural(d.Commits, "commit"))
		if d.Error != "" {
			msg += ": " + d.Error
		}
		return msg
	case journal.VerifyGate:
		d, _ := journal.Decode[journal.VerifyGateData](e)
		r.gate = d.Stage + " " + d.Gate
		switch d.Result {
		case "pass":
			if d.Reason != "" { // failures main has too, accepted
				return fmt.Sprintf("%s %s: %s (%s): %s", d.Stage, d.Gate, p.green.Sprint("pass"), ms(d.DurationMS), d.Reason)
			}
			return fmt.Sprintf("%s %s: %s (%s)", d.Stage, d.Gate, p.green.Sprint("pass"), ms(d.DurationMS))
		case "skip":
			return p.dim.Sprintf("%s %s: skipped, %s", d.Stage, d.Gate, d.Reason)
		case "warn":
			return p.yellow.Sprintf("%s %s: failed, not blocking (warn): %s", d.Stage, d.Gate, d.Reason)
		default:
			return fmt.Sprintf("%s %s: %s (%s): %s; log %s", d.Stage, d.Gate, p.red.Sprint(strings.ToUpper(d.Result)), ms(d.DurationMS), d.Reason, d.Log)
		}
	case journal.GateSetExpanded:
		d, _ := journal.Decode[journal.GateSetExpandedData](e)
		return fmt.Sprintf("%s %s added: %s", d.Stage, d.Gate, d.Condition)
	case journal.RetryScheduled:
		d, _ := journal.Decode[journal.RetryScheduledData](e)
		r.retries++
		return p.yellow.Sprintf("retry %d/%d (%s): back to the agent", d.Attempt, d.Budget, d.Stage)
	case journal.ChangeIntegrationFailed:
		d, _ := journal.Decode[journal.ChangeIntegrationFailedData](e)
		if d.Reason == "conflict" {
			return p.yellow.Sprintf("merging %s conflicts in %s", p.main, strings.Join(d.Paths, ", "))
		}
		return p.yellow.Sprintf("integration failed: %s", d.Gate)
	case journal.Merged:
		d, _ := journal.Decode[journal.MergedData](e)
		return p.green.Sprintf("merged: %s %s → %s", p.main, shortSHA(d.Previous), shortSHA(d.Commit))
	case journal.Archived:
		d, _ := journal.Decode[journal.ArchivedData](e)
		if d.Skipped != "" {
			return "archived: nothing to fold, " + d.Skipped
		}
		specs := make([]string, len(d.Capabilities))
		for i, c := range d.Capabilities {
			specs[i] = path.Join("openspec/specs", c)
		}
		return fmt.Sprintf("archived: %s updated, change folder in %s", strings.Join(specs, ", "), d.ArchiveDir)
	case journal.BudgetExceeded:
		d, _ := journal.Decode[journal.BudgetExceededData](e)
		return p.red.Sprintf("%s budget spent (%d of %d)", d.Budget, d.Used, d.Limit)
	case journal.BaselineGate:
		d, _ := journal.Decode[journal.BaselineGateData](e)
		when := ms(d.DurationMS)
		if d.Cached {
			when = "judged before"
		}
		switch {
		case d.Result == "pass":
			return fmt.Sprintf("baseline %s: %s (%s)", d.Gate, p.green.Sprint("pass"), when)
		case d.Mode == "warn":
			return p.yellow.Sprintf("baseline %s: fails on %s, not blocking (warn): %s (%s); log %s", d.Gate, p.main, d.Reason, when, d.Log)
		}
		return fmt.Sprintf("baseline %s: %s on %s: %s (%s); log %s", d.Gate, p.red.Sprint("FAIL"), p.main, d.Reason, when, d.Log)
	case journal.BaselineAccepted:
		d, _ := journal.Decode[journal.BaselineAcceptedData](e)
		return p.yellow.Sprintf("baseline %s: %s of %s accepted; changes fail it only on others", d.Gate, plural(len(d.Failures), "failure"), p.main)
	}
	return ""
}

// redraw replaces the live block, printing lines above it first.
func (p *progress) redraw(lines []string) {
	p.clearBlock()
	for _, l := range lines {
		fmt.Fprintln(p.w, l)
	}
	p.drawn = 0
	for _, name := range p.names {
		r := p.rows[name]
		fmt.Fprintln(p.w, p.liveLine(name, r))
		p.drawn++
	}
}

func (p *progress) clearBlock() {
	if !p.live || p.drawn == 0 {
		return
	}
	// \r first: a ^C echoed by the terminal leaves the cursor mid-line.
	fmt.Fprintf(p.w, "\r\x1b[%dA\x1b[J", p.drawn)
	p.drawn = 0
}

func (p *progress) liveLine(name string, r *row) string {
	parts := []string{r.status}
	if r.gate != "" && (r.status == "verifying" || r.status == "integrating") {
		parts = append(parts, r.gate)
	}
	if r.retries > 0 {
		parts = append(parts, plural(r.retries, "retry"))
	}
	if r.tokens > 0 {
		parts = append(parts, tokens(r.tokens)+" tokens")
	}
	if !r.since.IsZero() && r.status != "archived" && !strings.HasPrefix(r.status, "failed") && r.status != "dep-blocked" {
		parts = append(parts, p.now().Sub(r.since).Round(time.Second).String())
	}
	line := fmt.Sprintf("  %-*s  %s", p.width, name, strings.Join(parts, " · "))
	switch {
	case r.status == "archived":
		return p.green.Sprint(line)
	case strings.HasPrefix(r.status, "failed"), r.status == "dep-blocked":
		return p.red.Sprint(line)
	case r.status == "pending":
		return p.dim.Sprint(line)
	}
	return line
}

// summary prints the end of the run; head is the main branch's commit.
func (p *progress) summary(s *orchestrator.Summary, head string) {
	fmt.Fprintf(p.w, "\nRun %s in %s%s.\n", s.Result, s.Duration.Round(100*time.Millisecond), map[bool]string{true: " (resumed)"}[s.Resumed])
	for _, name := range p.names {
		r := p.rows[name]
		status := string(s.Statuses[name])
		detail := []string{}
		if r.retries > 0 {
			detail = append(detail, plural(r.retries, "retry"))
		}
		if r.tokens > 0 {
			detail = append(detail, tokens(r.tokens)+" tokens")
		}
		fmt.Fprintf(p.w, "  %-*s  %-12s %s\n", p.width, name, status, strings.Join(detail, ", "))
	}
	fmt.Fprintf(p.w, "\n%s is at %s. Events: .set/events.jsonl · state: .set/state.json · logs: .set/logs/\n", p.main, shortSHA(head))
}

func shortSHA(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}

func ms(n int64) string {
	return (time.Duration(n) * time.Millisecond).Round(100 * time.Millisecond).String()
}

func tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

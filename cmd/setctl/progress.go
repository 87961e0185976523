package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/set-engine/set/engine/english"
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

	palette
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
		stop: make(chan struct{}), done: make(chan struct{}), palette: newPalette(term.color),
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
	p.update(e)
	l := describeEvent(e, p.main, p.palette)
	if !p.live {
		if l.shown {
			fmt.Fprintf(p.w, "%s %-*s  %s\n", e.Time.Local().Format("15:04:05"), p.width, e.Change, l.text)
		}
		return
	}
	var lines []string
	if l.shown && l.notable {
		lines = append(lines, fmt.Sprintf("%s %-*s  %s", p.dim.Sprint(e.Time.Local().Format("15:04:05")), p.width, e.Change, l.text))
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

// update keeps the change's live row in step with e. p.mu is held.
func (p *progress) update(e journal.Event) {
	if e.Change == "" {
		return
	}
	r := p.rows[e.Change]
	if r == nil {
		r = &row{}
		p.rows[e.Change] = r
	}
	switch e.Type {
	case journal.StateChange:
		d, _ := journal.Decode[journal.StateChangeData](e)
		r.status, r.since = d.To, e.Time
		if d.To != "implementing" && d.To != "verifying" {
			r.gate = ""
		}
	case journal.AgentIteration:
		d, _ := journal.Decode[journal.AgentIterationData](e)
		r.tokens += d.Tokens.Total()
	case journal.VerifyGate:
		d, _ := journal.Decode[journal.VerifyGateData](e)
		r.gate = d.Stage + " " + d.Gate
	case journal.RetryScheduled:
		r.retries++
	}
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
		parts = append(parts, english.Plural(r.retries, "retry"))
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
			detail = append(detail, english.Plural(r.retries, "retry"))
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

package main

import (
	"fmt"
	"io"
	"slices"
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
// what the journal says. Where each change stands (status, retries,
// tokens) is the run's projection, st, kept with the same state.Apply
// that rebuilds state.json from the journal.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	live  bool
	main  string // the project's main branch
	now   func() time.Time
	names []string // plan order
	width int
	st    *state.State
	// stErr is why st stopped following the run (an event it refused);
	// the rows then show where it stood before that event.
	stErr error
	rows  map[string]*row
	drawn int // lines of the live block on screen
	start time.Time
	stop  chan struct{}
	done  chan struct{}
	// closed: the live block is gone for good (the summary follows).
	closed bool

	palette
}

// row is what the live view of one change adds to the projection: when
// it took its status, and the gate that ended last in that status.
type row struct {
	gate  string
	since time.Time
}

// redrawEvery is how often the live block is redrawn, so that elapsed
// times move.
const redrawEvery = time.Second

// newProgress shows the run of p, which moves mainBranch, on w as term
// allows. On a live terminal it redraws every tick (redrawEvery; zero:
// only on events), with times from now.
func newProgress(w io.Writer, p *plan.Plan, mainBranch string, term terminal, now func() time.Time, tick time.Duration) *progress {
	pr := &progress{
		w: w, live: term.live, main: mainBranch, now: now, st: state.New(), rows: map[string]*row{}, start: now(),
		stop: make(chan struct{}), done: make(chan struct{}), palette: newPalette(term.color),
	}
	for _, c := range p.Changes {
		pr.names = append(pr.names, c.Name)
		pr.rows[c.Name] = &row{}
		pr.width = max(pr.width, len(c.Name))
	}
	go pr.tick(tick)
	return pr
}

// seed starts the projection from the state the journal holds before the
// run (state.Read), so that a resumed run shows where each change already
// stands and the run's events apply on top of it.
func (p *progress) seed(st *state.State) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.st = st
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
	if e.Type == journal.Replanned {
		d, _ := journal.Decode[journal.ReplannedData](e)
		for _, name := range d.Added {
			p.names = append(p.names, name)
			p.rows[name] = &row{}
			p.width = max(p.width, len(name))
		}
	}
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

// update applies e to the projection and keeps the change's row in step
// with it. p.mu is held.
func (p *progress) update(e journal.Event) {
	if p.stErr != nil {
		return
	}
	before := p.change(e.Change).Status
	if err := state.Apply(p.st, e); err != nil {
		// The engine applied this very event to the same projection, so
		// this is a bug; the rows keep where the run stood before it.
		p.stErr = err
		return
	}
	if e.Change == "" {
		return
	}
	r := p.rows[e.Change]
	if r == nil {
		r = &row{}
		p.rows[e.Change] = r
	}
	c := p.change(e.Change)
	if c.Status != before {
		r.since, r.gate = e.Time, ""
	}
	if e.Type == journal.VerifyGate {
		stage, gate, _ := strings.Cut(c.LastGate, "/")
		r.gate = stage + " " + gate
	}
}

// change is where the projection says change name stands: pending until
// its plan is applied.
func (p *progress) change(name string) state.Change {
	if c := p.st.Changes[name]; c != nil {
		return *c
	}
	return state.Change{Name: name, Status: state.Pending}
}

// retries counts the retries change c used, in both stages (verify and
// integration); the merge conflicts it went back to its agent for are
// not its agent's retries, and are shown apart.
func retries(c state.Change) int {
	return c.RetriesUsed(state.StageVerify) + c.RetriesUsed(state.StageIntegration)
}

// redraw replaces the live block, printing lines above it first.
func (p *progress) redraw(lines []string) {
	p.clearBlock()
	for _, l := range lines {
		fmt.Fprintln(p.w, l)
	}
	p.drawn = 0
	for _, name := range p.names {
		fmt.Fprintln(p.w, p.liveLine(p.change(name), p.rows[name]))
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

func (p *progress) liveLine(c state.Change, r *row) string {
	parts := []string{string(c.Status)}
	if r.gate != "" && (c.Status == state.Verifying || c.Status == state.Integrating) {
		parts = append(parts, r.gate)
	}
	if n := retries(c); n > 0 {
		parts = append(parts, english.Plural(n, "retry"))
	}
	if n := c.RetriesUsed(state.StageConflict); n > 0 {
		parts = append(parts, english.Plural(n, "conflict"))
	}
	if n := c.Tokens.Total(); n > 0 {
		parts = append(parts, english.Tokens(n)+" tokens")
	}
	if !r.since.IsZero() && !c.Status.Terminal() {
		parts = append(parts, p.now().Sub(r.since).Round(time.Second).String())
	}
	line := fmt.Sprintf("  %-*s  %s", p.width, c.Name, strings.Join(parts, " · "))
	switch {
	case c.Status == state.Archived:
		return p.green.Sprint(line)
	case c.Status.Terminal():
		return p.red.Sprint(line)
	case c.Status == state.Pending:
		return p.dim.Sprint(line)
	}
	return line
}

// summary prints the end of the run; head is the main branch's commit.
func (p *progress) summary(s *orchestrator.Summary, head string) {
	fmt.Fprintf(p.w, "\nRun %s in %s%s.\n", s.Result, s.Duration.Round(100*time.Millisecond), map[bool]string{true: " (resumed)"}[s.Resumed])
	if p.stErr != nil {
		fmt.Fprintf(p.w, "The view lost track of the run (%v): the retries and tokens below stop there; .set/events.jsonl has the whole run.\n", p.stErr)
	}
	names, width := p.summaryNames(s)
	for _, name := range names {
		c := p.change(name)
		status := string(s.Statuses[name])
		detail := []string{}
		if n := retries(c); n > 0 {
			detail = append(detail, english.Plural(n, "retry"))
		}
		if n := c.RetriesUsed(state.StageConflict); n > 0 {
			detail = append(detail, english.Plural(n, "conflict"))
		}
		if n := c.Tokens.Total(); n > 0 {
			detail = append(detail, english.Tokens(n)+" tokens")
		}
		fmt.Fprintf(p.w, "  %-*s  %-12s %s\n", width, name, status, strings.Join(detail, ", "))
	}
	fmt.Fprintf(p.w, "\n%s is at %s. Events: .set/events.jsonl · state: .set/state.json · logs: .set/logs/\n", p.main, shortSHA(head))
}

// summaryNames are the changes the summary lists, and the width of their
// names: those of the run this invocation planned, after those the
// summary has that it did not plan (a resumed run's changes that an
// earlier invocation put on main), in the run's plan order.
func (p *progress) summaryNames(s *orchestrator.Summary) ([]string, int) {
	var names []string
	width := p.width
	for _, name := range p.st.Order {
		if _, ok := s.Statuses[name]; ok && !slices.Contains(p.names, name) {
			names = append(names, name)
			width = max(width, len(name))
		}
	}
	return append(names, p.names...), width
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

package graph

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fatih/color"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/english"
)

// TextOptions configure Text.
type TextOptions struct {
	// Color turns on ANSI colours. Text never reads or writes the
	// package-level color.NoColor: the caller decides (NO_COLOR, a TTY).
	Color bool
}

// textWidth is the column Text wraps its lists at.
const textWidth = 100

// Marks on a gate in Text.
const (
	markCondition = "?"      // runs only where a run-time condition holds
	markWarn      = "(warn)" // a failure is recorded, never blocks
)

// palette is the set of colours of one Text call. Every colour is its own
// value, enabled or disabled explicitly, so that rendering is independent
// of the environment and of other renderers running at the same time.
type palette struct {
	title, level, name, label, faint, warn, cond, runner, critical *color.Color
}

func newPalette(on bool) *palette {
	p := &palette{
		title:    color.New(color.Bold),
		level:    color.New(color.Bold, color.Underline),
		name:     color.New(color.FgCyan, color.Bold),
		label:    color.New(color.Faint),
		faint:    color.New(color.Faint),
		warn:     color.New(color.FgYellow),
		cond:     color.New(color.FgMagenta),
		runner:   color.New(color.FgBlue),
		critical: color.New(color.FgRed, color.Bold),
	}
	for _, c := range []*color.Color{p.title, p.level, p.name, p.label, p.faint, p.warn, p.cond, p.runner, p.critical} {
		if on {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	return p
}

// token is a piece of text with its plain and its styled form; widths are
// measured on the plain form.
type token struct{ plain, styled string }

func plainToken(s string) token { return token{s, s} }

func styled(c *color.Color, s string) token { return token{s, c.Sprint(s)} }

func (t token) width() int { return utf8.RuneCountInString(t.plain) }

// Text writes a compact, human-readable summary of the graph: a header,
// the changes grouped by Level (dispatch order within a level) with their
// resolved stacks, the critical path, and the run-time conditions.
func Text(w io.Writer, g *Graph, opts TextOptions) error {
	t := &textWriter{g: g, p: newPalette(opts.Color)}
	t.render()
	_, err := io.WriteString(w, t.b.String())
	return err
}

type textWriter struct {
	g *Graph
	p *palette
	b strings.Builder
	// shared is set when every change has the same integration stack, shown
	// once in the header instead of once per change.
	shared bool
	// conds lists the run-time conditional gates in order of appearance,
	// one entry per distinct gate and condition.
	conds []GateStep
}

func (t *textWriter) line(parts ...string) {
	t.b.WriteString(strings.Join(parts, ""))
	t.b.WriteByte('\n')
}

func (t *textWriter) render() {
	g, p := t.g, t.p
	head := fmt.Sprintf("Plan for %s: %s, %s", g.Project, english.Plural(len(g.Changes), "change"), english.Plural(g.Requirements, "requirement"))
	if g.Deferred > 0 {
		head += fmt.Sprintf(", %d deferred", g.Deferred)
	}
	t.line(p.title.Sprint(head))
	var about []string
	if g.Strategy != "" {
		about = append(about, "strategy "+g.Strategy)
	}
	if g.Fingerprint != "" {
		about = append(about, "fingerprint "+g.Fingerprint)
	}
	if g.MaxParallel > 0 {
		about = append(about, fmt.Sprintf("up to %d in parallel", g.MaxParallel))
	}
	if g.Speculative > 1 {
		about = append(about, fmt.Sprintf("merge queue stacks up to %d", g.Speculative))
	}
	if g.Runner != "" {
		runs := "gates on " + g.Runner
		if g.RunnerBase != "" {
			runs += " (" + g.RunnerBase + ")"
		}
		about = append(about, runs)
	}
	if len(about) > 0 {
		t.line(p.faint.Sprint(strings.Join(about, " · ")))
	}
	if g.SetModule != "" {
		t.line(p.faint.Sprintf("profile %s · CUE module %s", g.Profile, g.SetModule))
	}
	if t.shared = sharedIntegration(g.Changes); t.shared {
		c := &g.Changes[0]
		label := "Integration of every change:"
		t.wrap(p.title.Sprint(label)+" ", utf8.RuneCountInString(label)+1, t.steps(c.Integration), " → ")
		if skipped := t.skipped(c, StageIntegration); len(skipped) > 0 {
			label = "Skipped in every integration:"
			t.wrap(p.title.Sprint(label)+" ", utf8.RuneCountInString(label)+1, skipped, " · ")
		}
	}

	nameWidth := 0
	maxLevel := -1
	for _, c := range g.Changes {
		nameWidth = max(nameWidth, utf8.RuneCountInString(c.Name))
		maxLevel = max(maxLevel, c.Level)
	}
	for level := 0; level <= maxLevel; level++ {
		t.line()
		t.line(p.level.Sprintf("Level %d", level))
		for i := range g.Changes {
			if c := &g.Changes[i]; c.Level == level {
				t.change(c, nameWidth)
			}
		}
	}

	if len(g.CriticalPath) > 0 {
		t.line()
		toks := []token{styled(p.title, "Critical path:")}
		for _, n := range g.CriticalPath {
			toks = append(toks, styled(p.critical, n))
		}
		toks[len(toks)-1].plain += fmt.Sprintf(" (weight %d)", g.CriticalWeight)
		toks[len(toks)-1].styled += fmt.Sprintf(" (weight %d)", g.CriticalWeight)
		first := toks[0]
		t.wrap(first.styled+" ", first.width()+1, toks[1:], " → ")
	}
	if len(t.conds) > 0 {
		t.line()
		t.line(p.title.Sprint("Decided at run time (" + markCondition + "):"))
		w := 0
		for _, s := range t.conds {
			w = max(w, utf8.RuneCountInString(s.Gate))
		}
		for _, s := range t.conds {
			t.line("  ", p.cond.Sprint(pad(s.Gate, w)), "  when ", s.Condition)
		}
	}
}

// change writes one change: a summary line and one row per non-empty list;
// "after" lists its dependencies with why it waits for each, when the
// planner said why (the openspec strategy does).
func (t *textWriter) change(c *ChangeGraph, nameWidth int) {
	p := t.p
	meta := []string{c.Type, c.Size, english.Plural(len(c.Requirements), "requirement")}
	agent := c.Agent
	if c.Model != "" {
		agent += " (" + c.Model + ")"
	}
	if agent != "" {
		meta = append(meta, agent)
	}
	if c.Status != "" {
		meta = append(meta, c.Status)
	}
	summary := strings.Join(meta, " · ")
	if len(c.DependsOn) > 0 {
		summary += "   after " + strings.Join(c.DependsOn, ", ")
	}
	name := p.name.Sprint(c.Name) + strings.Repeat(" ", nameWidth-utf8.RuneCountInString(c.Name))
	t.line("  ", name, "  ", summary)

	if len(c.Requirements) > 0 {
		var toks []token
		for _, r := range c.Requirements {
			if title, ok := c.Titles[r]; ok {
				r += " " + strconv.Quote(title)
			}
			toks = append(toks, plainToken(r))
		}
		sep := " "
		if len(c.Titles) > 0 {
			sep = " · "
		}
		t.row("requirements", toks, sep)
	}
	if len(c.Scope) > 0 {
		var toks []token
		for _, s := range c.Scope {
			toks = append(toks, plainToken(s))
		}
		t.row("scope", toks, " ")
	}
	if len(c.Because) > 0 {
		var toks []token
		for _, d := range c.DependsOn {
			toks = append(toks, plainToken(dependencyText(c, d)))
		}
		t.row("after", toks, " · ")
	}
	if len(c.Waits) > 0 {
		var toks []token
		for _, w := range c.Waits {
			toks = append(toks, plainToken(w.Change+": both touch "+strings.Join(w.Files, ", ")))
		}
		t.row("waits for", toks, " · ")
	}
	if len(c.Learnings) > 0 {
		var toks []token
		for _, l := range c.Learnings {
			toks = append(toks, plainToken(l))
		}
		t.row("learnings", toks, " ")
	}
	t.row("verify", t.steps(c.Verify), " → ")
	skipped := t.skipped(c, StageVerify)
	if !t.shared {
		t.row("integration", t.steps(c.Integration), " → ")
		skipped = append(skipped, t.skipped(c, StageIntegration)...)
	}
	if len(skipped) > 0 {
		t.row("skipped", skipped, " · ")
	}
}

// dependencyText is the dependency d of c with why c waits for it, when
// the planner said (Change.Because): "add-links: MODIFIED …".
func dependencyText(c *ChangeGraph, d string) string {
	if why := c.Because[d]; why != "" {
		return d + ": " + why
	}
	return d
}

// skipped renders the gates of one stage that do not run, with why;
// integration gates are prefixed "integration/" unless the whole
// integration stack is shown once for every change.
func (t *textWriter) skipped(c *ChangeGraph, stage string) []token {
	var toks []token
	for _, s := range c.Skipped {
		if s.Stage != stage {
			continue
		}
		name := s.Gate
		if stage == StageIntegration && !t.shared {
			name = StageIntegration + "/" + s.Gate
		}
		toks = append(toks, styled(t.p.faint, name+" ("+s.Reason+")"))
	}
	return toks
}

// sharedIntegration reports whether there are several changes and all
// have the same integration steps and skipped integration gates.
func sharedIntegration(changes []ChangeGraph) bool {
	if len(changes) < 2 {
		return false
	}
	integrationSkips := func(c *ChangeGraph) []SkippedGate {
		var out []SkippedGate
		for _, s := range c.Skipped {
			if s.Stage == StageIntegration {
				out = append(out, s)
			}
		}
		return out
	}
	first := &changes[0]
	for i := range changes[1:] {
		c := &changes[i+1]
		if !slices.Equal(c.Integration, first.Integration) || !slices.Equal(integrationSkips(c), integrationSkips(first)) {
			return false
		}
	}
	return true
}

// steps renders gate steps with their marks: "?" for a run-time
// condition, "(warn)" for a non-blocking gate, "[runner]" for a gate that
// runs elsewhere than the project's default runner.
func (t *textWriter) steps(steps []GateStep) []token {
	p := t.p
	var toks []token
	for _, s := range steps {
		base, style := s.Gate, (*color.Color)(nil)
		if s.Condition != "" {
			base += markCondition
			style = p.cond
			t.noteCondition(s)
		}
		if s.Mode == config.ModeWarn {
			base += markWarn
			style = p.warn
		}
		tok := plainToken(base)
		if style != nil {
			tok = styled(style, base)
		}
		if s.Runner != "" && s.Runner != t.defaultRunner() {
			mark := "[" + s.Runner + "]"
			tok.plain += mark
			tok.styled += p.runner.Sprint(mark)
		}
		toks = append(toks, tok)
	}
	return toks
}

// defaultRunner is the runner most gates use; only others are marked.
func (t *textWriter) defaultRunner() string {
	if t.g.Runner != "" {
		return t.g.Runner
	}
	return "host"
}

func (t *textWriter) noteCondition(s GateStep) {
	for _, c := range t.conds {
		if c.Gate == s.Gate && c.Condition == s.Condition {
			return
		}
	}
	t.conds = append(t.conds, s)
}

// rowLabelWidth is the width of a row label such as "requirements".
const rowLabelWidth = 12

// row writes "    label  tok sep tok …", wrapping under the first token.
// An empty list writes "—" so that a stack that runs nothing is visible.
func (t *textWriter) row(label string, toks []token, sep string) {
	if len(toks) == 0 {
		toks = []token{styled(t.p.faint, "—")}
	}
	prefix := "    " + t.p.label.Sprint(pad(label, rowLabelWidth)) + "  "
	t.wrap(prefix, 4+rowLabelWidth+2, toks, sep)
}

// wrap writes toks joined by sep after prefix (indent columns wide),
// breaking lines before textWidth. A broken line ends with the separator
// (trimmed), so "a → b →" reads as continued; the next line starts at
// column indent. A token wider than the line is never split.
func (t *textWriter) wrap(prefix string, indent int, toks []token, sep string) {
	var b strings.Builder
	b.WriteString(prefix)
	col := indent
	sepW := utf8.RuneCountInString(sep)
	for i, tok := range toks {
		switch {
		case i == 0:
		case col+sepW+tok.width() > textWidth-2: // room for a trailing separator
			b.WriteString(strings.TrimRight(sep, " "))
			t.line(b.String())
			b.Reset()
			b.WriteString(strings.Repeat(" ", indent))
			col = indent
		default:
			b.WriteString(sep)
			col += sepW
		}
		b.WriteString(tok.styled)
		col += tok.width()
	}
	t.line(b.String())
}

func pad(s string, w int) string {
	if n := utf8.RuneCountInString(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

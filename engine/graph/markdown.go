package graph

import (
	"fmt"
	"io"
	"strings"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/markdown"
)

// Markdown writes the graph as GitHub-flavoured markdown, for a pull
// request's comment or a CI job's summary: a heading with the counts, a
// table of the changes in dispatch order (level, type, size, agent,
// requirements, the changes each waits for), then for every change its
// gates (verify and integration, in run order, with the skipped ones and
// why), its scope and the crossCutting files it waits on, the critical
// path and the conditions decided at run time. It says what Text says,
// with the same marks on gates ("?" a run-time condition, "(warn)"
// non-blocking, "[runner]" off the default runner).
//
// Every name and free text goes through a code span or is escaped, so
// that a gate named odd_gate or a condition holding "*" or "`" renders as
// written; the table's cells hold code spans only of change names, which
// are kebab-case, so no "|" ends a cell early.
func Markdown(w io.Writer, g *Graph) error {
	m := &mdWriter{g: g}
	m.render()
	_, err := io.WriteString(w, m.b.String())
	return err
}

type mdWriter struct {
	g *Graph
	b strings.Builder
	// conds lists the run-time conditional gates in order of appearance,
	// one entry per distinct gate and condition.
	conds []GateStep
}

func (m *mdWriter) line(parts ...string) {
	m.b.WriteString(strings.Join(parts, ""))
	m.b.WriteByte('\n')
}

func (m *mdWriter) render() {
	g := m.g
	head := fmt.Sprintf("Plan for %s: %s, %s", markdown.Escape(g.Project), english.Plural(len(g.Changes), "change"), english.Plural(g.Requirements, "requirement"))
	if g.Deferred > 0 {
		head += fmt.Sprintf(", %d deferred", g.Deferred)
	}
	m.line("### ", head)
	var about []string
	if g.Strategy != "" {
		about = append(about, "strategy "+markdown.Escape(g.Strategy))
	}
	if g.Fingerprint != "" {
		about = append(about, "fingerprint "+markdown.Code(g.Fingerprint))
	}
	if g.MaxParallel > 0 {
		about = append(about, fmt.Sprintf("up to %d in parallel", g.MaxParallel))
	}
	if g.Speculative > 1 {
		about = append(about, fmt.Sprintf("merge queue stacks up to %d", g.Speculative))
	}
	if g.Runner != "" {
		runs := "gates on " + markdown.Escape(g.Runner)
		if g.RunnerBase != "" {
			runs += " (" + markdown.Escape(g.RunnerBase) + ")"
		}
		about = append(about, runs)
	}
	if g.SetModule != "" {
		about = append(about, "profile "+markdown.Escape(g.Profile), "CUE module "+markdown.Code(g.SetModule))
	}
	if len(about) > 0 {
		m.line()
		m.line(strings.Join(about, " · "))
	}
	if len(g.Changes) == 0 {
		return
	}

	status := false
	for _, c := range g.Changes {
		status = status || c.Status != ""
	}
	m.line()
	cols := []string{"Change", "Level", "Type", "Size", "Agent", "Requirements", "After"}
	if status {
		cols = append(cols, "Status")
	}
	m.line("| ", strings.Join(cols, " | "), " |")
	m.line(strings.Repeat("|---", len(cols)), "|")
	for _, c := range g.Changes {
		name := markdown.Code(c.Name)
		if c.Critical {
			name = "**" + name + "**"
		}
		agent := c.Agent
		if c.Model != "" {
			agent += " (" + c.Model + ")"
		}
		reqs := make([]string, len(c.Requirements))
		for i, r := range c.Requirements {
			reqs[i] = markdown.Escape(r)
		}
		after := make([]string, len(c.DependsOn))
		for i, d := range c.DependsOn {
			after[i] = markdown.Code(d)
		}
		row := []string{name, fmt.Sprint(c.Level), markdown.Escape(c.Type), markdown.Escape(c.Size), orDash(markdown.Escape(agent)), orDash(strings.Join(reqs, " ")), orDash(strings.Join(after, " "))}
		if status {
			row = append(row, orDash(markdown.Escape(c.Status)))
		}
		m.line("| ", strings.Join(row, " | "), " |")
	}

	shared := sharedIntegration(g.Changes)
	m.line()
	m.line("#### Gates")
	m.line()
	if shared {
		c := &g.Changes[0]
		m.line("Integration of every change, on the merged tree before ", markdown.Code(g.MainBranch), " moves: ", m.steps(c.Integration))
		if skipped := m.skipped(c, StageIntegration); skipped != "" {
			m.line()
			m.line("Skipped in every integration: ", skipped)
		}
		m.line()
	}
	for i := range g.Changes {
		c := &g.Changes[i]
		m.line("- ", markdown.Code(c.Name))
		if len(c.Scope) > 0 {
			scope := make([]string, len(c.Scope))
			for i, s := range c.Scope {
				scope[i] = markdown.Code(s)
			}
			m.line("  - scope: ", strings.Join(scope, " "))
		}
		for _, d := range c.DependsOn {
			if why := c.Because[d]; why != "" {
				m.line("  - after ", markdown.Code(d), ": ", markdown.Escape(why))
			}
		}
		for _, w := range c.Waits {
			files := make([]string, len(w.Files))
			for i, f := range w.Files {
				files[i] = markdown.Code(f)
			}
			m.line("  - waits for ", markdown.Code(w.Change), ": both touch ", strings.Join(files, ", "))
		}
		if len(c.Learnings) > 0 {
			names := make([]string, len(c.Learnings))
			for i, l := range c.Learnings {
				names[i] = markdown.Code(l)
			}
			m.line("  - learnings in its prompts: ", strings.Join(names, " "))
		}
		m.line("  - verify: ", m.steps(c.Verify))
		skipped := m.skipped(c, StageVerify)
		if !shared {
			m.line("  - integration: ", m.steps(c.Integration))
			if s := m.skipped(c, StageIntegration); s != "" {
				skipped = strings.TrimPrefix(skipped+" · "+s, " · ")
			}
		}
		if skipped != "" {
			m.line("  - skipped: ", skipped)
		}
	}

	if len(g.CriticalPath) > 0 {
		path := make([]string, len(g.CriticalPath))
		for i, n := range g.CriticalPath {
			path[i] = markdown.Code(n)
		}
		m.line()
		m.line(fmt.Sprintf("**Critical path:** %s (weight %d)", strings.Join(path, " → "), g.CriticalWeight))
	}
	if len(m.conds) > 0 {
		m.line()
		m.line("**Decided at run time** (", markCondition, "):")
		m.line()
		for _, s := range m.conds {
			m.line("- ", markdown.Code(s.Gate), " when ", markdown.Code(s.Condition))
		}
	}
}

// steps renders gate steps in run order with Text's marks, or "—" for a
// stack that runs nothing.
func (m *mdWriter) steps(steps []GateStep) string {
	if len(steps) == 0 {
		return "—"
	}
	defaultRunner := m.g.Runner
	if defaultRunner == "" {
		defaultRunner = "host"
	}
	parts := make([]string, len(steps))
	for i, s := range steps {
		part := markdown.Code(s.Gate)
		if s.Condition != "" {
			part += markCondition
			m.noteCondition(s)
		}
		if s.Mode == config.ModeWarn {
			part += markWarn
		}
		if s.Runner != "" && s.Runner != defaultRunner {
			part += `\[` + markdown.Escape(s.Runner) + `\]`
		}
		parts[i] = part
	}
	return strings.Join(parts, " → ")
}

// skipped renders the gates of one stage that do not run for c, with
// why, or "" when none is skipped.
func (m *mdWriter) skipped(c *ChangeGraph, stage string) string {
	var parts []string
	for _, s := range c.Skipped {
		if s.Stage == stage {
			parts = append(parts, markdown.Code(s.Gate)+" ("+markdown.Escape(s.Reason)+")")
		}
	}
	return strings.Join(parts, " · ")
}

func (m *mdWriter) noteCondition(s GateStep) {
	for _, c := range m.conds {
		if c.Gate == s.Gate && c.Condition == s.Condition {
			return
		}
	}
	m.conds = append(m.conds, s)
}

// orDash is s, or "—" for an empty cell.
func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

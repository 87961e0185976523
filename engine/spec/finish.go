package spec

import (
	"fmt"
	"strings"
)

// finish closes the open requirement, if any: it names unnamed scenarios,
// checks the scenarios, assembles the text and reports a duplicate ID. A
// sink (malformed ID) is dropped.
func (p *parser) finish() {
	b := p.cur
	p.cur = nil
	if b == nil || b.sink {
		return
	}
	b.flushStep()
	r := b.req
	for i := range r.Scenarios {
		sc := &r.Scenarios[i]
		if sc.Name == "" {
			sc.Name = fmt.Sprintf("scenario %d", i+1)
		}
		if sc.When == nil {
			sc.When = []string{}
		}
		if sc.Then == nil {
			sc.Then = []string{}
		}
		switch {
		case len(sc.When) > 0 && len(sc.Then) == 0:
			p.errorf(sc.Line, "scenario %q of requirement %s has WHEN but no THEN", sc.Name, r.ID)
		case len(sc.Then) > 0 && len(sc.When) == 0:
			p.warnf(sc.Line, "scenario %q of requirement %s has THEN but no WHEN", sc.Name, r.ID)
		case len(sc.When) == 0 && len(sc.Then) == 0:
			p.warnf(sc.Line, "scenario %q of requirement %s has no WHEN/THEN steps", sc.Name, r.ID)
		}
	}
	switch {
	case len(r.Scenarios) > 0:
	case p.openSpec:
		// checkOpenSpec counts scenarios as OpenSpec does: headings.
	case p.opts.Strict:
		p.errorf(r.Line, "requirement %s has no scenario", r.ID)
	default:
		p.warnf(r.Line, "requirement %s has no scenario", r.ID)
	}
	r.Text = assembleText(b.body)
	if first, dup := p.seen[r.ID]; dup {
		p.errorf(r.Line, "duplicate requirement ID %s (first at %s:%d)", r.ID, p.file, first)
	} else {
		p.seen[r.ID] = r.Line
	}
	p.reqs = append(p.reqs, r)
	p.depLines = append(p.depLines, b.depLines)
}

// assembleText joins a requirement's prose: lines of a paragraph with "\n",
// paragraphs with "\n\n". The indentation common to all lines is removed
// (bullet-form bodies are indented), trailing spaces are trimmed, and so is
// the whole text.
func assembleText(body []bodyLine) string {
	common := -1
	for _, l := range body {
		if l.brk || strings.TrimSpace(l.text) == "" {
			continue
		}
		n := len(l.text) - len(strings.TrimLeft(l.text, " \t"))
		if common < 0 || n < common {
			common = n
		}
	}
	common = max(common, 0)
	var (
		paras []string
		cur   []string
	)
	flush := func() {
		if p := strings.Trim(strings.Join(cur, "\n"), "\n"); p != "" {
			paras = append(paras, p)
		}
		cur = cur[:0]
	}
	for _, l := range body {
		if l.brk {
			flush()
			continue
		}
		t := strings.TrimRight(l.text, " \t")
		if n := len(t) - len(strings.TrimLeft(t, " \t")); n > 0 {
			t = t[min(n, common):]
		}
		cur = append(cur, t)
	}
	flush()
	return strings.TrimSpace(strings.Join(paras, "\n\n"))
}

package spec

import (
	"bytes"
	"sort"
	"strings"

	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/openspec"
)

// Parse parses one markdown file. file is recorded in every Requirement and
// Diagnostic as given. It never panics on any input.
//
// Every returned requirement has an ID matching IDPattern and a Line within
// 1..number of lines of src; every diagnostic has a Line within 0..number of
// lines, and diagnostics are in line order. A requirement with a malformed ID
// is reported and left out; a duplicate ID is reported at its second use and
// both requirements are returned. Checks that need every file (unknown or
// self dependencies, duplicates across files) are done by ParseAll and Load.
func Parse(file string, src []byte, opts Options) ([]Requirement, []diag.Diagnostic) {
	r := parseFile(file, src, opts)
	return r.reqs, r.diags
}

// fileResult is the outcome of parsing one file. depLines[i][j] is the line
// on which reqs[i].DependsOn[j] was written.
type fileResult struct {
	file     string
	reqs     []Requirement
	diags    []diag.Diagnostic
	depLines [][]int
}

func parseFile(file string, src []byte, opts Options) fileResult {
	// A byte order mark is not part of the first line's text.
	lines, diags := splitLines(file, bytes.TrimPrefix(src, []byte("\ufeff")))
	p := &parser{
		file:     file,
		opts:     opts,
		diags:    diags,
		seen:     map[string]int{},
		ordinals: map[string]int{},
		openSpec: openspec.IsMainSpec(file),
	}
	for _, l := range lines {
		p.line(l)
	}
	p.finish()
	if p.openSpec {
		p.checkOpenSpec(src)
	}
	sort.SliceStable(p.diags, func(i, j int) bool { return p.diags[i].Pos.Line < p.diags[j].Pos.Line })
	return fileResult{file: file, reqs: p.reqs, diags: p.diags, depLines: p.depLines}
}

// parser is the state of parsing one file. At most one requirement is open
// (cur); opening a requirement finishes the previous one, so requirements are
// produced in document order.
type parser struct {
	file     string
	opts     Options
	reqs     []Requirement
	depLines [][]int
	diags    []diag.Diagnostic
	seen     map[string]int // ID -> line of its first requirement in this file
	ordinals map[string]int // domain -> OpenSpec requirements seen so far
	headings []section      // the headings enclosing the current line, outermost first
	cur      *builder
	// openSpec is set for an OpenSpec main spec (openspec.IsMainSpec), which
	// checkOpenSpec holds to the rules of `openspec validate --strict`.
	openSpec bool
}

// section is a heading that encloses the current line.
type section struct {
	level  int
	text   string
	domain bool // the heading may name a domain: it is not a requirement or scenario
}

// form is how a requirement was written; it decides where its body ends.
type form int

const (
	formHeading form = iota // up to the next heading of the same or a higher level
	formBullet              // its indented continuation lines
)

// builder accumulates the body of the open requirement.
type builder struct {
	req       Requirement
	form      form
	level     int  // heading level of a heading-form requirement
	sink      bool // a malformed requirement: its body is consumed and dropped
	body      []bodyLine
	depLines  []int
	scen      int     // index of the open scenario in req.Scenarios, or -1
	named     bool    // the open scenario was started by a Scenario marker
	scenLevel int     // heading level of the open scenario's heading, 0 if none
	lastKey   stepKey // keyword of the last step of the open scenario
	// structural is true after a blank line or a line that is not prose (a
	// heading, marker, step, Depends on): a plain line may then start a step,
	// whereas in the middle of a paragraph "When …" is just prose.
	structural bool
	inStep     bool            // the previous line was a step or its continuation
	stepCont   []string        // wrapped lines of the last step, not yet joined to it
	depSeen    map[string]bool // IDs already in req.DependsOn
	blankSeen  bool            // a blank line since the last body line (bullet form)
}

// bodyLine is one line of a requirement's prose, or a paragraph break.
type bodyLine struct {
	text string
	brk  bool
}

func (p *parser) errorf(line int, format string, args ...any) {
	p.diags = append(p.diags, diag.Errorf(p.file, line, format, args...))
}

func (p *parser) warnf(line int, format string, args ...any) {
	p.diags = append(p.diags, diag.Warningf(p.file, line, format, args...))
}

func (p *parser) line(l srcLine) {
	if l.code {
		p.codeLine(l)
		return
	}
	sh := shapeOf(l.text)
	switch {
	case sh.blank:
		if b := p.cur; b != nil {
			b.body = append(b.body, bodyLine{brk: true})
			b.structural, b.inStep, b.blankSeen = true, false, true
		}
	case isHeading(l.text):
		level, text, _ := parseHeading(l.text)
		p.heading(l, level, text)
	case sh.bullet && sh.indent < 2 && startsWithID(sh.content):
		p.finish()
		p.startBullet(l, sh.content)
	default:
		p.other(l, sh)
	}
}

func isHeading(s string) bool {
	_, _, ok := parseHeading(s)
	return ok
}

// codeLine keeps a fenced block verbatim in the open requirement's text. A
// fence that is not indented ends a bullet-form requirement, as it would end
// the list item.
func (p *parser) codeLine(l srcLine) {
	b := p.cur
	if b == nil {
		return
	}
	if b.form == formBullet && l.fenceIndent < 2 {
		p.finish()
		return
	}
	b.body = append(b.body, bodyLine{text: l.text})
	b.structural, b.inStep, b.blankSeen = true, false, false
}

func (p *parser) heading(l srcLine, level int, text string) {
	for len(p.headings) > 0 && p.headings[len(p.headings)-1].level >= level {
		p.headings = p.headings[:len(p.headings)-1]
	}
	_, isOpenSpec := openSpecOf(text)
	scenName, isScenario := scenarioOf(text)
	isReq := isOpenSpec || startsWithID(text)
	switch {
	case isReq:
		p.finish()
		p.startHeading(l, level, text)
	case isScenario:
		if p.cur != nil && p.cur.form == formBullet {
			p.finish()
		}
		switch b := p.cur; {
		case b == nil:
			p.warnf(l.num, "scenario %q is not inside a requirement", scenName)
		case !b.sink:
			b.openScenario(scenName, l.num, true, level)
			b.structural, b.inStep = true, false
		}
	default:
		p.nearMissHeading(l.num, level, text)
		b := p.cur
		if b == nil {
			break
		}
		if b.form == formBullet || level <= b.level {
			p.finish()
			break
		}
		// A deeper heading stays in the body; it closes a scenario whose
		// heading is at its level or deeper.
		if b.scen >= 0 && b.scenLevel > 0 && level <= b.scenLevel {
			b.flushStep()
			b.scen, b.lastKey = -1, noKey
		}
		b.body = append(b.body, bodyLine{brk: true}, bodyLine{text: l.text}, bodyLine{brk: true})
		b.structural, b.inStep = true, false
	}
	p.headings = append(p.headings, section{level: level, text: text, domain: !isReq && !isScenario})
}

// startHeading opens a heading-form or OpenSpec requirement.
func (p *parser) startHeading(l srcLine, level int, text string) {
	b := &builder{form: formHeading, level: level, scen: -1, structural: true}
	p.cur = b
	if rest, ok := openSpecOf(text); ok {
		domain := p.sectionDomain()
		p.ordinals[domain]++
		if !startsWithID(rest) {
			b.req = Requirement{ID: derivedID(domain, p.ordinals[domain]), Title: rest, Domain: domain}
			p.started(l)
			return
		}
		text = rest
	}
	p.startID(l, text)
}

// startBullet opens a bullet-form requirement.
func (p *parser) startBullet(l srcLine, content string) {
	p.cur = &builder{form: formBullet, scen: -1, structural: true}
	p.startID(l, content)
}

// startID sets the open requirement's ID and title from "REQ-…: title", or
// turns it into a sink when the ID is malformed.
func (p *parser) startID(l srcLine, s string) {
	id, title, ok := splitIDTitle(s)
	if !ok {
		p.errorf(l.num, "%s", malformedID(id))
		p.cur.sink = true
		return
	}
	p.cur.req = Requirement{ID: id, Title: title, Domain: DomainOf(id)}
	p.started(l)
}

func (p *parser) started(l srcLine) {
	b := p.cur
	b.req.File, b.req.Line = p.file, l.num
	if b.req.Title == "" {
		p.errorf(l.num, "requirement %s has an empty title", b.req.ID)
	}
}

// sectionDomain returns the domain of an OpenSpec requirement without an ID:
// the innermost enclosing heading of level 1 or 2 that names a domain, else
// the file's path.
func (p *parser) sectionDomain() string {
	for i := len(p.headings) - 1; i >= 0; i-- {
		h := p.headings[i]
		if h.level > 2 || !h.domain {
			continue
		}
		if d := headingDomain(h.text); d != "" {
			return d
		}
	}
	return fileDomain(p.file)
}

// member reports whether a non-blank, non-heading line continues the open
// bullet-form requirement: an indented line, a top-level step, Scenario or
// Depends on bullet, or a lazy continuation line right after the body.
func (b *builder) member(sh shape) bool {
	if sh.indent >= 2 {
		return true
	}
	if sh.bullet {
		_, _, isStep := stepOf(sh.content)
		_, isScen := scenarioOf(sh.content)
		_, isDep := dependsOf(sh.content)
		return isStep || isScen || isDep
	}
	return !b.blankSeen
}

// other handles a line that is neither blank, a heading, nor the start of a
// bullet-form requirement.
func (p *parser) other(l srcLine, sh shape) {
	ends := p.cur != nil && p.cur.form == formBullet && !p.cur.member(sh)
	p.nearMissLine(l.num, l.text, sh, ends)
	if ends {
		p.finish()
	}
	b := p.cur
	if b == nil {
		if name, ok := scenarioOf(sh.content); ok {
			p.warnf(l.num, "scenario %q is not inside a requirement", name)
		}
		return
	}
	b.blankSeen = false
	if b.sink {
		return
	}
	if list, ok := dependsOf(sh.content); ok {
		p.depends(list, l.num)
		b.body = append(b.body, bodyLine{brk: true})
		b.structural, b.inStep = true, false
		return
	}
	if name, ok := scenarioOf(sh.content); ok {
		b.openScenario(name, l.num, true, 0)
		b.body = append(b.body, bodyLine{brk: true})
		b.structural, b.inStep = true, false
		return
	}
	if sh.bullet || b.structural {
		if key, text, ok := stepOf(sh.content); ok && b.addSteps(key, text, l.num) {
			b.body = append(b.body, bodyLine{brk: true})
			b.structural, b.inStep = true, true
			return
		}
	}
	if b.inStep && !sh.bullet {
		b.continueStep(sh.content, l.num)
		return
	}
	b.body = append(b.body, bodyLine{text: l.text})
	b.structural, b.inStep = false, false
}

// depends records the IDs of a "Depends on:" list. IDs are separated by
// commas and/or spaces; backticks and bold around an ID are ignored, as are
// the word "and" and a list that is only "none", "n/a" or a dash.
func (p *parser) depends(list string, line int) {
	b := p.cur
	fields := strings.FieldsFunc(list, func(r rune) bool {
		return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\u00a0'
	})
	if len(fields) == 1 {
		switch strings.ToLower(strings.Trim(fields[0], "`*_.")) {
		case "none", "n/a", "-", "—", "–":
			return
		}
	}
	for _, f := range fields {
		id := strings.Trim(f, "`*_.")
		if id == "" || strings.EqualFold(id, "and") {
			continue
		}
		if !IDPattern.MatchString(id) {
			p.errorf(line, "%s", malformedID(id))
			continue
		}
		if b.depSeen[id] {
			continue
		}
		if b.depSeen == nil {
			b.depSeen = map[string]bool{}
		}
		b.depSeen[id] = true
		b.req.DependsOn = append(b.req.DependsOn, id)
		b.depLines = append(b.depLines, line)
	}
}

// openScenario starts a scenario; named says whether a Scenario marker
// started it, level is its heading level (0 when not a heading).
func (b *builder) openScenario(name string, line int, named bool, level int) {
	b.flushStep()
	b.req.Scenarios = append(b.req.Scenarios, Scenario{Name: name, Line: line})
	b.scen, b.named, b.scenLevel, b.lastKey = len(b.req.Scenarios)-1, named, level, noKey
}

// addStep appends a step to the open scenario and reports whether the line
// was a step. AND extends the previous keyword's list and is prose when no
// step precedes it. Outside a named scenario, a step opens an unnamed one,
// and GIVEN or WHEN after THEN starts the next unnamed scenario.
func (b *builder) addStep(key stepKey, text string, line int) bool {
	b.flushStep()
	if key == keyAnd {
		if b.scen < 0 || b.lastKey == noKey {
			return false
		}
		key = b.lastKey
	} else if b.scen < 0 || (!b.named && b.lastKey == keyThen && key != keyThen) {
		b.openScenario("", line, false, 0)
	}
	sc := &b.req.Scenarios[b.scen]
	switch key {
	case keyGiven:
		sc.Given = append(sc.Given, text)
	case keyWhen:
		sc.When = append(sc.When, text)
	case keyThen:
		sc.Then = append(sc.Then, text)
	}
	b.lastKey = key
	return true
}

// addSteps adds a step line: its first step and those written after it on
// the same line ("WHEN … THEN … AND …"). It reports whether the line was a
// step, as addStep does for the first.
func (b *builder) addSteps(key stepKey, text string, line int) bool {
	first, rest := splitInline(text)
	if !b.addStep(key, first, line) {
		return false
	}
	for _, s := range rest {
		b.addStep(s.key, s.text, line) // never an AND without a step before it
	}
	return true
}

// continueStep records a wrapped line of the last step; steps written
// inside the line start after it. The parts are joined by flushStep, which
// keeps long wrapped steps linear in their length.
func (b *builder) continueStep(text string, line int) {
	first, rest := splitInline(text)
	if b.scen < 0 || b.lastKey == noKey {
		return
	}
	if first != "" {
		b.stepCont = append(b.stepCont, first)
	}
	for _, s := range rest {
		b.addStep(s.key, s.text, line)
	}
}

// flushStep appends the recorded wrapped lines to the last step. It runs
// before any change to the open scenario.
func (b *builder) flushStep() {
	if len(b.stepCont) == 0 {
		return
	}
	defer func() { b.stepCont = b.stepCont[:0] }()
	if b.scen < 0 {
		return
	}
	sc := &b.req.Scenarios[b.scen]
	var list []string
	switch b.lastKey {
	case keyGiven:
		list = sc.Given
	case keyWhen:
		list = sc.When
	case keyThen:
		list = sc.Then
	}
	if n := len(list); n > 0 {
		list[n-1] = strings.TrimSpace(list[n-1] + " " + strings.Join(b.stepCont, " "))
	}
}

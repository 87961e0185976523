package spec

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Delta is one capability's delta of a change: the content of
// openspec/changes/<change>/specs/<capability>/spec.md.
type Delta struct {
	Capability string
	Added      []RequirementBlock // "## ADDED Requirements", in document order
	Modified   []RequirementBlock // "## MODIFIED Requirements", in document order
	Removed    []string           // names under "## REMOVED Requirements"
	Renamed    []Rename           // pairs under "## RENAMED Requirements"
	// Purpose is the body of a "## Purpose" section, trimmed: the Purpose
	// of the living spec the delta creates, when its capability has none.
	Purpose string
}

// RequirementBlock is one "### Requirement: <name>" block of a delta.
type RequirementBlock struct {
	Name string // the name after "Requirement:", trimmed
	// Text is the whole block as written, from its ### line to before the
	// next heading of level 1-3, with trailing blank lines removed and no
	// final newline. Lines end with "\n".
	Text string
}

// Rename renames the requirement named From to To.
type Rename struct {
	From, To string
}

// empty reports whether d changes nothing.
func (d *Delta) empty() bool {
	return len(d.Added) == 0 && len(d.Modified) == 0 && len(d.Removed) == 0 && len(d.Renamed) == 0
}

// deltaSection is the "## … Requirements" section a line of a delta is in.
type deltaSection int

const (
	secNone    deltaSection = iota // before any level-2 heading, or after a level-1 one
	secUnknown                     // under an unknown level-2 heading (reported once)
	secAdded
	secModified
	secRemoved
	secRenamed
	secPurpose // "## Purpose": the Purpose of a new capability
)

func (s deltaSection) String() string {
	switch s {
	case secAdded:
		return "ADDED Requirements"
	case secModified:
		return "MODIFIED Requirements"
	case secRemoved:
		return "REMOVED Requirements"
	case secRenamed:
		return "RENAMED Requirements"
	}
	return "no section"
}

// sectionOf returns the delta section a level-2 heading names. Case and
// runs of spaces are not significant ("## Added  requirements").
func sectionOf(heading string) (deltaSection, bool) {
	switch strings.ToLower(strings.Join(strings.Fields(heading), " ")) {
	case "added requirements":
		return secAdded, true
	case "modified requirements":
		return secModified, true
	case "removed requirements":
		return secRemoved, true
	case "renamed requirements":
		return secRenamed, true
	case "purpose":
		return secPurpose, true
	}
	return secUnknown, false
}

// ParseDelta parses a capability's delta spec. Diagnostics name the file
// "specs/<capability>/spec.md" (relative to the change's directory).
//
// Text before the first level-2 heading (e.g. a "# Delta for auth" title)
// and prose between blocks are ignored; a level-1 heading ends the current
// section. Requirement names are compared exactly (after trimming), as
// OpenSpec does. Headings inside fenced code blocks or HTML comments are not
// structure: they stay in the block that contains them.
//
// The error, when not nil, is the errors.Join of one Diagnostic per problem,
// in line order: an unknown "## " section; a "### " heading in a section that
// is not "### Requirement: <name>", or one with an empty name; a requirement
// block outside any section; a "####" heading (e.g. a scenario) outside a
// requirement block of ADDED or MODIFIED; a duplicate name within a section;
// a malformed or unpaired FROM/TO line; an unclosed code fence or HTML
// comment (which would hide the rest of the file); and contradictions
// between sections: one name in two of ADDED, MODIFIED and REMOVED, a
// MODIFIED or REMOVED requirement that RENAMED renames away (MODIFIED must
// use the new name), an ADDED requirement that is also a rename target.
func ParseDelta(capability string, src []byte) (*Delta, error) {
	return parseDelta("specs/"+capability+"/spec.md", capability, src)
}

// parseDelta is ParseDelta with the file name used in diagnostics.
func parseDelta(file, capability string, src []byte) (*Delta, error) {
	if capability == "" {
		return nil, errors.New("spec: ParseDelta: empty capability name")
	}
	lines, diags := splitLines(file, src)
	raw := rawLines(src)
	p := &deltaParser{
		file:  file,
		d:     &Delta{Capability: capability},
		names: map[deltaSection]map[string]int{},
		from:  map[string]int{},
		to:    map[string]int{},
	}
	// An unclosed fence or comment would silently swallow the sections
	// after it: an error here, where Parse only warns.
	for _, d := range diags {
		d.Severity = Error
		p.diags = append(p.diags, d)
	}
	for _, l := range lines {
		p.line(l, raw[l.num-1])
	}
	p.closeBlock()
	p.closeRenames()
	p.crossCheck()
	p.d.Purpose = strings.TrimSpace(strings.Join(p.purpose, "\n"))
	if len(p.diags) > 0 {
		sort.SliceStable(p.diags, func(i, j int) bool { return p.diags[i].Line < p.diags[j].Line })
		errs := make([]error, len(p.diags))
		for i, d := range p.diags {
			errs[i] = d
		}
		return nil, errors.Join(errs...)
	}
	return p.d, nil
}

// rawLines splits src as splitLines does (same numbering), keeping each
// line's text as written except for trailing "\r"s: the result of a fold
// ends its lines with "\n" only.
func rawLines(src []byte) []string {
	raw := strings.Split(string(src), "\n")
	if len(raw) > 1 && raw[len(raw)-1] == "" {
		raw = raw[:len(raw)-1]
	}
	for i, s := range raw {
		raw[i] = strings.TrimRight(s, "\r")
	}
	return raw
}

// deltaParser is the state of parsing one delta file.
type deltaParser struct {
	file  string
	d     *Delta
	diags []Diagnostic
	sec   deltaSection
	// the open requirement block, if any
	block     []string
	blockName string
	blockLine int
	// a FROM line waiting for its TO
	pendingFrom     string
	pendingFromLine int
	purpose         []string                        // lines of the "## Purpose" section
	names           map[deltaSection]map[string]int // section -> name -> line of first use
	from, to        map[string]int                  // RENAMED names -> line
}

func (p *deltaParser) errorf(line int, format string, args ...any) {
	p.diags = append(p.diags, Diagnostic{File: p.file, Line: line, Severity: Error, Message: fmt.Sprintf(format, args...)})
}

func (p *deltaParser) line(l srcLine, raw string) {
	if !l.code {
		if level, text, ok := parseHeading(l.text); ok {
			p.heading(l.num, level, text, raw)
			return
		}
	}
	switch {
	case p.block != nil:
		p.block = append(p.block, raw)
	case p.sec == secRenamed && !l.code:
		p.renameLine(l)
	case p.sec == secPurpose:
		p.purpose = append(p.purpose, raw)
	}
}

func (p *deltaParser) heading(num, level int, text, raw string) {
	if level <= 3 {
		p.closeBlock()
	}
	switch {
	case level == 1:
		p.closeRenames()
		p.sec = secNone
	case level == 2:
		p.closeRenames()
		sec, ok := sectionOf(text)
		if !ok {
			p.errorf(num, "unknown section %q (want ## ADDED Requirements, ## MODIFIED Requirements, ## REMOVED Requirements or ## RENAMED Requirements)", "## "+text)
		}
		p.sec = sec
	case level == 3:
		name, isReq := openSpecOf(text)
		switch p.sec {
		case secUnknown:
			// already reported
		case secNone:
			if isReq {
				p.errorf(num, "requirement %q is not under a ## ADDED/MODIFIED/REMOVED Requirements section", name)
			}
		case secPurpose:
			p.purpose = append(p.purpose, raw)
		case secRenamed:
			p.errorf(num, "heading %q under ## RENAMED Requirements: want \"- FROM: `### Requirement: <old>`\" and \"- TO: `### Requirement: <new>`\" lines", "### "+text)
		default:
			switch {
			case !isReq:
				p.errorf(num, "heading %q under ## %s is not a requirement (want ### Requirement: <name>)", "### "+text, p.sec)
			case name == "":
				p.errorf(num, "requirement block without a name under ## %s", p.sec)
			default:
				p.block, p.blockName, p.blockLine = []string{raw}, name, num
			}
		}
	default: // level 4-6: part of the open block
		switch {
		case p.block != nil:
			p.block = append(p.block, raw)
		case p.sec == secPurpose:
			p.purpose = append(p.purpose, raw)
		case p.sec == secAdded || p.sec == secModified:
			p.errorf(num, "heading %q is not inside a ### Requirement: block", strings.Repeat("#", level)+" "+text)
		}
	}
}

// closeBlock records the open requirement block in its section.
func (p *deltaParser) closeBlock() {
	if p.block == nil {
		return
	}
	lines := p.block
	for len(lines) > 1 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	name, line := p.blockName, p.blockLine
	p.block = nil
	if !p.addName(p.sec, name, line) {
		return
	}
	b := RequirementBlock{Name: name, Text: strings.Join(lines, "\n")}
	switch p.sec {
	case secAdded:
		p.d.Added = append(p.d.Added, b)
	case secModified:
		p.d.Modified = append(p.d.Modified, b)
	case secRemoved:
		p.d.Removed = append(p.d.Removed, name)
	}
}

// addName records a name used in a section and reports a duplicate.
func (p *deltaParser) addName(sec deltaSection, name string, line int) bool {
	m := p.names[sec]
	if m == nil {
		m = map[string]int{}
		p.names[sec] = m
	}
	if first, dup := m[name]; dup {
		p.errorf(line, "duplicate requirement %q under ## %s (first at line %d)", name, sec, first)
		return false
	}
	m[name] = line
	return true
}

// renameLine handles a line of the RENAMED section: "- FROM: …" or
// "- TO: …" (bullet and bold optional); other prose is ignored.
func (p *deltaParser) renameLine(l srcLine) {
	sh := shapeOf(l.text)
	if sh.blank {
		return
	}
	var (
		val  string
		isTo bool
		ok   bool
	)
	if val, ok = cutLabel(sh.content, "from", true); !ok {
		if val, ok = cutLabel(sh.content, "to", true); !ok {
			return
		}
		isTo = true
	}
	label := "FROM"
	if isTo {
		label = "TO"
	}
	name, err := renameTarget(val)
	if err != "" {
		p.errorf(l.num, "%s %s", label, err)
		if !isTo {
			p.closeRenames()
		}
		return
	}
	if !isTo {
		p.closeRenames()
		p.pendingFrom, p.pendingFromLine = name, l.num
		return
	}
	if p.pendingFromLine == 0 {
		p.errorf(l.num, "TO %q has no FROM line before it", name)
		return
	}
	from, fromLine := p.pendingFrom, p.pendingFromLine
	p.pendingFrom, p.pendingFromLine = "", 0
	bad := false
	if first, dup := p.from[from]; dup {
		p.errorf(fromLine, "requirement %q is renamed twice (first at line %d)", from, first)
		bad = true
	}
	if first, dup := p.to[name]; dup {
		p.errorf(l.num, "two requirements are renamed to %q (first at line %d)", name, first)
		bad = true
	}
	if from == name {
		p.errorf(l.num, "requirement %q is renamed to itself", name)
		bad = true
	}
	if bad {
		return
	}
	p.from[from], p.to[name] = fromLine, l.num
	p.d.Renamed = append(p.d.Renamed, Rename{From: from, To: name})
}

// renameTarget extracts the requirement name of a FROM/TO value:
// "`### Requirement: Name`", with or without the backticks or the "###".
// It returns a problem description instead when the value is malformed.
func renameTarget(val string) (string, string) {
	v := strings.TrimSpace(val)
	if len(v) >= 2 && strings.HasPrefix(v, "`") && strings.HasSuffix(v, "`") {
		v = strings.TrimSpace(strings.Trim(v, "`"))
	}
	if _, text, ok := parseHeading(v); ok {
		v = text
	}
	name, ok := openSpecOf(v)
	switch {
	case !ok:
		return "", fmt.Sprintf("%q: want `### Requirement: <name>`", val)
	case name == "":
		return "", "has no requirement name"
	}
	return name, ""
}

// closeRenames reports a FROM line whose TO never came.
func (p *deltaParser) closeRenames() {
	if p.pendingFromLine != 0 {
		p.errorf(p.pendingFromLine, "FROM %q has no TO line after it", p.pendingFrom)
		p.pendingFrom, p.pendingFromLine = "", 0
	}
}

// crossCheck reports names that contradict each other across sections.
func (p *deltaParser) crossCheck() {
	pairs := [][2]deltaSection{{secAdded, secModified}, {secAdded, secRemoved}, {secModified, secRemoved}}
	for _, pr := range pairs {
		for name, l1 := range p.names[pr[0]] {
			if l2, ok := p.names[pr[1]][name]; ok {
				p.errorf(max(l1, l2), "requirement %q is under both ## %s (line %d) and ## %s (line %d)", name, pr[0], l1, pr[1], l2)
			}
		}
	}
	renamedTo := map[string]string{}
	for _, r := range p.d.Renamed {
		renamedTo[r.From] = r.To
	}
	for name, line := range p.names[secModified] {
		if to, ok := renamedTo[name]; ok {
			p.errorf(line, "MODIFIED requirement %q is renamed to %q under ## RENAMED Requirements (line %d); use the new name", name, to, p.from[name])
		}
	}
	for name, line := range p.names[secRemoved] {
		if to, ok := renamedTo[name]; ok {
			p.errorf(line, "REMOVED requirement %q is renamed to %q under ## RENAMED Requirements (line %d)", name, to, p.from[name])
		}
	}
	for name, line := range p.names[secAdded] {
		if tl, ok := p.to[name]; ok {
			p.errorf(line, "ADDED requirement %q is also the target of a rename (line %d)", name, tl)
		}
	}
}

// ApplyDelta folds d into the living spec text (nil or blank for a new
// capability) and returns the new text. change names the change in the
// placeholder Purpose of a new spec that the delta gives no Purpose.
//
// The operations run in OpenSpec's order: RENAMED (the block keeps its place
// and body, its heading becomes "### Requirement: <To>"), REMOVED (the block
// is deleted), MODIFIED (the whole block is replaced in place), ADDED (blocks
// are appended after the last requirement). Requirements are the "### "
// blocks of the "## Requirements" section; a spec without that section gets
// one at its end. A new spec is
//
//	# <capability> Specification
//
//	## Purpose
//	TBD — created by archiving <change>.
//
//	## Requirements
//
// with the delta's own Purpose, when it has one, in place of the TBD line.
// Everything outside the Requirements section is kept as written. Inside it,
// blocks are separated by exactly one blank line and lines end with "\n";
// the result ends with one newline. A delta with no operation returns living
// unchanged.
//
// Errors (all are reported, joined): a MODIFIED, REMOVED or RENAMED
// requirement that does not exist; an ADDED requirement or a RENAMED target
// that already exists; a name that the living spec has twice; a block whose
// Text does not start with its "### Requirement: <Name>" heading, contains
// another heading of level 1-3, or has an unclosed code fence or HTML
// comment; a living spec with an unclosed code fence or HTML comment.
// Errors are Diagnostics naming openspec/specs/<capability>/spec.md, with the
// line of the existing requirement concerned where there is one.
func ApplyDelta(living []byte, d *Delta, change string) ([]byte, error) {
	if d == nil {
		return nil, errors.New("spec: ApplyDelta: nil delta")
	}
	if d.Capability == "" {
		return nil, errors.New("spec: ApplyDelta: delta has no capability name")
	}
	blank := len(bytes.TrimSpace(living)) == 0
	if d.empty() && !blank {
		return bytes.Clone(living), nil
	}
	a := &applier{file: "openspec/specs/" + d.Capability + "/spec.md"}
	var doc *livingDoc
	if blank {
		purpose := []string{"TBD — created by archiving " + change + "."}
		if d.Purpose != "" {
			purpose = rawLines([]byte(d.Purpose))
		}
		head := append([]string{"# " + d.Capability + " Specification", "", "## Purpose"}, purpose...)
		doc = &livingDoc{hasReq: true, head: append(head, "", "## Requirements")}
	} else {
		var diags []Diagnostic
		doc, diags = parseLiving(living)
		if len(diags) > 0 {
			// The rest of the file is code or comment: requirements
			// there are invisible, and added ones would be too.
			for _, dg := range diags {
				a.errorf(dg.Line, "%s; fix the living spec before archiving", dg.Message)
			}
			return nil, errors.Join(a.errs...)
		}
	}
	a.doc = doc
	for _, r := range d.Renamed {
		a.rename(r)
	}
	for _, name := range d.Removed {
		a.remove(name)
	}
	for _, b := range d.Modified {
		a.modify(b)
	}
	for _, b := range d.Added {
		a.add(b)
	}
	if len(a.errs) > 0 {
		return nil, errors.Join(a.errs...)
	}
	return doc.render(), nil
}

// livingDoc is a living spec split around its Requirements section.
type livingDoc struct {
	head     []string // up to and including the "## Requirements" line
	hasReq   bool     // head ends with the "## Requirements" line
	preamble []string // lines of the section before its first ### heading
	blocks   []livingBlock
	tail     []string // from the heading that ends the section to the end
}

// livingBlock is one "### " block of the Requirements section. name is the
// requirement name, "" for a ### heading that is not a requirement.
type livingBlock struct {
	name  string
	line  int // 1-based line of the heading in the living spec; 0 when added
	lines []string
}

func parseLiving(src []byte) (*livingDoc, []Diagnostic) {
	lines, diags := splitLines("", src)
	raw := rawLines(src)
	doc := &livingDoc{}
	const (
		inHead = iota
		inReq
		inTail
	)
	state := inHead
	for _, l := range lines {
		s := raw[l.num-1]
		level, text, isHead := 0, "", false
		if !l.code {
			level, text, isHead = parseHeading(l.text)
		}
		switch state {
		case inHead:
			doc.head = append(doc.head, s)
			if isHead && level == 2 && strings.EqualFold(strings.TrimSpace(text), "requirements") {
				doc.hasReq, state = true, inReq
			}
		case inReq:
			switch {
			case isHead && level <= 2:
				doc.tail, state = append(doc.tail, s), inTail
			case isHead && level == 3:
				name, _ := openSpecOf(text)
				doc.blocks = append(doc.blocks, livingBlock{name: name, line: l.num, lines: []string{s}})
			case len(doc.blocks) > 0:
				b := &doc.blocks[len(doc.blocks)-1]
				b.lines = append(b.lines, s)
			default:
				doc.preamble = append(doc.preamble, s)
			}
		default:
			doc.tail = append(doc.tail, s)
		}
	}
	return doc, diags
}

// render assembles the document; see ApplyDelta for the layout.
func (doc *livingDoc) render() []byte {
	var out []string
	head := doc.head
	if !doc.hasReq {
		head = trimBlankEnd(head)
		if len(head) > 0 {
			head = append(head, "")
		}
		head = append(head, "## Requirements")
	}
	out = append(out, head...)
	if pre := trimBlankStart(trimBlankEnd(doc.preamble)); len(pre) > 0 {
		out = append(out, "")
		out = append(out, pre...)
	}
	for _, b := range doc.blocks {
		out = append(out, "")
		out = append(out, trimBlankEnd(b.lines)...)
	}
	if tail := trimBlankEnd(doc.tail); len(tail) > 0 {
		out = append(out, "")
		out = append(out, tail...)
	}
	out = trimBlankEnd(out)
	return []byte(strings.Join(out, "\n") + "\n")
}

func trimBlankEnd(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func trimBlankStart(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	return lines
}

// applier applies the operations of a delta to a livingDoc, collecting
// errors; a failed operation changes nothing.
type applier struct {
	doc  *livingDoc
	file string
	errs []error
}

func (a *applier) errorf(line int, format string, args ...any) {
	a.errs = append(a.errs, Diagnostic{File: a.file, Line: line, Severity: Error, Message: fmt.Sprintf(format, args...)})
}

// find returns the index of the block of the named requirement, or -1. A
// name the spec has twice is reported and yields -2.
func (a *applier) find(name, op string) int {
	idx := -1
	for i, b := range a.doc.blocks {
		if b.name != name || name == "" {
			continue
		}
		if idx >= 0 {
			a.errorf(b.line, "%s requirement %q is ambiguous: the spec has it twice (first at line %d)", op, name, a.doc.blocks[idx].line)
			return -2
		}
		idx = i
	}
	return idx
}

func (a *applier) rename(r Rename) {
	i := a.find(r.From, "RENAMED")
	switch {
	case i == -1:
		a.errorf(0, "RENAMED requirement %q does not exist", r.From)
		return
	case i < 0:
		return
	}
	if j := a.find(r.To, "RENAMED"); j != -1 {
		if j >= 0 {
			a.errorf(a.doc.blocks[j].line, "cannot rename %q to %q: a requirement named %q already exists", r.From, r.To, r.To)
		}
		return
	}
	b := &a.doc.blocks[i]
	b.name = r.To
	b.lines = append([]string{"### Requirement: " + r.To}, b.lines[1:]...)
}

func (a *applier) remove(name string) {
	switch i := a.find(name, "REMOVED"); {
	case i == -1:
		a.errorf(0, "REMOVED requirement %q does not exist", name)
	case i >= 0:
		a.doc.blocks = append(a.doc.blocks[:i], a.doc.blocks[i+1:]...)
	}
}

func (a *applier) modify(rb RequirementBlock) {
	lines, ok := a.blockLines(rb, "MODIFIED")
	if !ok {
		return
	}
	switch i := a.find(rb.Name, "MODIFIED"); {
	case i == -1:
		a.errorf(0, "MODIFIED requirement %q does not exist", rb.Name)
	case i >= 0:
		a.doc.blocks[i] = livingBlock{name: rb.Name, line: a.doc.blocks[i].line, lines: lines}
	}
}

func (a *applier) add(rb RequirementBlock) {
	lines, ok := a.blockLines(rb, "ADDED")
	if !ok {
		return
	}
	switch i := a.find(rb.Name, "ADDED"); {
	case i >= 0:
		a.errorf(a.doc.blocks[i].line, "ADDED requirement %q already exists", rb.Name)
	case i == -1:
		a.doc.blocks = append(a.doc.blocks, livingBlock{name: rb.Name, lines: lines})
	}
}

// blockLines checks a block's Text: it must start with the heading
// "### Requirement: <Name>" and contain no other heading of level 1-3
// outside code, which would break the structure of the spec.
func (a *applier) blockLines(rb RequirementBlock, op string) ([]string, bool) {
	src := []byte(strings.TrimRight(rb.Text, " \t\r\n"))
	lines, diags := splitLines("", src)
	if len(diags) > 0 {
		a.errorf(0, "%s block %q has an unclosed code fence or HTML comment", op, rb.Name)
		return nil, false
	}
	if len(lines) == 0 || lines[0].code {
		a.errorf(0, "%s block %q does not start with \"### Requirement: %s\"", op, rb.Name, rb.Name)
		return nil, false
	}
	level, text, ok := parseHeading(lines[0].text)
	name, isReq := openSpecOf(text)
	if !ok || level != 3 || !isReq || name != rb.Name || rb.Name == "" {
		a.errorf(0, "%s block %q does not start with \"### Requirement: %s\"", op, rb.Name, rb.Name)
		return nil, false
	}
	for _, l := range lines[1:] {
		if l.code {
			continue
		}
		if level, _, ok := parseHeading(l.text); ok && level <= 3 {
			a.errorf(0, "%s block %q contains the heading %q; a requirement block ends before the next heading of level 1-3", op, rb.Name, strings.TrimSpace(l.text))
			return nil, false
		}
	}
	return rawLines(src), true
}

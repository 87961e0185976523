package openspec

import (
	"strings"

	"github.com/set-engine/set/engine/diag"
)

// This file reads a living spec, openspec/specs/<capability>/spec.md, as the
// OpenSpec CLI 1.13.2 does when it archives a change into it and when it
// validates the result before writing it.

// livingParts is a living spec split around its "## Requirements" section.
// Joined back in order they give the spec again (with line endings
// normalised and a byte order mark dropped), up to blank lines.
type livingParts struct {
	before     string // up to the section's heading; "" or ending in "\n"
	headerLine string // the heading line, as written
	preamble   string // lines of the section before its first requirement
	blocks     []RequirementBlock
	after      string // from the next "## " heading on; starts with "\n"
}

var (
	reRequirementsHeading = js(`^##` + reS + `+` + ci("Requirements") + reS + `*$`)
	rePurposeHeading      = js(`^##` + reS + `+` + ci("Purpose") + reS + `*$`)
	reDeltaHeading        = js(`^##` + reS + `+(` + ci("ADDED") + `|` + ci("MODIFIED") + `|` + ci("REMOVED") + `|` + ci("RENAMED") + `)` + reS + `+` + ci("Requirements") + reS + `*$`)
	reStrictRequirement   = js(`^###` + reS + `+` + ci("Requirement:") + reS + `*(` + reDot + `+)` + reS + `*$`)
	reAnyHeading          = js(`^(#{1,6})` + reS + `+(` + reDot + `+)$`)
	reHeadingStart        = js(`^(#{1,6})` + reS + `+`)
	reHeadingLine         = js(`^#{1,6}` + reS)
	reScenarioHeader      = js(`^####` + reS + `+`)
	reScenarioBodyEnd     = js(`^#{1,4}` + reS)
	reMetadataLine        = js(`^\*\*[^*]+\*\*:`)
	reShallOrMust         = js(`\b(SHALL|MUST)\b`)
	reScenarioLabel       = js(`^` + ci("Scenario:") + reS + `*`)
)

// splitLiving splits a living spec. A spec without a "## Requirements"
// section gets an empty one after its content, which is then kept as
// written (its line endings and byte order mark included).
func splitLiving(content string) livingParts {
	lines := strings.Split(normalizeEOL(stripBOM(content)), "\n")
	mask := fenceMask(lines)
	head := -1
	for i, l := range lines {
		if !mask[i] && reRequirementsHeading.MatchString(l) {
			head = i
			break
		}
	}
	if head < 0 {
		before := jsTrimEnd(content)
		if before != "" {
			before += "\n\n"
		}
		return livingParts{before: before, headerLine: "## Requirements", after: "\n"}
	}
	end := len(lines)
	for i := head + 1; i < len(lines); i++ {
		if !mask[i] && reTopLevelHeading.MatchString(lines[i]) {
			end = i
			break
		}
	}
	p := livingParts{headerLine: lines[head]}
	p.before = strings.Join(lines[:head], "\n")
	if jsTrimEnd(p.before) != "" {
		p.before += "\n"
	}
	isHeader := func(i int) bool { return !mask[i] && reRequirementHeader.MatchString(lines[i]) }
	i := head + 1
	var pre []string
	for ; i < end && !isHeader(i); i++ {
		pre = append(pre, lines[i])
	}
	p.preamble = jsTrimEnd(strings.Join(pre, "\n"))
	for i < end {
		start := i
		buf := []string{lines[i]}
		for i++; i < end && !isHeader(i); i++ {
			buf = append(buf, lines[i])
		}
		name := normalizeRequirementName(reRequirementHeader.FindStringSubmatch(lines[start])[1])
		p.blocks = append(p.blocks, RequirementBlock{Name: name, Raw: jsTrimEnd(strings.Join(buf, "\n")), Line: start + 1})
	}
	p.after = strings.Join(lines[end:], "\n")
	if !strings.HasPrefix(p.after, "\n") {
		p.after = "\n" + p.after
	}
	return p
}

// structureIssues returns what makes a living spec unsafe to update: a
// delta section heading in it, a "### Requirement:" header outside its
// "## Requirements" section, or a requirement name it has twice. Code
// fences are not structure.
func structureIssues(file, content string) []diag.Diagnostic {
	lines := strings.Split(normalizeEOL(content), "\n")
	mask := fenceMask(lines)
	for i := range lines {
		if mask[i] {
			lines[i] = ""
		}
	}
	head, end := -1, len(lines)
	for i, l := range lines {
		if reRequirementsHeading.MatchString(l) {
			head = i
			break
		}
	}
	if head >= 0 {
		for i := head + 1; i < len(lines); i++ {
			if reTopLevelHeading.MatchString(lines[i]) {
				end = i
				break
			}
		}
	}
	var ds []diag.Diagnostic
	issue := func(line int, format string, args ...any) {
		ds = append(ds, diag.Errorf(file, line, format, args...))
	}
	seen := map[string]int{}
	for i, l := range lines {
		t := jsTrim(l)
		if t == "" {
			continue
		}
		if reDeltaHeading.MatchString(l) {
			issue(i+1, "the living spec holds the delta heading %q; delta sections belong in openspec/changes/<change>/specs/", t)
			continue
		}
		m := reStrictRequirement.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if head < 0 || i <= head || i >= end {
			issue(i+1, "requirement header %q is outside the ## Requirements section", t)
			continue
		}
		name := normalizeRequirementName(m[1])
		if first, dup := seen[name]; dup {
			issue(i+1, "requirement %q is declared twice (first at line %d)", name, first)
			continue
		}
		seen[name] = i + 1
	}
	return ds
}

// mdSection is a heading and what follows it, as the CLI's MarkdownParser
// reads a spec.
type mdSection struct {
	level    int
	title    string
	content  string // the lines up to the next heading of this level or higher, trimmed
	children []*mdSection
}

// mdSections returns the heading tree of content.
func mdSections(content string) []*mdSection {
	lines := strings.Split(normalizeEOL(stripBOM(content)), "\n")
	mask := fenceMask(lines)
	var roots, stack []*mdSection
	for i, l := range lines {
		if mask[i] {
			continue
		}
		m := reAnyHeading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s := &mdSection{level: len(m[1]), title: jsTrim(m[2])}
		var body []string
		for j := i + 1; j < len(lines); j++ {
			if h := reHeadingStart.FindStringSubmatch(lines[j]); !mask[j] && h != nil && len(h[1]) <= s.level {
				break
			}
			body = append(body, lines[j])
		}
		s.content = jsTrim(strings.Join(body, "\n"))
		for len(stack) > 0 && stack[len(stack)-1].level >= s.level {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			roots = append(roots, s)
		} else {
			parent := stack[len(stack)-1]
			parent.children = append(parent.children, s)
		}
		stack = append(stack, s)
	}
	return roots
}

// findSection returns the first section, depth first, titled title in any
// case.
func findSection(sections []*mdSection, title string) *mdSection {
	for _, s := range sections {
		if jsLower(s.title) == jsLower(title) {
			return s
		}
		if c := findSection(s.children, title); c != nil {
			return c
		}
	}
	return nil
}

// overview returns the Purpose the CLI reads from a spec, "" when it cannot
// read the spec (no Purpose, or no Requirements section).
func overview(content string) string {
	secs := mdSections(content)
	p := findSection(secs, "Purpose")
	if p == nil || p.content == "" || findSection(secs, "Requirements") == nil {
		return ""
	}
	return p.content
}

// checkSpec validates a living spec as `openspec archive` does before
// writing it (the CLI's validateSpecContent, not strict): it has a non-empty
// "## Purpose" and a "## Requirements" section; every heading directly under
// Requirements is a requirement with text and a scenario with a body; its
// structure is sound (structureIssues) and every "### Requirement:" block
// has text. onlyEmpty reports that the one problem is that the spec has no
// requirement at all: a capability whose last requirement was removed.
// content is not on disk yet, so the diagnostics name file without a line.
func checkSpec(file, content string) (errs []diag.Diagnostic, onlyEmpty bool) {
	errf := func(format string, args ...any) {
		errs = append(errs, diag.Errorf(file, 0, format, args...))
	}
	secs := mdSections(content)
	purpose := findSection(secs, "Purpose")
	if purpose == nil || purpose.content == "" {
		errf("the spec has no ## Purpose section with text")
		return errs, false
	}
	reqs := findSection(secs, "Requirements")
	if reqs == nil {
		errf("the spec has no ## Requirements section")
		return errs, false
	}
	if len(reqs.children) == 0 {
		errf("the spec has no requirement left")
	}
	for _, r := range reqs.children {
		text := requirementBody(strings.Split(r.content, "\n"))
		if text == "" {
			text = jsTrim(r.title)
		}
		if text == "" {
			errf("requirement %q has no text", r.title)
		}
		n := 0
		for _, sc := range r.children {
			if sc.content != "" {
				n++
			}
		}
		if n == 0 {
			errf("requirement %q has no scenario (want a \"#### Scenario:\" heading with steps under it)", r.title)
		}
	}
	onlyEmpty = len(errs) == 1 && len(reqs.children) == 0
	for _, d := range structureIssues(file, content) {
		d.Pos.Line = 0
		errs = append(errs, d)
		onlyEmpty = false
	}
	for _, b := range splitLiving(content).blocks {
		if requirementBody(strings.Split(b.Raw, "\n")[1:]) == "" {
			errf("requirement %q has no text (want a statement with SHALL or MUST after its header)", b.Name)
			onlyEmpty = false
		}
	}
	return errs, onlyEmpty
}

// requirementBody returns a requirement's text from the lines after its
// header: the trimmed non-blank lines before the first heading, outside code
// fences, joined with "\n"; "**Label**:" metadata lines count only when
// there is nothing else.
func requirementBody(lines []string) string {
	mask := fenceMask(lines)
	var text, meta []string
	for i, l := range lines {
		if mask[i] {
			continue
		}
		if reHeadingLine.MatchString(l) {
			break
		}
		t := jsTrim(l)
		switch {
		case t == "":
		case reMetadataLine.MatchString(t):
			meta = append(meta, t)
		default:
			text = append(text, t)
		}
	}
	if len(text) > 0 {
		return strings.Join(text, "\n")
	}
	return strings.Join(meta, "\n")
}

func containsShallOrMust(s string) bool { return reShallOrMust.MatchString(s) }

// countScenarios counts the "#### " headings (outside code fences) among a
// requirement's lines after its header whose body, up to the next heading
// of level 1-4, is not blank.
func countScenarios(lines []string) int {
	mask := fenceMask(lines)
	n := 0
	for i, l := range lines {
		if mask[i] || !reScenarioHeader.MatchString(l) {
			continue
		}
		end := i + 1
		for end < len(lines) && (mask[end] || !reScenarioBodyEnd.MatchString(lines[end])) {
			end++
		}
		if jsTrim(strings.Join(lines[i+1:end], "\n")) != "" {
			n++
		}
	}
	return n
}

// scenarioNames returns the names of the "#### " headings of a requirement
// block (outside code fences), without "Scenario:" and a closing run of '#'.
func scenarioNames(raw string) []string {
	lines := strings.Split(normalizeEOL(raw), "\n")
	mask := fenceMask(lines)
	var names []string
	for i, l := range lines {
		if mask[i] || !reScenarioHeader.MatchString(l) {
			continue
		}
		n := removeFirst(l, reScenarioHeader)
		n = removeFirst(n, reClosingHashes)
		n = removeFirst(n, reScenarioLabel)
		names = append(names, jsTrim(n))
	}
	return names
}

// missingScenarios returns the scenario names of current that incoming does
// not have, counting repeats.
func missingScenarios(current, incoming string) []string {
	left := map[string]int{}
	for _, n := range scenarioNames(incoming) {
		left[n]++
	}
	var out []string
	for _, n := range scenarioNames(current) {
		if left[n] > 0 {
			left[n]--
		} else {
			out = append(out, n)
		}
	}
	return out
}

// purposeSection returns the body of the "## Purpose" section of src,
// trimmed, "" when there is none or it holds nothing but code and comments.
// Headings inside code fences or HTML comments are not structure.
func purposeSection(src string) string {
	normalized := normalizeEOL(src)
	lines := strings.Split(normalized, "\n")
	masked := strings.Split(maskHTMLComments(normalized), "\n")
	fence := fenceMask(masked)
	start := -1
	for i, l := range masked {
		if !fence[i] && rePurposeHeading.MatchString(l) {
			start = i
			break
		}
	}
	if start < 0 {
		return ""
	}
	end := len(masked)
	for i := start + 1; i < len(masked); i++ {
		if !fence[i] && reTopLevelHeading.MatchString(masked[i]) {
			end = i
			break
		}
	}
	var prose []string
	for i := start + 1; i < end; i++ {
		if !fence[i] {
			prose = append(prose, masked[i])
		}
	}
	if jsTrim(strings.Join(prose, "\n")) == "" {
		return ""
	}
	return jsTrim(strings.Join(lines[start+1:end], "\n"))
}

// maskHTMLComments blanks every character of each HTML comment ("<!--" to
// "-->" or "--!>", or to the end when it is never closed) except newlines.
func maskHTMLComments(s string) string {
	blank := func(t string) string {
		return strings.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return ' '
		}, t)
	}
	var out strings.Builder
	for {
		open := strings.Index(s, "<!--")
		if open < 0 {
			out.WriteString(s)
			return out.String()
		}
		out.WriteString(s[:open])
		closeAt := -1
		for i := open + 4; i < len(s); i++ {
			if strings.HasPrefix(s[i:], "-->") {
				closeAt = i + 3
				break
			}
			if strings.HasPrefix(s[i:], "--!>") {
				closeAt = i + 4
				break
			}
		}
		if closeAt < 0 {
			out.WriteString(blank(s[open:]))
			return out.String()
		}
		out.WriteString(blank(s[open:closeAt]))
		s = s[closeAt:]
	}
}

// LivingRequirements are the requirement blocks a living spec holds under
// "## Requirements", in document order, their names as NormalizeName
// gives them: what a MODIFIED, REMOVED or RENAMED requirement of a delta
// finds when `openspec archive` folds it into that spec.
func LivingRequirements(src []byte) []RequirementBlock {
	return splitLiving(decodeUTF8(src)).blocks
}

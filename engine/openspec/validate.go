package openspec

import (
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds the rules `openspec validate --strict` applies to an
// OpenSpec main spec (openspec/specs/<capability>/spec.md), as the OpenSpec
// CLI (@fission-ai/openspec 1.13.2) decides them: which headings are
// sections, requirements and scenarios, what a requirement needs, and what
// makes the document's structure valid. The CLI reads markdown its own way
// (no indented headings, fences opened by any ``` or ~~~ line, HTML comments
// not special, JavaScript's notion of whitespace), so these checks read the
// raw lines the same way, not as engine/spec's parser reads them. Under
// --strict the CLI's warnings fail validation too, so every rule here is an
// error.

// IsMainSpec reports whether file (slash-separated) is an OpenSpec main
// spec: ".../openspec/specs/<capability…>/spec.md", the files `openspec
// validate` checks as specs.
func IsMainSpec(file string) bool {
	parts := strings.Split(path.Clean(file), "/")
	n := len(parts)
	if n < 4 || parts[n-1] != "spec.md" {
		return false
	}
	for i := 0; i+3 < n; i++ {
		if parts[i] == "openspec" && parts[i+1] == "specs" {
			return true
		}
	}
	return false
}

// Rule names a rule of `openspec validate --strict` for main specs (a
// judge.Rule is a forbidden pattern of the code, a prompt.Rule a planning
// rule: other things).
type Rule string

const (
	RulePurposeMissing      Rule = "purpose-missing"      // no "Purpose" section with content
	RulePurposePlaceholder  Rule = "purpose-placeholder"  // Purpose is TBD/TODO or archive's placeholder sentence
	RulePurposeBrief        Rule = "purpose-brief"        // Purpose shorter than 50 characters
	RuleRequirementsMissing Rule = "requirements-missing" // no "Requirements" section
	RuleNoRequirements      Rule = "no-requirements"      // the Requirements section has no requirement heading
	RuleNoScenario          Rule = "no-scenario"          // a requirement has no scenario heading with content
	RuleEmptyText           Rule = "empty-text"           // a requirement has neither text nor title
	RuleNoBody              Rule = "no-body"              // a "### Requirement:" has no text under its heading
	RuleNoShall             Rule = "no-shall"             // a "### Requirement:" text has no SHALL or MUST
	RuleDeltaHeader         Rule = "delta-header"         // "## ADDED Requirements" (etc.) in a main spec
	RuleOutside             Rule = "outside-requirements" // "### Requirement:" outside "## Requirements"
	RuleDuplicate           Rule = "duplicate-requirement"
)

// Issue is one violated rule, at a 1-based line (0: the whole file).
type Issue struct {
	Rule    Rule
	Line    int
	Message string
}

// Report is what CheckMainSpec finds in one main spec (report.Report is
// where a run stands, another thing).
type Report struct {
	Issues []Issue
	// HasRequirements says whether a "Requirements" section exists;
	// Requirements holds the 1-based lines of the headings OpenSpec reads
	// as requirements (the headings directly under that section), and
	// Outside those of "### Requirement:" headings reported as outside it.
	HasRequirements bool
	Requirements    map[int]bool
	Outside         map[int]bool
}

// minPurpose is the length (in UTF-16 code units, as JavaScript counts)
// below which OpenSpec finds a Purpose too brief.
const minPurpose = 50

// PurposeTooBrief reports whether `openspec validate --strict` finds the
// text of a Purpose section too brief (purpose-brief).
func PurposeTooBrief(purpose string) bool { return utf16Len(purpose) < minPurpose }

// osLabelRe reads the name from a requirement title, as the CLI's
// structure check does.
var osLabelRe = js(`^` + ci("Requirement") + `:` + reS + `*(` + reDot + `+)`)

// osHeading is a heading as the CLI's section tree holds it.
type osHeading struct {
	line    int // 0-based index into the lines
	level   int
	title   string // trimmed
	parent  int    // index of the enclosing heading, -1 at the top
	content string // the lines up to the next heading of this level or higher, trimmed
}

// CheckMainSpec applies the rules of `openspec validate --strict` to the
// main spec src. Issue lines are 1-based and agree with engine/spec's parser's.
func CheckMainSpec(src []byte) Report {
	text := strings.TrimPrefix(string(src), "\ufeff")
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	mask := fenceMask(lines)
	rep := Report{Requirements: map[int]bool{}, Outside: map[int]bool{}}
	add := func(rule Rule, line int, format string, args ...any) {
		rep.Issues = append(rep.Issues, Issue{Rule: rule, Line: line, Message: fmt.Sprintf(format, args...)})
	}

	heads := osHeadings(lines, mask)
	purpose, reqs := -1, -1
	for i, h := range heads {
		switch {
		case purpose < 0 && EqualFoldASCII(h.title, "purpose"):
			purpose = i
		case reqs < 0 && EqualFoldASCII(h.title, "requirements"):
			reqs = i
		}
	}

	// The document: a Purpose that says what the capability is for, and a
	// Requirements section.
	switch {
	case purpose < 0:
		add(RulePurposeMissing, 0, `no "## Purpose" section: openspec validate requires one saying what the capability is for`)
	case heads[purpose].content == "":
		add(RulePurposeMissing, heads[purpose].line+1, `"## Purpose" is empty: openspec validate requires it to say what the capability is for`)
	case purposePlaceholder(heads[purpose].content):
		add(RulePurposePlaceholder, heads[purpose].line+1, `"## Purpose" is a placeholder (TBD, TODO or the sentence openspec archive writes): say what the capability is for`)
	case utf16Len(heads[purpose].content) < minPurpose:
		add(RulePurposeBrief, heads[purpose].line+1, `"## Purpose" is too brief (%d characters; openspec validate --strict wants at least %d)`, utf16Len(heads[purpose].content), minPurpose)
	}
	if reqs < 0 {
		add(RuleRequirementsMissing, 0, `no "## Requirements" section: openspec validate requires one holding the "### Requirement: <name>" headings`)
	} else {
		rep.HasRequirements = true
		n := 0
		for i, h := range heads {
			if h.parent != reqs {
				continue
			}
			n++
			rep.Requirements[h.line+1] = true
			name := osRequirementName(h.title)
			scenarios, empty := 0, 0
			for _, s := range heads[i+1:] {
				if s.level <= h.level {
					break // the end of the requirement's section
				}
				if s.parent == i {
					if s.content != "" {
						scenarios++
					} else {
						empty++
					}
				}
			}
			if requirementBody(strings.Split(h.content, "\n")) == "" && h.title == "" {
				add(RuleEmptyText, h.line+1, "requirement heading without a name or text")
			}
			switch {
			case scenarios > 0:
			case empty > 0:
				add(RuleNoScenario, h.line+1, `requirement %q has no scenario: its scenario heading has nothing under it (add "- **WHEN** …" and "- **THEN** …")`, name)
			default:
				add(RuleNoScenario, h.line+1, `requirement %q has no scenario: openspec validate wants a "#### Scenario: <name>" heading with its steps under it`, name)
			}
		}
		if n == 0 {
			add(RuleNoRequirements, heads[reqs].line+1, `"## %s" holds no requirement`, heads[reqs].title)
		}
	}

	checkStructure(lines, mask, &rep, add)
	checkShall(lines, mask, add)
	return rep
}

// osHeadings returns the headings outside fenced blocks with their section
// tree and content, as the CLI's markdown parser reads them: "#"s at the
// start of the line, whitespace, then a title.
func osHeadings(lines []string, mask []bool) []osHeading {
	boundary := make([]int, len(lines)) // level of a line that ends sections, else 0
	for i, l := range lines {
		if m := reHeadingStart.FindStringSubmatch(l); m != nil && !mask[i] {
			boundary[i] = len(m[1])
		}
	}
	var (
		heads []osHeading
		stack []int
	)
	for i, l := range lines {
		m := reAnyHeading.FindStringSubmatch(l)
		if m == nil || mask[i] {
			continue
		}
		h := osHeading{line: i, level: len(m[1]), title: jsTrim(m[2]), parent: -1}
		end := len(lines)
		for j := i + 1; j < len(lines); j++ {
			if boundary[j] > 0 && boundary[j] <= h.level {
				end = j
				break
			}
		}
		h.content = jsTrim(strings.Join(lines[i+1:end], "\n"))
		for len(stack) > 0 && heads[stack[len(stack)-1]].level >= h.level {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			h.parent = stack[len(stack)-1]
		}
		stack = append(stack, len(heads))
		heads = append(heads, h)
	}
	return heads
}

// osRequirementName is the name of a requirement heading as messages show
// it: the text after "Requirement:", else the whole title.
func osRequirementName(title string) string {
	if m := osLabelRe.FindStringSubmatch(title); m != nil {
		return normalizeRequirementName(m[1])
	}
	return title
}

// requirementsSection returns the 0-based line of the first "## Requirements"
// outside fences and the line that ends its section (the next "## " heading),
// or -1 when there is none.
func requirementsSection(lines []string, mask []bool) (start, end int) {
	start, end = -1, len(lines)
	for i, l := range lines {
		if !mask[i] && reRequirementsHeading.MatchString(l) {
			start = i
			break
		}
	}
	if start < 0 {
		return -1, end
	}
	for i := start + 1; i < len(lines); i++ {
		if !mask[i] && reTopLevelHeading.MatchString(lines[i]) {
			return start, i
		}
	}
	return start, end
}

// checkStructure reports delta headers, "### Requirement:" headings outside
// "## Requirements" and requirement names declared twice.
func checkStructure(lines []string, mask []bool, rep *Report, add func(Rule, int, string, ...any)) {
	start, end := requirementsSection(lines, mask)
	first := map[string]int{}
	for i, l := range lines {
		if mask[i] || jsTrim(l) == "" {
			continue
		}
		if reDeltaHeading.MatchString(l) {
			add(RuleDeltaHeader, i+1, "delta header %q in a main spec: it belongs in openspec/changes/<change>/specs/<capability>/spec.md", jsTrim(l))
			continue
		}
		m := reStrictRequirement.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		name := normalizeRequirementName(m[1])
		if start < 0 || i <= start || i >= end {
			rep.Outside[i+1] = true
			add(RuleOutside, i+1, `requirement %q is outside the "## Requirements" section, where OpenSpec does not read it`, name)
			continue
		}
		if at, dup := first[name]; dup {
			add(RuleDuplicate, i+1, "duplicate requirement %q (first at line %d)", name, at)
			continue
		}
		first[name] = i + 1
	}
}

// checkShall reports a "### Requirement:" block of the Requirements section
// whose text (the lines under its heading, up to the first heading) is
// missing or has no SHALL or MUST.
func checkShall(lines []string, mask []bool, add func(Rule, int, string, ...any)) {
	start, end := requirementsSection(lines, mask)
	if start < 0 {
		return
	}
	isBlock := func(i int) bool { return !mask[i] && reRequirementHeader.MatchString(lines[i]) }
	for i := start + 1; i < end; i++ {
		if !isBlock(i) {
			continue
		}
		name := normalizeRequirementName(reRequirementHeader.FindStringSubmatch(lines[i])[1])
		j := i + 1
		for j < end && !isBlock(j) {
			j++
		}
		switch body := requirementBody(lines[i+1 : j]); {
		case body == "":
			add(RuleNoBody, i+1, `requirement %q has no text: say what the system SHALL or MUST do on the lines under its heading`, name)
		case !reShallOrMust.MatchString(body):
			add(RuleNoShall, i+1, `requirement %q has no SHALL or MUST in its text (openspec validate --strict requires one)`, name)
		}
	}
}

// purposePlaceholder reports whether a Purpose is not yet written: it opens
// with a TBD or TODO marker, or holds the sentence `openspec archive` writes.
// Fenced lines are left out.
func purposePlaceholder(purpose string) bool {
	lines := strings.Split(purpose, "\n")
	mask := fenceMask(lines)
	var prose []string
	for i, l := range lines {
		if !mask[i] {
			prose = append(prose, l)
		}
	}
	p := jsTrim(strings.Join(prose, "\n"))
	if leadingMarker(p) {
		return true
	}
	at, suffix := strings.Index(p, purposePlaceholderPrefix), strings.LastIndex(p, purposePlaceholderSuffix)
	return at >= 0 && suffix >= 0 && at <= suffix
}

// leadingMarker reports whether s opens with TBD or TODO as a word: in
// capitals whatever follows, in any other case only when punctuation or the
// end of the line follows ("todo: …", but not Spanish "Todo el …").
func leadingMarker(s string) bool {
	for _, m := range []string{"TBD", "TODO"} {
		if len(s) < len(m) || !EqualFoldASCII(s[:len(m)], m) {
			continue
		}
		rest := s[len(m):]
		if r, _ := utf8.DecodeRuneInString(rest); rest != "" && (unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r) || r == '_') {
			continue
		}
		if s[:len(m)] == m {
			return true
		}
		t := strings.TrimLeft(rest, " \t")
		if t == "" || strings.ContainsRune("\n:-.,;()[]{}", rune(t[0])) || strings.HasPrefix(t, "–") || strings.HasPrefix(t, "—") {
			return true
		}
	}
	return false
}

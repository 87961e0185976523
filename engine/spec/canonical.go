package spec

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// Set's requirement IDs and OpenSpec requirement names map one to one: the
// requirement REQ-LINKS-01 titled "Create a short link" is named
// "REQ-LINKS-01: Create a short link" in OpenSpec, so set writes it as
//
//	### Requirement: REQ-LINKS-01: Create a short link
//
// and Parse reads that heading back as REQ-LINKS-01 with the same title.
// The living specs (openspec/specs/<capability>/spec.md on main) are read
// the same way: a requirement whose name starts with an ID is set's, and
// the record that main implements it; one without an ID is left alone.

// OpenSpecName is the OpenSpec name of a requirement: "<ID>: <title>".
func OpenSpecName(r Requirement) string { return r.ID + ": " + r.Title }

// FormatRequirement renders r as the "### Requirement:" block set writes
// into a delta spec (and so into the living specs): the heading named by
// OpenSpecName, the text (see statement), then each scenario as "#### Scenario: <name>"
// with its steps as "- **GIVEN** …", "- **WHEN** …", "- **THEN** …", a
// step of the same keyword as the one before it as "- **AND** …". A
// heading in the text is demoted to level 5, so that it neither ends the
// block nor reads as a scenario. Blocks end without a newline; lines are
// separated by "\n". DependsOn is not part of the block: the living specs
// record what is implemented, not the order it was done in.
//
// Parse reads the block back as the same requirement: Canonical(r) is
// what it reads, and Canonical(Canonical(r)) == Canonical(r).
func FormatRequirement(r Requirement) string {
	var lines []string
	lines = append(lines, "### Requirement: "+OpenSpecName(r))
	lines = append(lines, statement(r))
	for _, s := range r.Scenarios {
		lines = append(lines, "", "#### Scenario: "+s.Name)
		for _, step := range []struct {
			key   string
			texts []string
		}{{"GIVEN", s.Given}, {"WHEN", s.When}, {"THEN", s.Then}} {
			for i, t := range step.texts {
				key := step.key
				if i > 0 {
					key = "AND"
				}
				lines = append(lines, "- **"+key+"** "+t)
			}
		}
	}
	return strings.Join(lines, "\n")
}

// statement is the text of r's block: its own text, headings demoted, or,
// for a requirement written with a title and scenarios only, a statement
// made of its title, since OpenSpec refuses to fold a requirement without
// one and `openspec validate --strict` wants it to say SHALL. Both sides of
// a comparison go through it (see ContentOf), so the living spec's copy of
// that statement reads as the same requirement.
func statement(r Requirement) string {
	if t := demoteHeadings(r.Text); t != "" {
		return t
	}
	return "The system SHALL meet this requirement: " + strings.TrimRight(r.Title, ". ") + "."
}

// demoteHeadings turns the headings of levels 1-4 of a requirement's text,
// outside code, into level-5 headings.
func demoteHeadings(text string) string {
	if text == "" {
		return ""
	}
	lines, _ := splitLines("", []byte(text))
	raw := strings.Split(text, "\n")
	for _, l := range lines {
		if l.code {
			continue
		}
		if level, t, ok := parseHeading(l.text); ok && level < 5 {
			raw[l.num-1] = "##### " + t
		}
	}
	return strings.Join(raw, "\n")
}

// Canonical is r as the living specs record it: r formatted by
// FormatRequirement and parsed back. Two requirements say the same thing
// when their Canonical forms have the same title, text and scenarios
// (Content).
func Canonical(r Requirement) Requirement {
	reqs, _ := Parse("canonical.md", []byte(FormatRequirement(r)+"\n"), Options{})
	if len(reqs) == 0 {
		return r
	}
	c := reqs[0]
	c.ID, c.Domain, c.DependsOn, c.File, c.Line = r.ID, r.Domain, r.DependsOn, r.File, r.Line
	return c
}

// Content is what a requirement says, without where it is written: its
// title, text and scenarios (their line numbers zeroed).
type Content struct {
	Title     string
	Text      string
	Scenarios []Scenario
}

// ContentOf returns the content of r's canonical form.
func ContentOf(r Requirement) Content {
	c := Canonical(r)
	out := Content{Title: c.Title, Text: c.Text}
	for _, s := range c.Scenarios {
		s.Line = 0
		out.Scenarios = append(out.Scenarios, s)
	}
	return out
}

// LivingRequirement is a requirement of set's in the living specs: one
// whose OpenSpec name starts with its ID.
type LivingRequirement struct {
	Requirement
	// Capability is the spec's capability, its directory under
	// openspec/specs ("links", "search/full-text").
	Capability string
	// Name is the requirement's name as written after "Requirement:".
	Name string
}

// LivingSpecsDir is the directory of the living specs, relative to the
// project root.
const LivingSpecsDir = "openspec/specs"

// CapabilityOf returns the capability of a living spec file,
// "openspec/specs/<capability>/spec.md", or "" for any other path.
func CapabilityOf(file string) string {
	rest, ok := strings.CutPrefix(file, LivingSpecsDir+"/")
	if !ok {
		return ""
	}
	capability, ok := strings.CutSuffix(rest, "/spec.md")
	if !ok || capability == "" || strings.HasPrefix(path.Base(capability), ".") {
		return ""
	}
	return capability
}

// ParseLiving reads set's requirements from the living specs: files maps
// "openspec/specs/<capability>/spec.md" paths to their content (other
// paths are ignored). Requirements come in path order, then document
// order. A requirement whose name has no ID, and every problem Parse finds
// in a living spec, are ignored: the living specs are OpenSpec's, and may
// hold requirements set did not write. An ID named by two requirements is
// an error: main's record would then say two things about it.
func ParseLiving(files map[string][]byte) ([]LivingRequirement, error) {
	paths := make([]string, 0, len(files))
	for p := range files {
		if CapabilityOf(p) != "" {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var (
		out   []LivingRequirement
		first = map[string]Requirement{}
		errs  []string
	)
	for _, p := range paths {
		src := files[p]
		reqs, _ := Parse(p, src, Options{})
		lines, _ := splitLines(p, src)
		for _, r := range reqs {
			name, ok := livingName(lines, r.Line)
			if !ok {
				continue
			}
			if f, dup := first[r.ID]; dup {
				errs = append(errs, fmt.Sprintf("%s:%d: requirement %s is also at %s:%d; main's living specs must name each requirement once", p, r.Line, r.ID, f.File, f.Line))
				continue
			}
			first[r.ID] = r
			out = append(out, LivingRequirement{Requirement: r, Capability: CapabilityOf(p), Name: name})
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

// livingName returns the OpenSpec name on line num (1-based) when the line
// is a "### Requirement: <ID>…" heading: a requirement set wrote.
func livingName(lines []srcLine, num int) (string, bool) {
	if num < 1 || num > len(lines) || lines[num-1].code {
		return "", false
	}
	level, text, ok := parseHeading(lines[num-1].text)
	if !ok || level != 3 {
		return "", false
	}
	name, ok := openSpecOf(text)
	if !ok || !startsWithID(name) {
		return "", false
	}
	return name, true
}

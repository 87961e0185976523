package spec

import (
	"fmt"
	"strings"
	"unicode"
)

// A near miss is a heading or line that its author meant as a scenario
// ("#### Senario: mean", "#### Scenario mean") or a requirement
// ("### Requirment: Mean", "### req-stats-01: Mean") and that the parser
// does not read as one. Read as written, it loses what the author wrote: a
// requirement heading missed leaves its requirement out of the spec (its
// text goes to the requirement above it, or nowhere), and a scenario
// heading missed turns its name into a heading of the requirement's text,
// its steps into a scenario named "scenario N". Each is an error at its
// line, naming the heading the author meant.
//
// The case and the level of a label lose nothing: the parser reads
// "#### SCENARIO:" and "### Scenario:" as scenarios, and set writes every
// requirement and scenario in OpenSpec's form ("### Requirement:",
// "#### Scenario:") whatever form the spec uses; the form OpenSpec's own
// main specs need is checked by checkOpenSpec.

// nearLabels are the labels a near miss is measured against, in the form
// set writes them.
var nearLabels = []string{"Scenario", "Requirement"}

// nearMissHeading reports the near miss of a heading that the parser
// reads as neither a requirement nor a scenario. It runs before the
// heading is read, so p.cur is the requirement the heading is under.
func (p *parser) nearMissHeading(line, level int, text string) {
	marks := strings.Repeat("#", level) + " "
	if fixed, ok := lowerCaseID(text); ok {
		p.errorf(line, "%q is not a requirement heading (want %q): %s", marks+text, marks+fixed, requirementLost)
		return
	}
	// "Scenario" without its colon is a near miss only in a heading the
	// requirement above keeps in its text: elsewhere it may title a section
	// ("## Scenario planning").
	b := p.cur
	bare := b != nil && !b.sink && b.form == formHeading && level > b.level
	label, rest, ok := nearLabel(text, bare)
	switch {
	case !ok:
	case label == "Requirement":
		p.errorf(line, "%q is not a requirement heading (want %q): %s", marks+text, marks+label+": "+rest, requirementLost)
	default:
		ends := p.cur != nil && (p.cur.form == formBullet || level <= p.cur.level)
		p.errorf(line, "%q is not a scenario heading (want %q): %s", marks+text, marks+label+": "+rest, p.scenarioLost(ends))
	}
}

// nearMissLine reports a line inside a requirement, or a top-level bullet,
// that is a near miss: a "Scenario:" marker misspelt ("- **Senario**:
// mean") or a bullet-form requirement whose ID is in lower case. A line
// without a colon after its first word is prose ("Scenario planning is
// …"), never a near miss. It runs before the line is read; ends says
// whether the line ends the requirement it is under.
func (p *parser) nearMissLine(line int, text string, sh shape, ends bool) {
	written, bullet := strings.TrimSpace(text), ""
	if sh.bullet {
		bullet = "- "
	}
	if fixed, ok := lowerCaseID(sh.content); ok && sh.bullet && sh.indent < 2 {
		p.errorf(line, "%q is not a requirement (want %q): %s", written, bullet+fixed, requirementLost)
		return
	}
	if p.cur == nil || p.cur.sink {
		return
	}
	if label, rest, ok := nearLabel(sh.content, false); ok && label == "Scenario" {
		p.errorf(line, "%q is not a scenario (want %q): %s", written, bullet+label+": "+rest, p.scenarioLost(ends))
	}
}

// requirementLost says what is lost when a requirement's heading or bullet
// is a near miss.
const requirementLost = "the requirement it starts would not be read"

// scenarioLost says what is lost when a scenario's heading or marker is a
// near miss: its name, or, when the heading ends the requirement it is
// under (ends), the steps under it too.
func (p *parser) scenarioLost(ends bool) string {
	b := p.cur
	switch {
	case b == nil || b.sink:
		return "it would be in no requirement"
	case ends:
		return "it would end requirement " + b.req.ID + " and leave the steps under it in no requirement"
	}
	return fmt.Sprintf("its name would be text of requirement %s and the steps under it a scenario named \"scenario %d\"", b.req.ID, len(b.req.Scenarios)+1)
}

// nearLabel reports whether s, the text of a heading or a line, starts
// with a near miss of a label of nearLabels, and returns that label and
// the text after the near miss. A near miss is the first word, bold or
// not, followed by a colon and within two edits of a label in any case
// (one edit for a word that starts otherwise than the label's first three
// letters, so that "Retirement:" is not a misspelt "Requirement:"), or,
// when bare is set, "Scenario" with no colon before the text ("Scenario a
// name"). The label spelt right with its colon is not a near miss: the
// parser reads it.
func nearLabel(s string, bare bool) (label, rest string, ok bool) {
	r := strings.TrimPrefix(s, "**")
	end := strings.IndexFunc(r, func(c rune) bool { return !unicode.IsLetter(c) })
	if end <= 0 {
		return "", "", false
	}
	word, after := r[:end], r[end:]
	after = strings.TrimPrefix(after, "**")
	after, colon := strings.CutPrefix(after, ":")
	after = strings.TrimSpace(strings.TrimPrefix(after, "**"))
	for _, l := range nearLabels {
		w, want := strings.ToLower(word), strings.ToLower(l)
		switch d := editDistance(w, want); {
		case colon && d == 0:
			return "", "", false // the label itself, which the parser reads
		case colon && (d == 1 || d == 2 && strings.HasPrefix(w, want[:3])):
			return l, after, true
		case bare && l == "Scenario" && !colon && d == 0 && after != "" && unicode.IsSpace(rune(r[end])):
			return l, after, true
		}
	}
	return "", "", false
}

// lowerCaseID reports whether s starts with a requirement ID written with
// a lower-case "req-" ("req-stats-01: Mean", "**Req-Stats-01** Mean"),
// which the parser does not read as an ID, and returns s with that ID in
// capitals when it is then a well-formed ID.
func lowerCaseID(s string) (fixed string, ok bool) {
	r := strings.TrimPrefix(s, "**")
	if len(r) < 4 || !strings.EqualFold(r[:4], "REQ-") || strings.HasPrefix(r, "REQ-") {
		return "", false
	}
	end := strings.IndexFunc(r, func(c rune) bool { return !(c == '-' || unicode.IsLetter(c) || unicode.IsDigit(c)) })
	if end < 0 {
		end = len(r)
	}
	id := strings.ToUpper(r[:end])
	if !IDPattern.MatchString(id) {
		return "", false
	}
	return s[:len(s)-len(r)] + id + r[end:], true
}

// editDistance is the number of single-character insertions, deletions,
// substitutions and transpositions of adjacent characters that turn a
// into b (the optimal string alignment distance), over bytes.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

package spec

import (
	"fmt"
	"strings"

	"github.com/set-engine/set/engine/openspec"
)

// Purposes gives the Purpose of every capability that new requirements
// go to and that has no living spec yet (existing names the capabilities
// that have one): the prose of the spec section its first new requirement
// is written in (see SectionText), followed by the titles of its new
// requirements when it is shorter than OpenSpec asks, else a sentence
// naming the capability and those titles. sources maps a spec file, as
// Requirement.File names it, to its content.
func Purposes(reqs []Requirement, standings []Standing, existing map[string]bool, sources map[string][]byte) map[string]string {
	byID := map[string]Requirement{}
	for _, r := range reqs {
		byID[r.ID] = r
	}
	out := map[string]string{}
	titles := map[string][]string{}
	var order []string
	for _, st := range standings {
		r, ok := byID[st.ID]
		if st.Status != New || existing[st.Capability] || !ok {
			continue
		}
		if _, seen := titles[st.Capability]; !seen {
			order = append(order, st.Capability)
			if text := SectionText(sources[r.File], r.Line); text != "" {
				out[st.Capability] = text
			}
		}
		titles[st.Capability] = append(titles[st.Capability], r.Title)
	}
	for _, capability := range order {
		list := strings.Join(titles[capability], "; ")
		switch text := out[capability]; {
		case text == "":
			out[capability] = fmt.Sprintf("The %s capability, as the requirements of the spec describe it: %s.", capability, list)
		case openspec.PurposeTooBrief(text): // followed by the titles, to be long enough
			out[capability] = fmt.Sprintf("%s Its requirements: %s.", text, list)
		}
	}
	return out
}

// SectionText returns the prose of the spec section that the requirement
// starting on line (1-based) of src is written in: the lines between the
// nearest heading above it that is not a requirement or a scenario, and of
// a lower level than the requirement's own heading, and the next heading
// or requirement. Paragraphs are joined by a blank line; code blocks and
// HTML comments are left out. It is "" when the section has no prose.
func SectionText(src []byte, line int) string {
	lines, _ := splitLines("", src)
	if line < 1 || line > len(lines) {
		return ""
	}
	own := 7 // a bullet-form requirement is inside any heading
	if l := lines[line-1]; !l.code {
		if level, _, ok := parseHeading(l.text); ok {
			own = level
		}
	}
	start := -1
	for i := line - 2; i >= 0; i-- {
		if lines[i].code {
			continue
		}
		level, text, ok := parseHeading(lines[i].text)
		if !ok || level >= own {
			continue
		}
		if _, req := openSpecOf(text); req || startsWithID(text) {
			continue
		}
		if _, scen := scenarioOf(text); scen {
			continue
		}
		start = i
		break
	}
	if start < 0 {
		return ""
	}
	var body []bodyLine
	for _, l := range lines[start+1:] {
		if l.code {
			continue
		}
		if isHeading(l.text) {
			break
		}
		sh := shapeOf(l.text)
		if sh.bullet && sh.indent < 2 && startsWithID(sh.content) {
			break
		}
		if sh.blank {
			body = append(body, bodyLine{brk: true})
			continue
		}
		body = append(body, bodyLine{text: l.text})
	}
	return assembleText(body)
}

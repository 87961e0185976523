package spec

import (
	"strings"
	"unicode"
)

// AsRead is c as a reader of the rendered markdown reads it, the form in
// which Compare decides whether a requirement changed: re-wrapping a
// paragraph, or spacing its words otherwise, changes the bytes but not
// what the requirement says, and is no work for an agent.
//
// In the title, the scenarios' names and their steps every run of
// whitespace reads as one space. In the text (see readText) too, except
// that paragraphs stay apart, a line that starts a block of its own (a
// list item, a quote, a table row, a heading) stays on its own line with
// its indentation, and fenced code is kept verbatim: there, spacing is
// what the reader sees. AsRead never changes the living specs, which stay
// as OpenSpec writes them; it is a comparison's view of both sides.
func (c Content) AsRead() Content {
	out := Content{Title: readLine(c.Title), Text: readText(c.Text)}
	for _, s := range c.Scenarios {
		s.Name = readLine(s.Name)
		s.Given, s.When, s.Then = readLines(s.Given), readLines(s.When), readLines(s.Then)
		out.Scenarios = append(out.Scenarios, s)
	}
	return out
}

// readLine is s with each run of whitespace read as one space and none at
// either end.
func readLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func readLines(list []string) []string {
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = readLine(s)
	}
	return out
}

// readText is a requirement's text as a reader reads it: one line per
// paragraph or block, paragraphs separated by one blank line, the lines
// of fenced code verbatim.
func readText(text string) string {
	lines, _ := splitLines("", []byte(text))
	var (
		out  []string
		open bool // the last line of out is prose that the next line may continue
		brk  bool // a blank line since the last line of out
	)
	for _, l := range lines {
		sh := shapeOf(l.text)
		switch {
		case l.code:
			if brk && len(out) > 0 {
				out = append(out, "")
			}
			out = append(out, l.text)
			open, brk = false, false
		case sh.blank:
			brk = true
			open = false
		case open && !startsBlock(l.text, sh):
			out[len(out)-1] += " " + readLine(l.text)
		default:
			if brk && len(out) > 0 {
				out = append(out, "")
			}
			indent, rest := leadingSpace(l.text)
			out = append(out, strings.Repeat(" ", indent)+readLine(rest))
			open, brk = true, false
		}
	}
	return strings.Join(out, "\n")
}

// startsBlock reports whether a line of prose starts a block of its own
// rather than continuing the paragraph above it: a heading, a list item
// (bulleted or numbered), a quote or a table row.
func startsBlock(line string, sh shape) bool {
	if sh.bullet || isHeading(line) {
		return true
	}
	c := sh.content
	if strings.HasPrefix(c, ">") || strings.HasPrefix(c, "|") {
		return true
	}
	digits := strings.TrimLeftFunc(c, unicode.IsDigit)
	return len(digits) < len(c) && len(c)-len(digits) <= 9 &&
		(strings.HasPrefix(digits, ". ") || strings.HasPrefix(digits, ") ") || digits == "." || digits == ")")
}

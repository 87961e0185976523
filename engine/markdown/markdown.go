// Package markdown holds what set's GitHub-flavoured markdown renderers
// (the plan's graph, requirement coverage) share: text escaped so that it
// is shown as written, and code spans. Neither lets a newline through, so
// a table's row stays one line.
package markdown

import "strings"

// Escape escapes the characters that markdown would read as markup
// (emphasis, links, code, HTML, a table's cell separator) in s, which is
// then shown as written; a newline becomes a space.
func Escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '#', '~':
			b.WriteByte('\\')
		case '\n':
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Code is s as a code span: fenced by one more backtick than the longest
// run of backticks in s, padded with a space where s starts or ends with
// one, as CommonMark reads it back; a newline becomes a space. Nothing
// inside is escaped (a code span shows a backslash as written), so a "|"
// in s would end a table's cell: a caller puts in a cell's code span only
// text that holds none (a change's name, which is kebab-case).
func Code(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

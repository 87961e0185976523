package spec

import (
	"strings"

	"github.com/set-engine/set/engine/diag"
)

// srcLine is one line of a spec file, ready for the parser.
//
// Lines are split on "\n" only (a trailing "\r" is dropped), so line numbers
// agree with editors and with strings.Count(src, "\n")+1. HTML comments are
// removed from text, leaving the line count unchanged; a line wholly inside a
// comment is blank. Lines of a fenced code block (fences included) keep their
// raw text and have code set: they never carry markup the parser reads.
type srcLine struct {
	num         int    // 1-based
	text        string // without comments; raw for code lines
	code        bool   // a fence line or a line inside a fenced block
	fenceIndent int    // for code lines, the indent of the block's opening fence
}

// splitLines turns src into lines and reports an unclosed code fence or HTML
// comment, each of which hides the rest of the file.
func splitLines(file string, src []byte) ([]srcLine, []diag.Diagnostic) {
	raw := strings.Split(string(src), "\n")
	if len(raw) > 1 && raw[len(raw)-1] == "" {
		raw = raw[:len(raw)-1] // the final newline ends the last line
	}
	var (
		out          = make([]srcLine, 0, len(raw))
		diags        []diag.Diagnostic
		inComment    bool
		commentStart int
		fence        fenceInfo
		fenceStart   int
	)
	for i, s := range raw {
		num := i + 1
		s = strings.TrimSuffix(s, "\r")
		if fence.n > 0 {
			out = append(out, srcLine{num: num, text: s, code: true, fenceIndent: fence.indent})
			if fence.closedBy(s) {
				fence = fenceInfo{}
			}
			continue
		}
		var opened bool
		s, inComment, opened = stripComments(s, inComment)
		if opened {
			commentStart = num
		}
		if !inComment {
			if f, ok := openFence(s); ok {
				fence, fenceStart = f, num
				out = append(out, srcLine{num: num, text: s, code: true, fenceIndent: f.indent})
				continue
			}
		}
		out = append(out, srcLine{num: num, text: s})
	}
	if fence.n > 0 {
		diags = append(diags, diag.Warningf(file, fenceStart, "code fence is never closed; the rest of the file is code"))
	}
	if inComment {
		diags = append(diags, diag.Warningf(file, commentStart, "HTML comment is never closed; the rest of the file is ignored"))
	}
	return out, diags
}

// stripComments removes the HTML comments of one line. in says whether the
// line starts inside a comment; the result says whether it ends inside one,
// and opened whether a comment that is still open started on this line.
func stripComments(s string, in bool) (out string, stillIn, opened bool) {
	var b strings.Builder
	for {
		if in {
			j := strings.Index(s, "-->")
			if j < 0 {
				return b.String(), true, opened
			}
			s, in, opened = s[j+len("-->"):], false, false
			continue
		}
		j := strings.Index(s, "<!--")
		if j < 0 {
			if b.Len() == 0 {
				return s, false, false
			}
			b.WriteString(s)
			return b.String(), false, false
		}
		b.WriteString(s[:j])
		s, in, opened = s[j+len("<!--"):], true, true
	}
}

// fenceInfo describes an open fenced code block; n is 0 when none is open.
type fenceInfo struct {
	char   byte // '`' or '~'
	n      int  // length of the opening fence
	indent int
}

// openFence reports whether s opens a fenced code block. Any indentation is
// accepted, since fences inside list items are indented.
func openFence(s string) (fenceInfo, bool) {
	indent, rest := leadingSpace(s)
	if len(rest) < 3 || (rest[0] != '`' && rest[0] != '~') {
		return fenceInfo{}, false
	}
	c := rest[0]
	n := 0
	for n < len(rest) && rest[n] == c {
		n++
	}
	if n < 3 || (c == '`' && strings.IndexByte(rest[n:], '`') >= 0) {
		return fenceInfo{}, false
	}
	return fenceInfo{char: c, n: n, indent: indent}, true
}

// closedBy reports whether s closes the fenced block f: at least as many
// fence characters as the opening fence, and nothing else.
func (f fenceInfo) closedBy(s string) bool {
	_, rest := leadingSpace(s)
	n := 0
	for n < len(rest) && rest[n] == f.char {
		n++
	}
	return n >= f.n && strings.TrimSpace(rest[n:]) == ""
}

// leadingSpace returns the width of s's leading spaces and tabs (a tab
// advances to the next multiple of 4) and the rest of s.
func leadingSpace(s string) (int, string) {
	w, i := 0, 0
	for ; i < len(s); i++ {
		switch s[i] {
		case ' ':
			w++
		case '\t':
			w += 4 - w%4
		default:
			return w, s[i:]
		}
	}
	return w, ""
}

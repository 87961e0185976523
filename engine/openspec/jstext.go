package openspec

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// The archive reproduces the text handling of the OpenSpec CLI, which is
// written in JavaScript. These are the JavaScript primitives it relies on,
// with their exact semantics: what `\s`, `.` and String.prototype.trim
// consider white space differs from Go's unicode.IsSpace, and a regexp's
// case-insensitive flag folds only ASCII letters in the patterns it uses.

// jsSpaceSet is the content of a character class matching what `\s`
// matches in a JavaScript regexp (and what trim() removes).
const jsSpaceSet = `\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`

// Regexp fragments for JavaScript's `\s`, `\S` and `.` (which matches
// anything but a line terminator).
const (
	reS   = `[` + jsSpaceSet + `]`
	reDot = `[^\n\r\x{2028}\x{2029}]`
)

// jsIsSpace reports whether r is white space or a line terminator to
// JavaScript.
func jsIsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// jsIsLineTerminator reports whether r ends a line for a JavaScript regexp
// in multiline mode.
func jsIsLineTerminator(r rune) bool {
	return r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029
}

func jsTrim(s string) string      { return strings.TrimFunc(s, jsIsSpace) }
func jsTrimEnd(s string) string   { return strings.TrimRightFunc(s, jsIsSpace) }
func jsTrimStart(s string) string { return strings.TrimLeftFunc(s, jsIsSpace) }

// jsLower is String.prototype.toLowerCase: Go's per-rune mapping, plus the
// one unconditional special case of Unicode's SpecialCasing, U+0130 (capital
// I with dot above), which becomes "i\u0307". (The context-dependent final
// sigma is not reproduced: σ is used everywhere.)
func jsLower(s string) string {
	if !strings.ContainsRune(s, 'İ') {
		return strings.ToLower(s)
	}
	return strings.ToLower(strings.ReplaceAll(s, "İ", "i\u0307"))
}

// ci returns a regexp fragment matching word with ASCII letters in any
// case, as a JavaScript regexp with the i flag (and without u) does: a
// non-ASCII letter never matches an ASCII one.
func ci(word string) string {
	var b strings.Builder
	for _, c := range word {
		lo, up := strings.ToLower(string(c)), strings.ToUpper(string(c))
		if c < utf8.RuneSelf && lo != up {
			b.WriteString("[" + up + lo + "]")
		} else {
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

// js compiles a regexp written with the fragments above.
func js(expr string) *regexp.Regexp { return regexp.MustCompile(expr) }

// removeFirst is JavaScript's s.replace(re, ""): the leftmost match removed.
func removeFirst(s string, re *regexp.Regexp) string {
	loc := re.FindStringIndex(s)
	if loc == nil {
		return s
	}
	return s[:loc[0]] + s[loc[1]:]
}

// normalizeEOL replaces "\r\n" and a lone "\r" with "\n" (/\r\n?/g).
func normalizeEOL(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// stripBOM removes a leading U+FEFF.
func stripBOM(s string) string { return strings.TrimPrefix(s, "\ufeff") }

// decodeUTF8 decodes b as Node.js does when a file is read as "utf-8": each
// maximal ill-formed subsequence becomes one U+FFFD (the WHATWG decoder),
// and a byte order mark is kept.
func decodeUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var out strings.Builder
	out.Grow(len(b))
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			out.WriteByte(c)
			i++
			continue
		}
		need, lower, upper := 0, byte(0x80), byte(0xbf)
		switch {
		case c >= 0xc2 && c <= 0xdf:
			need = 1
		case c >= 0xe0 && c <= 0xef:
			need = 2
			if c == 0xe0 {
				lower = 0xa0
			} else if c == 0xed {
				upper = 0x9f
			}
		case c >= 0xf0 && c <= 0xf4:
			need = 3
			if c == 0xf0 {
				lower = 0x90
			} else if c == 0xf4 {
				upper = 0x8f
			}
		default:
			out.WriteRune(utf8.RuneError)
			i++
			continue
		}
		j := i + 1
		ok := true
		for k := 0; k < need; k++ {
			if j >= len(b) || b[j] < lower || b[j] > upper {
				ok = false
				break
			}
			lower, upper = 0x80, 0xbf
			j++
		}
		if ok {
			out.Write(b[i:j])
		} else {
			out.WriteRune(utf8.RuneError)
		}
		i = j
	}
	return out.String()
}

// fenceMask marks the lines that belong to a fenced code block, the fence
// lines included, as the OpenSpec CLI's buildCodeFenceMask does: a line
// whose first non-space characters are three or more backticks or tildes
// opens a block (whatever follows), and a line of at least as many of the
// same character, with nothing but space around them, closes it. An
// unclosed block runs to the end.
func fenceMask(lines []string) []bool {
	mask := make([]bool, len(lines))
	var open byte
	openLen := 0
	for i, l := range lines {
		if open == 0 {
			if c, n, _ := fenceRun(l); n >= 3 {
				open, openLen = c, n
				mask[i] = true
			}
			continue
		}
		mask[i] = true
		if c, n, rest := fenceRun(l); n >= openLen && c == open && jsTrim(rest) == "" {
			open = 0
		}
	}
	return mask
}

// fenceRun returns the fence character of l (after leading space), how
// many of it start l there, and what follows them.
func fenceRun(l string) (byte, int, string) {
	s := jsTrimStart(l)
	if s == "" || (s[0] != '`' && s[0] != '~') {
		return 0, 0, ""
	}
	c := s[0]
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return c, n, s[n:]
}

// utf16Len is the length of s as JavaScript counts it.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// EqualFoldASCII reports whether a and b are equal when ASCII letters are
// lower-cased, and only those (as JavaScript's comparison of two strings
// lower-cased by a regexp's "i" flag on ASCII words does).
func EqualFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

package testconfig

import (
	"errors"
	"strings"
)

// token is a token of a JavaScript or TypeScript text, as far as
// reading a configuration's literal values needs: a string literal (its
// value), a word (an identifier, a number, a keyword), a punctuation
// character, or something else (a template literal, a regular
// expression literal) that is never a value set reads.
type token struct {
	kind tokenKind
	text string
}

type tokenKind int

const (
	tokString tokenKind = iota
	tokWord
	tokPunct
	tokOther
)

// tokens splits src into tokens, leaving out comments and white space.
// It is not a parser: what it cannot tell apart (a regular expression
// literal from a division) costs a value at worst, which is then not read.
func tokens(src string) []token {
	var out []token
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(src[i:], "//"):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				return out
			}
			i += end
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return out
			}
			i += end + 4
		case c == '"' || c == '\'' || c == '`':
			s, n, ok := stringLiteral(src[i:])
			kind := tokString
			if c == '`' && strings.Contains(s, "${") || !ok {
				kind = tokOther
			}
			out = append(out, token{kind, s})
			i += n
		case isWordByte(c):
			j := i
			for j < len(src) && isWordByte(src[j]) {
				j++
			}
			out = append(out, token{tokWord, src[i:j]})
			i = j
		default:
			out = append(out, token{tokPunct, string(c)})
			i++
		}
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

// stringLiteral reads the quoted literal at the start of s: its value
// (the common escapes undone), its length in s, and whether it ended.
func stringLiteral(s string) (value string, n int, ok bool) {
	quote := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == quote:
			return b.String(), i + 1, true
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(s[i])
			}
		case c == '\n' && quote != '`':
			return b.String(), i, false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), len(s), false
}

// errNotLiteral says that a property's value is not one set can read
// without running the configuration.
var errNotLiteral = errors.New("not a string literal or a list of string literals")

// errNoObject says that a configuration's exported value is not an
// object literal set can find (a function, a value built by code).
var errNoObject = errors.New("its configuration is not an object literal set finds without running it (module.exports = {…}, export default {…} or defineConfig({…}), or a const they name)")

// jsStrings reads the value of the property path (["test", "include"]:
// the property include of the object that is the value of a property
// test) in the tokens of a JavaScript or TypeScript configuration: among
// the outermost properties of the object the file exports (configObject),
// then among those of the object literal each property's value is. So a
// property of a nested object (jest's projects, a plugin's options) is
// never taken for the configuration's. found is false when there is no
// such property; err is errNotLiteral when its value is not a string
// literal or an array of string literals only (a variable, a call, a
// spread, a template with substitutions), errNoObject when the file
// exports no object literal set can find.
func jsStrings(toks []token, path []string) (values []string, found bool, err error) {
	toks, ok := configObject(toks)
	if !ok {
		return nil, true, errNoObject
	}
	at := -1
	for depth, name := range path {
		last := depth == len(path)-1
		i := findProperty(toks, name, !last)
		if i < 0 {
			if shorthand(toks, name) {
				// { testMatch }: a variable's value, not a literal.
				return nil, true, errNotLiteral
			}
			return nil, false, nil
		}
		if last {
			at = i
			break
		}
		toks = toks[i+1 : closing(toks, i)]
	}
	values, ok = literalStrings(toks[at:])
	if !ok {
		return nil, true, errNotLiteral
	}
	return values, true, nil
}

// configObject is the tokens inside the braces of the object literal a
// configuration exports: the value of module.exports or export default,
// inside calls (defineConfig({…})), or the object literal of the
// const, let or var it names; a file that is one object literal (JSON
// with comments) is that object. ok is false when there is none.
func configObject(toks []token) ([]token, bool) {
	is := func(i int, texts ...string) bool {
		for k, text := range texts {
			if i+k >= len(toks) || toks[i+k].kind == tokString || toks[i+k].text != text {
				return false
			}
		}
		return true
	}
	object := func(i int) ([]token, bool) {
		for {
			switch {
			case is(i, "{"):
				return toks[i+1 : closing(toks, i)], true
			case i+1 < len(toks) && toks[i].kind == tokWord && is(i+1, "("):
				i += 2 // a call: defineConfig({…})
			default:
				return nil, false
			}
		}
	}
	if is(0, "{") {
		return object(0)
	}
	for i := range toks {
		var at int
		switch {
		case is(i, "module", ".", "exports", "="):
			at = i + 4
		case is(i, "export", "default"):
			at = i + 2
		default:
			continue
		}
		if obj, ok := object(at); ok {
			return obj, true
		}
		if at < len(toks) && toks[at].kind == tokWord {
			return namedObject(toks, toks[at].text)
		}
		return nil, false
	}
	return nil, false
}

// namedObject is the tokens inside the object literal that the const,
// let or var name is declared with (after a type annotation, if any).
func namedObject(toks []token, name string) ([]token, bool) {
	for i := 0; i+2 < len(toks); i++ {
		if toks[i].kind != tokWord || (toks[i].text != "const" && toks[i].text != "let" && toks[i].text != "var") || toks[i+1].text != name || toks[i+1].kind != tokWord {
			continue
		}
		for j := i + 2; j < len(toks); j++ {
			if toks[j].kind == tokPunct && toks[j].text == "=" {
				if j+1 < len(toks) && toks[j+1].kind == tokPunct && toks[j+1].text == "{" {
					return toks[j+2 : closing(toks, j+1)], true
				}
				return nil, false
			}
			if toks[j].kind == tokPunct && toks[j].text == ";" {
				break
			}
		}
	}
	return nil, false
}

// findProperty is the index of the value of the first property name
// ("name:" or a quoted "'name':", first or after a ",") outside every
// bracket of toks, and, when object, whose value is an object literal;
// -1 when there is none.
func findProperty(toks []token, name string, object bool) int {
	i := atTopLevel(toks, func(i int) bool {
		t := toks[i]
		switch {
		case (t.kind != tokWord && t.kind != tokString) || t.text != name:
			return false
		case i+2 >= len(toks) || !isPunct(toks[i+1], ":"):
			return false
		case i > 0 && !isPunct(toks[i-1], ","):
			return false
		}
		return !object || isPunct(toks[i+2], "{")
	})
	if i < 0 {
		return -1
	}
	return i + 2
}

// shorthand reports whether toks, the inside of an object literal, hold
// the shorthand property name ({ name } or { a, name, b }) outside every
// bracket: the value of the variable name, which set does not read.
func shorthand(toks []token, name string) bool {
	return atTopLevel(toks, func(i int) bool {
		return toks[i].kind == tokWord && toks[i].text == name &&
			(i == 0 || isPunct(toks[i-1], ",")) && (i+1 == len(toks) || isPunct(toks[i+1], ","))
	}) >= 0
}

// atTopLevel is the index of the first token of toks outside every
// bracket, and no bracket itself, for which match holds; -1 when there is
// none.
func atTopLevel(toks []token, match func(i int) bool) int {
	depth := 0
	for i, t := range toks {
		if t.kind == tokPunct {
			switch t.text {
			case "{", "[", "(":
				depth++
			case "}", "]", ")":
				depth--
			}
			continue
		}
		if depth == 0 && match(i) {
			return i
		}
	}
	return -1
}

// isPunct reports whether t is the punctuation text.
func isPunct(t token, text string) bool { return t.kind == tokPunct && t.text == text }

// closing is the index of the bracket that closes the one at toks[i], or
// len(toks).
func closing(toks []token, i int) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		if toks[j].kind != tokPunct {
			continue
		}
		switch toks[j].text {
		case "{", "[", "(":
			depth++
		case "}", "]", ")":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return len(toks)
}

// literalStrings reads the value that starts toks when it is a string
// literal or an array of string literals only, which then ends at a
// "," or "}", after TypeScript's "as const" (a value followed by more,
// "'a' + b", is not literal).
func literalStrings(toks []token) ([]string, bool) {
	ends := func(i int) bool {
		if i+1 < len(toks) && toks[i].text == "as" && toks[i+1].text == "const" { // TypeScript's "as const"
			i += 2
		}
		return i == len(toks) || toks[i].kind == tokPunct && (toks[i].text == "," || toks[i].text == "}")
	}
	if len(toks) == 0 {
		return nil, false
	}
	if toks[0].kind == tokString {
		return []string{toks[0].text}, ends(1)
	}
	if toks[0].kind != tokPunct || toks[0].text != "[" {
		return nil, false
	}
	var values []string
	for i := 1; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == tokPunct && t.text == "]":
			return values, ends(i + 1)
		case t.kind == tokString:
			values = append(values, t.text)
			if i+1 < len(toks) && toks[i+1].kind == tokPunct && toks[i+1].text == "," {
				i++
			}
		default:
			return nil, false
		}
	}
	return nil, false
}

package spec

import (
	"fmt"
	"path"
	"strings"
	"unicode"

	"github.com/set-engine/set/engine/openspec"
)

// shape is the block structure of one non-code line.
type shape struct {
	indent  int    // width of leading whitespace
	blank   bool   // nothing but whitespace
	bullet  bool   // a list item marked with '-', '*' or '+'
	content string // text after the bullet marker, or the trimmed line
}

func shapeOf(s string) shape {
	indent, rest := leadingSpace(s)
	if strings.TrimSpace(rest) == "" {
		return shape{indent: indent, blank: true}
	}
	if strings.IndexByte("-*+", rest[0]) >= 0 && (len(rest) == 1 || rest[1] == ' ' || rest[1] == '\t') {
		return shape{indent: indent, bullet: true, content: strings.TrimSpace(rest[1:])}
	}
	return shape{indent: indent, content: strings.TrimSpace(rest)}
}

// parseHeading returns the level (1-6) and text of an ATX heading line, with
// any closing sequence of '#' removed.
func parseHeading(s string) (level int, text string, ok bool) {
	i := 0
	for i < len(s) && i < 3 && s[i] == ' ' {
		i++
	}
	j := i
	for j < len(s) && s[j] == '#' {
		j++
	}
	level = j - i
	if level < 1 || level > 6 || (j < len(s) && s[j] != ' ' && s[j] != '\t') {
		return 0, "", false
	}
	text = strings.TrimSpace(s[j:])
	if k := strings.TrimRight(text, "#"); k != text && (k == "" || strings.HasSuffix(k, " ") || strings.HasSuffix(k, "\t")) {
		text = strings.TrimSpace(k)
	}
	return level, text, true
}

// startsWithID reports whether s starts with "REQ-" or "**REQ-": the text of
// a heading or top-level bullet that is meant to be a requirement.
func startsWithID(s string) bool {
	return strings.HasPrefix(s, "REQ-") || strings.HasPrefix(s, "**REQ-")
}

// splitIDTitle splits "REQ-AUTH-01: Title" (also "**REQ-AUTH-01**: Title",
// "REQ-AUTH-01 - Title", "REQ-AUTH-01 — Title", "REQ-AUTH-01 Title") into the
// ID token and the title. ok reports whether the token matches IDPattern.
func splitIDTitle(s string) (id, title string, ok bool) {
	r, bold := strings.CutPrefix(s, "**")
	end := len(r)
	for i, c := range r {
		if unicode.IsSpace(c) || c == ':' || c == '*' || c == ',' || c == '—' || c == '–' {
			end = i
			break
		}
	}
	id, r = r[:end], r[end:]
	closed := !bold
	r = strings.TrimSpace(r)
	if bold {
		r, closed = strings.CutPrefix(r, "**")
		r = strings.TrimSpace(r)
	}
	for _, sep := range []string{":", "—", "–", "-"} {
		if rr, found := strings.CutPrefix(r, sep); found {
			r = strings.TrimSpace(rr)
			break
		}
	}
	if !closed {
		if rr, found := strings.CutPrefix(r, "**"); found {
			r, closed = strings.TrimSpace(rr), true
		}
	}
	title = strings.TrimSpace(r)
	if !closed {
		title = strings.TrimSpace(strings.TrimSuffix(title, "**"))
	}
	return id, title, IDPattern.MatchString(id)
}

// cutLabel matches a case-insensitive label at the start of s, optionally
// bold and followed by a colon ("WHEN x", "**When**: x", "**Depends on:** x",
// "**WHEN x**"), and returns the text after it. The label must end at a word
// boundary; with colonRequired it must be followed by ':'.
func cutLabel(s, label string, colonRequired bool) (string, bool) {
	r, bold := strings.CutPrefix(s, "**")
	if len(r) < len(label) || !openspec.EqualFoldASCII(r[:len(label)], label) {
		return "", false
	}
	r = r[len(label):]
	closed := !bold
	if bold {
		r, closed = strings.CutPrefix(r, "**")
	}
	r, colon := strings.CutPrefix(r, ":")
	if bold && !closed {
		r, closed = strings.CutPrefix(r, "**")
	}
	if colonRequired && !colon {
		return "", false
	}
	if !colon && !(bold && closed) && r != "" && r[0] != ' ' && r[0] != '\t' {
		return "", false // "Whenever", "Andrew", "Then's"
	}
	r = strings.TrimSpace(r)
	if !closed {
		r = strings.TrimSpace(strings.TrimSuffix(r, "**"))
	}
	return r, true
}

// stepKey is the keyword of a scenario step.
type stepKey int

const (
	noKey stepKey = iota
	keyGiven
	keyWhen
	keyThen
	keyAnd
)

var stepLabels = []struct {
	label string
	key   stepKey
}{{"given", keyGiven}, {"when", keyWhen}, {"then", keyThen}, {"and", keyAnd}}

// stepOf reports whether s is a step: GIVEN, WHEN, THEN or AND in any case,
// optionally bold, optionally followed by ':'.
func stepOf(s string) (stepKey, string, bool) {
	for _, l := range stepLabels {
		if rest, ok := cutLabel(s, l.label, false); ok {
			return l.key, rest, true
		}
	}
	return noKey, "", false
}

// inlineStep is a step written after another on the same line, as in
// "WHEN a visitor posts a valid form THEN an account is created".
type inlineStep struct {
	key  stepKey
	text string
}

// splitInline splits a step's text at the keywords written inside it and
// returns the text before the first one and the steps that follow. Inside a
// line a keyword is a whole word in capitals (GIVEN, WHEN, THEN, AND) or
// bold in any case (**Then**, **THEN:**, **and**:), preceded by a space and
// followed by text; words in quotes or backticks are never keywords, nor
// are "and"/"then" in ordinary prose. A comma, semicolon or dash before a
// keyword is dropped with it.
func splitInline(s string) (string, []inlineStep) {
	var (
		steps  []inlineStep
		start  int // start of the current part's text
		cur    = noKey
		quoted bool // inside "…" or “…”
		code   bool // inside `…`
	)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '`':
			code = !code
			continue
		case c == '"' && !code:
			quoted = !quoted
			continue
		case strings.HasPrefix(s[i:], "“") && !code:
			quoted = true
			continue
		case strings.HasPrefix(s[i:], "”") && !code:
			quoted = false
			continue
		}
		if quoted || code || i == 0 || (s[i-1] != ' ' && s[i-1] != '\t') {
			continue
		}
		key, n := inlineKeyword(s[i:])
		if n == 0 {
			continue
		}
		text := strings.TrimSpace(s[i+n:])
		if text == "" {
			break
		}
		steps = append(steps, inlineStep{cur, trimJoiner(s[start:i])})
		start, cur = i+n, key
		i += n - 1
	}
	steps = append(steps, inlineStep{cur, strings.TrimSpace(s[start:])})
	first := steps[0].text
	return first, steps[1:]
}

// inlineKeyword matches a step keyword at the start of s as splitInline
// reads it inside a line, and returns its key and the length it spans
// (0 when s does not start with one).
func inlineKeyword(s string) (stepKey, int) {
	for _, l := range stepLabels {
		if n := len(l.label); strings.HasPrefix(s, "**") && len(s) >= 2+n && openspec.EqualFoldASCII(s[2:2+n], l.label) {
			r := s[2+n:]
			for _, closing := range []string{"**:", ":**", "**"} {
				if rest, ok := strings.CutPrefix(r, closing); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
					return l.key, len(s) - len(rest)
				}
			}
		}
		upper := strings.ToUpper(l.label)
		if rest, ok := strings.CutPrefix(s, upper); ok {
			rest = strings.TrimPrefix(rest, ":")
			if rest == "" || rest[0] == ' ' || rest[0] == '\t' {
				return l.key, len(s) - len(rest)
			}
		}
	}
	return noKey, 0
}

// trimJoiner trims s and a trailing comma, semicolon or dash that joined it
// to the keyword after it.
func trimJoiner(s string) string {
	s = strings.TrimSpace(s)
	for _, sep := range []string{",", ";", " —", " –", " -"} {
		if t, ok := strings.CutSuffix(s, sep); ok {
			return strings.TrimSpace(t)
		}
	}
	return s
}

// scenarioOf reports whether s starts a named scenario ("Scenario: name").
func scenarioOf(s string) (string, bool) { return cutLabel(s, "scenario", true) }

// dependsOf reports whether s is a "Depends on:" line and returns its list.
func dependsOf(s string) (string, bool) { return cutLabel(s, "depends on", true) }

// openSpecOf reports whether a heading's text is "Requirement: <title>".
func openSpecOf(s string) (string, bool) { return cutLabel(s, "requirement", true) }

// slugify lower-cases s and turns every run of characters other than ASCII
// letters and digits into one '-', trimming '-' at both ends.
func slugify(s string) string {
	var b strings.Builder
	dash := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		default:
			dash = b.Len() > 0
			continue
		}
		if dash {
			b.WriteByte('-')
			dash = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

// notDomains are the slugs of section headings that group requirements in
// OpenSpec files without naming a domain.
var notDomains = map[string]bool{
	"requirements":          true,
	"added-requirements":    true,
	"modified-requirements": true,
	"removed-requirements":  true,
	"renamed-requirements":  true,
}

// headingDomain returns the domain a section heading names, or "" when it
// names none. A trailing "Specification" or "Spec" is dropped, since OpenSpec
// titles a capability's file "# <capability> Specification".
func headingDomain(text string) string {
	d := slugify(text)
	if notDomains[d] {
		return ""
	}
	for _, suffix := range []string{"specification", "specs", "spec"} {
		if d == suffix {
			return ""
		}
		if t, ok := strings.CutSuffix(d, "-"+suffix); ok {
			return t
		}
	}
	return d
}

// fileDomain returns the domain of a requirement from its file's path: the
// capability directory of ".../specs/<capability>/spec.md", else the base
// name without extension, else "spec". It is never empty.
func fileDomain(file string) string {
	parts := strings.Split(file, "/")
	if n := len(parts); n >= 3 && parts[n-1] == "spec.md" && parts[n-3] == "specs" {
		if d := slugify(parts[n-2]); d != "" {
			return d
		}
	}
	base := path.Base(file)
	if d := slugify(strings.TrimSuffix(base, path.Ext(base))); d != "" {
		return d
	}
	return "spec"
}

// derivedID returns REQ-<DOMAIN>-<NN> for the n-th (1-based) OpenSpec
// requirement of a domain. A domain that does not start with a letter is
// prefixed with "D-" so that the result always matches IDPattern.
func derivedID(domain string, n int) string {
	seg := strings.ToUpper(slugify(domain))
	if seg == "" {
		seg = "SPEC"
	}
	if seg[0] < 'A' || seg[0] > 'Z' {
		seg = "D-" + seg
	}
	return fmt.Sprintf("REQ-%s-%02d", seg, n)
}

// malformedID is the message of a requirement ID not matching IDPattern.
func malformedID(tok string) string {
	return fmt.Sprintf("malformed requirement ID %q (want REQ-<DOMAIN>-<NUMBER>, e.g. REQ-AUTH-01)", tok)
}

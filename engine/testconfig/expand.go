package testconfig

import (
	"fmt"
	"path"
	"strings"

	"github.com/set-engine/set/engine/pathglob"
)

// maxExpansions bounds the globs one runner glob expands to.
const maxExpansions = 64

// expand turns a glob of a test runner (micromatch's, as jest, vitest,
// ava and mocha use) into set's path globs (engine/pathglob): braces
// "{a,b}" give one glob per alternative, and the extglobs give their
// alternatives: "@(a|b)" and "+(a|b)" one of them, "?(a|b)" and "*(a|b)"
// none or one of them. So "+(a|b)" and "*(a|b)" match fewer paths than
// the runner's (not "aa"), the others exactly as many. A leading "./" is
// dropped, and "**" inside a segment is "*". A negated glob ("!…",
// "!(…)") and one that still is not a valid path glob give an error.
func expand(glob string) ([]string, error) {
	glob = strings.TrimPrefix(glob, "./")
	if strings.HasPrefix(glob, "!") || strings.Contains(glob, "!(") {
		return nil, &excludes{glob}
	}
	out, err := alternatives(glob)
	if err != nil {
		return nil, fmt.Errorf("%q %v", glob, err)
	}
	var globs []string
	for _, g := range out {
		g = path.Clean(oneStarInSegments(g))
		if err := pathglob.Check(g); err != nil {
			return nil, fmt.Errorf("%q: %v", glob, err)
		}
		globs = append(globs, g)
	}
	return globs, nil
}

// alternatives expands the brace groups and extglobs of glob (see
// expand).
func alternatives(glob string) ([]string, error) {
	out := []string{""}
	for rest := glob; rest != ""; {
		alts, n := group(rest)
		if n == 0 {
			for i := range out {
				out[i] += rest[:1]
			}
			rest = rest[1:]
			continue
		}
		var sub []string
		for _, a := range alts {
			e, err := alternatives(a)
			if err != nil {
				return nil, err
			}
			sub = append(sub, e...)
		}
		var next []string
		for _, o := range out {
			for _, s := range sub {
				next = append(next, o+s)
			}
		}
		if len(next) > maxExpansions {
			return nil, fmt.Errorf("expands to more than %d globs", maxExpansions)
		}
		out, rest = next, rest[n:]
	}
	return out, nil
}

// excludes is expand's error for a glob that excludes files.
type excludes struct{ glob string }

func (e *excludes) Error() string {
	return fmt.Sprintf("%q excludes files, which set counts as tests all the same where the other globs match them", e.glob)
}

// group reads a brace group or an extglob at the start of s: its
// alternatives (first "" for an extglob that may match nothing) and its
// length in s; n is 0 when s starts with neither.
func group(s string) (alts []string, n int) {
	open, sep := 1, ","
	optional := false
	switch {
	case s[0] == '{':
	case len(s) > 1 && s[1] == '(' && strings.IndexByte("@+?*", s[0]) >= 0:
		open, sep, optional = 2, "|", s[0] == '?' || s[0] == '*'
	default:
		return nil, 0
	}
	closer := map[byte]byte{'{': '}', '(': ')'}[s[open-1]]
	depth, start := 0, open
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '{', '(':
			depth++
		case '}', ')':
			if depth > 0 {
				depth--
				continue
			}
			if s[i] != closer {
				return nil, 0
			}
			alts = append(alts, s[start:i])
			if optional {
				alts = append([]string{""}, alts...)
			}
			if open == 1 && len(alts) == 1 {
				return nil, 0 // "{a}" is no alternative: a literal brace
			}
			return alts, i + 1
		default:
			if depth == 0 && strings.HasPrefix(s[i:], sep) {
				alts = append(alts, s[start:i])
				start = i + 1
			}
		}
	}
	return nil, 0
}

// oneStarInSegments makes a "**" within a path segment ("**.js") the
// "*" it means there, as in micromatch.
func oneStarInSegments(g string) string {
	segs := strings.Split(g, "/")
	for i, seg := range segs {
		for seg != "**" && strings.Contains(seg, "**") {
			seg = strings.ReplaceAll(seg, "**", "*")
		}
		segs[i] = seg
	}
	return strings.Join(segs, "/")
}

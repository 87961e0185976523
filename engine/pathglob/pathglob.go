// Package pathglob matches the path globs of set.cue and of a plan
// (testPatterns, scopes, mergeUnion, crossCutting) against the
// slash-separated paths of a repository, relative to its root. It is the
// one definition of what such a glob means, so that a gate, the merge
// queue and dispatch agree on it.
package pathglob

import (
	"fmt"
	"path"
	"strings"
)

// Match reports whether the slash-separated relative path name matches
// pattern. The pattern is matched against the whole path, segment by
// segment:
//
//   - a segment "**" matches zero or more whole segments;
//   - any other segment is a path.Match pattern: "*" matches any run of
//     characters within one segment, "?" one character, "[…]" a class.
//
// So "**/*_test.go" matches "a_test.go" and "x/y/a_test.go", "cmd/*" matches
// "cmd/main.go" but not "cmd/set/main.go", and "docs/**" matches everything
// under docs/. A leading "./" in the pattern is ignored. A malformed
// pattern (see Check) matches nothing.
func Match(pattern, name string) bool {
	pattern = strings.TrimPrefix(pattern, "./")
	if pattern == "" || name == "" {
		return false
	}
	return matchSegments(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			// Collapse runs of "**": they match what one does.
			for len(pat) > 1 && pat[1] == "**" {
				pat = pat[1:]
			}
			rest := pat[1:]
			if len(rest) == 0 {
				return true
			}
			for i := range len(name) + 1 {
				if matchSegments(rest, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		ok, err := path.Match(pat[0], name[0])
		if err != nil || !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// Any reports whether name matches one of patterns.
func Any(patterns []string, name string) bool {
	for _, p := range patterns {
		if Match(p, name) {
			return true
		}
	}
	return false
}

// InScope reports whether name lies inside one of the scope entries. A
// scope entry is a glob (see Match); an entry without glob characters
// also covers everything below it, so "internal/auth" and "internal/auth/"
// mean "internal/auth/**".
func InScope(scope []string, name string) bool {
	for _, s := range scope {
		if Match(s, name) {
			return true
		}
		if !IsGlob(s) {
			dir := strings.TrimSuffix(strings.TrimPrefix(s, "./"), "/")
			if dir != "" && strings.HasPrefix(name, dir+"/") {
				return true
			}
		}
	}
	return false
}

// IsGlob reports whether pattern holds a glob character (*, ? or [).
func IsGlob(pattern string) bool { return strings.ContainsAny(pattern, "*?[") }

// Check reports why pattern is not a glob Match can use: empty, absolute,
// climbing out of the root (..), or a segment path.Match rejects (an
// unclosed [ or a trailing \).
func Check(pattern string) error {
	p := strings.TrimPrefix(pattern, "./")
	switch {
	case strings.TrimSpace(p) == "":
		return fmt.Errorf("empty glob")
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("glob %q is absolute; globs are relative to the project root", pattern)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return fmt.Errorf("glob %q leaves the project root (..)", pattern)
		}
		if _, err := path.Match(seg, ""); err != nil {
			return fmt.Errorf("invalid glob %q: segment %q: %v", pattern, seg, err)
		}
	}
	return nil
}

// Touching is the patterns (in their order) that a change whose scope
// is scope may touch a file of (Overlap): every one when scope is empty,
// as a change without a scope may touch any file.
func Touching(scope, patterns []string) []string {
	if len(scope) == 0 {
		return patterns
	}
	var out []string
	for _, g := range patterns {
		for _, s := range scope {
			if Overlap(s, g) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// Overlap reports whether some path lies both inside the scope entry
// (see InScope) and matches the glob pattern: whether a change whose scope
// holds scope may touch a file pattern names. Where both segments at the
// same place hold glob characters it answers by their fixed prefixes and
// suffixes ("*.go" and "*.md" do not overlap, "a*" and "*b" may), erring
// towards an overlap.
func Overlap(scope, pattern string) bool {
	s := strings.TrimSuffix(strings.TrimPrefix(scope, "./"), "/")
	p := strings.TrimPrefix(pattern, "./")
	if s == "" || p == "" {
		return false
	}
	ps := strings.Split(p, "/")
	if overlapSegments(strings.Split(s, "/"), ps) {
		return true
	}
	// An entry without glob characters covers what lies below it.
	return !IsGlob(s) && overlapSegments(append(strings.Split(s, "/"), "**"), ps)
}

func overlapSegments(a, b []string) bool {
	switch {
	case len(a) == 0 && len(b) == 0:
		return true
	case len(a) > 0 && a[0] == "**":
		// ** takes none of b's segments, or one and stays.
		return overlapSegments(a[1:], b) || len(b) > 0 && overlapSegments(a, b[1:])
	case len(b) > 0 && b[0] == "**":
		return overlapSegments(a, b[1:]) || len(a) > 0 && overlapSegments(a[1:], b)
	case len(a) == 0 || len(b) == 0:
		return false
	}
	return overlapSegment(a[0], b[0]) && overlapSegments(a[1:], b[1:])
}

// overlapSegment reports whether one name may match both segment patterns.
func overlapSegment(a, b string) bool {
	if !IsGlob(a) {
		ok, err := path.Match(b, a)
		return ok && err == nil
	}
	if !IsGlob(b) {
		ok, err := path.Match(a, b)
		return ok && err == nil
	}
	fixedA, fixedB := fixedEnds(a), fixedEnds(b)
	return compatible(fixedA[0], fixedB[0], strings.HasPrefix) && compatible(fixedA[1], fixedB[1], strings.HasSuffix)
}

// fixedEnds is the literal text before the first and after the last glob
// character of a segment.
func fixedEnds(seg string) [2]string {
	first := strings.IndexAny(seg, "*?[")
	last := strings.LastIndexAny(seg, "*?]")
	return [2]string{seg[:first], seg[last+1:]}
}

// compatible reports whether two fixed ends can belong to one name: the
// shorter is a prefix (or suffix) of the longer.
func compatible(x, y string, has func(s, fix string) bool) bool {
	if len(x) < len(y) {
		x, y = y, x
	}
	return has(x, y)
}

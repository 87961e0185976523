package gate

import (
	"path"
	"strings"
)

// matchGlob reports whether the slash-separated relative path name matches
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
// pattern matches nothing.
func matchGlob(pattern, name string) bool {
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

// matchAny reports whether name matches one of patterns.
func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if matchGlob(p, name) {
			return true
		}
	}
	return false
}

// inScope reports whether name lies inside one of the scope entries. A
// scope entry is a glob (see matchGlob); an entry without glob characters
// also covers everything below it, so "internal/auth" and "internal/auth/"
// mean "internal/auth/**".
func inScope(scope []string, name string) bool {
	for _, s := range scope {
		if matchGlob(s, name) {
			return true
		}
		if !strings.ContainsAny(s, "*?[") {
			dir := strings.TrimSuffix(strings.TrimPrefix(s, "./"), "/")
			if dir != "" && strings.HasPrefix(name, dir+"/") {
				return true
			}
		}
	}
	return false
}

package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/set-engine/set/engine/config"
)

// inlineRule is one of the project's inlineTests, its pattern compiled:
// in a file matching files, the lines from the last one that from
// matches to the file's end are tests (the test module is the file's
// last item: an earlier match, as a #[cfg(test)] import at the top, does
// not make the code after it a test).
type inlineRule struct {
	files string
	from  *regexp.Regexp
}

// inlineRules compiles p's inlineTests (config.Project.InlineTestRules);
// the decoder refused a pattern that does not compile, so none is lost.
func inlineRules(p *config.Project) []inlineRule {
	if p == nil {
		return nil
	}
	var rules []inlineRule
	for _, r := range p.InlineTestRules() {
		if re, err := regexp.Compile(r.From); err == nil {
			rules = append(rules, inlineRule{files: r.Files, from: re})
		}
	}
	return rules
}

// coversPath reports whether a rule's files glob matches path.
func coversPath(rules []inlineRule, path string) bool {
	for _, r := range rules {
		if matchGlob(r.files, path) {
			return true
		}
	}
	return false
}

// inlineStart is the 1-based number of content's first test line under
// the rules whose files match path (the last line a rule's from matches;
// of several rules, the earliest such line); 0 when the file holds no
// inline tests.
func inlineStart(rules []inlineRule, path string, content []byte) int {
	start := 0
	lines := strings.Split(string(content), "\n")
	for _, r := range rules {
		if !matchGlob(r.files, path) {
			continue
		}
		for i := len(lines) - 1; i >= 0; i-- {
			if r.from.MatchString(lines[i]) {
				if start == 0 || i+1 < start {
					start = i + 1
				}
				break
			}
		}
	}
	return start
}

// inlineTestLines keeps, of the files the change adds lines to that are
// no test files (patterns) but that rules cover, the added lines that
// are inline tests, reading each file from the working tree in dir (the
// tree the change's diff is read against). Only regular files inside dir
// are read: a symbolic link the change commits is no test, wherever it
// points.
func inlineTestLines(rules []inlineRule, patterns []string, dir string, files []fileDiff) ([]fileDiff, error) {
	var out []fileDiff
	var root *os.Root
	for _, f := range files {
		if len(f.Added) == 0 || matchAny(patterns, f.Path) || !coversPath(rules, f.Path) {
			continue
		}
		if root == nil {
			var err error
			if root, err = os.OpenRoot(dir); err != nil {
				return nil, err
			}
			defer root.Close()
		}
		name := filepath.FromSlash(f.Path)
		if fi, err := root.Lstat(name); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		content, err := root.ReadFile(name)
		if err != nil {
			return nil, err
		}
		start := inlineStart(rules, f.Path, content)
		if start == 0 {
			continue
		}
		kept := fileDiff{Path: f.Path}
		for _, l := range f.Added {
			if l.Line >= start {
				kept.Added = append(kept.Added, l)
			}
		}
		if len(kept.Added) > 0 {
			out = append(out, kept)
		}
	}
	return out, nil
}

// describeInline says where rules find tests, for a gate's message
// ("the lines of **/*.rs files from the last line matching …").
func describeInline(rules []inlineRule) string {
	parts := make([]string, len(rules))
	for i, r := range rules {
		parts[i] = fmt.Sprintf("the lines of files matching %s from the last line matching %s on", r.files, r.from)
	}
	return strings.Join(parts, "; ")
}

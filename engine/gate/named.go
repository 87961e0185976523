package gate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/git"
)

// TestsNaming returns where the tests of commit rev (the files that
// match the project's testPatterns and its test runners' configuration
// at rev, and the lines its inlineTests count as tests) name each of ids, as spec_verify reads a name (an ID as
// written, or with "_" for "-"): ID → "path:line", the first test line of
// each file that names it, in path order. An ID no test names is absent.
func TestsNaming(ctx context.Context, dir, rev string, p *config.Project, ids []string) (map[string][]string, error) {
	out := map[string][]string{}
	patterns, rules := TestGlobs(ctx, p, dir, rev), inlineRules(p)
	if (len(patterns) == 0 && len(rules) == 0) || len(ids) == 0 {
		return out, nil
	}
	files, err := git.TreeFiles(ctx, dir, rev)
	if err != nil {
		return nil, err
	}
	var tests []string
	inline := map[string]bool{} // files that may hold inline tests
	for _, f := range files {
		switch {
		case matchAny(patterns, f):
			tests = append(tests, f)
		case coversPath(rules, f):
			tests = append(tests, f)
			inline[f] = true
		}
	}
	lines, err := git.Grep(ctx, dir, rev, `REQ[-_]`, tests)
	if err != nil {
		return nil, err
	}
	starts := map[string]int{} // inline file → its first test line, 0 for none
	for _, l := range lines {
		if _, ok := starts[l.Path]; ok || !inline[l.Path] {
			continue
		}
		content, err := git.FileAt(ctx, dir, rev, l.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist): // a symbolic link holds no test
			starts[l.Path] = 0
			continue
		case err != nil:
			return nil, err
		}
		starts[l.Path] = inlineStart(rules, l.Path, content)
	}
	lines = slices.DeleteFunc(lines, func(l git.GrepLine) bool {
		return inline[l.Path] && (starts[l.Path] == 0 || l.Line < starts[l.Path])
	})
	seen := map[[2]string]bool{} // ID and file already placed
	for _, l := range lines {
		for _, id := range ids {
			if key := [2]string{id, l.Path}; containsID(l.Text, id) && !seen[key] {
				seen[key] = true
				out[id] = append(out[id], fmt.Sprintf("%s:%d", l.Path, l.Line))
			}
		}
	}
	return out, nil
}

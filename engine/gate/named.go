package gate

import (
	"context"
	"fmt"

	"github.com/set-engine/set/engine/git"
)

// TestsNaming returns where the test files of commit rev (the files that
// match patterns, the project's testPatterns) name each of ids, as
// spec_verify reads a name (an ID as written, or with "_" for "-"):
// ID → "path:line", the first line of each test file that names it, in
// path order. An ID no test names is absent.
func TestsNaming(ctx context.Context, dir, rev string, patterns, ids []string) (map[string][]string, error) {
	out := map[string][]string{}
	if len(patterns) == 0 || len(ids) == 0 {
		return out, nil
	}
	files, err := git.TreeFiles(ctx, dir, rev)
	if err != nil {
		return nil, err
	}
	var tests []string
	for _, f := range files {
		if matchAny(patterns, f) {
			tests = append(tests, f)
		}
	}
	lines, err := git.Grep(ctx, dir, rev, `REQ[-_]`, tests)
	if err != nil {
		return nil, err
	}
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

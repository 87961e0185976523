package main

import (
	"strings"

	"github.com/set-engine/set/engine/testconfig"
)

// testConfigChecks says which test files the configuration of the
// project's test runners (testRunners) in its tree names, which the
// test_files and spec_verify gates and the agents' prompts count as
// tests beside testPatterns (engine/testconfig), and warns about what
// of it set could not read (each line says what follows). Nothing when
// no runner's configuration names any.
func testConfigChecks(ws *workspace) []check {
	runners := ws.cfg.TestRunnerList()
	if len(runners) == 0 {
		return nil
	}
	found := testconfig.Read(runners, testconfig.Dir(ws.root))
	var out []check
	var from []string
	byFrom := map[string][]string{}
	for _, g := range found.Globs {
		if byFrom[g.From] == nil {
			from = append(from, g.From)
		}
		byFrom[g.From] = append(byFrom[g.From], g.Pattern)
	}
	for _, f := range from {
		out = append(out, check{"tests", statusOK, "test files from " + f + ": " + strings.Join(byFrom[f], ", ")})
	}
	for _, u := range found.Unread {
		out = append(out, check{"tests", statusWarn, u})
	}
	return out
}

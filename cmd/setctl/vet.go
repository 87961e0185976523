package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/load"
)

func vetCommand() command {
	return command{
		name:    "vet",
		summary: "check set.cue, the spec and the plan they make",
		usage: `Usage: setctl vet

Vet loads set.cue with its profile and the embedded schema, warns about
a gate set.cue declares that no stack runs, checks that the
repository has the main branch set.cue names, parses every spec file,
makes the plan (static or explicit) and resolves every gate stack.
It prints nothing but a summary when all is well, and every problem with
its file:line:col otherwise. A directory that is not a git repository yet,
or a repository with no commit yet, is vetted with a warning.

Exit status: 0 when the project is valid, 1 otherwise.

Examples:
  setctl vet
  setctl -C examples/linkshort vet
`,
		run: runVet,
	}
}

func runVet(e *env, args []string) int {
	c := vetCommand()
	fs := c.flagSet(e)
	if code, done := c.parse(e, fs, args); done {
		return code
	}
	ws, err := loadWorkspace(e.dir)
	ws.printWarnings(e)
	if err != nil {
		return ws.report(e, c.name, err)
	}
	if err := unusedGates(ws.cfg); err != nil {
		for _, line := range strings.Split(strings.TrimRight(load.Details(err, ws.root), "\n"), "\n") {
			fmt.Fprintf(e.stderr, "setctl %s: warning: %s\n", c.name, line)
		}
	}
	switch status, msg := checkMainBranch(context.Background(), ws); status {
	case statusFail:
		return e.errorf(c.name, "%s", msg)
	case statusWarn:
		fmt.Fprintf(e.stderr, "setctl %s: warning: %s\n", c.name, msg)
	}
	summary := fmt.Sprintf("set.cue: ok (%s profile, %s); spec: %s in %s",
		ws.cfg.Profile, english.Plural(len(ws.cfg.Gates), "gate"), english.Plural(len(ws.spec.Requirements), "requirement"), english.Plural(len(ws.specData), "file"))
	if ws.cfg.Plan == nil && ws.cfg.Planner.Strategy != config.StrategyStatic {
		fmt.Fprintf(e.stdout, "%s; plan: made by the %q strategy at apply time\n", summary, ws.cfg.Planner.Strategy)
		return exitOK
	}
	p, err := ws.makePlan(context.Background())
	if err != nil {
		return ws.report(e, c.name, err)
	}
	g, err := graph.Build(p, ws.cfg)
	if err != nil {
		return ws.report(e, c.name, err)
	}
	fmt.Fprintf(e.stdout, "%s; plan: %s (%s), %s\n", summary, english.Plural(len(p.Changes), "change"), p.Strategy, english.Plural(countGates(g), "gate run"))
	return exitOK
}

// unusedGates is a warning for every gate set.cue declares that no stack
// names: it never runs, which is rarely what was meant. Gates that only
// the profile declares are left alone.
func unusedGates(cfg *config.Project) error {
	used := map[string]bool{}
	for _, stack := range cfg.Stacks {
		for name := range stack {
			used[name] = true
		}
	}
	for name := range cfg.Integration {
		used[name] = true
	}
	var errs []error
	for _, name := range sortedNames(cfg.Gates) {
		if !used[name] && cfg.Declares("gates", name) {
			errs = append(errs, cfg.FieldError([]string{"gates", name},
				"no stack runs this gate; add it to a stack, e.g. stacks: feature: %s: {}", name))
		}
	}
	return errors.Join(errs...)
}

// countGates is the number of gate runs the graph schedules.
func countGates(g *graph.Graph) int {
	n := 0
	for _, c := range g.Changes {
		n += len(c.Verify) + len(c.Integration)
	}
	return n
}

// sortedNames returns the keys of m, sorted.
func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

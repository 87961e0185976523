package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/llm"
	"github.com/set-engine/set/engine/load"
	"github.com/set-engine/set/engine/openspec"
	"github.com/set-engine/set/engine/project"
)

func vetCommand() command {
	return command{
		name:    "vet",
		summary: "check set.cue, the spec and the plan they make",
		usage: `Usage: setctl vet [--json]

Vet loads set.cue with its profile and the embedded schema, warns about
a gate set.cue declares that no stack runs, checks that the
repository has the main branch set.cue names, parses every spec file,
makes the plan (static, explicit or openspec) and resolves every gate
stack. A project plans from one source: a markdown spec (spec), or,
with planner strategy "openspec" and no spec, the OpenSpec change
folders on main, each refused where OpenSpec would refuse it; a markdown
strategy refuses a change folder open on main that set would neither
implement nor archive. A
planner strategy that asks a model (single, three-phase, auto) is not
run: vet checks that the plan role has a model, which setctl plan asks.
Every gate a model grades (review, spec_verify with grader "llm") must
have a model to ask, and a prompt template that executes.
It prints nothing but a summary when all is well, and every problem with
its field path and file:line:col otherwise. A directory that is not a git
repository yet, or a repository with no commit yet, is vetted with a
warning.

With --json, stdout carries one JSON object per line for every error and
warning, as apply --json writes them ({"@level", "@message", "@timestamp",
"type": "diagnostic", "diagnostic": {"severity", "summary", "detail",
"path", "range": {"filename", "start": {"line", "column"}}}}), and
nothing else: no summary.

Exit status: 0 when the project is valid, 1 otherwise.

Examples:
  setctl vet
  setctl vet --json | jq -r '.diagnostic.path'
  setctl -C examples/linkshort vet
`,
		run: runVet,
	}
}

func runVet(e *env, args []string) int {
	c := vetCommand()
	fs := c.flagSet(e)
	asJSON := fs.Bool("json", false, "write every error and warning as a JSON object on a line of stdout, and nothing else")
	if code, done := c.parse(e, fs, args); done {
		return code
	}
	if *asJSON {
		je := *e
		je.diagnose = newJSONUI(e.stdout, time.Now).diagnostic
		je.stdout = io.Discard
		e = &je
	}
	ctx := context.Background()
	pr, ds := project.Prepare(ctx, e.dir, project.Options{NoModel: true})
	if code := e.present(c.name, ds, pr.Root); code != exitOK {
		return code
	}
	if pr.NeedsModel != nil {
		// setctl plan asks the plan role's model: it must have one.
		cfg := llm.ForProject(pr.Config, pr.Root)
		if len(cfg.Routes[llm.Plan]) == 0 {
			return e.errorf(c.name, "planner strategy %q: %v", pr.NeedsModel.Strategy, cfg.Unrouted(llm.Plan))
		}
	}
	ws := workspaceOf(pr.Project)
	warnings := load.Diagnostics(unusedGates(ws.cfg))
	for i := range warnings {
		warnings[i].Severity = diag.Warning
	}
	e.present(c.name, warnings, ws.root)
	if d, ok := project.CheckMainBranch(ctx, ws.root, ws.cfg); !ok {
		if code := e.present(c.name, diag.List{d}, ws.root); code != exitOK {
			return code
		}
	} else if ws.cfg.Planner.FromFolders() {
		// The openspec strategy checks the change folders as main holds
		// them, not as they are on disk: an edit not committed there is
		// not vetted, and vet says so, as plan does.
		if d, ok, err := project.CheckInputsCommitted(ctx, pr.Project); err != nil {
			return e.errorf(c.name, "%v", err)
		} else if !ok {
			d.Severity = diag.Warning
			d.Summary = strings.TrimSuffix(d.Summary, ":") + "; vet checked the change folders as main has them:"
			e.present(c.name, diag.List{d}, ws.root)
		}
	}
	if d, ok := project.CheckDelivery(ctx, ws.root, ws.cfg, false); !ok {
		if code := e.present(c.name, diag.List{d}, ws.root); code != exitOK {
			return code
		}
	}
	checked := english.Plural(len(ws.cfg.Gates), "gate")
	if n := len(ws.cfg.Adopted("")); n > 0 {
		// The learnings set enforces: those turned off are not counted.
		checked += ", " + english.Plural(n, "learning")
	}
	summary := fmt.Sprintf("set.cue: ok (%s profile, %s); %s", ws.cfg.Profile, checked, source(pr))
	if pr.NeedsModel != nil {
		route := llm.ForProject(ws.cfg, ws.root).Routes[llm.Plan]
		fmt.Fprintf(e.stdout, "%s; plan: made by %s (%s strategy) at setctl plan, not by vet\n", summary, route[0], pr.NeedsModel.Strategy)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "%s; plan: %s (%s), %s\n", summary, english.Plural(len(pr.Plan.Changes), "change"), pr.Plan.Strategy, english.Plural(countGates(pr.Graph), "gate run"))
	return exitOK
}

// source says what the project pr plans from: its spec's requirements
// and files, or, for the openspec strategy, the open change folders main
// has, which it plans one change each (not the checkout's: a folder not
// committed on main is not planned, and vet warns of it).
func source(pr *project.Prepared) string {
	p := pr.Project
	if p.Config.Planner.FromFolders() && pr.Plan != nil {
		return "openspec: " + english.Plural(len(pr.Plan.Changes), "change folder") + " on main"
	}
	return fmt.Sprintf("spec: %s in %s", english.Plural(len(p.Spec.Requirements), "requirement"), english.Plural(len(p.SpecData), "file"))
}

// changeFolders counts the open change folders of the checkout
// ("2 change folders"), as doctor reports them: the openspec strategy
// plans from those main has (see source).
func changeFolders(p *project.Project) string {
	folders := map[string]bool{}
	for _, f := range p.FolderFiles {
		if name, ok := openspec.OpenFolderOf(f); ok {
			folders[name] = true
		}
	}
	return english.Plural(len(folders), "change folder")
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

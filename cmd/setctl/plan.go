package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/set-engine/set/engine/coverage"
	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/llm/usage"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/project"
	"github.com/set-engine/set/engine/report"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/state"
)

func planCommand() command {
	return command{
		name:    "plan",
		summary: "plan the spec into changes and show the execution graph",
		usage: `Usage: setctl plan [--out FILE] [--format text|dot|mermaid|json] [--detail] [--json] [--detailed-exitcode]

Plan loads set.cue and the spec and compares the spec with what main
implements: openspec/specs in main's tree, the living specs, is that
record. Every requirement is implemented (the living specs hold it with
the same title, text and scenarios), new, changed, or removed (the living
specs hold it, the spec no longer does). Only new, changed and removed
requirements are planned: plan decomposes them into changes with the
configured planner strategy (or takes the explicit plan of set.cue, less
the changes main has done), validates the plan and prints the execution
graph: for every change its requirements, its verify stack, its
integration stack, and the critical path; then every requirement with its
status: the change and commit that implemented it and the tests that name
it, or why it is not implemented yet. Nothing is run. .set/ is never the
record of what is done: a fresh clone of a fully applied repository plans
nothing.

The dot and mermaid drawings show a change as three nodes: its agent, its
verify stack and its integration into main, each stack listing its gates in
run order. --detail draws every step as its own node instead (dispatch,
each gate, the merge queue, the fast-forward of main, the archive).

With --out (or -out) the plan is saved as a versioned JSON file carrying a fingerprint
of its inputs (the configuration, every spec file, git HEAD and main's
living specs).

When .set/ holds a run, the text shows after each change where the run
says it stands (pending, implementing, failed:…; pending for a change the
run does not know or asked for other work), and so does its "status" in
the JSON. --json is --format json; the JSON adds "coverage", one object
per requirement ("id", "title", "status", "capability", "change",
"commit", "tests", "why").
An error is then a diagnostic object on stdout instead of the graph, as
apply --json writes it ({"@level": "error", "type": "diagnostic",
"diagnostic": {"severity", "summary", "detail"}}); warnings stay on
stderr.

Exit status: 0 on success, 1 on error; with --detailed-exitcode, 0 when
there is nothing to do (main implements the whole spec), 1 on error, 2
when the plan has changes to run.

Examples:
  setctl plan
  setctl plan --out plan.json
  setctl plan --format dot | dot -Tsvg > plan.svg
  setctl plan --format mermaid > plan.mmd
  setctl plan --format dot --detail | dot -Tsvg > plan-detail.svg
  setctl plan --format json | jq '.changes[].name'
  setctl plan --json | jq -r '.changes[] | .name + " " + .status'
`,
		run: runPlan,
	}
}

func runPlan(e *env, args []string) int {
	c := planCommand()
	fs := c.flagSet(e)
	out := fs.String("out", "", "save the plan to `FILE` (JSON)")
	format := fs.String("format", "text", "output `format`: text, dot, mermaid or json")
	asJSON := fs.Bool("json", false, "same as --format json")
	detail := fs.Bool("detail", false, "draw every step of a change as its own node (dot and mermaid)")
	detailed := fs.Bool("detailed-exitcode", false, "exit 2 when the plan has changes to run, 0 when it has none")
	if code, done := c.parse(e, fs, args); done {
		return code
	}
	if *asJSON || *format == "json" {
		e = jsonErrors(e, c.name)
	}
	if *asJSON {
		if fs.Changed("format") && *format != "json" {
			return c.usageError(e, "--json and --format %s disagree", *format)
		}
		*format = "json"
	}
	render, ok := renderers[*format]
	if !ok {
		return c.usageError(e, "unknown format %q (want text, dot, mermaid or json)", *format)
	}
	if *detail && *format != "dot" && *format != "mermaid" {
		return c.usageError(e, "--detail applies to --format dot and mermaid, not %s", *format)
	}
	pr, ds := project.Prepare(context.Background(), e.dir, project.Options{})
	if code := e.present(c.name, ds, pr.Root); code != exitOK {
		return code
	}
	ws, p, g := workspaceOf(pr.Project), pr.Plan, pr.Graph
	if *format == "json" || *format == "text" {
		statuses, err := addStatuses(g, p, ws.root)
		if err != nil {
			return e.errorf(c.name, "%v", err)
		}
		rows, err := coverage.Of(context.Background(), ws.root, ws.cfg, p, statuses)
		if err != nil {
			return e.errorf(c.name, "%v", err)
		}
		if err := showPlan(e, *format, g, p.Planning, rows); err != nil {
			return e.errorf(c.name, "%v", err)
		}
	} else if err := render(e, g, graph.DrawOptions{Detail: *detail}); err != nil {
		return e.errorf(c.name, "%v", err)
	}
	if *out != "" {
		path := *out
		if !filepath.IsAbs(path) {
			path = filepath.Join(e.dir, path)
		}
		if err := plan.Write(path, p); err != nil {
			return e.errorf(c.name, "%v", err)
		}
		fmt.Fprintf(e.stderr, "Saved the plan to %s (%s, fingerprint %s).\n", *out, english.Plural(len(p.Changes), "change"), p.Fingerprint.Short())
	}
	if *detailed && len(p.Changes) > 0 {
		return exitPending
	}
	return exitOK
}

// showPlan writes the plan as text or JSON: the execution graph, how a
// model planned it (planning, nil for the static strategy and explicit
// plans), and where every requirement stands (rows). A plan without
// changes says so instead of drawing an empty graph. The JSON is the
// graph's with the planning as "planning" and the rows as "coverage".
func showPlan(e *env, format string, g *graph.Graph, planning *plan.Planning, rows []coverage.Row) error {
	if format == "json" {
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		var pj *planningJSON
		if planning != nil {
			pj = &planningJSON{planning, planning.Tokens(), planning.CostUSD()}
		}
		return enc.Encode(struct {
			*graph.Graph
			Planning *planningJSON  `json:"planning,omitempty"`
			Coverage []coverage.Row `json:"coverage"`
		}{g, pj, rows})
	}
	if len(g.Changes) == 0 {
		fmt.Fprintf(e.stdout, "No changes: %s implements every requirement of the spec.\n", g.MainBranch)
	} else {
		if err := renderers["text"](e, g, graph.DrawOptions{}); err != nil {
			return err
		}
	}
	if planning != nil {
		fmt.Fprintln(e.stdout)
		planningText(e.stdout, planning)
	}
	fmt.Fprintln(e.stdout)
	return coverage.Text(e.stdout, rows)
}

// planningJSON is a model's planning with its totals, as plan --json
// shows it.
type planningJSON struct {
	*plan.Planning
	Tokens  usage.Tokens `json:"tokens"`
	CostUSD float64      `json:"costUsd"`
}

// planningText says how a model made the plan: the strategy that ran and
// why, the calls (repairs and failed attempts counted), the models that
// answered, and the tokens and cost of every call.
func planningText(w io.Writer, pl *plan.Planning) {
	var repairs, failed int
	for _, c := range pl.Calls {
		if c.Repair > 0 && c.Error == "" {
			repairs++
		}
		if c.Error != "" {
			failed++
		}
	}
	head := "Planner: " + pl.Strategy + ", " + english.Plural(len(pl.Calls), "model call")
	var extra []string
	if repairs > 0 {
		extra = append(extra, english.Plural(repairs, "repair"))
	}
	if failed > 0 {
		extra = append(extra, fmt.Sprintf("%d failed", failed))
	}
	if len(extra) > 0 {
		head += " (" + strings.Join(extra, ", ") + ")"
	}
	if models := pl.Models(); len(models) > 0 {
		head += " answered by " + english.List(models)
	}
	fmt.Fprintln(w, head)
	if pl.Reused {
		fmt.Fprintln(w, "  reused: the changes of the run's plan (.set/plan.json), made from the same set.cue and spec")
	}
	if pl.Reason != "" {
		fmt.Fprintln(w, "  "+pl.Reason)
	}
	t := pl.Tokens()
	tokens := fmt.Sprintf("  tokens: %s input, %s output", english.Tokens(t.Input), english.Tokens(t.Output))
	if t.CacheRead > 0 {
		tokens += ", " + english.Tokens(t.CacheRead) + " cache read"
	}
	if t.CacheWrite > 0 {
		tokens += ", " + english.Tokens(t.CacheWrite) + " cache write"
	}
	switch cost := pl.CostUSD(); {
	case cost >= 0.01:
		tokens += "; cost " + report.Cost(cost)
	case cost > 0: // a cent would round to $0.00
		tokens += fmt.Sprintf("; cost $%.4f", cost)
	}
	fmt.Fprintln(w, tokens)
}

// jsonErrors is e for command name whose stdout is one JSON document: an
// error is written there instead, as the diagnostic object apply --json
// writes; warnings stay on stderr, as e presents them, so that the
// document stays whole.
func jsonErrors(e *env, name string) *env {
	ui := newJSONUI(e.stdout, time.Now)
	je := *e
	je.diagnose = func(d diag.Diagnostic, root string) {
		if d.Severity == diag.Warning {
			e.present(name, diag.List{d}, root)
			return
		}
		ui.diagnostic(d, root)
	}
	return &je
}

// addStatuses gives every change of g its status in the project's run,
// as the projection of .set/events.jsonl says, and returns them: pending
// for a change the run does not know, or asked for other work (its Work
// differs), or says is on main (the plan names only work main lacks).
// Without a journal it leaves g as it is and returns nil.
func addStatuses(g *graph.Graph, p *plan.Plan, root string) (map[string]state.Status, error) {
	st, err := state.Read(rundir.New(root).Dir())
	if err != nil || st.LastSeq == 0 {
		return nil, err
	}
	out := map[string]state.Status{}
	for i, c := range g.Changes {
		s := state.Pending
		if sc := st.Changes[c.Name]; sc != nil && sc.Work == p.Work(c.Name) && sc.Status != state.Merged && sc.Status != state.Archived {
			s = sc.Status
		}
		g.Changes[i].Status = string(s)
		out[c.Name] = s
	}
	return out, nil
}

// renderers print a graph to stdout in one format; only dot and mermaid
// draw, and read the DrawOptions.
var renderers = map[string]func(e *env, g *graph.Graph, draw graph.DrawOptions) error{
	"text": func(e *env, g *graph.Graph, _ graph.DrawOptions) error {
		return graph.Text(e.stdout, g, graph.TextOptions{Color: terminalFor(e.stdout).color})
	},
	"dot":     func(e *env, g *graph.Graph, draw graph.DrawOptions) error { return graph.DOT(e.stdout, g, draw) },
	"mermaid": func(e *env, g *graph.Graph, draw graph.DrawOptions) error { return graph.Mermaid(e.stdout, g, draw) },
	"json":    func(e *env, g *graph.Graph, _ graph.DrawOptions) error { return graph.JSON(e.stdout, g) },
}

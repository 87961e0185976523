package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/orchestrator"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/state"
)

func planCommand() command {
	return command{
		name:    "plan",
		summary: "plan the spec into changes and show the execution graph",
		usage: `Usage: setctl plan [--out FILE] [--format text|dot|mermaid|json] [--detail] [--json] [--detailed-exitcode]

Plan loads set.cue and the spec, decomposes the spec into changes with the
configured planner strategy (or takes the explicit plan of set.cue),
validates the plan and prints the execution graph: for every change its
requirements, its verify stack, its integration stack, and the critical
path. Nothing is run.

The dot and mermaid drawings show a change as three nodes: its agent, its
verify stack and its integration into main, each stack listing its gates in
run order. --detail draws every step as its own node instead (dispatch,
each gate, the merge queue, the fast-forward of main, the archive).

With --out (or -out) the plan is saved as a versioned JSON file carrying a fingerprint
of its inputs (the configuration, every spec file and git HEAD).

When .set/ holds a run, the text shows after each change where the run
says it stands (pending, implementing, merged, archived, failed:…;
pending for a change the run does not know), and so does its "status" in
the JSON. --json is --format json.
An error is then a diagnostic object on stdout instead of the graph, as
apply --json writes it ({"@level": "error", "type": "diagnostic",
"diagnostic": {"severity", "summary", "detail"}}); warnings stay on
stderr.

Exit status: 0 on success, 1 on error; with --detailed-exitcode, 0 when
there is nothing to do (every change of this plan is merged), 1 on error,
2 when the plan has changes to run.

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
		e = jsonErrors(e)
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
	ws, err := loadWorkspace(e.dir)
	ws.printWarnings(e)
	if err != nil {
		return ws.report(e, c.name, err)
	}
	p, err := ws.makePlan(context.Background())
	if err != nil {
		return ws.report(e, c.name, err)
	}
	g, err := graph.Build(p, ws.cfg)
	if err != nil {
		return ws.report(e, c.name, err)
	}
	if *format == "json" || *format == "text" {
		if err := addStatuses(g, ws.root); err != nil {
			return e.errorf(c.name, "%v", err)
		}
	}
	if err := render(e, g, graph.DrawOptions{Detail: *detail}); err != nil {
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
	if *detailed {
		pending, err := orchestrator.Pending(ws.root, p)
		if err != nil {
			return e.errorf(c.name, "%v", err)
		}
		if pending > 0 {
			return exitPending
		}
	}
	return exitOK
}

// jsonErrors is e for a command whose stdout is one JSON document: an
// error is written there instead, as the diagnostic object apply --json
// writes; warnings stay on stderr, so that the document stays whole.
func jsonErrors(e *env) *env {
	ui := newJSONUI(e.stdout, time.Now)
	je := *e
	je.diagnose = func(severity, msg string) {
		if severity == "warning" {
			fmt.Fprintln(e.stderr, msg)
			return
		}
		ui.diagnose(severity, msg)
	}
	return &je
}

// addStatuses gives every change of g its status in the project's run,
// as the projection of .set/events.jsonl says (pending for a change the
// run does not know). Without a journal it leaves g as it is.
func addStatuses(g *graph.Graph, root string) error {
	st, err := state.Read(orchestrator.SetDir(root))
	if err != nil || st.LastSeq == 0 {
		return err
	}
	for i, c := range g.Changes {
		g.Changes[i].Status = string(state.Pending)
		if sc := st.Changes[c.Name]; sc != nil {
			g.Changes[i].Status = string(sc.Status)
		}
	}
	return nil
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

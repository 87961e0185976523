package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/set-engine/set/engine/config"
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
		usage: `Usage: setctl plan [--out FILE] [--format text|dot|mermaid|json|markdown] [--detail] [--json] [--detailed-exitcode]

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

With planner.strategy "openspec" the plan is the OpenSpec change folders
on main instead of a spec: every folder under openspec/changes/ (but
archive/) is one change, named after it, whose requirements are its delta
specs' ADDED, MODIFIED, REMOVED and RENAMED requirements (REQ-<CHANGE>-01
and on, titled by their names). A change waits for another when OpenSpec
could archive them in one order only (it MODIFIES, REMOVES or RENAMES a
requirement main lacks and the other ADDs), or when its .openspec.yaml
lists it under depends_on; the text says why after each change ("after").
A folder OpenSpec would refuse to validate or to archive in that order is
an error at its file and line. An archived folder is done: a fully
applied repository has no open folder and plans nothing.

Plan reads set.cue and the spec as they are on disk, committed or not,
and warns of those not committed on main as they are: setctl apply
refuses to run them until they are (see setctl help apply). The openspec
strategy reads the change folders as main's last commit holds them, and
warns of a folder on disk that differs.

The dot and mermaid drawings show a change as three nodes: its agent, its
verify stack and its integration into main, each stack listing its gates in
run order. --detail draws every step as its own node instead (dispatch,
each gate, the merge queue, the fast-forward of main, the archive).

With --out (or -out) the plan is saved as a versioned JSON file carrying a fingerprint
of its inputs (the configuration, every spec file, git HEAD and main's
living specs, and for the openspec strategy each open change folder on
main).

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

--format markdown writes what the text says as GitHub-flavoured
markdown, for a pull request's comment or a CI job's summary
($GITHUB_STEP_SUMMARY): the changes as a table (level, type, size,
agent, requirements, the changes each waits for), the gates of each,
the critical path, and every requirement's standing as a table. Its exit
status is the command's, so that
  setctl plan --detailed-exitcode --format markdown >> "$GITHUB_STEP_SUMMARY"
both fills the summary and says whether there is work to do.

Exit status: 0 on success, 1 on error; with --detailed-exitcode, 0 when
there is nothing to do (main implements the whole spec), 1 on error, 2
when the plan has changes to run. A usage error (an unknown flag, a bad
argument) exits 1 here, not 2 as in the other commands, with or without
--detailed-exitcode: a mistyped --detailed-exitcode never reads as changes
to run.

Examples:
  setctl plan
  setctl plan --out plan.json
  setctl plan --format dot | dot -Tsvg > plan.svg
  setctl plan --format mermaid > plan.mmd
  setctl plan --format dot --detail | dot -Tsvg > plan-detail.svg
  setctl plan --format json | jq '.changes[].name'
  setctl plan --json | jq -r '.changes[] | .name + " " + .status'
  setctl plan --detailed-exitcode --format markdown >> "$GITHUB_STEP_SUMMARY"
`,
		pendingExit: true,
		run:         runPlan,
	}
}

// planArgs are the arguments of one setctl plan, parsed.
type planArgs struct {
	// out is the file to save the plan to, as given; "" for none.
	out string
	// format is the view: text, json, dot, mermaid or markdown.
	format string
	// detail draws every step of a change (dot and mermaid).
	detail bool
	// detailed: exit 2 when the plan has changes.
	detailed bool
}

func runPlan(e *env, args []string) int {
	a, e, code, done := parsePlan(e, args)
	if done {
		return code
	}
	return runPlanWith(e, a)
}

// parsePlan parses the arguments of setctl plan. It returns the env the
// command runs with: one whose errors go to stdout as JSON when the view
// is JSON. When done, it has printed the usage or a usage error and code
// is the exit status.
func parsePlan(e *env, args []string) (a planArgs, _ *env, code int, done bool) {
	c := planCommand()
	fs := c.flagSet(e)
	fs.StringVar(&a.out, "out", "", "save the plan to `FILE` (JSON)")
	fs.StringVar(&a.format, "format", "text", "output `format`: text, dot, mermaid, json or markdown")
	asJSON := fs.Bool("json", false, "same as --format json")
	fs.BoolVar(&a.detail, "detail", false, "draw every step of a change as its own node (dot and mermaid)")
	fs.BoolVar(&a.detailed, "detailed-exitcode", false, "exit 2 when the plan has changes to run, 0 when it has none")
	if code, done := c.parse(e, fs, args); done {
		return a, e, code, true
	}
	if *asJSON || a.format == "json" {
		e = jsonErrors(e, c.name)
	}
	if *asJSON {
		if fs.Changed("format") && a.format != "json" {
			return a, e, c.usageError(e, "--json and --format %s disagree", a.format), true
		}
		a.format = "json"
	}
	if _, ok := planViews[a.format]; !ok {
		return a, e, c.usageError(e, "unknown format %q (want text, dot, mermaid, json or markdown)", a.format), true
	}
	if a.detail && a.format != "dot" && a.format != "mermaid" {
		return a, e, c.usageError(e, "--detail applies to --format dot and mermaid, not %s", a.format), true
	}
	return a, e, exitOK, false
}

// runPlanWith runs setctl plan with its parsed arguments a.
func runPlanWith(e *env, a planArgs) int {
	const name = "plan"
	pr, ds := project.Prepare(context.Background(), e.dir, project.Options{})
	if code := e.present(name, ds, pr.Root); code != exitOK {
		return code
	}
	ws, p, g := workspaceOf(pr.Project), pr.Plan, pr.Graph
	// Main's living specs are what the plan is compared with: a main
	// branch the repository lacks is refused as vet and apply refuse it,
	// not read as empty. A directory that is no repository yet, or one
	// without a commit, plans from nothing (CheckMainBranch warns there).
	d, ok := project.CheckMainBranch(context.Background(), ws.root, ws.cfg)
	if !ok && d.Severity == diag.Error {
		return e.present(name, diag.List{d}, ws.root)
	}
	// plan moves nothing, so it plans the inputs as they are on disk; it
	// warns of those setctl apply will refuse until they are committed.
	if ok {
		if d, ok, err := project.CheckInputsCommitted(context.Background(), pr.Project); err != nil {
			return e.errorf(name, "%v", err)
		} else if !ok {
			d.Severity = diag.Warning
			e.present(name, diag.List{d}, ws.root)
		}
	}
	// standing is where every requirement stands; it gives every change
	// of g its status in the project's run.
	standing := func() ([]coverage.Row, error) {
		statuses, err := addStatuses(g, p, ws.root)
		if err != nil {
			return nil, err
		}
		return coverage.Of(context.Background(), ws.root, ws.cfg, p, statuses)
	}
	view := planViews[a.format](e, graph.DrawOptions{Detail: a.detail})
	if err := view.show(g, p, standing); err != nil {
		return e.errorf(name, "%v", err)
	}
	if a.out != "" {
		path := a.out
		if !filepath.IsAbs(path) {
			path = filepath.Join(e.dir, path)
		}
		if err := plan.Write(path, p); err != nil {
			return e.errorf(name, "%v", err)
		}
		fmt.Fprintf(e.stderr, "Saved the plan to %s (%s, fingerprint %s).\n", a.out, english.Plural(len(p.Changes), "change"), p.Fingerprint.Short())
	}
	if a.detailed && len(p.Changes) > 0 {
		return exitPending
	}
	return exitOK
}

// planView is how setctl plan shows a plan: as text (planText), as JSON
// (planJSON), or drawn as a DOT or Mermaid graph (planDrawing).
type planView interface {
	// show shows plan p, of graph g: its p.Planning is how a model made
	// it (nil for the static strategy and explicit plans), its
	// p.Learnings the adopted learnings it used. standing gives where
	// every requirement stands, and the statuses of g's changes in the
	// project's run; a view that shows neither does not call it.
	show(g *graph.Graph, p *plan.Plan, standing func() ([]coverage.Row, error)) error
}

// planViews are the views of setctl plan by --format, each on e's
// stdout; only the drawings read draw.
var planViews = map[string]func(e *env, draw graph.DrawOptions) planView{
	"text":     func(e *env, _ graph.DrawOptions) planView { return planText{e} },
	"json":     func(e *env, _ graph.DrawOptions) planView { return planJSON{e} },
	"dot":      func(e *env, draw graph.DrawOptions) planView { return planDrawing{e, graph.DOT, draw} },
	"mermaid":  func(e *env, draw graph.DrawOptions) planView { return planDrawing{e, graph.Mermaid, draw} },
	"markdown": func(e *env, _ graph.DrawOptions) planView { return planMarkdown{e} },
}

// planText shows the execution graph as text, how a model planned it,
// the learnings it used, and where every requirement stands. A plan
// without changes says so instead of drawing an empty graph.
type planText struct{ e *env }

func (v planText) show(g *graph.Graph, p *plan.Plan, standing func() ([]coverage.Row, error)) error {
	rows, err := standing()
	if err != nil {
		return err
	}
	out := v.e.stdout
	if len(g.Changes) == 0 {
		fmt.Fprintf(out, "No changes: %s.\n", noChangesReason(g.Strategy, g.MainBranch))
	} else if err := graph.Text(out, g, graph.TextOptions{Color: terminalFor(out, v.e.getenv).color}); err != nil {
		return err
	}
	if p.Planning != nil {
		fmt.Fprintln(out)
		planningText(out, p.Planning)
	}
	if len(p.Learnings) > 0 {
		fmt.Fprintln(out)
		learningsText(out, p.Learnings)
	}
	fmt.Fprintln(out)
	return coverage.Text(out, rows)
}

// noChangesReason says why a plan of strategy has no change, main written
// as main: main implements the whole spec, or, for the openspec strategy,
// has no open change folder left to implement. plan and apply both say it.
func noChangesReason(strategy, main string) string {
	if strategy == config.StrategyOpenSpec {
		return main + " has no open change folder under openspec/changes/"
	}
	return main + " implements every requirement of the spec"
}

// planMarkdown shows what planText shows as GitHub-flavoured markdown:
// the graph (graph.Markdown), how a model planned it (as planText says
// it, in a code block) and where every requirement stands
// (coverage.Markdown). A plan without changes says so under its heading.
type planMarkdown struct{ e *env }

func (v planMarkdown) show(g *graph.Graph, p *plan.Plan, standing func() ([]coverage.Row, error)) error {
	rows, err := standing()
	if err != nil {
		return err
	}
	var b strings.Builder
	if err := graph.Markdown(&b, g); err != nil {
		return err
	}
	if len(g.Changes) == 0 {
		fmt.Fprintf(&b, "\nNo changes: %s.\n", noChangesReason(g.Strategy, "`"+g.MainBranch+"`"))
	}
	if p.Planning != nil || len(p.Learnings) > 0 {
		b.WriteString("\n```text\n")
		if p.Planning != nil {
			planningText(&b, p.Planning)
		}
		if len(p.Learnings) > 0 {
			learningsText(&b, p.Learnings)
		}
		b.WriteString("```\n")
	}
	b.WriteString("\n")
	if err := coverage.Markdown(&b, rows); err != nil {
		return err
	}
	_, err = io.WriteString(v.e.stdout, b.String())
	return err
}

// planJSON shows the plan as one JSON document: the graph's, with the
// planning as "planning", the names of the learnings it used as
// "learnings" and where every requirement stands as "coverage".
type planJSON struct{ e *env }

func (v planJSON) show(g *graph.Graph, p *plan.Plan, standing func() ([]coverage.Row, error)) error {
	rows, err := standing()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(v.e.stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	var pj *planningJSON
	if pl := p.Planning; pl != nil {
		pj = &planningJSON{pl, pl.Tokens(), pl.CostUSD()}
	}
	return enc.Encode(struct {
		*graph.Graph
		Planning  *planningJSON  `json:"planning,omitempty"`
		Learnings []string       `json:"learnings,omitempty"`
		Coverage  []coverage.Row `json:"coverage"`
	}{g, pj, p.Learnings, rows})
}

// planDrawing draws the execution graph (as DOT or Mermaid), alone.
type planDrawing struct {
	e    *env
	draw func(w io.Writer, g *graph.Graph, opts graph.DrawOptions) error
	opts graph.DrawOptions
}

func (v planDrawing) show(g *graph.Graph, _ *plan.Plan, _ func() ([]coverage.Row, error)) error {
	return v.draw(v.e.stdout, g, v.opts)
}

// planningJSON is a model's planning with its totals, as plan --json
// shows it.
type planningJSON struct {
	*plan.Planning
	Tokens  usage.Tokens `json:"tokens"`
	CostUSD float64      `json:"costUsd"`
}

// learningsText names the adopted learnings a plan used (plan.Used): those
// its model planner was given, and the planning learnings whose
// serialise globs keep its changes apart.
func learningsText(w io.Writer, names []string) {
	fmt.Fprintf(w, "Learnings: %s\n", strings.Join(names, ", "))
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
		s := statusInRun(st, p, c.Name)
		g.Changes[i].Status = string(s)
		out[c.Name] = s
	}
	return out, nil
}

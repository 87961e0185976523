// Package coverage tells, for every requirement of a project, whether main
// implements it and where: the change and the commit that put it on main
// and the tests that name it; and for a requirement main does not
// implement, why not. It reads main (its living specs through the plan's
// standings, its Set-Change commits and its test files), never .set/: a
// run's statuses only explain why pending work is still pending.
package coverage

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/gate"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/markdown"
	"github.com/set-engine/set/engine/merge"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/spec"
	"github.com/set-engine/set/engine/state"
)

// Row is where one requirement stands.
type Row struct {
	ID     string      `json:"id"`
	Title  string      `json:"title"`
	Status spec.Status `json:"status"`
	// Capability is its living spec, openspec/specs/<capability>/spec.md.
	Capability string `json:"capability"`
	// Change is the change whose commit on main implemented it (when
	// implemented), or the change the plan gives it (when pending).
	Change string `json:"change,omitempty"`
	// Commit is main's commit of the change that implemented it.
	Commit string `json:"commit,omitempty"`
	// Tests are the places ("path:line") in main's test files that name
	// it.
	Tests []string `json:"tests,omitempty"`
	// Why says why a requirement main does not implement is not
	// implemented yet; "" for an implemented one.
	Why string `json:"why,omitempty"`
	// Uncovered is set when the change of a requirement main does not
	// implement failed for good, or was blocked by one that did: the run
	// that ends so leaves it without a change at work.
	Uncovered bool `json:"uncovered,omitempty"`
}

// Input is what Rows is made of.
type Input struct {
	// Plan is the plan of the spec against main now: its requirements,
	// their standings, and the changes and deferrals of pending ones.
	Plan *plan.Plan
	// Landed are the changes whose commit is on main, newest first.
	Landed []merge.Landed
	// Tests maps a requirement ID to the places main's tests name it.
	Tests map[string][]string
	// Statuses, when a run is known, are where its changes stand.
	Statuses map[string]state.Status
}

// Rows gives every requirement of the plan its Row, in the plan's order
// (the spec's, then the removed ones). An implemented requirement is
// credited to the newest change on main whose commit lists it.
func Rows(in Input) []Row {
	p := in.Plan
	changeOf := map[string]string{}
	for _, c := range p.Changes {
		for _, id := range c.Requirements {
			changeOf[id] = c.Name
		}
	}
	deferred := map[string]string{}
	for _, d := range p.Deferred {
		deferred[d.Requirement] = d.Reason
	}
	rows := make([]Row, 0, len(p.Requirements))
	for _, r := range p.Requirements {
		st := p.Standing(r.ID)
		row := Row{ID: r.ID, Title: r.Title, Status: st.Status, Capability: st.Capability, Tests: in.Tests[r.ID]}
		if st.Status == spec.Implemented {
			for _, l := range in.Landed {
				if slices.Contains(l.Requirements, r.ID) {
					row.Change, row.Commit = l.Change, l.Commit
					break
				}
			}
			rows = append(rows, row)
			continue
		}
		row.Change = changeOf[r.ID]
		if st.Status == spec.Changed {
			row.Why = "its " + english.List(st.Differs) + " changed; "
		}
		switch s := in.Statuses[row.Change]; {
		case deferred[r.ID] != "":
			row.Why += "deferred: " + deferred[r.ID]
		case row.Change == "":
			row.Why += "no change of the plan covers it"
		case s == "" || s == state.Pending:
			row.Why += "planned in " + row.Change
		case s == state.Archived || s == state.Merged:
			row.Why += row.Change + " is " + string(s) + ", but main's living specs do not record it (see its ARCHIVED event)"
		default:
			row.Why += row.Change + " is " + string(s)
			row.Uncovered = s.Failed() || s == state.DepBlocked
		}
		rows = append(rows, row)
	}
	return rows
}

// Of reads main and returns the Rows of p (see Rows): the changes landed
// on the project's main branch and the places its tests name each
// requirement (cfg.TestPatterns, its test runners' configuration there and
// cfg.InlineTests). statuses may be nil. Outside
// a repository, or without the main branch, nothing is implemented
// anywhere.
func Of(ctx context.Context, root string, cfg *config.Project, p *plan.Plan, statuses map[string]state.Status) ([]Row, error) {
	in, err := Read(ctx, root, cfg, p)
	if err != nil {
		return nil, err
	}
	in.Statuses = statuses
	return Rows(in), nil
}

// Read is the Input of Of without statuses: what main says of p's
// requirements. It depends only on p and main's commit, so a caller that
// shows the rows again and again (the dashboard) reads it once per
// commit and gives each showing the run's statuses.
func Read(ctx context.Context, root string, cfg *config.Project, p *plan.Plan) (Input, error) {
	in := Input{Plan: p}
	if !git.InRepository(ctx, root) || !git.BranchExists(ctx, root, cfg.MainBranch) {
		return in, nil
	}
	main := "refs/heads/" + cfg.MainBranch
	var err error
	if in.Landed, err = merge.LandedOn(ctx, root, main); err != nil {
		return Input{}, err
	}
	ids := make([]string, len(p.Requirements))
	for i, r := range p.Requirements {
		ids[i] = r.ID
	}
	if in.Tests, err = gate.TestsNaming(ctx, root, main, cfg, ids); err != nil {
		return Input{}, err
	}
	return in, nil
}

// Text writes the rows as a table under a heading that counts them by
// status: ID, status, then for an implemented requirement the change
// and the commit (12 digits) that implemented it and the tests that name
// it, for any other why it is not implemented.
func Text(w io.Writer, rows []Row) error {
	if _, err := fmt.Fprintf(w, "Requirements: %s\n", counts(rows)); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		if _, err := fmt.Fprintf(tw, "  %s\t%s\t%s\n", r.ID, r.Status, detail(r)); err != nil {
			return err
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if note := uncoveredNote(rows); note != "" {
		_, err := fmt.Fprintln(w, note)
		return err
	}
	return nil
}

// Markdown writes what Text writes as GitHub-flavoured markdown, for a
// CI job's summary: a heading that counts the rows by status, then a
// table of requirement, title, status and detail, every cell escaped.
func Markdown(w io.Writer, rows []Row) error {
	var b strings.Builder
	fmt.Fprintf(&b, "#### Requirements: %s\n", counts(rows))
	if len(rows) > 0 {
		b.WriteString("\n| Requirement | Title | Status | |\n|---|---|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", markdown.Escape(r.ID), markdown.Escape(r.Title), r.Status, markdown.Escape(detail(r)))
		}
	}
	if note := uncoveredNote(rows); note != "" {
		b.WriteString("\n" + markdown.Escape(note) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// counts says how many rows there are of each status ("2 implemented,
// 1 new"), or "none".
func counts(rows []Row) string {
	n := map[spec.Status]int{}
	for _, r := range rows {
		n[r.Status]++
	}
	var parts []string
	for _, s := range []spec.Status{spec.Implemented, spec.New, spec.Changed, spec.Removed} {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Detail is where r stands in words, as Text shows it beside its
// status.
func (r Row) Detail() string { return detail(r) }

// UncoveredNote is the note Text ends with when some rows are
// uncovered; "" when none is.
func UncoveredNote(rows []Row) string { return uncoveredNote(rows) }

// detail is where r stands in words: for an implemented requirement the
// change and commit that implemented it and the tests that name it, for
// any other its Why.
func detail(r Row) string {
	if r.Status != spec.Implemented {
		return r.Why
	}
	d := "not credited to a change on main"
	if r.Change != "" {
		d = "by " + r.Change + " in " + shortCommit(r.Commit)
	}
	if len(r.Tests) == 0 {
		return d + "; no test names it"
	}
	return d + "; tested in " + preview(r.Tests, 3)
}

// uncoveredNote names the requirements whose change failed for good and
// what a new run does about them; "" when there are none.
func uncoveredNote(rows []Row) string {
	var uncovered []string
	changes := map[string]bool{}
	for _, r := range rows {
		if r.Uncovered {
			uncovered = append(uncovered, r.ID)
			changes[r.Change] = true
		}
	}
	if len(uncovered) == 0 {
		return ""
	}
	whose, them := "whose change", "it"
	if len(changes) > 1 {
		whose = "whose changes"
	}
	if len(uncovered) > 1 {
		them = "them"
	}
	return fmt.Sprintf("Uncovered: %s, %s failed for good. A new `setctl apply` retries %s; with planner.replan: \"auto\" a run asks the planner for new changes.",
		english.List(uncovered), whose, them)
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// preview joins the first n items, saying how many more there are.
func preview(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

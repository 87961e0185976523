// Package planner makes a plan's changes with a model: the single,
// three-phase and auto planner strategies (plan.Modeler). It asks the
// plan role through engine/llm, with prompts rendered from the project's
// templates (engine/plan/prompt).
//
// Invariants:
//   - only the requirements asked for are planned (Changes' cover); every
//     answer is checked against the schema's #PlannedChanges (Options.Check),
//     then by plan.Validate beside the existing changes, and a rejected
//     answer is sent back with its errors at most planner.repairs times per
//     call before planning fails showing the last errors;
//   - every model call, failed attempts included, is recorded in the
//     returned plan.Planning, also when planning fails;
//   - the changes returned are valid for plan.Validate alongside the
//     existing ones: names free, dependencies known, no cycle, every
//     requirement of cover in exactly one change, limits kept.
package planner

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/llm"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/plan/prompt"
	"github.com/set-engine/set/engine/spec"
)

// Options configure a Planner.
type Options struct {
	// Project is the project's name; Conventions its profile's.
	Project     string
	Conventions []string
	// Learnings are the adopted learnings the planner is given
	// (config.Project.PlannerLearnings): a convention's text joins
	// Conventions, a planning learning is a planning rule named
	// "learning NAME".
	Learnings []config.NamedLearning
	// Planner is the project's planner configuration: its strategy,
	// limits, rules and prompts.
	Planner config.Planner
	// LLM reaches the plan role's models (llm.ForProject); the planner
	// sets OnCall to record each call.
	LLM llm.Config
	// Files are main's tree, bounded (see Files).
	Files prompt.Files
	// Check checks an answer against the schema's #PlannedChanges
	// (load.Checker) and returns its errors.
	Check func(answer []byte) []string
}

// Planner asks the plan role's model for changes, as a config.Planner
// configures it.
type Planner struct {
	opts      Options
	templates *prompt.Templates
}

var _ plan.Modeler = (*Planner)(nil)

// New returns a planner. Its prompt templates must parse (decode has
// checked them).
func New(opts Options) (*Planner, error) {
	t, errs := prompt.Parse(opts.Planner.Prompts)
	if len(errs) > 0 {
		return nil, fmt.Errorf("planner.prompts.%s: %w", errs[0].Name, errs[0])
	}
	return &Planner{opts: opts, templates: t}, nil
}

// Steps of the strategies, as plan.PlannerCall records them.
const (
	stepSingle = "single"
	stepBrief  = "brief"
	stepDomain = "domain "
	stepMerge  = "merge"
)

// Changes plans the requirements cover of p with the configured strategy
// (auto choosing single or three-phase by Estimate); see plan.Modeler.
// existing are changes planned or merged already: the new changes do not
// take their names and may depend on them (a replan passes the run's
// changes, and the IDs no merged change covered).
func (pl *Planner) Changes(ctx context.Context, p *plan.Plan, cover []string, existing []plan.Change) ([]plan.Change, *plan.Planning, error) {
	r := pl.newRun(p, cover, existing)
	strategy := pl.opts.Planner.Strategy
	if strategy == config.StrategyAuto {
		tokens, err := r.estimate()
		if err != nil {
			return nil, r.planning, err
		}
		limit := pl.opts.Planner.SingleCallMaxInputTokens
		if tokens <= limit {
			strategy = config.StrategySingle
			r.planning.Reason = fmt.Sprintf("auto: the single call's input is about %d tokens, within planner.singleCallMaxInputTokens (%d)", tokens, limit)
		} else {
			strategy = config.StrategyThreePhase
			r.planning.Reason = fmt.Sprintf("auto: the single call's input is about %d tokens, more than planner.singleCallMaxInputTokens (%d)", tokens, limit)
		}
	}
	r.planning.Strategy = strategy
	var changes []plan.Change
	var err error
	switch strategy {
	case config.StrategySingle:
		changes, err = r.single(ctx)
	case config.StrategyThreePhase:
		changes, err = r.threePhase(ctx)
	default:
		err = fmt.Errorf("planner strategy %q does not ask a model", strategy)
	}
	r.sortCalls()
	if err != nil {
		return nil, r.planning, err
	}
	return finish(changes, p), r.planning, nil
}

// run is one Changes call (orchestrator.run is one Apply, another thing).
type run struct {
	pl       *Planner
	p        *plan.Plan
	cover    []prompt.Requirement
	existing []plan.Change
	base     prompt.Data
	// domains are the domains of cover, in order of first appearance.
	domains []prompt.DomainRequirements

	mu       sync.Mutex
	planning *plan.Planning
}

func (pl *Planner) newRun(p *plan.Plan, cover []string, existing []plan.Change) *run {
	r := &run{pl: pl, p: p, existing: existing, planning: &plan.Planning{Calls: []plan.PlannerCall{}}}
	for _, id := range cover {
		req, _ := p.Requirement(id)
		r.cover = append(r.cover, promptRequirement(req, p.Standing(id)))
	}
	for _, req := range r.cover {
		i := slices.IndexFunc(r.domains, func(d prompt.DomainRequirements) bool { return d.Name == req.Domain })
		if i < 0 {
			r.domains = append(r.domains, prompt.DomainRequirements{Name: req.Domain})
			i = len(r.domains) - 1
		}
		r.domains[i].Requirements = append(r.domains[i].Requirements, req)
	}
	var rules []prompt.Rule
	for _, name := range slices.Sorted(maps.Keys(pl.opts.Planner.Rules)) {
		if text := strings.TrimSpace(pl.opts.Planner.Rules[name]); text != "" {
			rules = append(rules, prompt.Rule{Name: name, Text: text})
		}
	}
	conventions := slices.Clone(pl.opts.Conventions)
	for _, l := range pl.opts.Learnings {
		switch l.Kind {
		case config.LearningConvention:
			conventions = append(conventions, plannerConvention(l))
		case config.LearningPlanning:
			rules = append(rules, prompt.Rule{Name: "learning " + l.Name, Text: l.Text})
		}
	}
	var shown []prompt.Change
	for _, c := range existing {
		shown = append(shown, promptChange(c))
	}
	r.base = prompt.Data{
		Project:                  pl.opts.Project,
		Requirements:             r.cover,
		Domains:                  r.domains,
		Conventions:              conventions,
		Rules:                    rules,
		Files:                    pl.opts.Files,
		MaxRequirementsPerChange: pl.opts.Planner.MaxRequirementsPerChange,
		Types:                    plan.Types,
		Existing:                 shown,
	}
	return r
}

// plannerConvention is a convention learning as the planner is given it,
// among the conventions "which every agent is given": its text, and the
// changes it is only for when its types or paths narrow them
// (config.Project.ConventionsFor), so that the planner does not take it
// for every change's.
func plannerConvention(l config.NamedLearning) string {
	if len(l.Types) == 0 && len(l.Paths) == 0 {
		return l.Text
	}
	whom := "changes"
	if len(l.Types) > 0 {
		whom = english.List(l.Types) + " changes"
	}
	if len(l.Paths) > 0 {
		whom += " that may touch " + strings.Join(l.Paths, " or ")
	}
	return l.Text + " (only for " + whom + ")"
}

// Estimate is the estimated input tokens of a call: one per 4 bytes of
// its instructions, prompt and answer schema.
func Estimate(system, prompt string, schema []byte) int {
	return (len(system) + len(prompt) + len(schema) + 3) / 4
}

// estimate is the single call's estimated input.
func (r *run) estimate() (int, error) {
	system, err := r.pl.templates.Render(prompt.System, r.base)
	if err != nil {
		return 0, err
	}
	text, err := r.pl.templates.Render(prompt.Single, r.base)
	if err != nil {
		return 0, err
	}
	return Estimate(system, text, changesSchema(r.base.Requirements)), nil
}

// single asks for the whole plan in one call.
func (r *run) single(ctx context.Context) ([]plan.Change, error) {
	return askChanges(ctx, r, stepSingle, prompt.Single, r.base, r.base.Requirements)
}

// askChanges asks step for changes covering exactly reqs, with the
// template tmpl executed on data.
func askChanges(ctx context.Context, r *run, step, tmpl string, data prompt.Data, reqs []prompt.Requirement) ([]plan.Change, error) {
	ids := make([]string, len(reqs))
	for i, req := range reqs {
		ids[i] = req.ID
	}
	return ask(ctx, r, step, tmpl, data, changesSchema(reqs), func(answer string) ([]plan.Change, []string) {
		return r.check(answer, ids)
	})
}

// ask asks the plan role's model the question of template tmpl executed
// on data, with schema as its answer's, and parses the answer with parse;
// an answer parse rejects goes back to the model with its errors (the
// repair template after the prompt) up to planner.repairs times.
func ask[T any](ctx context.Context, r *run, step, tmpl string, data prompt.Data, schema json.RawMessage, parse func(answer string) (T, []string)) (T, error) {
	var zero T
	system, err := r.pl.templates.Render(prompt.System, data)
	if err != nil {
		return zero, err
	}
	question, err := r.pl.templates.Render(tmpl, data)
	if err != nil {
		return zero, err
	}
	text := question
	for repair := 0; ; repair++ {
		cfg := r.pl.opts.LLM
		cfg.OnCall = func(c llm.Call) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.planning.Calls = append(r.planning.Calls, plan.PlannerCall{Step: step, Repair: repair, LLMCallData: c.Event()})
			return nil
		}
		ans, err := llm.New(cfg).Ask(ctx, llm.Request{Role: llm.Plan, System: system, Prompt: text, Schema: schema})
		if err != nil {
			return zero, fmt.Errorf("planning (%s call): %w", step, err)
		}
		v, errs := parse(ans.Text)
		if len(errs) == 0 {
			return v, nil
		}
		if repair == r.pl.opts.Planner.Repairs {
			return zero, &RejectedError{Step: step, Repairs: repair, Errors: errs}
		}
		fix, err := r.pl.templates.Render(prompt.Repair, prompt.RepairData{Answer: ans.Text, Errors: errs})
		if err != nil {
			return zero, err
		}
		text = question + fix
	}
}

// RejectedError is a call whose answers stayed invalid after its repairs.
type RejectedError struct {
	// Step is the call: "single", "brief", "domain <name>" or "merge".
	Step string
	// Repairs is how many times the answer went back with its errors.
	Repairs int
	// Errors are the last answer's errors.
	Errors []string
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("planning failed: the plan role's answer to the %s call was still invalid after %s (planner.repairs); its errors:\n  %s",
		e.Step, repairs(e.Repairs), strings.Join(e.Errors, "\n  "))
}

func repairs(n int) string {
	if n == 1 {
		return "1 repair"
	}
	return fmt.Sprintf("%d repairs", n)
}

// check parses a changes answer and returns its errors: the schema's
// (#PlannedChanges) first, and only when there are none, the plan's
// rules for changes covering exactly cover beside the existing changes.
func (r *run) check(answer string, cover []string) ([]plan.Change, []string) {
	if errs := r.pl.opts.Check([]byte(answer)); len(errs) > 0 {
		return nil, errs
	}
	var doc struct {
		Changes []plan.Change `json:"changes"`
	}
	if err := json.Unmarshal([]byte(answer), &doc); err != nil {
		return nil, []string{fmt.Sprintf("the answer is not a list of changes: %v", err)}
	}
	changes := doc.Changes
	inCover := map[string]bool{}
	for _, id := range cover {
		inCover[id] = true
	}
	taken := map[string]bool{}
	for _, c := range r.existing {
		taken[c.Name] = true
	}
	var errs []string
	for _, c := range changes {
		if len(c.Requirements) == 0 {
			errs = append(errs, fmt.Sprintf("change %q covers no requirement: every change implements at least one", c.Name))
		}
		if taken[c.Name] {
			errs = append(errs, fmt.Sprintf("change name %q is taken by a change planned or merged already", c.Name))
		}
		for _, id := range c.Requirements {
			if _, known := r.p.Requirement(id); known && !inCover[id] {
				errs = append(errs, fmt.Sprintf("change %q covers %s, which is not one of the requirements to plan here", c.Name, id))
			}
		}
	}
	// Validate sees the existing changes beside the new ones (without
	// their requirements: they cover what is not planned here), and only
	// cover as requirements to plan.
	v := &plan.Plan{Requirements: r.p.Requirements, Changes: slices.Clone(changes)}
	for _, req := range r.p.Requirements {
		st := r.p.Standing(req.ID)
		if !inCover[req.ID] {
			st.Status = spec.Implemented
		}
		v.Standings = append(v.Standings, st)
	}
	for _, c := range r.existing {
		if !slices.ContainsFunc(changes, func(n plan.Change) bool { return n.Name == c.Name }) {
			v.Changes = append(v.Changes, plan.Change{Name: c.Name, DependsOn: c.DependsOn})
		}
	}
	if err := plan.Validate(v, plan.Limits{MaxRequirementsPerChange: r.pl.opts.Planner.MaxRequirementsPerChange}); err != nil {
		inv, ok := err.(*plan.InvalidError)
		if !ok {
			return nil, append(errs, err.Error())
		}
		for _, pr := range inv.Problems {
			errs = append(errs, pr.String())
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return changes, nil
}

// sortCalls puts the calls in the order of their steps (single or brief,
// the domains in order, merge), then of their repairs; the attempts of
// one ask stay in the order they ended.
func (r *run) sortCalls() {
	rank := func(step string) int {
		switch {
		case step == stepSingle || step == stepBrief:
			return 0
		case step == stepMerge:
			return len(r.domains) + 1
		}
		return 1 + slices.IndexFunc(r.domains, func(d prompt.DomainRequirements) bool { return stepDomain+d.Name == step })
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	slices.SortStableFunc(r.planning.Calls, func(a, b plan.PlannerCall) int {
		return cmp.Or(cmp.Compare(rank(a.Step), rank(b.Step)), cmp.Compare(a.Repair, b.Repair))
	})
}

// finish gives the changes their domain (their requirements' when they
// share one) and sorted, duplicate-free dependencies and scopes, as the
// plan file keeps them.
func finish(changes []plan.Change, p *plan.Plan) []plan.Change {
	out := make([]plan.Change, len(changes))
	for i, c := range changes {
		domains := map[string]bool{}
		for _, id := range c.Requirements {
			req, _ := p.Requirement(id)
			domains[req.Domain] = true
		}
		c.Domain = ""
		if len(domains) == 1 {
			c.Domain = slices.Collect(maps.Keys(domains))[0]
		}
		c.DependsOn = slices.Compact(slices.Sorted(slices.Values(c.DependsOn)))
		if c.DependsOn == nil {
			c.DependsOn = []string{}
		}
		if len(c.Scope) == 0 {
			c.Scope = nil
		}
		out[i] = c
	}
	return out
}

func promptRequirement(r spec.Requirement, st spec.Standing) prompt.Requirement {
	out := prompt.Requirement{
		ID: r.ID, Title: r.Title, Domain: r.Domain, Status: string(st.Status), Differs: st.Differs,
		Text: r.Text, DependsOn: r.DependsOn,
	}
	for _, s := range r.Scenarios {
		out.Scenarios = append(out.Scenarios, prompt.Scenario{Name: s.Name, Given: s.Given, When: s.When, Then: s.Then})
	}
	return out
}

func promptChange(c plan.Change) prompt.Change {
	return prompt.Change{
		Name: c.Name, Type: c.Type, Size: c.Size, Description: c.Description,
		Requirements: c.Requirements, DependsOn: c.DependsOn, Scope: c.Scope,
	}
}

// MaxFiles is how many paths of main's tree the prompts list at most.
const MaxFiles = 1000

// FilesOf is paths as the prompts list them: sorted, the first MaxFiles,
// and how many more there are.
func FilesOf(paths []string) prompt.Files {
	sorted := slices.Sorted(slices.Values(paths))
	if len(sorted) <= MaxFiles {
		return prompt.Files{Paths: sorted}
	}
	return prompt.Files{Paths: sorted[:MaxFiles], Omitted: len(sorted) - MaxFiles}
}

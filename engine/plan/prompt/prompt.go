// Package prompt holds the model planner's prompt templates: the data each
// is executed with, checking them, and rendering them. The templates are
// Go text/template strings that set.cue configures (planner.prompts; the
// stdlib's are in stdlib/prompts.cue, which documents this data for
// template writers). A template that Parse accepts parses and executes
// on Sample data, so that a misspelled field is a configuration error,
// not a failed plan.
package prompt

import (
	"errors"
	"fmt"
	"strings"
	"text/template"

	"github.com/set-engine/set/engine/config"
)

// Names of the templates, as planner.prompts names their fields.
const (
	System = "system"
	Single = "single"
	Brief  = "brief"
	Domain = "domain"
	Merge  = "merge"
	Repair = "repair"
)

// Data is what the system, single, brief, domain and merge templates are
// executed with.
type Data struct {
	// Project is the project's name.
	Project string
	// Requirements are the requirements the call plans, in spec order: all
	// those to plan, or a domain call's domain's.
	Requirements []Requirement
	// Domains are the spec domains of every requirement to plan, in order
	// of first appearance, each with its requirements.
	Domains []DomainRequirements
	// Domain is the domain a domain call plans; "" for the other calls.
	Domain string
	// Conventions are the profile's conventions, handed to every agent.
	Conventions []string
	// Rules are the planning rules (planner.rules), by name.
	Rules []Rule
	// Files are the paths of the files in main's tree.
	Files Files
	// MaxRequirementsPerChange is planner.maxRequirementsPerChange.
	MaxRequirementsPerChange int
	// Types are the change types a change may have.
	Types []string
	// Existing are changes planned or merged already: their names are
	// taken, and a new change may depend on them.
	Existing []Change
	// Brief is the answer of three-phase's brief call, for its domain and
	// merge calls; empty for the others.
	Brief BriefAnswer
	// Drafts are the domain calls' changes, for the merge call.
	Drafts []Draft
}

// Requirement is a requirement to plan, as the prompts show it (not a
// spec.Requirement, for the reason Change gives).
type Requirement struct {
	ID, Title, Domain string
	// Status is what the plan does with it: "new" (implement it),
	// "changed" (change the implementation to what it says now) or
	// "removed" (the spec no longer has it: take it out).
	Status string
	// Differs lists what a changed requirement changed: "title", "text",
	// "scenarios".
	Differs []string
	Text    string
	// Scenarios are its WHEN/THEN scenarios.
	Scenarios []Scenario
	// DependsOn are the requirement IDs it depends on.
	DependsOn []string
}

// Scenario is one scenario of a requirement, as the prompts show it (not
// a spec.Scenario, for the reason Change gives).
type Scenario struct {
	Name              string
	Given, When, Then []string
}

// DomainRequirements is a spec domain with its requirements to plan.
type DomainRequirements struct {
	Name         string
	Requirements []Requirement
}

// Rule is a planning rule, as the prompts show it (config's planner
// rules; not a judge.Rule, which is a forbidden pattern of the code).
type Rule struct {
	Name, Text string
}

// Files lists paths of main's tree, bounded.
type Files struct {
	// Paths are the listed paths, sorted.
	Paths []string
	// Omitted is how many paths beyond Paths the tree holds.
	Omitted int
}

// Change is a change as the prompts show it. It is its own type, not a
// config.Change, because the planner's templates are the user's: they
// see these fields, under these names, whatever config.Change becomes.
type Change struct {
	Name, Type, Size, Description  string
	Requirements, DependsOn, Scope []string
}

// BriefAnswer is what the brief call answers.
type BriefAnswer struct {
	// Overview is the architecture in a few sentences.
	Overview string `json:"overview"`
	// Decisions are the decisions that cross domains.
	Decisions []string `json:"decisions"`
	// Domains are notes for each domain's planner.
	Domains []DomainNotes `json:"domains"`
}

// DomainNotes are the brief's notes on one domain.
type DomainNotes struct {
	Domain string `json:"domain"`
	Notes  string `json:"notes"`
}

// Draft is one domain call's changes.
type Draft struct {
	Domain  string
	Changes []Change
}

// RepairData is what the repair template is executed with.
type RepairData struct {
	// Answer is the rejected answer, as the model gave it.
	Answer string
	// Errors are why it was rejected.
	Errors []string
}

// funcs are the functions the templates may call besides text/template's
// own: join (strings.Join with its arguments swapped for pipelines:
// {{join .DependsOn ", "}}).
var funcs = template.FuncMap{"join": func(xs []string, sep string) string { return strings.Join(xs, sep) }}

// Templates are the parsed prompt templates.
type Templates struct {
	byName map[string]*template.Template
}

// Parse parses the prompts and executes each on Sample data (RepairSample
// for repair); an empty template is an error too. The error of a template
// is a *Error naming it.
func Parse(p config.PlannerPrompts) (*Templates, []*Error) {
	t := &Templates{byName: map[string]*template.Template{}}
	var errs []*Error
	for _, f := range fields(p) {
		if strings.TrimSpace(f.text) == "" {
			errs = append(errs, &Error{Name: f.name, Err: errors.New("the template is empty")})
			continue
		}
		tmpl, err := template.New(f.name).Funcs(funcs).Option("missingkey=error").Parse(f.text)
		if err == nil {
			var sample any = Sample()
			if f.name == Repair {
				sample = RepairSample()
			}
			err = tmpl.Execute(&strings.Builder{}, sample)
		}
		if err != nil {
			errs = append(errs, &Error{Name: f.name, Err: err})
			continue
		}
		t.byName[f.name] = tmpl
	}
	return t, errs
}

// Error is a template that does not parse or execute.
type Error struct {
	// Name is the template's field in planner.prompts.
	Name string
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap is the parse or execution error.
func (e *Error) Unwrap() error { return e.Err }

type field struct{ name, text string }

func fields(p config.PlannerPrompts) []field {
	return []field{
		{System, p.System}, {Single, p.Single}, {Brief, p.Brief},
		{Domain, p.Domain}, {Merge, p.Merge}, {Repair, p.Repair},
	}
}

// Render executes the named template with data (a Data, or a RepairData
// for repair).
func (t *Templates) Render(name string, data any) (string, error) {
	tmpl, ok := t.byName[name]
	if !ok {
		return "", fmt.Errorf("no %s prompt template", name)
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, data); err != nil {
		return "", fmt.Errorf("planner.prompts.%s: %w", name, err)
	}
	return b.String(), nil
}

// Sample is data with every field set and every list holding an element,
// so that executing a template on it reaches the fields inside its range
// and with actions.
func Sample() Data {
	req := Requirement{
		ID: "REQ-LINKS-02", Title: "Resolve a link", Domain: "links", Status: "changed",
		Differs: []string{"text"}, Text: "The service SHALL redirect a short code to its URL.",
		Scenarios: []Scenario{{Name: "known code", Given: []string{"a link"}, When: []string{"its code is visited"}, Then: []string{"it redirects"}}},
		DependsOn: []string{"REQ-LINKS-01"},
	}
	change := Change{
		Name: "create-links", Type: "feature", Size: "M", Description: "Create short links.",
		Requirements: []string{"REQ-LINKS-01"}, DependsOn: []string{"store"}, Scope: []string{"internal/links/**"},
	}
	return Data{
		Project:                  "demo",
		Requirements:             []Requirement{req},
		Domains:                  []DomainRequirements{{Name: "links", Requirements: []Requirement{req}}},
		Domain:                   "links",
		Conventions:              []string{"Format code with gofmt."},
		Rules:                    []Rule{{Name: "tests-with-code", Text: "A change carries its tests."}},
		Files:                    Files{Paths: []string{"go.mod"}, Omitted: 1},
		MaxRequirementsPerChange: 6,
		Types:                    []string{"feature", "fix"},
		Existing:                 []Change{change},
		Brief:                    BriefAnswer{Overview: "One service.", Decisions: []string{"links owns the store"}, Domains: []DomainNotes{{Domain: "links", Notes: "Owns the store."}}},
		Drafts:                   []Draft{{Domain: "links", Changes: []Change{change}}},
	}
}

// RepairSample is RepairData with every field set.
func RepairSample() RepairData {
	return RepairData{Answer: `{"changes":[]}`, Errors: []string{"REQ-LINKS-01 is not covered by any change"}}
}

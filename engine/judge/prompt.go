// Package judge holds what the model-graded gates (review, and spec_verify
// with grader "llm") say to a model and what they accept back: the data a
// gate's prompt template is executed with, the JSON Schema of a verdict,
// and the checks a verdict must pass before the gate acts on it.
//
// Invariants:
//   - a prompt template that Check accepts names only fields and
//     functions that exist (Check executes it on a sample that fills
//     every field and every list);
//   - Decode returns a Verdict only when the answer satisfies the kind's
//     schema and names only the change's requirements (spec_verify: each
//     of them exactly once); otherwise it returns every problem it found,
//     for the model to repair;
//   - the engine, not the model, decides what blocks: a finding blocks when
//     its severity is at or above the gate's blockOn, and an
//     unimplemented requirement always does.
package judge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"text/template"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/spec"
)

// PromptData is what a model-graded gate's prompt template is executed
// with. The stdlib's prompts (stdlib/gates.cue) show every field in use.
type PromptData struct {
	// Project is the project's name.
	Project string
	// Gate is the gate's name, e.g. "review".
	Gate string
	// Stage is "verify" or "integration".
	Stage string
	// Change is the change under review: .Change.Name, .Type, .Size,
	// .Description, .Requirements (IDs) and .Scope (path globs; empty
	// means anywhere).
	Change config.Change
	// Requirements are the change's requirements: .ID, .Title, .Text and
	// .Scenarios, each with .Name, .Given, .When and .Then (lists of
	// steps).
	Requirements []spec.Requirement
	// Conventions are the profile's and the project's conventions.
	Conventions []string
	// Rules are the project's forbidden patterns.
	Rules []Rule
	// Diff is the change's unified diff against its base, bounded (see
	// Omitted).
	Diff string
	// Omitted lists the files left out of Diff to keep it within the
	// gate's maxDiffBytes, least relevant first out, each as
	// "path (+added -deleted lines)"; empty when Diff is whole.
	Omitted []string
	// BlockOn is the lowest severity that blocks the change: "critical",
	// "high", "medium" or "low".
	BlockOn string
}

// Rule is one forbidden pattern of the project, as a judge's prompt
// shows it (prompt.Rule is a planning rule, another thing).
type Rule struct {
	Name, Pattern, Message string
	// Paths are the globs the rule is limited to; empty means every file.
	Paths []string
}

// Check parses src as a gate's prompt template and executes it on a sample PromptData, so that a syntax error, an unknown
// function or a misspelled field is found when set.cue loads, not when a
// change is reviewed. The error says where in the template (line:col).
func Check(src string) (*template.Template, error) {
	t, err := template.New(templateName).Parse(src)
	if err != nil {
		return nil, templateError(err)
	}
	if err := t.Execute(io.Discard, sample); err != nil {
		return nil, templateError(err)
	}
	return t, nil
}

const templateName = "prompt"

// templateLead is how text/template starts its errors: "template:
// prompt:3:14: executing "prompt" at <.Chnage>: ".
var templateLead = regexp.MustCompile(`^template: ` + templateName + `:(\d+)(?::(\d+))?: (?:executing "` + templateName + `" )?`)

// templateError words a template's error as "template line 3, column 14:
// at <.Chnage>: can't evaluate field Chnage in type judge.PromptData".
func templateError(err error) error {
	m := templateLead.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	where := "template line " + m[1]
	if m[2] != "" {
		where += ", column " + m[2]
	}
	return errors.New(where + ": " + err.Error()[len(m[0]):])
}

// Render executes the prompt template src on data.
func Render(src string, data PromptData) (string, error) {
	t, err := Check(src)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("prompt template: %w", err)
	}
	return b.String(), nil
}

// sample fills every field and list of PromptData once, so that Check
// executes every range body of a template.
var sample = PromptData{
	Project: "demo",
	Gate:    "review",
	Stage:   "verify",
	Change: config.Change{
		Name: "add-links", Type: "feature", Size: "S", Description: "links",
		Domain: "links", Requirements: []string{"REQ-LINKS-01"}, DependsOn: []string{"base"},
		Scope: []string{"internal/links/**"}, Agent: "claude", Model: "m", Pos: "set.cue:1:1",
	},
	Requirements: []spec.Requirement{{
		ID: "REQ-LINKS-01", Title: "Create a link", Domain: "links", Text: "The service SHALL create links.",
		Scenarios: []spec.Scenario{{Name: "create", Given: []string{"a user"}, When: []string{"they post"}, Then: []string{"a link exists"}, Line: 3}},
		DependsOn: []string{"REQ-BASE-01"}, File: "docs/spec.md", Line: 1,
	}},
	Conventions: []string{"gofmt"},
	Rules:       []Rule{{Name: "debug-print", Pattern: "println", Message: "no debug printing", Paths: []string{"**/*.go"}}},
	Diff:        "diff --git a/x.go b/x.go\n",
	Omitted:     []string{"go.sum (+10 -2 lines)"},
	BlockOn:     "critical",
}

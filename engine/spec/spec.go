// Package spec parses markdown specifications into requirements.
//
// A spec is one or more markdown files. A requirement is written in one of
// three forms, which may be mixed within a file:
//
//   - a heading whose text starts with an ID:
//     "### REQ-AUTH-01: User can log in";
//   - a top-level bullet that starts with an ID, optionally bold:
//     "- **REQ-AUTH-02**: Passwords are hashed";
//   - an OpenSpec requirement, "### Requirement: <title>", whose ID is taken
//     from the title when it starts with one and derived from the domain
//     otherwise (REQ-<DOMAIN>-<NN>).
//
// A requirement's scenarios are GIVEN/WHEN/THEN steps (AND continues the
// previous keyword), grouped under "Scenario:" headings or bullets; steps
// before any Scenario marker form unnamed scenarios. Steps may share a line
// ("- WHEN a visitor posts a valid form THEN an account is created"): inside
// a line a keyword is a word in capitals or in bold. "Depends on:" lines list
// the IDs a requirement depends on. Fenced code blocks and HTML comments never
// start a requirement, a scenario or a step.
//
// A file at openspec/specs/<capability>/spec.md is an OpenSpec main spec and
// is also held to the rules of `openspec validate --strict`
// (openspec.CheckMainSpec, mainspec.go).
//
// The package also relates a spec to OpenSpec's living specs, the record of
// what main implements, through set's one-to-one mapping of a requirement
// ID and title to an OpenSpec name (canonical.go): which requirements are
// new, changed or removed against them (Compare, status.go, which compares
// what a requirement says as a reader reads it: Content.AsRead,
// reading.go), and the change folder set writes for a change's
// requirements (ChangeFolder, changefolder.go; Purposes, purpose.go). Reading and folding OpenSpec's
// own files is engine/openspec's: it imports nothing of set's model, and
// this package imports it.
//
// Parsing is total: Parse never panics and reports every problem as a
// diag.Diagnostic at its file and 1-based line (Pos.Line; 0 for the whole
// file), so one run of `setctl vet` shows them all. A heading or line
// meant as a requirement or a scenario that the parser would not read as
// one ("#### Senario: mean") is such a problem, an error (nearmiss.go).
// Every Requirement this package returns has an ID matching IDPattern.
package spec

import (
	"errors"
	"regexp"
	"strings"

	"github.com/set-engine/set/engine/diag"
)

// IDPattern is the regexp of a well-formed requirement ID. It is never
// reassigned.
var IDPattern = regexp.MustCompile(`^REQ-[A-Z][A-Z0-9]*(-[A-Z0-9]+)*-[0-9]+$`)

// DomainOf returns the domain of a well-formed ID: the first segment after
// REQ-, lower-cased ("REQ-AUTH-LOGIN-01" -> "auth"). It returns "" for an ID
// that does not match IDPattern.
func DomainOf(id string) string {
	if !IDPattern.MatchString(id) {
		return ""
	}
	seg := strings.TrimPrefix(id, "REQ-")
	// IDPattern guarantees a '-' after the first segment.
	seg = seg[:strings.IndexByte(seg, '-')]
	return strings.ToLower(seg)
}

// Scenario is one WHEN/THEN scenario of a requirement. When and Then are
// never nil in a parsed Scenario, so they encode as JSON lists.
type Scenario struct {
	Name  string   `json:"name"`
	Given []string `json:"given,omitempty"`
	When  []string `json:"when"`
	Then  []string `json:"then"`
	Line  int      `json:"line"` // 1-based line of the scenario's start
}

// Requirement is one requirement of a spec. A parsed Requirement always has
// an ID matching IDPattern, a non-empty Domain, and Line within its file.
type Requirement struct {
	ID        string     `json:"id"` // e.g. REQ-AUTH-01
	Title     string     `json:"title"`
	Domain    string     `json:"domain"`         // lower-case, e.g. "auth"
	Text      string     `json:"text,omitempty"` // prose body, trimmed, paragraphs joined by "\n\n"
	Scenarios []Scenario `json:"scenarios,omitempty"`
	DependsOn []string   `json:"dependsOn,omitempty"` // requirement IDs, in the order written, deduplicated
	File      string     `json:"file"`                // as passed to Parse (slash-separated, relative to the project)
	Line      int        `json:"line"`
}

// Options tune how strictly a spec is checked.
type Options struct {
	Strict bool // a requirement without scenarios is an error instead of a warning
}

// Spec is the requirements of all spec files of a project, in file order then
// document order. Diagnostics are in file order, then line order. When Err is
// nil, requirement IDs are unique, every DependsOn entry names a requirement
// of the Spec other than its owner, and dependencies have no cycle.
type Spec struct {
	Requirements []Requirement
	Diagnostics  diag.List
}

// Err returns nil when no diagnostic has Error severity. Otherwise it returns
// the errors.Join of every error diagnostic (each a diag.Diagnostic), so its
// message lists them one per line.
func (s *Spec) Err() error {
	if s == nil {
		return nil
	}
	var errs []error
	for _, d := range s.Diagnostics {
		if d.Severity == diag.Error {
			errs = append(errs, d)
		}
	}
	return errors.Join(errs...)
}

// Warnings returns the diagnostics of Warning severity, in order.
func (s *Spec) Warnings() diag.List {
	if s == nil {
		return nil
	}
	var ws diag.List
	for _, d := range s.Diagnostics {
		if d.Severity == diag.Warning {
			ws = append(ws, d)
		}
	}
	return ws
}

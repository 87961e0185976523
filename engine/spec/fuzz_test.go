package spec

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// fuzzSeeds are realistic specs and edge cases; the files under
// testdata/fuzz/FuzzParse hold a few more in the `go test fuzz v1` format.
var fuzzSeeds = []struct{ file, src string }{
	{"docs/spec.md", `# Todo app

## Todos
### REQ-TODO-01: Add a todo
Users add todos from the input box.
- Depends on: REQ-STORE-01

#### Scenario: add
- **GIVEN** an empty list
- **WHEN** the user types "milk" and presses Enter
- **THEN** the list shows "milk"
- **AND** the input is cleared

## Storage
- **REQ-STORE-01**: Todos persist
  across reloads.
  - WHEN the page reloads
  - THEN the todos are still there
`},
	{"openspec/specs/auth/spec.md", `# auth Specification

## Purpose
Who may do what.

## Requirements
### Requirement: Login
The system SHALL authenticate users.

#### Scenario: Valid credentials
- **WHEN** valid credentials are submitted
- **THEN** a session is created

### Requirement: REQ-AUTH-09 Logout
#### Scenario: Logout
- **WHEN** the user logs out
- **THEN** the session ends
`},
	{"openspec/changes/x/specs/billing/spec.md", "## ADDED Requirements\n### Requirement: Invoices\n#### Scenario: monthly\n- WHEN a month ends\n- THEN an invoice is sent\n\n## REMOVED Requirements\n### Requirement: Fax\n**Reason**: nobody faxes\n"},
	{"docs/spec.md", "```\n### REQ-A-01: in code\n"},
	{"docs/spec.md", "<!-- ### REQ-A-01: x\n"},
	{"docs/spec.md", "### REQ-a-1\n- **REQ-**\n* REQ-\n- **REQ-A-01**\n### Requirement:\n#### Scenario:\n- AND\n- WHEN\n"},
	{"docs/spec.md", "- REQ-A-01: x\n\tWHEN a\n\tTHEN b\n- Depends on: REQ-A-01,, ,REQ-\n"},
	{"", "\r\n\r\n# \r\n### REQ-A-01 — \r\n"},
	{"a/b/specs//spec.md", "### Requirement: ***\n"},
	{"x.md", "#######\n####### REQ-A-01: too deep\n   ### REQ-A-02: indented\n    ### REQ-A-03: code indent\n"},
	{"x.md", "\xff\xfe### REQ-A-01: \xc3\n- **WHEN\xe2\x80\x94**\n"},
	{"x.md", ""},
	{"docs/spec.md", "### REQ-A-01: One line\n- GIVEN a WHEN b, THEN c AND d **and** e\n  f THEN \"g AND h\" `WHEN` **THEN**\n- **WHEN** THEN x\n"},
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s.file, []byte(s.src))
	}
	f.Fuzz(func(t *testing.T, file string, src []byte) {
		reqs, diags := Parse(file, src, Options{})
		nlines := bytes.Count(src, []byte("\n")) + 1
		for _, r := range reqs {
			if !IDPattern.MatchString(r.ID) {
				t.Errorf("requirement ID %q does not match IDPattern", r.ID)
			}
			if r.Line < 1 || r.Line > nlines {
				t.Errorf("requirement %s at line %d, want 1..%d", r.ID, r.Line, nlines)
			}
			if r.Domain == "" || r.File != file {
				t.Errorf("requirement %s: domain %q, file %q", r.ID, r.Domain, r.File)
			}
			for _, s := range r.Scenarios {
				if s.Line < r.Line || s.Line > nlines {
					t.Errorf("scenario %q of %s at line %d, want %d..%d", s.Name, r.ID, s.Line, r.Line, nlines)
				}
				if s.Name == "" || s.When == nil || s.Then == nil {
					t.Errorf("scenario of %s at line %d is incomplete: %+v", r.ID, s.Line, s)
				}
			}
			if r.Text != strings.TrimSpace(r.Text) {
				t.Errorf("requirement %s: text %q is not trimmed", r.ID, r.Text)
			}
		}
		for i, d := range diags {
			if d.Pos.Line < 0 || d.Pos.Line > nlines {
				t.Errorf("diagnostic %q at line %d, want 0..%d", d, d.Pos.Line, nlines)
			}
			if i > 0 && d.Pos.Line < diags[i-1].Pos.Line {
				t.Errorf("diagnostics out of line order: %q after %q", d, diags[i-1])
			}
		}
		if _, err := json.Marshal(reqs); err != nil {
			t.Errorf("json.Marshal: %v", err)
		}

		// Parsing is deterministic, and ParseAll adds only cross-file
		// checks on top of Parse.
		reqs2, diags2 := Parse(file, src, Options{})
		if !reflect.DeepEqual(reqs, reqs2) || !reflect.DeepEqual(diags, diags2) {
			t.Error("two parses of the same input differ")
		}
		s := ParseAll([]string{file}, map[string][]byte{file: src}, Options{Strict: true})
		if len(s.Requirements) != len(reqs) {
			t.Errorf("ParseAll returned %d requirements, Parse %d", len(s.Requirements), len(reqs))
		}
		for _, d := range s.Diagnostics {
			if d.Pos.Line < 0 || d.Pos.Line > nlines {
				t.Errorf("ParseAll diagnostic %q at line %d, want 0..%d", d, d.Pos.Line, nlines)
			}
		}
		_ = s.Err()
	})
}

// BenchmarkParse parses a large spec; wrapped steps, long Depends on lists
// and many requirements must stay linear.
func BenchmarkParse(b *testing.B) {
	var src strings.Builder
	for i := range 2000 {
		id := derivedID("bench", i+1)
		src.WriteString("### " + id + ": Requirement\nSome prose.\nDepends on: REQ-BENCH-01, " + id + "\n")
		src.WriteString("#### Scenario: s\n- **WHEN** a\n  wrapped\n  again\n- **THEN** b\n")
	}
	data := []byte(src.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		ParseAll([]string{"docs/spec.md"}, map[string][]byte{"docs/spec.md": data}, Options{})
	}
}

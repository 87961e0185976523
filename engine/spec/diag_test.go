package spec

import (
	"errors"
	"testing"

	"github.com/set-engine/set/engine/diag"
)

func TestParseDiagnostics(t *testing.T) {
	runParseCases(t, []parseCase{{
		name: "malformed IDs in headings and top-level bullets are dropped with their body",
		src: `### REQ-auth-1: Lower case
#### Scenario: belongs to the malformed one
- WHEN a
- THEN b
- **REQ-AUTH**: No number
  - WHEN c
  - THEN d
## Requirement: REQ-AUTH-01x Bad suffix
- WHEN e
- THEN f
### REQ-AUTH-01/2: Slash
REQUIREMENTS are not IDs.
`,
		diags: `
docs/spec.md:1: error: malformed requirement ID "REQ-auth-1" (want REQ-<DOMAIN>-<NUMBER>, e.g. REQ-AUTH-01)
docs/spec.md:5: error: malformed requirement ID "REQ-AUTH" (want REQ-<DOMAIN>-<NUMBER>, e.g. REQ-AUTH-01)
docs/spec.md:8: error: malformed requirement ID "REQ-AUTH-01x" (want REQ-<DOMAIN>-<NUMBER>, e.g. REQ-AUTH-01)
docs/spec.md:11: error: malformed requirement ID "REQ-AUTH-01/2" (want REQ-<DOMAIN>-<NUMBER>, e.g. REQ-AUTH-01)
`,
	}, {
		name: "duplicate ID within a file",
		src:  "### REQ-AUTH-01: First\n" + ok + "\n- REQ-AUTH-01: Second\n  " + ok,
		want: `
REQ-AUTH-01 "First" domain=auth docs/spec.md:1
  scenario "scenario 1" @2 when=["x"] then=["y"]
REQ-AUTH-01 "Second" domain=auth docs/spec.md:5
  scenario "scenario 1" @6 when=["x"] then=["y"]
`,
		diags: `
docs/spec.md:5: error: duplicate requirement ID REQ-AUTH-01 (first at docs/spec.md:1)
`,
	}, {
		name: "no scenario is a warning",
		src:  "# Intro\n\n### REQ-AUTH-03: Lockout\nAfter 5 failures.\n",
		want: `
REQ-AUTH-03 "Lockout" domain=auth docs/spec.md:3
  text "After 5 failures."
`,
		diags: `
docs/spec.md:3: warning: requirement REQ-AUTH-03 has no scenario
`,
	}, {
		name:   "no scenario is an error under Strict",
		src:    "# Intro\n\n### REQ-AUTH-03: Lockout\nAfter 5 failures.\n",
		strict: true,
		want: `
REQ-AUTH-03 "Lockout" domain=auth docs/spec.md:3
  text "After 5 failures."
`,
		diags: `
docs/spec.md:3: error: requirement REQ-AUTH-03 has no scenario
`,
	}, {
		name: "empty titles",
		src:  "## Auth\n### REQ-AUTH-04:\n" + ok + "- **REQ-AUTH-05**\n  " + ok + "### Requirement:\n" + ok,
		want: `
REQ-AUTH-04 "" domain=auth docs/spec.md:2
  scenario "scenario 1" @3 when=["x"] then=["y"]
REQ-AUTH-05 "" domain=auth docs/spec.md:5
  scenario "scenario 1" @6 when=["x"] then=["y"]
REQ-AUTH-01 "" domain=auth docs/spec.md:8
  scenario "scenario 1" @9 when=["x"] then=["y"]
`,
		diags: `
docs/spec.md:2: error: requirement REQ-AUTH-04 has an empty title
docs/spec.md:5: error: requirement REQ-AUTH-05 has an empty title
docs/spec.md:8: error: requirement REQ-AUTH-01 has an empty title
`,
	}, {
		name: "incomplete scenarios",
		src: `### REQ-SC-01: Steps
#### Scenario: no then
- GIVEN a
- WHEN b
#### Scenario: no when
- THEN c
#### Scenario: empty
Nothing here.
- WHEN d
`,
		want: `
REQ-SC-01 "Steps" domain=sc docs/spec.md:1
  text "Nothing here."
  scenario "no then" @2 given=["a"] when=["b"] then=[]
  scenario "no when" @5 when=[] then=["c"]
  scenario "empty" @7 when=["d"] then=[]
`,
		diags: `
docs/spec.md:2: error: scenario "no then" of requirement REQ-SC-01 has WHEN but no THEN
docs/spec.md:5: warning: scenario "no when" of requirement REQ-SC-01 has THEN but no WHEN
docs/spec.md:7: error: scenario "empty" of requirement REQ-SC-01 has WHEN but no THEN
`,
	}, {
		name: "a scenario without steps",
		src:  "### REQ-SC-02: Empty\n#### Scenario: later\nTBD.\n",
		want: `
REQ-SC-02 "Empty" domain=sc docs/spec.md:1
  text "TBD."
  scenario "later" @2 when=[] then=[]
`,
		diags: `
docs/spec.md:2: warning: scenario "later" of requirement REQ-SC-02 has no WHEN/THEN steps
`,
	}, {
		name: "a scenario outside any requirement",
		src:  "# Notes\n- Scenario: stray\n#### Scenario: also stray\n",
		diags: `
docs/spec.md:2: warning: scenario "stray" is not inside a requirement
docs/spec.md:3: warning: scenario "also stray" is not inside a requirement
`,
	}})
}

func TestIDPatternAndDomainOf(t *testing.T) {
	for _, tc := range []struct {
		id     string
		valid  bool
		domain string
	}{
		{"REQ-AUTH-01", true, "auth"},
		{"REQ-AUTH-LOGIN-01", true, "auth"},
		{"REQ-A1-2FA-7", true, "a1"},
		{"REQ-X-123", true, "x"},
		{"REQ-auth-1", false, ""},
		{"REQ-AUTH", false, ""},
		{"REQ-1AUTH-01", false, ""},
		{"REQ-AUTH-01A", false, ""},
		{"REQ--01", false, ""},
		{"XREQ-AUTH-01", false, ""},
		{"", false, ""},
	} {
		if got := IDPattern.MatchString(tc.id); got != tc.valid {
			t.Errorf("IDPattern.MatchString(%q) = %v, want %v", tc.id, got, tc.valid)
		}
		if got := DomainOf(tc.id); got != tc.domain {
			t.Errorf("DomainOf(%q) = %q, want %q", tc.id, got, tc.domain)
		}
	}
}

func TestDerivedIDMatchesPattern(t *testing.T) {
	for _, tc := range []struct {
		domain string
		n      int
		want   string
	}{
		{"auth", 1, "REQ-AUTH-01"},
		{"user-auth", 12, "REQ-USER-AUTH-12"},
		{"2fa", 3, "REQ-D-2FA-03"},
		{"", 1, "REQ-SPEC-01"},
		{"x", 123, "REQ-X-123"},
	} {
		got := derivedID(tc.domain, tc.n)
		if got != tc.want || !IDPattern.MatchString(got) {
			t.Errorf("derivedID(%q, %d) = %q, want %q (matching IDPattern)", tc.domain, tc.n, got, tc.want)
		}
	}
}

func TestSpecErrWarningsLookup(t *testing.T) {
	s := ParseAll([]string{"a.md"}, map[string][]byte{"a.md": []byte(
		"### REQ-A-01: One\n" + ok + "### REQ-A-02: Two\n### REQ-bad: Three\n### REQ-A-01: Again\n" + ok)}, Options{})
	err := s.Err()
	if err == nil {
		t.Fatal("Err() = nil, want the error diagnostics")
	}
	want := `malformed requirement ID "REQ-bad" (want REQ-<DOMAIN>-<NUMBER>, e.g. REQ-AUTH-01): a.md:5
duplicate requirement ID REQ-A-01 (first at a.md:1): a.md:6`
	if err.Error() != want {
		t.Errorf("Err():\n got: %s\nwant: %s", err, want)
	}
	var d diag.Diagnostic
	if !errors.As(err, &d) || d.Pos.Line != 5 {
		t.Errorf("errors.As(Err(), &Diagnostic) = %v, %+v; want the diagnostic at line 5", errors.As(err, &d), d)
	}
	if got := renderDiags(s.Warnings()); got != "a.md:4: warning: requirement REQ-A-02 has no scenario\n" {
		t.Errorf("Warnings() = %q", got)
	}
	if r, ok := s.Lookup("REQ-A-01"); !ok || r.Title != "One" {
		t.Errorf("Lookup(REQ-A-01) = %+v, %v; want the first requirement", r, ok)
	}
	if _, ok := s.Lookup("REQ-A-09"); ok {
		t.Error("Lookup(REQ-A-09) found a requirement")
	}

	clean := ParseAll([]string{"a.md"}, map[string][]byte{"a.md": []byte("### REQ-A-01: One\n")}, Options{})
	if err := clean.Err(); err != nil {
		t.Errorf("Err() with only warnings = %v, want nil", err)
	}
	var nilSpec *Spec
	if nilSpec.Err() != nil || nilSpec.Warnings() != nil {
		t.Error("a nil *Spec has diagnostics")
	}
	if _, ok := nilSpec.Lookup("REQ-A-01"); ok {
		t.Error("a nil *Spec has requirements")
	}
}

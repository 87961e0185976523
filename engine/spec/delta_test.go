package spec

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/archive")

// renderDelta prints a delta one operation per line (block texts quoted), so
// a table test reads as the delta it checks.
func renderDelta(d *Delta) string {
	var b strings.Builder
	fmt.Fprintf(&b, "capability %s\n", d.Capability)
	for _, r := range d.Renamed {
		fmt.Fprintf(&b, "renamed %q -> %q\n", r.From, r.To)
	}
	for _, n := range d.Removed {
		fmt.Fprintf(&b, "removed %q\n", n)
	}
	for _, r := range d.Modified {
		fmt.Fprintf(&b, "modified %q %q\n", r.Name, r.Text)
	}
	for _, r := range d.Added {
		fmt.Fprintf(&b, "added %q %q\n", r.Name, r.Text)
	}
	return b.String()
}

func TestParseDelta(t *testing.T) {
	tests := []struct {
		name, src string
		want      string // renderDelta of the result
		wantErr   string // the whole error message
	}{
		{
			name: "empty",
			src:  "",
			want: "capability auth\n",
		},
		{
			name: "added with scenarios, title and prose ignored",
			src: `# Delta for auth

Some intro prose.

## ADDED Requirements
These are new.

### Requirement: MFA
The system SHALL support MFA.

#### Scenario: second factor
- **WHEN** a user logs in
- **THEN** a code is asked


### Requirement: Audit
The system SHALL log.
`,
			want: `capability auth
added "MFA" "### Requirement: MFA\nThe system SHALL support MFA.\n\n#### Scenario: second factor\n- **WHEN** a user logs in\n- **THEN** a code is asked"
added "Audit" "### Requirement: Audit\nThe system SHALL log."
`,
		},
		{
			name: "all four sections in any order, CRLF",
			src: "## RENAMED Requirements\r\n- FROM: `### Requirement: Logout`\r\n- TO: `### Requirement: Sign out`\r\n\r\n" +
				"## REMOVED Requirements\r\n### Requirement: Reset\r\n**Reason**: gone\r\n**Migration**: none\r\n\r\n" +
				"## MODIFIED Requirements\r\n### Requirement: Login\r\nThe system SHALL allow login with email.\r\n\r\n" +
				"## ADDED Requirements\r\n### Requirement: MFA\r\nThe system SHALL support MFA.\r\n",
			want: `capability auth
renamed "Logout" -> "Sign out"
removed "Reset"
modified "Login" "### Requirement: Login\nThe system SHALL allow login with email."
added "MFA" "### Requirement: MFA\nThe system SHALL support MFA."
`,
		},
		{
			name: "renamed forms: no backticks, no ###, bold labels, no bullet, prose",
			src: `## RENAMED Requirements
Renames follow.
- FROM: ### Requirement: A
- TO: ### Requirement: B
- **FROM:** ` + "`Requirement: C`" + `
- **TO**: Requirement: D
FROM: ` + "`### Requirement: E`" + `
TO: ` + "`### Requirement: F`" + `
`,
			want: `capability auth
renamed "A" -> "B"
renamed "C" -> "D"
renamed "E" -> "F"
`,
		},
		{
			name: "section headers are case-insensitive; headings in code and comments are text",
			src:  "## added requirements\n### Requirement: X\nText.\n\n```md\n### Requirement: Not a block\n## MODIFIED Requirements\n```\n<!--\n### Requirement: Hidden\n-->\n#### Scenario: s\n- WHEN a\n- THEN b\n",
			want: `capability auth
added "X" "### Requirement: X\nText.\n\n` + "```md" + `\n### Requirement: Not a block\n## MODIFIED Requirements\n` + "```" + `\n<!--\n### Requirement: Hidden\n-->\n#### Scenario: s\n- WHEN a\n- THEN b"
`,
		},
		{
			name: "a level-1 heading ends the section",
			src:  "## ADDED Requirements\n### Requirement: X\nText.\n# Appendix\nNotes.\n",
			want: "capability auth\nadded \"X\" \"### Requirement: X\\nText.\"\n",
		},
		{
			name: "same section twice is one section",
			src:  "## REMOVED Requirements\n### Requirement: A\n## REMOVED Requirements\n### Requirement: B\n",
			want: "capability auth\nremoved \"A\"\nremoved \"B\"\n",
		},
		{
			name: "rename then modify and add the old name",
			src: "## RENAMED Requirements\n- FROM: `### Requirement: A`\n- TO: `### Requirement: B`\n" +
				"## MODIFIED Requirements\n### Requirement: B\nNew.\n## ADDED Requirements\n### Requirement: A\nFresh.\n",
			want: `capability auth
renamed "A" -> "B"
modified "B" "### Requirement: B\nNew."
added "A" "### Requirement: A\nFresh."
`,
		},

		// errors
		{
			name:    "unknown section",
			src:     "## ADDED Requirements\n### Requirement: A\nx\n\n## CHANGED Requirements\n### Requirement: B\n#### Scenario: s\n",
			wantErr: `specs/auth/spec.md:5: error: unknown section "## CHANGED Requirements" (want ## ADDED Requirements, ## MODIFIED Requirements, ## REMOVED Requirements or ## RENAMED Requirements)`,
		},
		{
			name: "duplicates within sections",
			src: `## ADDED Requirements
### Requirement: A
one
### Requirement: A
two
## REMOVED Requirements
### Requirement: R
### Requirement: R
## MODIFIED Requirements
### Requirement: M
### Requirement: M
`,
			wantErr: `specs/auth/spec.md:4: error: duplicate requirement "A" under ## ADDED Requirements (first at line 2)
specs/auth/spec.md:8: error: duplicate requirement "R" under ## REMOVED Requirements (first at line 7)
specs/auth/spec.md:11: error: duplicate requirement "M" under ## MODIFIED Requirements (first at line 10)`,
		},
		{
			name:    "blocks without a name",
			src:     "## MODIFIED Requirements\n### Requirement:\nx\n## REMOVED Requirements\n### Requirement:   \n## ADDED Requirements\n### **Requirement:**\n",
			wantErr: "specs/auth/spec.md:2: error: requirement block without a name under ## MODIFIED Requirements\nspecs/auth/spec.md:5: error: requirement block without a name under ## REMOVED Requirements\nspecs/auth/spec.md:7: error: requirement block without a name under ## ADDED Requirements",
		},
		{
			name:    "non-requirement heading in a section",
			src:     "## MODIFIED Requirements\n### Login\nThe system SHALL.\n",
			wantErr: `specs/auth/spec.md:2: error: heading "### Login" under ## MODIFIED Requirements is not a requirement (want ### Requirement: <name>)`,
		},
		{
			name:    "requirement before any section",
			src:     "# Delta\n### Requirement: A\nx\n## ADDED Requirements\n",
			wantErr: `specs/auth/spec.md:2: error: requirement "A" is not under a ## ADDED/MODIFIED/REMOVED Requirements section`,
		},
		{
			name:    "scenario outside a block",
			src:     "## ADDED Requirements\n#### Scenario: s\n- WHEN a\n",
			wantErr: `specs/auth/spec.md:2: error: heading "#### Scenario: s" is not inside a ### Requirement: block`,
		},
		{
			name:    "heading under RENAMED",
			src:     "## RENAMED Requirements\n### Requirement: A\n",
			wantErr: "specs/auth/spec.md:2: error: heading \"### Requirement: A\" under ## RENAMED Requirements: want \"- FROM: `### Requirement: <old>`\" and \"- TO: `### Requirement: <new>`\" lines",
		},
		{
			name: "unpaired and malformed renames",
			src: "## RENAMED Requirements\n" +
				"- TO: `### Requirement: B`\n" + // 2: no FROM
				"- FROM: `### Requirement: C`\n" + // 3: no TO (next FROM)
				"- FROM: `Login`\n" + // 4: malformed
				"- FROM: `### Requirement: D`\n" + // 5
				"- TO: `### Requirement:`\n" + // 6: no name
				"- TO: `### Requirement: E`\n" + // 7: pairs with 5
				"- FROM: `### Requirement: F`\n" + // 8: no TO (section ends)
				"## ADDED Requirements\n",
			wantErr: "specs/auth/spec.md:2: error: TO \"B\" has no FROM line before it\n" +
				"specs/auth/spec.md:3: error: FROM \"C\" has no TO line after it\n" +
				"specs/auth/spec.md:4: error: FROM \"`Login`\": want `### Requirement: <name>`\n" +
				"specs/auth/spec.md:6: error: TO has no requirement name\n" +
				"specs/auth/spec.md:8: error: FROM \"F\" has no TO line after it",
		},
		{
			name:    "unclosed fence would swallow later sections",
			src:     "## ADDED Requirements\n### Requirement: A\n```go\nx\n## REMOVED Requirements\n### Requirement: B\n",
			wantErr: "specs/auth/spec.md:3: error: code fence is never closed; the rest of the file is code",
		},
		{
			name:    "unclosed comment",
			src:     "## ADDED Requirements\n### Requirement: A\n<!-- x\n## REMOVED Requirements\n",
			wantErr: "specs/auth/spec.md:3: error: HTML comment is never closed; the rest of the file is ignored",
		},
		{
			name: "duplicate renames",
			src: "## RENAMED Requirements\n" +
				"- FROM: `### Requirement: A`\n- TO: `### Requirement: B`\n" +
				"- FROM: `### Requirement: A`\n- TO: `### Requirement: C`\n" +
				"- FROM: `### Requirement: D`\n- TO: `### Requirement: B`\n" +
				"- FROM: `### Requirement: E`\n- TO: `### Requirement: E`\n",
			wantErr: "specs/auth/spec.md:4: error: requirement \"A\" is renamed twice (first at line 2)\n" +
				"specs/auth/spec.md:7: error: two requirements are renamed to \"B\" (first at line 3)\n" +
				"specs/auth/spec.md:9: error: requirement \"E\" is renamed to itself",
		},
		{
			name: "contradictions across sections",
			src: "## ADDED Requirements\n### Requirement: A\n### Requirement: B\n### Requirement: T\n" + // 1-4
				"## MODIFIED Requirements\n### Requirement: A\n### Requirement: Old\n" + // 5-7
				"## REMOVED Requirements\n### Requirement: B\n### Requirement: A\n### Requirement: Old2\n" + // 8-11
				"## RENAMED Requirements\n- FROM: Requirement: Old\n- TO: Requirement: New\n" + // 12-14
				"- FROM: Requirement: Old2\n- TO: Requirement: T\n", // 15-16
			wantErr: "specs/auth/spec.md:4: error: ADDED requirement \"T\" is also the target of a rename (line 16)\n" +
				"specs/auth/spec.md:6: error: requirement \"A\" is under both ## ADDED Requirements (line 2) and ## MODIFIED Requirements (line 6)\n" +
				"specs/auth/spec.md:7: error: MODIFIED requirement \"Old\" is renamed to \"New\" under ## RENAMED Requirements (line 13); use the new name\n" +
				"specs/auth/spec.md:9: error: requirement \"B\" is under both ## ADDED Requirements (line 3) and ## REMOVED Requirements (line 9)\n" +
				"specs/auth/spec.md:10: error: requirement \"A\" is under both ## ADDED Requirements (line 2) and ## REMOVED Requirements (line 10)\n" +
				"specs/auth/spec.md:10: error: requirement \"A\" is under both ## MODIFIED Requirements (line 6) and ## REMOVED Requirements (line 10)\n" +
				"specs/auth/spec.md:11: error: REMOVED requirement \"Old2\" is renamed to \"T\" under ## RENAMED Requirements (line 15)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDelta("auth", []byte(tt.src))
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("no error; got\n%s", renderDelta(d))
				}
				if diff := cmp.Diff(tt.wantErr, err.Error()); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				var diag Diagnostic
				if !errors.As(err, &diag) || diag.Line == 0 {
					t.Errorf("error has no positioned Diagnostic: %#v", err)
				}
				if d != nil {
					t.Errorf("delta is not nil on error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, renderDelta(d)); diff != "" {
				t.Errorf("delta (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseDeltaEmptyCapability(t *testing.T) {
	if _, err := ParseDelta("", nil); err == nil {
		t.Fatal("no error for an empty capability")
	}
}

// TestApplyDeltaGolden runs the cases of testdata/archive/apply/*.txtar.
// Each holds delta.md, optionally living.md (absent: a new capability), and
// the expected want.md or error. The archive comment may set
// "capability: <name>" (default auth); the change is always "add-mfa".
// Run with -update to rewrite want.md/error.
func TestApplyDeltaGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/archive/apply/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			capability := "auth"
			for _, l := range strings.Split(string(ar.Comment), "\n") {
				if c, ok := strings.CutPrefix(l, "capability: "); ok {
					capability = strings.TrimSpace(c)
				}
			}
			get := func(name string) ([]byte, bool) {
				for _, f := range ar.Files {
					if f.Name == name {
						return f.Data, true
					}
				}
				return nil, false
			}
			deltaSrc, ok := get("delta.md")
			if !ok {
				t.Fatal("no delta.md")
			}
			living, _ := get("living.md")
			d, err := ParseDelta(capability, deltaSrc)
			if err != nil {
				t.Fatalf("ParseDelta: %v", err)
			}
			got, err := ApplyDelta(living, d, "add-mfa")
			var gotName string
			var gotData []byte
			if err != nil {
				gotName, gotData = "error", []byte(err.Error()+"\n")
			} else {
				gotName, gotData = "want.md", got
			}
			if *updateGolden {
				var kept []txtar.File
				for _, f := range ar.Files {
					if f.Name != "want.md" && f.Name != "error" {
						kept = append(kept, f)
					}
				}
				ar.Files = append(kept, txtar.File{Name: gotName, Data: gotData})
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, ok := get(gotName)
			if !ok {
				t.Fatalf("got %s, but the golden file has none:\n%s", gotName, gotData)
			}
			if diff := cmp.Diff(string(want), string(gotData)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", gotName, diff)
			}
			if err == nil {
				// Folding the result again must leave nothing to change:
				// the output is a fixed point of parse and render.
				if doc, _ := parseLiving(got); string(doc.render()) != string(got) {
					again := doc.render()
					t.Errorf("re-rendering the result changes it:\n%s", cmp.Diff(string(got), string(again)))
				}
			}
		})
	}
}

func TestApplyDeltaErrors(t *testing.T) {
	living := []byte("# auth Specification\n\n## Requirements\n\n### Requirement: Login\nx\n\n### Requirement: Login\ny\n\n### Requirement: Logout\nz\n")
	tests := []struct {
		name    string
		d       *Delta
		wantErr string
	}{
		{"nil delta", nil, "spec: ApplyDelta: nil delta"},
		{"no capability", &Delta{}, "spec: ApplyDelta: delta has no capability name"},
		{
			"text without its heading",
			&Delta{Capability: "auth", Added: []RequirementBlock{{Name: "A", Text: "The system SHALL."}}},
			`openspec/specs/auth/spec.md: error: ADDED block "A" does not start with "### Requirement: A"`,
		},
		{
			"text names another requirement",
			&Delta{Capability: "auth", Modified: []RequirementBlock{{Name: "Logout", Text: "### Requirement: Login\nx"}}},
			`openspec/specs/auth/spec.md: error: MODIFIED block "Logout" does not start with "### Requirement: Logout"`,
		},
		{
			"text with a structural heading",
			&Delta{Capability: "auth", Added: []RequirementBlock{{Name: "A", Text: "### Requirement: A\nx\n## Other\n"}}},
			`openspec/specs/auth/spec.md: error: ADDED block "A" contains the heading "## Other"; a requirement block ends before the next heading of level 1-3`,
		},
		{
			"text with an unclosed fence",
			&Delta{Capability: "auth", Modified: []RequirementBlock{{Name: "Login", Text: "### Requirement: Login\n```\nx"}}},
			`openspec/specs/auth/spec.md: error: MODIFIED block "Login" has an unclosed code fence or HTML comment`,
		},
		{
			"empty name",
			&Delta{Capability: "auth", Added: []RequirementBlock{{Name: "", Text: "### Requirement:"}}},
			`openspec/specs/auth/spec.md: error: ADDED block "" does not start with "### Requirement: "`,
		},
		{
			"ambiguous living requirement",
			&Delta{Capability: "auth", Removed: []string{"Login"}, Renamed: []Rename{{From: "Logout", To: "Login"}}},
			"openspec/specs/auth/spec.md:8: error: RENAMED requirement \"Login\" is ambiguous: the spec has it twice (first at line 5)\n" +
				"openspec/specs/auth/spec.md:8: error: REMOVED requirement \"Login\" is ambiguous: the spec has it twice (first at line 5)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ApplyDelta(living, tt.d, "c")
			if err == nil {
				t.Fatalf("no error; got\n%s", got)
			}
			if diff := cmp.Diff(tt.wantErr, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyDeltaEmptyIsIdentity(t *testing.T) {
	living := []byte("# auth\r\n\r\n## Requirements\r\n### Requirement: A\r\nx\r\n\r\n\r\n")
	got, err := ApplyDelta(living, &Delta{Capability: "auth"}, "c")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(living) {
		t.Errorf("empty delta changed the spec:\n%q", got)
	}
}

// FuzzApplyDelta checks that parsing and applying any delta to any living
// spec never panics, and that a successful fold has exactly the expected
// requirements and is a fixed point of re-rendering.
func FuzzApplyDelta(f *testing.F) {
	files, _ := filepath.Glob("testdata/archive/apply/*.txtar")
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var living, delta []byte
		for _, fl := range ar.Files {
			switch fl.Name {
			case "living.md":
				living = fl.Data
			case "delta.md":
				delta = fl.Data
			}
		}
		f.Add(living, delta)
	}
	f.Fuzz(func(t *testing.T, living, delta []byte) {
		d, err := ParseDelta("auth", delta)
		if err != nil {
			return
		}
		got, err := ApplyDelta(living, d, "c")
		if err != nil {
			return
		}
		if d.empty() && len(bytes.TrimSpace(living)) > 0 {
			if !bytes.Equal(got, living) {
				t.Fatalf("empty delta changed the spec")
			}
			return
		}
		if !bytes.HasSuffix(got, []byte("\n")) {
			t.Fatalf("result does not end with a newline: %q", got)
		}
		count := map[string]int{}
		doc, diags := parseLiving(got)
		if len(diags) > 0 {
			t.Fatalf("result has %v", diags)
		}
		for _, b := range doc.blocks {
			count[b.name]++
		}
		for _, b := range append(append([]RequirementBlock(nil), d.Added...), d.Modified...) {
			if count[b.Name] != 1 {
				t.Fatalf("requirement %q appears %d times in\n%s", b.Name, count[b.Name], got)
			}
		}
		for _, r := range d.Renamed {
			if count[r.To] != 1 || count[r.From] != 0 && !slices.ContainsFunc(d.Added, func(b RequirementBlock) bool { return b.Name == r.From }) {
				t.Fatalf("rename %q -> %q: counts %d, %d in\n%s", r.From, r.To, count[r.From], count[r.To], got)
			}
		}
		for _, n := range d.Removed {
			if count[n] != 0 {
				t.Fatalf("removed requirement %q is still in\n%s", n, got)
			}
		}
		if again := doc.render(); !bytes.Equal(again, got) {
			t.Fatalf("re-rendering changes the result:\n%s", cmp.Diff(string(got), string(again)))
		}
	})
}

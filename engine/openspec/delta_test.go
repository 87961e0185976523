package openspec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/set-engine/set/engine/diag"
)

// renderDelta prints a delta one operation per line, so that a table test
// reads as the delta it checks.
func renderDelta(d *Delta) string {
	var b strings.Builder
	for _, r := range d.Renamed {
		fmt.Fprintf(&b, "renamed %q -> %q (line %d)\n", r.From, r.To, r.Line)
	}
	for _, n := range d.Removed {
		fmt.Fprintf(&b, "removed %q (line %d)\n", n.Name, n.Line)
	}
	for _, r := range d.Modified {
		fmt.Fprintf(&b, "modified %q (line %d) %q\n", r.Name, r.Line, r.Raw)
	}
	for _, r := range d.Added {
		fmt.Fprintf(&b, "added %q (line %d) %q\n", r.Name, r.Line, r.Raw)
	}
	return b.String()
}

func TestParseDelta(t *testing.T) {
	const scenario = "#### Scenario: s\n- WHEN a\n- THEN b\n"
	tests := []struct {
		name, src string
		want      string // renderDelta
		wantErr   string // the whole message
	}{
		{
			name: "other sections and a title are ignored",
			src:  "# Delta\n\n## Why\nx\n\n## ADDED Requirements\n### Requirement: A\nThe system SHALL a.\n\n" + scenario + "\n\n## Notes\n### Requirement: Not applied\n",
			want: "added \"A\" (line 7) \"### Requirement: A\\nThe system SHALL a.\\n\\n#### Scenario: s\\n- WHEN a\\n- THEN b\"\n",
		},
		{
			name: "REMOVED headers and bullets with -, * and +",
			src:  "## REMOVED Requirements\n### Requirement: A\n- `### Requirement: B`\n* ### Requirement: C\n+ `### Requirement: D ##`\n- Requirement: not a header\n",
			want: "removed \"A\" (line 2)\nremoved \"B\" (line 3)\nremoved \"C\" (line 4)\nremoved \"D\" (line 5)\n",
		},
		{
			name: "RENAMED pairs, bullet optional",
			src:  "## RENAMED Requirements\n- FROM: `### Requirement: A`\n- TO: `### Requirement: B`\nFROM: ### Requirement: C\n+ TO: ### Requirement: D\n",
			want: "renamed \"A\" -> \"B\" (line 2)\nrenamed \"C\" -> \"D\" (line 4)\n",
		},
		{
			name:    "a title with doubled spaces is not a section",
			src:     "## ADDED  Requirements\n### Requirement: A\nThe system SHALL a.\n\n" + scenario,
			wantErr: "specs/auth/spec.md: error: no operations: no ## ADDED, MODIFIED, REMOVED or RENAMED Requirements section (a title with doubled spaces is not one)",
		},
		{
			name: "requirements without text or scenario",
			src:  "## ADDED Requirements\n### Requirement: A\n" + scenario + "### Requirement: B\nThe system SHALL b.\n#### Scenario: empty\n",
			want: "added \"A\" (line 2) \"### Requirement: A\\n#### Scenario: s\\n- WHEN a\\n- THEN b\"\nadded \"B\" (line 6) \"### Requirement: B\\nThe system SHALL b.\\n#### Scenario: empty\"\n",
			wantErr: `specs/auth/spec.md:2: error: ADDED requirement "A" has no text (want a statement with SHALL or MUST after its header)
specs/auth/spec.md:6: error: ADDED requirement "B" has no scenario (want a "#### Scenario:" heading with steps under it)`,
		},
		{
			name:    "contradictions",
			src:     "## MODIFIED Requirements\n### Requirement: A\nThe system SHALL a.\n\n" + scenario + "\n## REMOVED Requirements\n### Requirement: A\n\n## RENAMED Requirements\n- FROM: `### Requirement: X`\n",
			want:    "removed \"A\" (line 10)\nmodified \"A\" (line 2) \"### Requirement: A\\nThe system SHALL a.\\n\\n#### Scenario: s\\n- WHEN a\\n- THEN b\"\n",
			wantErr: "specs/auth/spec.md:13: error: RENAMED FROM: \"X\" has no matching TO: line; write each rename as a FROM: line followed by its TO: line\nspecs/auth/spec.md:2: error: requirement \"A\" is under both ## MODIFIED and ## REMOVED Requirements",
		},
		{
			name: "CRLF and a byte order mark",
			src:  "\ufeff## ADDED Requirements\r\n### Requirement: A\r\nThe system SHALL a.\r\n\r\n#### Scenario: s\r\n- WHEN a\r\n- THEN b\r\n",
			want: "added \"A\" (line 2) \"### Requirement: A\\nThe system SHALL a.\\n\\n#### Scenario: s\\n- WHEN a\\n- THEN b\"\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDelta("auth", []byte(tt.src))
			gotErr := ""
			if err != nil {
				gotErr = errLines(err)
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, renderDelta(d)); diff != "" {
				t.Errorf("delta (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := ParseDelta("", nil); err == nil {
		t.Error("ParseDelta accepted an empty capability")
	}
}

// TestArchiveChangeResult checks what ArchiveChange reports on a change
// that creates, updates, retires and leaves alone capabilities.
func TestArchiveChangeResult(t *testing.T) {
	root := t.TempDir()
	removeInvoice := "## REMOVED Requirements\n### Requirement: Invoice\n"
	writeTree(t, root, []txtar.File{
		{Name: "openspec/specs/auth/spec.md", Data: []byte(authSpec)},
		{Name: "openspec/specs/billing/spec.md", Data: []byte("# billing Specification\n\n## Purpose\nP.\n\n## Requirements\n\n" + strings.TrimPrefix(invoiceDelta, "## ADDED Requirements\n"))},
		{Name: "openspec/specs/search/spec.md", Data: []byte(authSpec)},
		{Name: "openspec/changes/2025-01-15-mixed/.openspec.yaml", Data: []byte("schema: spec-driven\nretire_capabilities: true\n")},
		{Name: "openspec/changes/2025-01-15-mixed/specs/auth/spec.md", Data: []byte(strings.ReplaceAll(invoiceDelta, "Invoice", "MFA") + "\n## REMOVED Requirements\n### Requirement: Ghost\n")},
		{Name: "openspec/changes/2025-01-15-mixed/specs/billing/spec.md", Data: []byte(removeInvoice)},
		{Name: "openspec/changes/2025-01-15-mixed/specs/search/full-text/spec.md", Data: []byte(invoiceDelta)},
		// search is given its own Login again: already applied.
		{Name: "openspec/changes/2025-01-15-mixed/specs/search/spec.md", Data: []byte("## ADDED Requirements\n\n### Requirement: Login\nThe system SHALL log in.\n\n#### Scenario: ok\n- WHEN valid\n- THEN in\n")},
	})
	res, err := ArchiveChange(root, "2025-01-15-mixed", archiveDate)
	if err != nil {
		t.Fatal(err)
	}
	want := &ArchiveResult{
		Capabilities: []string{"auth", "search/full-text"},
		Retired:      []string{"billing"},
		Specs: []SpecUpdate{
			{Capability: "auth", Path: "openspec/specs/auth/spec.md", Action: "updated", Added: 1},
			{Capability: "billing", Path: "openspec/specs/billing/spec.md", Action: "retired", Removed: 1},
			{Capability: "search", Path: "openspec/specs/search/spec.md", Action: "unchanged"},
			{Capability: "search/full-text", Path: "openspec/specs/search/full-text/spec.md", Action: "created", Added: 1},
		},
		ArchiveDir: "openspec/changes/archive/2025-01-15-mixed",
		Warnings:   diag.List{diag.Warningf("openspec/specs/auth/spec.md", 0, `REMOVED requirement "Ghost" is not in the spec; treated as already removed`)},
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

// FuzzArchiveDelta applies any delta to any living spec the way the archive
// does: nothing panics, and a spec that is written ends with a newline.
func FuzzArchiveDelta(f *testing.F) {
	f.Add([]byte(authSpec), []byte(invoiceDelta), true)
	f.Add([]byte("\ufeff# t\r\n## Purpose\r\nP\r\n"), []byte("## REMOVED Requirements\n- `### Requirement: Login`\n"), true)
	f.Add([]byte("## Requirements\n```\n### Requirement: A\n"), []byte("## RENAMED Requirements\n- FROM: `### Requirement: A`\n- TO: `### Requirement: a`\n"), false)
	f.Add([]byte("<!-- x"), []byte("## Purpose\n<!--\n## ADDED Requirements\n### Requirement: X ##\n#### Y\n-"), false)
	f.Fuzz(func(t *testing.T, living, delta []byte, exists bool) {
		d := parseDelta("auth", decodeUTF8(delta))
		validateDelta("delta.md", d)
		a, err := applyDelta(d, decodeUTF8(living), exists, "c", "delta.md", "spec.md")
		if err != nil {
			return
		}
		if !strings.HasSuffix(a.text, "\n") {
			t.Errorf("the spec does not end with a newline: %q", a.text)
		}
		checkSpec("spec.md", a.text)
		matchLineEnding(a.text, string(living))
	})
}

package openspec

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/set-engine/set/engine/diag"
)

const linksSpec = "# links Specification\n\n## Purpose\nShort links.\n\n## Requirements\n\n### Requirement: Create a short link\nThe system SHALL create a short link.\n\n#### Scenario: ok\n- WHEN a URL is given\n- THEN a short link is returned\n"

// block is a delta requirement block named name.
func block(name string) string {
	return "### Requirement: " + name + "\nThe system SHALL " + strings.ToLower(name) + ".\n\n#### Scenario: ok\n- WHEN asked\n- THEN done\n"
}

func addedDelta(names ...string) string {
	s := "## ADDED Requirements\n\n"
	for _, n := range names {
		s += block(n) + "\n"
	}
	return s
}

func modifiedDelta(names ...string) string {
	s := "## MODIFIED Requirements\n\n"
	for _, n := range names {
		s += block(n) + "\n"
	}
	return s
}

// diagLines renders ds one per line, as the CLI prints them.
func diagLines(ds diag.List) string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = string(d.Severity) + ": " + d.Error()
	}
	return strings.Join(lines, "\n")
}

// openChangesTree holds folders OpenSpec validates and folders it refuses
// (and two that set refuses for their depends_on alone).
var openChangesTree = Tree{
	"openspec/specs/links/spec.md":                        []byte(linksSpec),
	"openspec/changes/add-x/.openspec.yaml":               []byte("schema: spec-driven\ncreated: 2026-11-27\ndepends_on:\n  - add-y\n  - other-z\n"),
	"openspec/changes/add-x/proposal.md":                  []byte("## Why\nBecause.\n"),
	"openspec/changes/add-x/design.md":                    []byte("# Design\n"),
	"openspec/changes/add-x/tasks.md":                     []byte("- [ ] 1.1 do it\n"),
	"openspec/changes/add-x/specs/links/spec.md":          []byte(modifiedDelta("Create a short link")),
	"openspec/changes/add-x/specs/search/full/spec.md":    []byte(addedDelta("Search")),
	"openspec/changes/add-y/specs/links/spec.md":          []byte(addedDelta("Delete a short link")),
	"openspec/changes/add-y/.openspec.yaml":               []byte("schema: spec-driven\ndepends_on: [] # none\n"),
	"openspec/changes/no-shall/specs/links/spec.md":       []byte(strings.Replace(addedDelta("Expire"), "SHALL", "will", 1)),
	"openspec/changes/no-scenario/specs/links/spec.md":    []byte("## ADDED Requirements\n\n### Requirement: Bare\nThe system SHALL be bare.\n"),
	"openspec/changes/empty/.openspec.yaml":               []byte("schema: spec-driven\ncreated: 2026-11-27\n"),
	"openspec/changes/docs-only/.openspec.yaml":           []byte("schema: spec-driven\nskip_specs: true\n"),
	"openspec/changes/docs-only/proposal.md":              []byte("## Why\nDocs.\n"),
	"openspec/changes/bad-dep/.openspec.yaml":             []byte("schema: spec-driven\ndepends_on: add-y\n"),
	"openspec/changes/bad-dep/specs/links/spec.md":        []byte(addedDelta("Share")),
	"openspec/changes/bad-dep-item/.openspec.yaml":        []byte("schema: spec-driven\ndepends_on:\n  - add-y\n  - Add_Y\n  - {a: b}\n"),
	"openspec/changes/bad-dep-item/specs/links/spec.md":   []byte(addedDelta("Print")),
	"openspec/changes/odd-meta/.openspec.yaml":            []byte("schema: 42\nretire_capabilities: yes please\n"),
	"openspec/changes/odd-meta/specs/links/spec.md":       []byte(addedDelta("Odd")),
	"openspec/changes/ns/inner/proposal.md":               []byte("## Why\nNested.\n"),
	"openspec/changes/archive/2026-01-01-old/proposal.md": []byte("old\n"),
	"openspec/changes/.draft/specs/links/spec.md":         []byte("junk\n"),
	"openspec/changes/tasks-nobox/specs/links/spec.md":    []byte(addedDelta("Nobox")),
	"openspec/changes/tasks-nobox/tasks.md":               []byte("# Tasks\n\n```\n- fenced\n```\n<!--\n- in a comment\n-->\n    - code\n1. first\n"),
	"openspec/changes/tasks-dup/specs/links/spec.md":      []byte(addedDelta("Dup")),
	"openspec/changes/tasks-dup/.openspec.yaml":           []byte("schema: spec-driven\n"),
	"openspec/changes/tasks-dup/tasks.md":                 []byte("## 1. One\r\n- [ ] 1.1 a\r\n- [x] 1.1 b\r\n## 2. Two\r\n- [ ] 1.2a c\r\n- [ ] 2.1. not an ID\r\n## Notes\r\n- [ ] 9.9 free\r\n"),
	"openspec/changes/tasks-ok/specs/links/spec.md":       []byte(addedDelta("Fine")),
	"openspec/changes/tasks-ok/tasks.md":                  []byte("---\ntags:\n- a\n---\n## 01. One\n- [ ] 1.1 a\n- [ ] 1.2\n"),
	"openspec/changes/tasks-front/specs/links/spec.md":    []byte(addedDelta("Front")),
	"openspec/changes/tasks-front/tasks.md":               []byte("\ufeff---\ntags:\n- a\n---\nNo list.\n"),
	"openspec/changes/tasks-custom/specs/links/spec.md":   []byte(addedDelta("Custom")),
	"openspec/changes/tasks-custom/.openspec.yaml":        []byte("schema: custom-x\n"),
	"openspec/changes/tasks-custom/tasks.md":              []byte("## 1. One\n- [ ] 2.1 a\n"),
	"openspec/changes/drops/specs/links/spec.md":          []byte(strings.Replace(modifiedDelta("Create a short link"), "Scenario: ok", "Scenario: other", 1)),
	"openspec/changes/drops-renamed/specs/links/spec.md":  []byte("## RENAMED Requirements\n\n- FROM: `### Requirement: Create a short link`\n- TO: `### Requirement: Make a short link`\n\n" + strings.Replace(modifiedDelta("Make a short link"), "Scenario: ok", "Scenario: other", 1)),
	"openspec/changes/keeps/specs/links/spec.md":          []byte(modifiedDelta("Create a short link") + "#### Scenario: more\n- WHEN more\n- THEN more\n"),
	"openspec/changes/unpaired/specs/links/spec.md":       []byte(addedDelta("Pair") + "## RENAMED Requirements\n\n- FROM: `### Requirement: Create a short link`\n"),
	"openspec/changes/orphan/specs/links/spec.md":         []byte("## Notes\n\n" + block("Stray") + "\n" + addedDelta("Kept")),
	"openspec/changes/README.md":                          []byte("not a change\n"),
}

func TestOpenChanges(t *testing.T) {
	tree := openChangesTree
	folders, ds := OpenChanges(tree)
	var names []string
	for _, f := range folders {
		names = append(names, f.Name)
	}
	if diff := cmp.Diff([]string{"add-x", "add-y", "docs-only", "keeps", "odd-meta", "tasks-custom", "tasks-front", "tasks-ok"}, names); diff != "" {
		t.Errorf("folders (-want +got):\n%s", diff)
	}
	want := strings.Join([]string{
		`error: depends_on: want a list of change names, as in depends_on: [add-links]: openspec/changes/bad-dep/.openspec.yaml:2`,
		`error: depends_on: "Add_Y" is not a change name (want kebab-case, the name of a folder under openspec/changes/): openspec/changes/bad-dep-item/.openspec.yaml:4`,
		`error: depends_on: "" is not a change name (want kebab-case, the name of a folder under openspec/changes/): openspec/changes/bad-dep-item/.openspec.yaml:5`,
		`error: MODIFIED requirement "Create a short link" drops the scenario(s) "ok" that openspec/specs/links/spec.md has; a MODIFIED block replaces the whole requirement, so copy them into it: openspec/changes/drops/specs/links/spec.md:3`,
		`error: MODIFIED requirement "Make a short link" drops the scenario(s) "ok" that openspec/specs/links/spec.md has; a MODIFIED block replaces the whole requirement, so copy them into it: openspec/changes/drops-renamed/specs/links/spec.md:8`,
		`error: the change has no delta operation (want specs/<capability>/spec.md with ## ADDED/MODIFIED/REMOVED/RENAMED Requirements, or skip_specs: true in its .openspec.yaml): openspec/changes/empty`,
		`error: ADDED requirement "Bare" has no scenario (want a "#### Scenario:" heading with steps under it): openspec/changes/no-scenario/specs/links/spec.md:3`,
		`error: ADDED requirement "Expire" should contain SHALL or MUST: openspec/changes/no-shall/specs/links/spec.md:3`,
		`error: not a change: a folder holding the change(s) ns/inner; OpenSpec reads a change only directly under openspec/changes/: openspec/changes/ns`,
		`error: requirement "Stray" is under "## Notes", which is not a delta section, so it is ignored: openspec/changes/orphan/specs/links/spec.md:3`,
		`error: task ID "1.1" is duplicated; it was first declared on line 2: openspec/changes/tasks-dup/tasks.md:3`,
		`error: task "1.2a" is under group 2, but its leading number points to group 1; move it to group 1 or renumber it: openspec/changes/tasks-dup/tasks.md:5`,
		"error: this change counts as 0 tasks: no line of its tasks.md is a checkbox, so OpenSpec reports no work and `openspec validate --strict` refuses it; write each task as \"- [ ] 1.1 Description\": openspec/changes/tasks-nobox/tasks.md:10",
		`error: RENAMED FROM: "Create a short link" has no matching TO: line; write each rename as a FROM: line followed by its TO: line: openspec/changes/unpaired/specs/links/spec.md:12`,
	}, "\n")
	if diff := cmp.Diff(want, diagLines(ds)); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}

	x := folders[0]
	if diff := cmp.Diff([]NamedLine{{"add-y", 4}, {"other-z", 5}}, x.DependsOn); diff != "" {
		t.Errorf("add-x DependsOn (-want +got):\n%s", diff)
	}
	if x.MetadataFile != "openspec/changes/add-x/.openspec.yaml" {
		t.Errorf("add-x MetadataFile = %q", x.MetadataFile)
	}
	if string(x.Files["proposal.md"]) != "## Why\nBecause.\n" || string(x.Files["design.md"]) != "# Design\n" || string(x.Files["tasks.md"]) != "- [ ] 1.1 do it\n" {
		t.Errorf("add-x proposal/design/tasks = %q, %q, %q", x.Files["proposal.md"], x.Files["design.md"], x.Files["tasks.md"])
	}
	wantFiles := []string{".openspec.yaml", "design.md", "proposal.md", "specs/links/spec.md", "specs/search/full/spec.md", "tasks.md"}
	var gotFiles []string
	for f := range x.Files {
		gotFiles = append(gotFiles, f)
	}
	sort.Strings(gotFiles)
	if diff := cmp.Diff(wantFiles, gotFiles); diff != "" {
		t.Errorf("add-x Files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"links": "openspec/changes/add-x/specs/links/spec.md", "search/full": "openspec/changes/add-x/specs/search/full/spec.md"}, x.DeltaFiles); diff != "" {
		t.Errorf("add-x DeltaFiles (-want +got):\n%s", diff)
	}
	if len(x.Deltas) != 2 || x.Deltas[0].Capability != "links" || len(x.Deltas[0].Modified) != 1 || x.Deltas[0].Modified[0].Name != "Create a short link" || x.Deltas[0].Modified[0].Line != 3 ||
		x.Deltas[1].Capability != "search/full" || len(x.Deltas[1].Added) != 1 {
		t.Errorf("add-x Deltas = %+v", x.Deltas)
	}
	if y := folders[1]; y.DependsOn != nil || y.Files["proposal.md"] != nil || y.MetadataFile == "" {
		t.Errorf("add-y: DependsOn %v, Proposal %q, MetadataFile %q", y.DependsOn, y.Files["proposal.md"], y.MetadataFile)
	}
	if d := folders[2]; len(d.Deltas) != 0 || d.MetadataFile == "" {
		t.Errorf("docs-only: %+v", d)
	}
}

// TestDependsOnKeepsMarkers: depends_on, whatever its shape, changes
// nothing in how the archive reads skip_specs and retire_capabilities
// (OpenSpec ignores the key).
func TestDependsOnKeepsMarkers(t *testing.T) {
	for _, meta := range []string{
		"schema: spec-driven\nskip_specs: true\ndepends_on: [add-x]\n",
		"schema: spec-driven\nskip_specs: true\ndepends_on: 7\n",
		"schema: spec-driven\nskip_specs: true\ndepends_on: {a: [b]}\n",
	} {
		root := t.TempDir()
		if err := materialise(root, Tree{"openspec/changes/c/.openspec.yaml": []byte(meta)}); err != nil {
			t.Fatal(err)
		}
		m, err := readMarker(root, "openspec/changes/c", "skip_specs")
		if err != nil || !m.declared || m.invalid != "" {
			t.Errorf("%q: skip_specs %+v, %v; want declared", meta, m, err)
		}
	}
}

func TestReadDependsOn(t *testing.T) {
	for _, tc := range []struct {
		src, want string
	}{
		{"schema: spec-driven\n", ""},
		{"schema: spec-driven\ndepends_on:\n", ""},
		{"schema: spec-driven\ndepends_on: [a-b, c]\n", "a-b:2 c:2"},
		{"depends_on:\n- a\n- b\n", "a:2 b:3"},
		{"depends_on: [a\n", "error: depends_on cannot be read: the file is not valid YAML (yaml: line 1: did not find expected ',' or ']'): m.yaml"},
		{"schema: [x\n", ""},
		{"- a\n", ""},
		{"depends_on: [1]\n", `error: depends_on: "1" is not a change name (want kebab-case, the name of a folder under openspec/changes/): m.yaml:1`},
	} {
		deps, ds := readDependsOn("m.yaml", tc.src)
		var got []string
		for _, d := range deps {
			got = append(got, d.Name+":"+strconv.Itoa(d.Line))
		}
		if s := diagLines(ds); s != "" {
			got = append(got, s)
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%q: got %q, want %q", tc.src, g, tc.want)
		}
	}
}

func TestCheckArchivable(t *testing.T) {
	tree := Tree{
		"openspec/specs/links/spec.md":                    []byte(linksSpec),
		"openspec/changes/add-x/specs/auth/spec.md":       []byte(addedDelta("Log in")),
		"openspec/changes/mod-x/specs/auth/spec.md":       []byte(modifiedDelta("Log in")),
		"openspec/changes/bad/specs/links/spec.md":        []byte(modifiedDelta("Delete a short link")),
		"openspec/changes/ren/specs/links/spec.md":        []byte("## RENAMED Requirements\n\n- FROM: `### Requirement: Shorten`\n- TO: `### Requirement: Make short`\n"),
		"openspec/changes/rem/specs/links/spec.md":        []byte("## REMOVED Requirements\n\n### Requirement: create a short link\n"),
		"openspec/changes/new-cap/specs/billing/spec.md":  []byte(addedDelta("Invoice") + "\n## RENAMED Requirements\n\n- FROM: `### Requirement: Bill`\n- TO: `### Requirement: Invoicing`\n"),
		"openspec/changes/added-twice/specs/auth/spec.md": []byte(strings.Replace(addedDelta("Log in"), "SHALL log in", "SHALL log in twice", 1)),
		"openspec/changes/mod-links/specs/links/spec.md":  []byte(modifiedDelta("Create a short link")),
	}
	before := Tree{}
	for k, v := range tree {
		before[k] = append([]byte(nil), v...)
	}
	render := func(m map[string]diag.List) string {
		var lines []string
		for _, name := range []string{"add-x", "mod-x", "bad", "ren", "rem", "new-cap", "added-twice", "mod-links", "gone"} {
			if ds, ok := m[name]; ok {
				lines = append(lines, name+": "+diagLines(ds))
			}
		}
		return strings.Join(lines, "\n")
	}

	// In order: add-x creates auth, which mod-x modifies; a refused change
	// is skipped and the others go on.
	got := CheckArchivable(tree, []string{"add-x", "mod-x", "bad", "ren", "rem", "new-cap", "added-twice", "mod-links", "gone"}, archiveDate)
	want := strings.Join([]string{
		`bad: error: MODIFIED requirement "Delete a short link" does not exist in openspec/specs/links/spec.md: openspec/changes/bad/specs/links/spec.md:3`,
		`ren: error: RENAMED requirement "Shorten" does not exist in openspec/specs/links/spec.md: openspec/changes/ren/specs/links/spec.md:3`,
		`rem: error: REMOVED requirement "create a short link" does not exist in openspec/specs/links/spec.md, but "Create a short link" does (line 8); write the name exactly as the spec does: openspec/changes/rem/specs/links/spec.md:3`,
		`new-cap: error: openspec/specs/billing/spec.md does not exist; a new capability takes only ADDED requirements (RENAMED "Bill"): openspec/changes/new-cap/specs/billing/spec.md:13`,
		`added-twice: error: ADDED requirement "Log in" already exists in openspec/specs/auth/spec.md (line 8) with other content: openspec/changes/added-twice/specs/auth/spec.md:3`,
		`gone: error: no such change folder: openspec/changes/gone`,
	}, "\n")
	if diff := cmp.Diff(want, render(got)); diff != "" {
		t.Errorf("in order (-want +got):\n%s", diff)
	}

	// The other way round, mod-x comes before the capability exists.
	got = CheckArchivable(tree, []string{"mod-x", "add-x"}, archiveDate)
	want = `mod-x: error: openspec/specs/auth/spec.md does not exist; a new capability takes only ADDED requirements (MODIFIED "Log in"): openspec/changes/mod-x/specs/auth/spec.md:3`
	if diff := cmp.Diff(want, render(got)); diff != "" {
		t.Errorf("wrong order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, tree); diff != "" {
		t.Errorf("CheckArchivable changed its tree (-before +after):\n%s", diff)
	}
}

// TestArchivableCorpus: over the differential archive corpus, whose
// want.txtar is the real CLI's outcome, CheckArchivable refuses a change
// exactly when `openspec archive` did, and names a position for each
// refusal.
func TestArchivableCorpus(t *testing.T) {
	for _, c := range loadDiffCases(t) {
		tree := Tree{}
		for _, f := range c.before {
			tree[f.Name] = f.Data
		}
		want, err := os.ReadFile(filepath.Join(c.dir, "want.txtar"))
		if err != nil {
			t.Fatal(err)
		}
		refused := string(want) == refusedSnapshot
		ds, got := CheckArchivable(tree, []string{c.change}, diffDate)[c.change]
		if got != refused {
			t.Errorf("%s: CheckArchivable refuses %s: %v, the CLI: %v\n%s", c.name, c.change, got, refused, diagLines(ds))
		}
		for _, d := range ds {
			if d.Pos.File == "" && !strings.Contains(d.Summary, "openspec/") {
				t.Errorf("%s: a refusal without a position: %s", c.name, d.Summary)
			}
		}
	}
}

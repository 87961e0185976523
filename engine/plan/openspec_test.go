package plan

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/openspec"
	"github.com/set-engine/set/engine/spec"
)

// folder is an open change folder as openspec.OpenChanges reads it, with
// one delta per capability (sorted) and depends_on at lines 3, 4…
func folder(name string, deltas []*openspec.Delta, dependsOn ...string) *openspec.Folder {
	f := &openspec.Folder{Name: name, DeltaFiles: map[string]string{}, Files: map[string][]byte{
		".openspec.yaml": []byte("schema: spec-driven\ncreated: 2026-11-27\n"),
	}}
	for _, d := range deltas {
		f.Deltas = append(f.Deltas, d)
		f.DeltaFiles[d.Capability] = "openspec/changes/" + name + "/specs/" + d.Capability + "/spec.md"
	}
	if len(dependsOn) > 0 {
		f.MetadataFile = "openspec/changes/" + name + "/.openspec.yaml"
		for i, d := range dependsOn {
			f.DependsOn = append(f.DependsOn, openspec.NamedLine{Name: d, Line: 4 + i})
		}
	}
	return f
}

func block(name string, line int) openspec.RequirementBlock {
	return openspec.RequirementBlock{Name: name, Line: line, Raw: "### Requirement: " + name +
		"\nThe system SHALL " + strings.ToLower(name) + ".\n\n#### Scenario: It works\n- **WHEN** asked\n- **THEN** it does"}
}

// main is main's openspec/ with a living links spec holding "Open a short link".
var mainTree = openspec.Tree{
	"openspec/specs/links/spec.md": []byte("# links Specification\n\n## Purpose\nShort links.\n\n## Requirements\n" +
		"### Requirement: Open a short link\nThe system SHALL redirect.\n\n#### Scenario: Open\n- **WHEN** opened\n- **THEN** redirected\n"),
	"openspec/changes/archive/2026-11-01-add-base/proposal.md": []byte("## Why\nBase.\n"),
}

func TestFromFoldersRequirements(t *testing.T) {
	f := folder("edit-links", []*openspec.Delta{
		{Capability: "auth", Added: []openspec.RequirementBlock{block("Log in", 3)}},
		{Capability: "links",
			Removed:  []openspec.NamedLine{{Name: "Delete a short link", Line: 20}},
			Renamed:  []openspec.Rename{{From: "Open a short link", To: "Follow a short link", Line: 25}},
			Modified: []openspec.RequirementBlock{block("Create a short link", 10)},
			Added:    []openspec.RequirementBlock{block("List short links", 3)},
		},
	})
	f.Files["proposal.md"] = []byte("# Proposal\n\n## Why\nLinks are too long\nto read.\n\nSecond paragraph.\n\n## What Changes\n- x\n")
	got := FromFolders([]*openspec.Folder{f}, mainTree, nil)
	if len(got.Problems) > 0 {
		t.Fatalf("problems: %v", got.Problems)
	}
	c := got.Changes[0]
	if c.Name != "edit-links" || c.Type != "feature" || c.Size != SizeS || c.Description != "Links are too long to read." {
		t.Errorf("change = %+v", c)
	}
	wantIDs := []string{"REQ-EDIT-LINKS-01", "REQ-EDIT-LINKS-02", "REQ-EDIT-LINKS-03", "REQ-EDIT-LINKS-04", "REQ-EDIT-LINKS-05"}
	if !reflect.DeepEqual(c.Requirements, wantIDs) {
		t.Errorf("requirements = %v, want %v", c.Requirements, wantIDs)
	}
	for _, id := range wantIDs {
		if !spec.IDPattern.MatchString(id) {
			t.Errorf("%s does not match spec.IDPattern", id)
		}
	}
	type row struct {
		ID, Title, Domain, File string
		Line                    int
		Status                  spec.Status
		Living                  string
		Differs                 []string
	}
	var rows []row
	for i, r := range got.Requirements {
		st := got.Standings[i]
		if st.ID != r.ID || st.Capability != r.Domain {
			t.Errorf("standing %d = %+v for %s", i, st, r.ID)
		}
		rows = append(rows, row{r.ID, r.Title, r.Domain, r.File, r.Line, st.Status, st.Living, st.Differs})
	}
	links := "openspec/changes/edit-links/specs/links/spec.md"
	want := []row{
		{"REQ-EDIT-LINKS-01", "Log in", "auth", "openspec/changes/edit-links/specs/auth/spec.md", 3, spec.New, "", nil},
		{"REQ-EDIT-LINKS-02", "List short links", "links", links, 3, spec.New, "", nil},
		{"REQ-EDIT-LINKS-03", "Create a short link", "links", links, 10, spec.Changed, "Create a short link", nil},
		{"REQ-EDIT-LINKS-04", "Delete a short link", "links", links, 20, spec.Removed, "Delete a short link", nil},
		{"REQ-EDIT-LINKS-05", "Follow a short link", "links", links, 25, spec.Changed, "Open a short link", []string{"title"}},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("requirements:\n got %+v\nwant %+v", rows, want)
	}
	r := got.Requirements[2]
	if r.Text != "The system SHALL create a short link." || len(r.Scenarios) != 1 || r.Scenarios[0].Name != "It works" || r.Scenarios[0].Line != 13 {
		t.Errorf("modified requirement = %+v", r)
	}
}

func TestFromFoldersNames(t *testing.T) {
	got := FromFolders([]*openspec.Folder{
		folder("Add_Links", []*openspec.Delta{{Capability: "links", Added: []openspec.RequirementBlock{block("A", 3)}}}),
	}, mainTree, nil)
	if len(got.Problems) != 1 || got.Problems[0].At.File != "openspec/changes/Add_Links/" ||
		!strings.Contains(got.Problems[0].Message, `"Add_Links" cannot name a change`) {
		t.Errorf("problems = %+v", got.Problems)
	}
}

// TestFromFoldersDependencies covers every kind of dependency: on the
// change that ADDs what one MODIFIES, REMOVES or RENAMES, on the one that
// RENAMEs to what one MODIFIES, on the one that RENAMEs away (or REMOVES)
// a living name one ADDs again, and depends_on; a living requirement or a
// name archived on main makes none.
func TestFromFoldersDependencies(t *testing.T) {
	folders := []*openspec.Folder{
		folder("add-links", []*openspec.Delta{{Capability: "links", Added: []openspec.RequirementBlock{block("Create a short link", 3), block("Count clicks", 12)}}}),
		folder("edit-links", []*openspec.Delta{{Capability: "links", Modified: []openspec.RequirementBlock{block("Create a short link", 3)}}}),
		folder("drop-clicks", []*openspec.Delta{{Capability: "links", Removed: []openspec.NamedLine{{Name: "Count clicks", Line: 3}}}}, "add-base"),
		folder("rename-open", []*openspec.Delta{{Capability: "links", Renamed: []openspec.Rename{{From: "Open a short link", To: "Follow a short link", Line: 3}}}}),
		folder("tune-follow", []*openspec.Delta{{Capability: "links", Modified: []openspec.RequirementBlock{block("Follow a short link  ", 3)}}}, "add-auth"),
		folder("add-auth", []*openspec.Delta{{Capability: "auth", Added: []openspec.RequirementBlock{block("Log in", 3)}}}),
		folder("reopen", []*openspec.Delta{{Capability: "links", Added: []openspec.RequirementBlock{block("Open a short link", 3)}}}),
	}
	got := FromFolders(folders, mainTree, nil)
	if len(got.Problems) > 0 {
		t.Fatalf("problems: %v", got.Problems)
	}
	because := map[string]map[string]string{}
	for _, c := range got.Changes {
		because[c.Name] = c.Because
		if len(c.DependsOn) != len(c.Because) {
			t.Errorf("%s: dependsOn %v, because %v", c.Name, c.DependsOn, c.Because)
		}
	}
	want := map[string]map[string]string{
		"add-auth":    nil,
		"add-links":   nil,
		"drop-clicks": {"add-links": `REMOVED "Count clicks" (links), which add-links ADDs`},
		"edit-links":  {"add-links": `MODIFIED "Create a short link" (links), which add-links ADDs`},
		"rename-open": nil,
		"reopen":      {"rename-open": `ADDED "Open a short link" (links), which main has and rename-open RENAMEs away`},
		"tune-follow": {
			"rename-open": `MODIFIED "Follow a short link" (links), which rename-open RENAMEs to`,
			"add-auth":    "depends_on in openspec/changes/tune-follow/.openspec.yaml:4",
		},
	}
	if !reflect.DeepEqual(because, want) {
		t.Errorf("because:\n got %v\nwant %v", because, want)
	}
}

func TestFromFoldersProblems(t *testing.T) {
	modify := func(name string, line int, deps ...string) *openspec.Folder {
		return folder(name, []*openspec.Delta{{Capability: "links", Modified: []openspec.RequirementBlock{block("Open a short link", line)}}}, deps...)
	}
	for _, tc := range []struct {
		name    string
		folders []*openspec.Folder
		want    []string // message fragment and its position
	}{{
		name:    "unordered double MODIFY",
		folders: []*openspec.Folder{modify("a-fast", 3), modify("b-slow", 7)},
		want: []string{`MODIFIED "Open a short link" (links) is also MODIFIED by a-fast, and neither change depends on the other: OpenSpec folds them in the order they are archived, so say which lands first with depends_on: [a-fast] in openspec/changes/b-slow/.openspec.yaml`,
			"openspec/changes/b-slow/specs/links/spec.md:7"},
	}, {
		name: "double MODIFY of a requirement nobody has", // CheckArchivable refuses both
		folders: []*openspec.Folder{
			folder("a-fast", []*openspec.Delta{{Capability: "links", Modified: []openspec.RequirementBlock{block("Nothing", 3)}}}),
			folder("b-slow", []*openspec.Delta{{Capability: "links", Modified: []openspec.RequirementBlock{block("Nothing", 3)}}}),
		},
	}, {
		name:    "ordered double MODIFY",
		folders: []*openspec.Folder{modify("a-fast", 3), modify("b-slow", 7, "a-fast")},
	}, {
		name:    "cycle",
		folders: []*openspec.Folder{modify("a-fast", 3, "b-slow"), modify("b-slow", 7, "a-fast")},
		want: []string{"dependency cycle: a-fast → b-slow → a-fast (a-fast after b-slow: depends_on in openspec/changes/a-fast/.openspec.yaml:4; b-slow after a-fast: depends_on in openspec/changes/b-slow/.openspec.yaml:4)",
			"openspec/changes/a-fast/"},
	}, {
		name:    "unknown depends_on",
		folders: []*openspec.Folder{modify("a-fast", 3, "b-slow", "a-fsat")},
		want: []string{`depends_on names "b-slow", which is neither an open change folder under openspec/changes/ nor archived on main`, "openspec/changes/a-fast/.openspec.yaml:4",
			`depends_on names "a-fsat", which is neither an open change folder under openspec/changes/ nor archived on main`, "openspec/changes/a-fast/.openspec.yaml:5"},
	}, {
		name:    "archived depends_on",
		folders: []*openspec.Folder{modify("a-fast", 3, "add-base")},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := FromFolders(tc.folders, mainTree, nil)
			var msgs []string
			for _, p := range got.Problems {
				msgs = append(msgs, p.Message, diagPos(p))
			}
			if !reflect.DeepEqual(msgs, tc.want) {
				t.Errorf("problems:\n got %q\nwant %q", msgs, tc.want)
			}
		})
	}
}

// TestFromFoldersLanded: a folder whose change landed on main but was
// never archived there (its fold was refused as it merged) is a problem
// at the folder, not a change to implement again; one whose name a landed
// change archived on main is a new folder of that name, planned.
func TestFromFoldersLanded(t *testing.T) {
	links := folder("add-links", []*openspec.Delta{{Capability: "links", Added: []openspec.RequirementBlock{block("Create a short link", 3)}}})
	got := FromFolders([]*openspec.Folder{links}, mainTree, map[string]bool{"add-links": true})
	var msgs []string
	for _, p := range got.Problems {
		msgs = append(msgs, p.Message, diagPos(p))
	}
	want := []string{"the change add-links landed on main, but its folder is still open there (its archive was refused when it merged): archive it (setctl archive add-links, then commit) or remove it; set implements an open folder once", "openspec/changes/add-links/"}
	if !reflect.DeepEqual(msgs, want) || len(got.Changes) != 0 {
		t.Errorf("landed, never archived: changes %v, problems\n got %q\nwant %q", got.Changes, msgs, want)
	}

	again := maps.Clone(mainTree)
	again["openspec/changes/archive/2026-01-02-add-links/proposal.md"] = []byte("## Why\nOld links.\n")
	if got := FromFolders([]*openspec.Folder{links}, again, map[string]bool{"add-links": true}); len(got.Problems) != 0 || len(got.Changes) != 1 {
		t.Errorf("a new folder of a name archived on main: changes %v, problems %v", got.Changes, got.Problems)
	}
}

func diagPos(p Problem) string {
	if p.At.Line == 0 {
		return p.At.File
	}
	return p.At.File + ":" + strconv.Itoa(p.At.Line)
}

// TestValidateOpenSpecNoLimit: a change folder is the user's unit of work,
// never held to planner.maxRequirementsPerChange.
func TestValidateOpenSpecNoLimit(t *testing.T) {
	f := folder("add-links", []*openspec.Delta{{Capability: "links", Added: []openspec.RequirementBlock{block("A", 3), block("B", 9)}}})
	got := FromFolders([]*openspec.Folder{f}, mainTree, nil)
	p := &Plan{Strategy: "openspec", Changes: got.Changes, Requirements: got.Requirements, Standings: got.Standings}
	if err := Validate(p, Limits{MaxRequirementsPerChange: 1}); err != nil {
		t.Errorf("Validate: %v", err)
	}
	p.Strategy = "static"
	if err := Validate(p, Limits{MaxRequirementsPerChange: 1}); err == nil {
		t.Errorf("Validate of a static plan over the limit: no error")
	}
}

// TestWorkCoversTheFolder: a folder edited between two plans (its tasks,
// nothing of its delta) is new work.
func TestWorkCoversTheFolder(t *testing.T) {
	cfg := &config.Project{Name: "linkshort", Planner: config.Planner{Strategy: config.StrategyOpenSpec}}
	mk := func(tasks string) *Plan {
		rec := Record{OpenSpec: tree(
			"openspec/changes/add-links/.openspec.yaml", "schema: spec-driven\ncreated: 2026-11-27\n",
			"openspec/changes/add-links/specs/links/spec.md", addedLinks,
			"openspec/changes/add-links/tasks.md", tasks,
		)}
		fp, err := NewFingerprint(cfg, nil, "", nil, rec.OpenSpec)
		if err != nil {
			t.Fatal(err)
		}
		p, err := MakeWith(context.Background(), cfg, &spec.Spec{}, rec, fp, nil)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := mk("- [ ] 1.1 Do it\n"), mk("- [ ] 1.1 Do it well\n")
	if a.Work("add-links") == "" || a.Work("add-links") == b.Work("add-links") {
		t.Errorf("an edited tasks.md left Work as it was")
	}
	if a.Work("add-links") != mk("- [ ] 1.1 Do it\n").Work("add-links") {
		t.Errorf("Work differs for the same folder")
	}
}

// tree is main's openspec/ with the change folders written as `openspec
// new change` and a person would write them.
func tree(files ...string) openspec.Tree {
	t := openspec.Tree{
		"openspec/config.yaml":              []byte("schema: spec-driven\n"),
		"openspec/specs/.gitkeep":           nil,
		"openspec/changes/archive/.gitkeep": nil,
		"openspec/specs/auth/spec.md":       []byte("# auth Specification\n\n## Purpose\nWho may use the service and how they prove it.\n\n## Requirements\n### Requirement: Log in\nThe system SHALL let a user log in.\n\n#### Scenario: Log in\n- **WHEN** a user gives the right password\n- **THEN** they are logged in\n"),
	}
	for i := 0; i+1 < len(files); i += 2 {
		t[files[i]] = []byte(files[i+1])
	}
	return t
}

const addedLinks = "## ADDED Requirements\n\n### Requirement: Create a short link\nThe system SHALL create a short link for a URL.\n\n#### Scenario: Create\n- **WHEN** a user posts a URL\n- **THEN** a short link is returned\n"
const modifiedLinks = "## MODIFIED Requirements\n\n### Requirement: Create a short link\nThe system SHALL create a short link for a URL, at most 8 characters long.\n\n#### Scenario: Create\n- **WHEN** a user posts a URL\n- **THEN** a short link is returned\n"

func TestMakeWithOpenSpec(t *testing.T) {
	cfg := &config.Project{Name: "linkshort", Planner: config.Planner{Strategy: config.StrategyOpenSpec, MaxRequirementsPerChange: 1}}
	rec := Record{OpenSpec: tree(
		"openspec/changes/add-links/.openspec.yaml", "schema: spec-driven\ncreated: 2026-11-27\n",
		"openspec/changes/add-links/proposal.md", "## Why\nLinks are too long.\n\n## What Changes\n- short links\n",
		"openspec/changes/add-links/specs/links/spec.md", addedLinks,
		"openspec/changes/edit-links/.openspec.yaml", "schema: spec-driven\ncreated: 2026-11-27\n",
		"openspec/changes/edit-links/specs/links/spec.md", modifiedLinks,
		"openspec/changes/add-logout/.openspec.yaml", "schema: spec-driven\ncreated: 2026-11-27\n",
		"openspec/changes/add-logout/specs/auth/spec.md", "## ADDED Requirements\n\n### Requirement: Log out\nThe system SHALL let a user log out.\n\n#### Scenario: Log out\n- **WHEN** a user logs out\n- **THEN** their session ends\n",
	)}
	p, err := MakeWith(context.Background(), cfg, &spec.Spec{}, rec, Fingerprint{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range p.Changes {
		got = append(got, fmt.Sprintf("%s %v %v %q", c.Name, c.Requirements, c.DependsOn, c.Because))
	}
	want := []string{
		`add-links [REQ-ADD-LINKS-01] [] map[]`,
		`add-logout [REQ-ADD-LOGOUT-01] [] map[]`,
		`edit-links [REQ-EDIT-LINKS-01] [add-links] map["add-links":"MODIFIED \"Create a short link\" (links), which add-links ADDs"]`,
	}
	if p.Strategy != config.StrategyOpenSpec || !reflect.DeepEqual(got, want) {
		t.Errorf("plan (%s):\n got %q\nwant %q", p.Strategy, got, want)
	}
	// edit-links changes the text of what add-links ADDs.
	if st := p.Standing("REQ-EDIT-LINKS-01"); st.Status != spec.Changed || st.Living != "Create a short link" || !reflect.DeepEqual(st.Differs, []string{"text"}) {
		t.Errorf("standing of edit-links = %+v", st)
	}

	// Archived on main: not planned any more.
	applied := Record{OpenSpec: tree(
		"openspec/changes/archive/2026-11-27-add-links/specs/links/spec.md", addedLinks,
		"openspec/specs/links/spec.md", "# links Specification\n\n## Purpose\nTBD\n\n## Requirements\n### Requirement: Create a short link\nThe system SHALL create a short link for a URL.\n\n#### Scenario: Create\n- **WHEN** a user posts a URL\n- **THEN** a short link is returned\n",
	)}
	if p, err := MakeWith(context.Background(), cfg, &spec.Spec{}, applied, Fingerprint{}, nil); err != nil || len(p.Changes) != 0 {
		t.Errorf("a fully applied main planned %v, %v", p, err)
	}
}

// TestMakeWithOpenSpecRefused: a folder OpenSpec would refuse to archive
// is refused at plan time, at its delta's line.
func TestMakeWithOpenSpecRefused(t *testing.T) {
	cfg := &config.Project{Name: "linkshort", Planner: config.Planner{Strategy: config.StrategyOpenSpec}}
	rec := Record{OpenSpec: tree(
		"openspec/changes/bad/.openspec.yaml", "schema: spec-driven\ncreated: 2026-11-27\n",
		"openspec/changes/bad/specs/auth/spec.md", "## MODIFIED Requirements\n\n### Requirement: Log off\nThe system SHALL let a user log off.\n\n#### Scenario: Log off\n- **WHEN** a user logs off\n- **THEN** their session ends\n",
	)}
	_, err := MakeWith(context.Background(), cfg, &spec.Spec{}, rec, Fingerprint{}, nil)
	inv, ok := err.(*InvalidError)
	if !ok {
		t.Fatalf("err = %v, want an *InvalidError", err)
	}
	ds := inv.Diagnostics()
	if len(ds) != 1 || diag.Rel(ds[0].Pos, "") != "openspec/changes/bad/specs/auth/spec.md:3" || !strings.Contains(ds[0].Summary, `"Log off"`) {
		t.Errorf("diagnostics = %v", ds)
	}
}

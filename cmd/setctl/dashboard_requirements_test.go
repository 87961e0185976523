package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/set-engine/set/engine/spec"
	"github.com/set-engine/set/engine/state"
)

// requirementsProject is a project whose spec has one requirement, in a
// repository whose main holds it.
var requirementsProject = map[string]string{
	"cue.mod/module.cue": `module: "example.com/hello@v0"
language: version: "v0.17.0"
deps: "github.com/set-engine/set@v0": v: "v0.1.0"
`,
	"set.cue": `package hello

project: {
	profile: "shell"
	name:    "hello"
	spec: ["docs/spec.md"]
	agent: {adapter: "exec", argv: ["true"]}
	gates: check: run: ["true"]
	_stack: check: {}
	stacks: {feature: _stack, fix: _stack, refactor: _stack, infrastructure: _stack, schema: _stack, docs: _stack, test: _stack, cleanup: _stack}
	integration: check: {}
}
`,
	".gitignore": ".set/\n",
	"docs/spec.md": `# Hello
### REQ-A-01: Alpha
The system SHALL write a file.
#### Scenario: alpha
- **WHEN** the file is read
- **THEN** it is there
`,
}

// newRequirementsCache is the requirements' cache of requirementsProject
// in a repository of its own, and the project's directory.
func newRequirementsCache(t *testing.T) (*requirementsCache, string) {
	t.Helper()
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	t.Setenv("CUE_REGISTRY", "none")
	dir := t.TempDir()
	writeFiles(t, dir, requirementsProject)
	initRepo(t, dir)
	c := &requirementsCache{inputs: projectInputs{root: dir}}
	return c, dir
}

// TestDashboardRequirements: the dashboard's requirements are what setctl
// plan says of the spec and main now, with the run's statuses; the
// project is loaded and main read again only when main, HEAD or an input
// changed (an edit of the spec on disk shows at once), not at each
// refresh.
func TestDashboardRequirements(t *testing.T) {
	c, dir := newRequirementsCache(t)

	first := time.Now()
	rows, err := c.rows(state.New())
	t.Logf("the first reading took %s", time.Since(first))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].ID != "REQ-A-01" || rows[0].Status != spec.New || rows[0].Change == "" || rows[0].Why != "planned in "+rows[0].Change {
		t.Fatalf("rows before any run = %+v", rows)
	}
	change, read := rows[0].Change, c.plan

	// The run's change failed for good: the requirement is uncovered, from
	// the cache.
	st := state.New()
	st.LastSeq = 9
	st.Changes[change] = &state.Change{Name: change, Status: "failed:verify", Work: c.plan.Work(change)}
	start := time.Now()
	rows, err = c.rows(st)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if c.plan != read {
		t.Error("the project was read again though nothing changed")
	}
	if !rows[0].Uncovered || rows[0].Why != change+" is failed:verify" {
		t.Errorf("with the change failed: %+v", rows[0])
	}
	t.Logf("a refresh from the cache took %s", took)

	// A requirement added to the spec on disk shows at once.
	spec2 := requirementsProject["docs/spec.md"] + "### REQ-B-01: Bravo\nThe system SHALL write another file.\n#### Scenario: bravo\n- **WHEN** the other file is read\n- **THEN** it is there\n"
	if err := os.WriteFile(filepath.Join(dir, "docs", "spec.md"), []byte(spec2), 0o644); err != nil {
		t.Fatal(err)
	}
	if rows, err = c.rows(st); err != nil || len(rows) != 2 || rows[1].ID != "REQ-B-01" {
		t.Fatalf("after the spec's edit: %+v, %v", rows, err)
	}
	read = c.plan

	// main moves: read again.
	gitIn(t, dir, "commit", "-qam", "spec: bravo")
	if _, err = c.rows(st); err != nil {
		t.Fatal(err)
	}
	if c.plan == read {
		t.Error("main moved, and the requirements were not read again")
	}

	// A set.cue that no longer loads says so, until it loads again.
	if err := os.WriteFile(filepath.Join(dir, "set.cue"), []byte("package hello\nproject: name: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err = c.rows(st); err == nil {
		t.Error("no error from a set.cue that does not load")
	}
	if err := os.WriteFile(filepath.Join(dir, "set.cue"), []byte(requirementsProject["set.cue"]), 0o644); err != nil {
		t.Fatal(err)
	}
	if rows, err = c.rows(st); err != nil || len(rows) != 2 {
		t.Errorf("set.cue loads again: %+v, %v", rows, err)
	}
}

// TestDashboardRequirementsNewFile: a CUE file written at the root after
// the page was first read is a new input of set.cue's package, read
// without an edit of set.cue or a move of main, as the learnings' page
// reads learnings.cue (one that does not load says so at once).
func TestDashboardRequirementsNewFile(t *testing.T) {
	c, dir := newRequirementsCache(t)
	if rows, err := c.rows(state.New()); err != nil || len(rows) != 1 {
		t.Fatalf("rows = %+v, %v", rows, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "more.cue"), []byte("package hello\nproject: name: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.rows(state.New()); err == nil {
		t.Error("more.cue, which does not load, was not read: no error")
	}
}

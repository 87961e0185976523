package project

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/internal/gittest"
)

const addXDelta = `## ADDED Requirements

### Requirement: Create a short link
The service SHALL create a short link.

#### Scenario: created
- **WHEN** a URL is posted
- **THEN** a short link is returned
`

// writeOpenSpecProject writes a golang-profile project of the openspec
// strategy (no spec) with an open change folder add-x, an archived one
// and a living spec, in a git repository whose main holds them all.
func writeOpenSpecProject(t *testing.T) string {
	t.Helper()
	gittest.Hermetic(t, "")
	t.Setenv("CUE_CACHE_DIR", filepath.Join(t.TempDir(), "cue-cache"))
	t.Setenv("CUE_REGISTRY", "none")
	dir := t.TempDir()
	files := map[string]string{
		"cue.mod/module.cue":                                  moduleCUE,
		"set.cue":                                             "package demo\n\nimport \"github.com/set-engine/set/profiles/golang\"\n\nproject: golang.#Project & {\n\tname: \"demo\"\n\tplanner: strategy: \"openspec\"\n}\n",
		"openspec/specs/auth/spec.md":                         "# auth\n",
		"openspec/changes/add-x/proposal.md":                  "## Why\nLinks.\n",
		"openspec/changes/add-x/specs/links/spec.md":          addXDelta,
		"openspec/changes/archive/2026-01-01-old/proposal.md": "## Why\nOld.\n",
		"openspec/changes/.draft/proposal.md":                 "## Why\nNot yet.\n",
		"openspec/changes/README.md":                          "Not a change.\n",
	}
	for name, data := range files {
		writeFile(t, dir, name, data)
	}
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "initial")
	return dir
}

func writeFile(t *testing.T, dir, name, data string) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// A project of the openspec strategy loads without a spec; its inputs
// are its configuration and the files of its open change folders in the
// checkout, and what main records is main's openspec/ (not the
// checkout's), without set's REQ-ID reading of the living specs.
func TestOpenSpecProjectLoadAndRecord(t *testing.T) {
	ctx := context.Background()
	dir := writeOpenSpecProject(t)
	writeFile(t, dir, "openspec/changes/add-x/proposal.md", "## Why\nEdited, not committed.\n")
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.Requirements) != 0 || len(p.SpecData) != 0 || len(p.Warnings()) != 0 {
		t.Errorf("spec %v, files %v, warnings %v; want none", p.Spec.Requirements, p.SpecData, p.Warnings())
	}
	wantInputs := []string{"set.cue", "cue.mod/module.cue", "openspec/changes/add-x/proposal.md", "openspec/changes/add-x/specs/links/spec.md"}
	if got := p.Inputs(); !slices.Equal(got, wantInputs) {
		t.Errorf("Inputs = %q, want %q", got, wantInputs)
	}
	rec, living, err := p.Record(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(rec.OpenSpec["openspec/changes/add-x/proposal.md"]); got != "## Why\nLinks.\n" {
		t.Errorf("Record.OpenSpec has add-x's proposal %q, want main's", got)
	}
	if len(rec.OpenSpec) != 6 || rec.Living != nil {
		t.Errorf("Record.OpenSpec = %d files, Living %v; want main's 6 files and no living requirement", len(rec.OpenSpec), rec.Living)
	}
	if len(living) != 1 || living["openspec/specs/auth/spec.md"] == nil {
		t.Errorf("living spec files = %v, want openspec/specs/auth/spec.md", living)
	}
	_, fp, err := p.fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(fp.Folders) != 1 || fp.Folders["add-x"] == "" {
		t.Errorf("fingerprint folders = %v, want add-x", fp.Folders)
	}
}

// An uncommitted edit to a change folder, or a file added to one, is an
// input not committed: apply refuses to run on it.
func TestOpenSpecFoldersMustBeCommitted(t *testing.T) {
	ctx := context.Background()
	dir := writeOpenSpecProject(t)
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok, err := CheckInputsCommitted(ctx, p); err != nil || !ok {
		t.Fatalf("committed folders: %v, %v", d, err)
	}
	writeFile(t, dir, "openspec/changes/add-x/specs/links/spec.md", addXDelta+"\nEdited.\n")
	writeFile(t, dir, "openspec/changes/add-x/tasks.md", "- [ ] 1.1 Do it\n")
	writeFile(t, dir, "openspec/changes/archive/2026-01-01-old/notes.md", "not an input\n")
	if p, err = Load(dir); err != nil {
		t.Fatal(err)
	}
	d, ok, err := CheckInputsCommitted(ctx, p)
	if err != nil || ok {
		t.Fatalf("edited folder: ok %v, %v", ok, err)
	}
	want := `set.cue, cue.mod and the OpenSpec change folders must be committed on main as the run reads them, since the run puts on main what it makes of them:
    openspec/changes/add-x/specs/links/spec.md: differs from main
    openspec/changes/add-x/tasks.md: untracked
commit them before setctl apply:
    git add openspec/changes/add-x/specs/links/spec.md openspec/changes/add-x/tasks.md && git commit -m "OpenSpec change folders and set.cue"`
	if got := d.Text(dir); got != want {
		t.Errorf("CheckInputsCommitted:\n%s\nwant:\n%s", got, want)
	}
}

// The mixed-project rule for a markdown strategy: a change folder open on
// main that set did not land is refused at the folder, before any plan;
// one a landed change of set's left open (its archive refused) and one
// only in the checkout are not.
func TestMarkdownStrategyRefusesOpenFolders(t *testing.T) {
	ctx := context.Background()
	gittest.Hermetic(t, "")
	dir := writeProject(t, "")
	writeFile(t, dir, "openspec/changes/add-x/proposal.md", "## Why\nLinks.\n")
	writeFile(t, dir, "openspec/changes/archive/2026-01-01-old/proposal.md", "## Why\nOld.\n")
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "initial")
	writeFile(t, dir, "openspec/changes/only-here/proposal.md", "## Why\nNot on main.\n")

	pr, ds := Prepare(ctx, dir, Options{NoModel: true})
	want := `the OpenSpec change add-x on main would be neither implemented nor archived: planner.strategy "static" plans from the spec; choose planner.strategy: "openspec" (and remove spec) to implement the change folders, or archive it first (setctl archive add-x, then commit): openspec/changes/add-x/`
	if len(ds) != 1 || ds[0].Severity != diag.Error || ds[0].Text(pr.Root) != want {
		t.Fatalf("diagnostics %q, want\n%s", ds, want)
	}
	if pr.Plan != nil {
		t.Error("a plan was made")
	}

	writeFile(t, dir, "openspec/changes/add-x/tasks.md", "- [x] 1.1 Done\n")
	gitIn(t, dir, "add", "-A", "openspec/changes/add-x")
	gitIn(t, dir, "commit", "-qm", "add-x: links\n\nSet-Change: add-x")
	if pr, ds := Prepare(ctx, dir, Options{NoModel: true}); len(ds) != 0 || pr.Plan == nil {
		t.Fatalf("a folder set landed is refused: %v", ds)
	}
}

// A saved plan of the openspec strategy is stale once a change folder on
// main is edited; a folder gone from openspec/changes/ is what the run of
// that plan does as it archives, so resuming that run is not refused.
func TestSavedOpenSpecPlanFolders(t *testing.T) {
	ctx := context.Background()
	dir := writeOpenSpecProject(t)
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, fp, err := p.fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(t.TempDir(), "plan.json")
	if err := plan.Write(saved, &plan.Plan{Version: plan.FormatVersion, Project: "demo", Strategy: "openspec", Fingerprint: fp}); err != nil {
		t.Fatal(err)
	}
	now := func() plan.Fingerprint {
		t.Helper()
		_, fp, err := p.fingerprint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return fp
	}
	if _, err := p.SavedPlan(ctx, saved, "plan.json", now()); err != nil {
		t.Fatalf("fresh plan: %v", err)
	}

	gitIn(t, dir, "mv", "openspec/changes/add-x", "openspec/changes/archive/2026-11-27-add-x")
	gitIn(t, dir, "commit", "-qm", "Archive add-x")
	_, err = p.SavedPlan(ctx, saved, "plan.json", now())
	if want := "the plan in plan.json is stale: git HEAD moved"; err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "; openspec/changes/add-x is no longer open (archived or removed) since") {
		t.Fatalf("archived without a run: %v", err)
	}
	w, err := journal.Open(rundir.New(dir).Dir(), "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append("", journal.RunStartedData{Fingerprint: fp.Sum}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := p.SavedPlan(ctx, saved, "plan.json", now()); err != nil {
		t.Errorf("the run's own archive makes its plan stale: %v", err)
	}

	gitIn(t, dir, "mv", "openspec/changes/archive/2026-11-27-add-x", "openspec/changes/add-x")
	writeFile(t, dir, "openspec/changes/add-x/proposal.md", "## Why\nEdited.\n")
	gitIn(t, dir, "commit", "-qam", "edit add-x")
	_, err = p.SavedPlan(ctx, saved, "plan.json", now())
	if err == nil || !strings.Contains(err.Error(), "openspec/changes/add-x changed since") {
		t.Errorf("edited folder: %v", err)
	}
}

// A checkout on another branch than main keeps the change folders a run
// archived on main (main moved by its ref alone): those are done, not
// inputs missing from main, so a resumed apply is not refused for them;
// a folder open on main and edited in the checkout still is.
func TestOpenSpecFoldersArchivedOnMain(t *testing.T) {
	ctx := context.Background()
	dir := writeOpenSpecProject(t)
	gitIn(t, dir, "switch", "-q", "-c", "work")
	// The run archives add-x on main, from its own worktree.
	wt := filepath.Join(t.TempDir(), "wt")
	gitIn(t, dir, "worktree", "add", "-q", "--detach", wt, "main")
	gitIn(t, wt, "mv", "openspec/changes/add-x", "openspec/changes/archive/2026-11-27-add-x")
	gitIn(t, wt, "commit", "-qm", "add-x: links\n\nSet-Change: add-x")
	head, err := exec.Command("git", "-C", wt, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "update-ref", "refs/heads/main", strings.TrimSpace(string(head)))

	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok, err := CheckInputsCommitted(ctx, p); err != nil || !ok {
		t.Fatalf("a folder archived on main is refused: %v, %v", d.Text(dir), err)
	}

	writeFile(t, dir, "openspec/changes/add-y/proposal.md", "## Why\nMore.\n")
	if p, err = Load(dir); err != nil {
		t.Fatal(err)
	}
	if d, ok, err := CheckInputsCommitted(ctx, p); err != nil || ok || !strings.Contains(d.Text(dir), "openspec/changes/add-y/proposal.md: untracked") || strings.Contains(d.Text(dir), "add-x") {
		t.Errorf("a new folder beside one archived on main: ok %v, %v\n%s", ok, err, d.Text(dir))
	}
}

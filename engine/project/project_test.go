package project

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/load"
	"github.com/set-engine/set/engine/plan"
)

const moduleCUE = `module: "example.com/demo@v0"
language: version: "v0.17.0"
deps: "github.com/set-engine/set@v0": v: "v0.1.0"
`

const specMD = `# Spec

### REQ-A-01: First
#### Scenario: one
- **WHEN** a thing happens
- **THEN** it is done

### REQ-A-02: Second
#### Scenario: two
- **WHEN** a thing happens
- **THEN** it is done
`

// writeProject writes a golang-profile project whose project struct holds
// body, with the two-requirement spec above.
func writeProject(t *testing.T, body string) string {
	t.Helper()
	t.Setenv("CUE_CACHE_DIR", filepath.Join(t.TempDir(), "cue-cache"))
	t.Setenv("CUE_REGISTRY", "none")
	dir := t.TempDir()
	setCUE := "package demo\n\nimport \"github.com/set-engine/set/profiles/golang\"\n\nproject: golang.#Project & {\n\tname: \"demo\"\n\tspec: [\"docs/spec.md\"]\n" + body + "}\n"
	for name, data := range map[string]string{"cue.mod/module.cue": moduleCUE, "set.cue": setCUE, "docs/spec.md": specMD} {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestPrepare(t *testing.T) {
	ctx := context.Background()
	t.Run("valid", func(t *testing.T) {
		dir := writeProject(t, "")
		pr, ds := Prepare(ctx, dir, Options{})
		if len(ds) != 0 {
			t.Fatalf("diagnostics: %v", ds)
		}
		if pr.Plan == nil || pr.Graph == nil || len(pr.Plan.Changes) != len(pr.Graph.Changes) || len(pr.Plan.Changes) == 0 {
			t.Fatalf("plan %v, graph %v", pr.Plan, pr.Graph)
		}
	})
	tests := []struct {
		name, body string
		// path and text of the one diagnostic
		path, text string
	}{
		{"cue error", "\tgates: fmt: mode: \"warning\"\n",
			"project.gates.fmt.mode", `project.gates.fmt.mode: "warning" is not one of "run", "warn", "skip": set.cue:8:20`},
		{"invalid plan", "\tplan: changes: {\n\t\ta: {requirements: [\"REQ-A-01\"], dependsOn: [\"b\"]}\n\t\tstore: {requirements: [\"REQ-A-02\"]}\n\t}\n",
			"project.plan.changes.a", `project.plan.changes.a: change "a" depends on unknown change "b": set.cue:9:6`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeProject(t, tt.body)
			pr, ds := Prepare(ctx, dir, Options{})
			if len(ds) != 1 || ds[0].Severity != diag.Error {
				t.Fatalf("diagnostics: %v", ds)
			}
			if got := strings.Join(ds[0].Path, "."); got != tt.path {
				t.Errorf("path = %s, want %s", got, tt.path)
			}
			if got := ds[0].Text(pr.Root); !strings.HasPrefix(got, tt.text) {
				t.Errorf("text = %q, want prefix %q", got, tt.text)
			}
			if pr.Plan != nil || pr.Graph != nil {
				t.Error("a failed Prepare has a plan")
			}
		})
	}
}

func TestPrepareStalePlanFile(t *testing.T) {
	ctx := context.Background()
	dir := writeProject(t, "")
	pr, ds := Prepare(ctx, dir, Options{})
	if len(ds) != 0 {
		t.Fatal(ds)
	}
	saved := filepath.Join(dir, "plan.json")
	if err := plan.Write(saved, pr.Plan); err != nil {
		t.Fatal(err)
	}
	if _, ds := Prepare(ctx, dir, Options{PlanFile: saved, PlanFileShown: "plan.json"}); len(ds) != 0 {
		t.Fatalf("fresh plan file: %v", ds)
	}
	if err := os.WriteFile(filepath.Join(dir, "docs", "spec.md"), []byte(specMD+"\nMore words.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, ds = Prepare(ctx, dir, Options{PlanFile: saved, PlanFileShown: "plan.json"})
	if len(ds) != 1 || !strings.HasPrefix(ds[0].Summary, "the plan in plan.json is stale: spec file docs/spec.md changed") {
		t.Fatalf("stale plan file: %v", ds)
	}
}

// TestLoadSpecOutsideTheProject: a spec path or glob that leaves the
// project root, directly or through a symbolic link, is an error at
// project.spec, and nothing outside is read.
func TestLoadSpecOutsideTheProject(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"../x.md", `project.spec: spec "../x.md": outside the project; spec files must be under the project root: set.cue:7:8`},
		{"docs/../../x.md", `project.spec: spec "docs/../../x.md": outside the project; spec files must be under the project root: set.cue:7:8`},
		{"/etc/x.md", `project.spec: spec "/etc/x.md": an absolute path; spec paths are relative to the project root: set.cue:7:8`},
		{"../*.md", `project.spec: spec "../*.md": outside the project; spec files must be under the project root: set.cue:7:8`},
		{"docs/link.md", `project.spec: spec "docs/link.md": a link to OUTSIDE/x.md, outside the project; spec files must be under the project root: set.cue:7:8`},
		{"docs/*.md", `project.spec: spec file docs/link.md: a link to OUTSIDE/x.md, outside the project; spec files must be under the project root: set.cue:7:8`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			dir := writeProject(t, "")
			outside := t.TempDir()
			if err := os.WriteFile(filepath.Join(outside, "x.md"), []byte(specMD), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(outside, "x.md"), filepath.Join(dir, "docs", "link.md")); err != nil {
				t.Fatal(err)
			}
			setCUE := filepath.Join(dir, "set.cue")
			data, err := os.ReadFile(setCUE)
			if err != nil {
				t.Fatal(err)
			}
			data = []byte(strings.Replace(string(data), `"docs/spec.md"`, `"`+tt.spec+`"`, 1))
			if err := os.WriteFile(setCUE, data, 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := Load(dir)
			if err == nil {
				t.Fatalf("no error; spec files %v", p.SpecData)
			}
			ds := load.Diagnostics(err)
			realOutside, _ := filepath.EvalSymlinks(outside)
			want := strings.ReplaceAll(tt.want, "OUTSIDE", realOutside)
			if len(ds) != 1 || ds[0].Text(p.Root) != want {
				t.Errorf("diagnostics %v, want %q", ds, want)
			}
		})
	}
}

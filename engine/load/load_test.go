package load

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"cuelang.org/go/mod/module"

	set "github.com/set-engine/set"
)

func TestExtractIsContentAddressed(t *testing.T) {
	cache := t.TempDir()
	tree := fstest.MapFS{
		"cue.mod/module.cue": {Data: []byte("module: \"example.com/x@v0\"\nlanguage: version: \"v0.17.0\"\n")},
		"a/a.cue":            {Data: []byte("package a\nx: 1\n")},
	}
	first, err := extract(tree, cache)
	if err != nil {
		t.Fatal(err)
	}
	again, err := extract(tree, cache)
	if err != nil {
		t.Fatal(err)
	}
	if first != again {
		t.Errorf("same tree extracted to %s and %s", first, again)
	}
	data, err := os.ReadFile(filepath.Join(first, "a", "a.cue"))
	if err != nil || string(data) != "package a\nx: 1\n" {
		t.Errorf("extracted a.cue = %q, %v", data, err)
	}
	tree["a/a.cue"] = &fstest.MapFile{Data: []byte("package a\nx: 2\n")}
	changed, err := extract(tree, cache)
	if err != nil {
		t.Fatal(err)
	}
	if changed == first {
		t.Error("a changed tree reused the old directory")
	}
	entries, _ := os.ReadDir(filepath.Dir(first))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".extract-") {
			t.Errorf("temporary extraction left behind: %s", e.Name())
		}
	}
}

func TestRegistryServesEmbeddedModule(t *testing.T) {
	t.Setenv("CUE_REGISTRY", "none")
	reg, err := NewRegistry(set.ModulePath, set.ModuleVersion, set.Module, t.TempDir(), []string{"CUE_REGISTRY=none"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mv := module.MustNewVersion(set.ModulePath, set.ModuleVersion)
	mf, err := reg.ModFile(ctx, mv)
	if err != nil {
		t.Fatal(err)
	}
	if mf.QualifiedModule() != set.ModulePath {
		t.Errorf("module file declares %q", mf.QualifiedModule())
	}
	loc, err := reg.Fetch(ctx, mv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(reg.extracted, "profiles", "golang", "golang.cue")); err != nil {
		t.Errorf("golang profile not extracted: %v", err)
	}
	if loc.FS == nil {
		t.Error("Fetch returned no file system")
	}
	versions, err := reg.ModuleVersions(ctx, set.ModulePath)
	if err != nil || len(versions) != 1 || versions[0] != set.ModuleVersion {
		t.Errorf("ModuleVersions = %v, %v", versions, err)
	}
	// Any other module goes to the fallback registry, which here is none.
	other := module.MustNewVersion("example.com/other@v0", "v0.1.0")
	if _, err := reg.Fetch(ctx, other); err == nil {
		t.Error("fetching a module the binary does not embed succeeded with CUE_REGISTRY=none")
	}
}

func TestLoadReportsMissingFiles(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	_, err := Load(dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "no set.cue in") {
		t.Errorf("Load without set.cue = %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "set.cue"), []byte("package x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "no cue.mod/module.cue in") {
		t.Errorf("Load without cue.mod = %v", err)
	}
}

func TestLoadWithoutProjectField(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	if _, err := EnsureModuleFile(dir, "example.com/x@v0"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "set.cue"), []byte("package x\nother: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir, Options{Env: []string{"CUE_CACHE_DIR=" + t.TempDir(), "CUE_REGISTRY=none"}})
	if err == nil || !strings.Contains(err.Error(), "no `project` field") {
		t.Errorf("Load = %v, want a missing project error", err)
	}
}

func TestEnsureModuleFile(t *testing.T) {
	dir := t.TempDir()
	res, err := EnsureModuleFile(dir, "example.com/app@v0")
	if err != nil || res != ModuleFileCreated {
		t.Fatalf("first EnsureModuleFile = %v, %v", res, err)
	}
	res, err = EnsureModuleFile(dir, "example.com/ignored@v0")
	if err != nil || res != ModuleFileUnchanged {
		t.Fatalf("second EnsureModuleFile = %v, %v", res, err)
	}
	path := filepath.Join(dir, "cue.mod", "module.cue")
	if err := os.WriteFile(path, []byte("module: \"example.com/app@v0\"\nlanguage: version: \"v0.17.0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = EnsureModuleFile(dir, "example.com/ignored@v0")
	if err != nil || res != ModuleFileUpdated {
		t.Fatalf("EnsureModuleFile on a file without the dependency = %v, %v", res, err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"github.com/set-engine/set@v0"`) || !strings.Contains(string(data), `example.com/app@v0`) {
		t.Errorf("updated module.cue:\n%s", data)
	}
}

func TestFieldPos(t *testing.T) {
	dir := t.TempDir()
	env := []string{"CUE_CACHE_DIR=" + t.TempDir(), "CUE_REGISTRY=none"}
	if _, err := EnsureModuleFile(dir, "example.com/x@v0"); err != nil {
		t.Fatal(err)
	}
	src := `package x

import "github.com/set-engine/set/profiles/golang"

project: golang.#Project & {
	name: "x"
	spec: ["s.md"]
	plan: changes: api: {requirements: []}
}
`
	if err := os.WriteFile(filepath.Join(dir, "set.cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(dir, Options{Env: env})
	if err != nil {
		t.Fatal(Details(err, dir))
	}
	for _, tt := range []struct {
		path      []string
		line, col int
	}{
		{[]string{"spec"}, 7, 8},
		{[]string{"plan", "changes", "api"}, 8, 22},
	} {
		pos := p.FieldPos(tt.path...)
		if pos.Line() != tt.line || pos.Column() != tt.col {
			t.Errorf("FieldPos(%v) = %d:%d, want %d:%d", tt.path, pos.Line(), pos.Column(), tt.line, tt.col)
		}
	}
	if p.FieldPos("gates", "test").IsValid() {
		t.Error("FieldPos found a field set.cue does not declare")
	}
}

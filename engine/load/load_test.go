package load

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"cuelang.org/go/cue"
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
	writeModuleFile(t, dir, "example.com/x@v0")
	if err := os.WriteFile(filepath.Join(dir, "set.cue"), []byte("package x\nother: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir, Options{Env: []string{"CUE_CACHE_DIR=" + t.TempDir(), "CUE_REGISTRY=none"}})
	if err == nil || !strings.Contains(err.Error(), "no `project` field") {
		t.Errorf("Load = %v, want a missing project error", err)
	}
}

// writeModuleFile writes dir/cue.mod/module.cue as ModuleFile computes it.
func writeModuleFile(t *testing.T, dir, modulePath string) {
	t.Helper()
	data, _, err := ModuleFile(dir, modulePath, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "cue.mod"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ModuleFilePath(dir), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestModuleFile(t *testing.T) {
	dir := t.TempDir()
	data, res, err := ModuleFile(dir, "example.com/app@v0", map[string]string{"example.com/profiles@v0": "v0.2.0"}, nil)
	if err != nil || res != ModuleFileCreated {
		t.Fatalf("ModuleFile on an empty directory = %v, %v", res, err)
	}
	if _, err := os.Stat(ModuleFilePath(dir)); !os.IsNotExist(err) {
		t.Errorf("ModuleFile wrote the file: %v", err)
	}
	want := `module: "example.com/app@v0"
language: {
	version: "v0.17.0"
}
deps: {
	"example.com/profiles@v0": {
		v: "v0.2.0"
	}
	"github.com/set-engine/set@v0": {
		v: "v0.1.0"
	}
}
`
	if string(data) != want {
		t.Errorf("new module.cue:\n%s\nwant:\n%s", data, want)
	}
	writeModuleFile(t, dir, "example.com/app@v0")
	if _, res, err := ModuleFile(dir, "example.com/ignored@v0", nil, nil); err != nil || res != ModuleFileUnchanged {
		t.Errorf("ModuleFile on a file with the dependency = %v, %v", res, err)
	}

	// An existing file keeps what it says and gains what is missing. An
	// exact dependency gets its version; one needed at least at a version
	// keeps a higher one; the embedded module is served at this binary's
	// version only.
	if err := os.WriteFile(ModuleFilePath(dir), []byte(`module: "example.com/app@v0"
language: version: "v0.17.0"
deps: "example.com/profiles@v0": v: "v0.3.0"
deps: "example.com/base@v0": v: "v0.5.0"
deps: "github.com/set-engine/set@v0": v: "v0.9.0"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	data, res, err = ModuleFile(dir, "example.com/ignored@v0",
		map[string]string{"example.com/profiles@v0": "v0.2.0"},
		map[string]string{"example.com/base@v0": "v0.4.0", "example.com/more@v1": "v1.0.0"})
	if err != nil || res != ModuleFileUpdated {
		t.Fatalf("ModuleFile on a file without every dependency = %v, %v", res, err)
	}
	for _, s := range []string{`module: "example.com/app@v0"`, `"example.com/profiles@v0": {
		v: "v0.2.0"`, `"example.com/base@v0": {
		v: "v0.5.0"`, `"example.com/more@v1": {
		v: "v1.0.0"`, `"github.com/set-engine/set@v0": {
		v: "v0.1.0"`} {
		if !strings.Contains(string(data), s) {
			t.Errorf("updated module.cue lacks %s:\n%s", s, data)
		}
	}
}

func TestModuleFileRejectsAnInvalidPath(t *testing.T) {
	_, _, err := ModuleFile(t.TempDir(), "github.com/Masterminds/semver@v0", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "invalid char 'M'") {
		t.Errorf("ModuleFile with an upper-case module path = %v", err)
	}
}

func TestModulePathFromGo(t *testing.T) {
	for _, tt := range []struct {
		goPath, want string
		ok           bool
	}{
		{"github.com/Masterminds/semver/v3", "github.com/masterminds/semver@v0", true},
		{"github.com/acme/app", "github.com/acme/app@v0", true},
		{"github.com/acme/app/v1", "github.com/acme/app/v1@v0", true},
		{"gopkg.in/yaml.v3", "gopkg.in/yaml.v3@v0", true},
		{"example.com/a~b", "", false},
		{"myapp", "", false},
	} {
		got, ok := ModulePathFromGo(tt.goPath)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ModulePathFromGo(%q) = %q, %v; want %q, %v", tt.goPath, got, ok, tt.want, tt.ok)
		}
	}
}

func TestLoadOverlay(t *testing.T) {
	dir := t.TempDir()
	modData, _, err := ModuleFile(dir, "example.com/x@v0", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	overlay := map[string][]byte{
		ModuleFilePath(dir): modData,
		filepath.Join(dir, ConfigFile): []byte(`package x

import "github.com/set-engine/set/profiles/golang"

project: golang.#Project & {
	name: "x"
	spec: ["s.md"]
}
`),
	}
	p, err := Load(dir, Options{Env: []string{"CUE_CACHE_DIR=" + t.TempDir(), "CUE_REGISTRY=none"}, Overlay: overlay})
	if err != nil {
		t.Fatal(Details(err, dir))
	}
	if name, _ := p.Value.LookupPath(cue.ParsePath("name")).String(); name != "x" {
		t.Errorf("name = %q", name)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Load with an overlay left files: %v", entries)
	}
}

func TestFieldPos(t *testing.T) {
	dir := t.TempDir()
	env := []string{"CUE_CACHE_DIR=" + t.TempDir(), "CUE_REGISTRY=none"}
	writeModuleFile(t, dir, "example.com/x@v0")
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

// Inputs are the project's own files the load read: module.cue, the
// package's files, those of a package it imports from the module and of
// one vendored under cue.mod/pkg; not the embedded module extracted into
// a cache directory inside the project.
func TestLoadInputs(t *testing.T) {
	dir := t.TempDir()
	env := []string{"CUE_CACHE_DIR=" + filepath.Join(dir, ".cache"), "CUE_REGISTRY=none"}
	writeModuleFile(t, dir, "example.com/x@v0")
	files := map[string]string{
		"set.cue": `package x

import (
	"github.com/set-engine/set/profiles/golang"
	"example.com/x/conf"
	"example.com/vendored/names"
)

project: golang.#Project & {
	name: names.name
	spec: [conf.spec]
}
`,
		"extra.cue":     "package x\n\nextra: 1\n",
		"conf/conf.cue": "package conf\n\nspec: \"s.md\"\n",
		"cue.mod/pkg/example.com/vendored/names/n.cue": "package names\n\nname: \"x\"\n",
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in, err := Load(dir, Options{Env: env})
	if err != nil {
		t.Fatal(Details(err, dir))
	}
	want := []string{"set.cue", "extra.cue", "cue.mod/module.cue", "conf/conf.cue", "cue.mod/pkg/example.com/vendored/names/n.cue"}
	if got := in.Inputs(); !slices.Equal(got, want) {
		t.Errorf("Inputs = %q, want %q", got, want)
	}
}

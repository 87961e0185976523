package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A write that fails undoes the writes before it: new files and the
// directories made for them are removed, changed files get their content
// back.
func TestWriteAllRollsBack(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, ".gitignore")
	if err := os.WriteFile(existing, []byte("bin/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A file where a directory must go makes the last write fail.
	if err := os.WriteFile(filepath.Join(dir, "docs"), []byte("not a directory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := writeAll([]initFile{
		{path: filepath.Join(dir, "set.cue"), data: []byte("package x\n")},
		{path: filepath.Join(dir, "cue.mod", "module.cue"), data: []byte("module: \"example.com/x@v0\"\n")},
		{path: existing, data: []byte("bin/\n.set/\n")},
		{path: filepath.Join(dir, "docs", "spec.md"), data: []byte("# Spec\n")},
	})
	if err == nil {
		t.Fatal("writeAll succeeded with docs/ a file")
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 2 || names[0] != ".gitignore" || names[1] != "docs" {
		t.Errorf("after a failed writeAll the directory holds %v, want [.gitignore docs]", names)
	}
	if data, _ := os.ReadFile(existing); string(data) != "bin/\n" {
		t.Errorf(".gitignore = %q, want its old content", data)
	}

	if err := writeAll([]initFile{
		{path: filepath.Join(dir, "new", "deep", "file"), data: []byte("x")},
	}); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "new", "deep", "file")); err != nil || string(data) != "x" {
		t.Errorf("written file = %q, %v", data, err)
	}
}

// cueModulePath reads go.mod as the go command does: comments, quotes and
// the block form do not hide the module path.
func TestCUEModulePathFromGoMod(t *testing.T) {
	for _, tt := range []struct{ gomod, want string }{
		{"module github.com/acme/app\n\ngo 1.26\n", "github.com/acme/app@v0"},
		{"module github.com/acme/app // the app\n", "github.com/acme/app@v0"},
		{"// Deprecated: use v2.\nmodule \"github.com/acme/app\"\n", "github.com/acme/app@v0"},
		{"module `github.com/Acme/app/v2`\n", "github.com/acme/app@v0"},
		{"go 1.26\n", "example.com/x@v0"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(tt.gomod), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := cueModulePath(dir, "x"); got != tt.want {
			t.Errorf("cueModulePath with go.mod %q = %q, want %q", tt.gomod, got, tt.want)
		}
	}
}

// init asks git about the directory it is about to create through its
// nearest existing ancestor.
func TestExistingDir(t *testing.T) {
	dir := t.TempDir()
	if got := existingDir(filepath.Join(dir, "new", "project")); got != dir {
		t.Errorf("existingDir(%s/new/project) = %s, want %s", dir, got, dir)
	}
	if got := existingDir(dir); got != dir {
		t.Errorf("existingDir(%s) = %s", dir, got)
	}
}

// init names a project as its manifest does, in kebab-case, and by its
// directory when the manifest names nothing.
func TestDeclaredName(t *testing.T) {
	for _, tt := range []struct {
		what  string
		files map[string]string
		want  string
	}{
		{"go.mod's last element", map[string]string{"go.mod": "module github.com/acme/Pay_Ments\n"}, "pay-ments"},
		{"go.mod without its major version", map[string]string{"go.mod": "module github.com/acme/app/v2\n"}, "app"},
		{"a gopkg.in path", map[string]string{"go.mod": "module gopkg.in/yaml.v3\n"}, "yaml"},
		{"go.mod first", map[string]string{"go.mod": "module example.com/gojs\n", "package.json": `{"name": "assets"}`}, "gojs"},
		{"Cargo.toml's package", map[string]string{"Cargo.toml": "[workspace]\nmembers = [\"x\"]\n\n[package]\nname = \"tiny_http\"\n"}, "tiny-http"},
		{"a Cargo workspace", map[string]string{"Cargo.toml": "[workspace]\nmembers = [\"x\"]\n"}, "the-dir"},
		{"pyproject's [project]", map[string]string{"pyproject.toml": "[project]\nname = 'more.itertools'\n[tool.poetry]\nname = \"other\"\n"}, "more-itertools"},
		{"poetry's name", map[string]string{"pyproject.toml": "[tool.poetry]\nname = \"Poetry_App\"\n"}, "poetry-app"},
		{"a pyproject of tools only", map[string]string{"pyproject.toml": "[tool.ruff]\nline-length = 100\n"}, "the-dir"},
		{"an npm scope", map[string]string{"package.json": `{"name": "@sindresorhus/camelcase"}`}, "camelcase"},
		{"a package.json without name", map[string]string{"package.json": `{"private": true}`}, "the-dir"},
		{"a name set's names cannot start with", map[string]string{"package.json": `{"name": "3d-tools"}`}, "project-3d-tools"},
		{"no manifest", map[string]string{"setup.py": "\n"}, "the-dir"},
		{"setup.cfg's metadata", map[string]string{"setup.py": "\n", "setup.cfg": "[options]\nname = no\n[metadata]\nname = pytest-timeout\n"}, "pytest-timeout"},
		{"setup.cfg after a pyproject of tools only", map[string]string{"pyproject.toml": "[tool.black]\n", "setup.cfg": "[metadata]\nname: Flit_Core\n"}, "flit-core"},
	} {
		dir := filepath.Join(t.TempDir(), "The_Dir")
		writeFiles(t, dir, tt.files)
		got, why, err := declaredName(dir, "")
		if err != nil || got != tt.want {
			t.Errorf("%s: declaredName = %q, %v, want %q", tt.what, got, err, tt.want)
		}
		if why == "" {
			t.Errorf("%s: declaredName says not why", tt.what)
		}
	}
	// The profile init uses reads its own manifest first.
	dir := filepath.Join(t.TempDir(), "gojs")
	writeFiles(t, dir, map[string]string{"go.mod": "module example.com/gojs\n", "package.json": `{"name": "assets"}`})
	if got, _, err := declaredName(dir, "web"); err != nil || got != "assets" {
		t.Errorf("declaredName for the web profile = %q, %v, want package.json's assets", got, err)
	}
	dir = t.TempDir()
	writeFiles(t, dir, map[string]string{"pyproject.toml": "[project\nname = \"x\"\n"})
	if _, _, err := declaredName(dir, ""); err == nil || !strings.Contains(err.Error(), "pass --name") {
		t.Errorf("declaredName of a pyproject.toml that is not TOML: %v, want an error that says to pass --name", err)
	}
}

// The spec goes to spec/spec.md when docs/ is a manual a tool builds or
// a package ships, and to docs/spec.md otherwise.
func TestSpecLocation(t *testing.T) {
	for _, tt := range []struct {
		what  string
		files map[string]string
		want  string
	}{
		{"no docs tool", map[string]string{"docs/guide.md": "# Guide\n"}, defaultSpec},
		{"Sphinx", map[string]string{"docs/conf.py": "project = 'x'\n"}, publishedDocsSpec},
		{"Sphinx elsewhere", map[string]string{"doc/conf.py": "project = 'x'\n"}, defaultSpec},
		{"MkDocs' default docs_dir", map[string]string{"mkdocs.yml": "site_name: X\nmarkdown_extensions:\n  - pymdownx.emoji:\n      emoji_index: !!python/name:material.extensions.emoji.twemoji\n"}, publishedDocsSpec},
		{"MkDocs' docs_dir docs/", map[string]string{"mkdocs.yml": "site_name: X\ndocs_dir: ./docs/\n"}, publishedDocsSpec},
		{"MkDocs' docs_dir elsewhere", map[string]string{"mkdocs.yml": "site_name: X\ndocs_dir: site-src\n"}, defaultSpec},
		{"package.json's files", map[string]string{"package.json": `{"files": ["dist", "docs/*.md"]}`}, publishedDocsSpec},
		{"package.json's files without docs", map[string]string{"package.json": `{"files": ["index.js", "!docs", "documents"]}`}, defaultSpec},
		{"MANIFEST.in's graft", map[string]string{"MANIFEST.in": "include README.md\ngraft docs\n"}, publishedDocsSpec},
		{"MANIFEST.in's recursive-include", map[string]string{"MANIFEST.in": "recursive-include docs *.rst\n"}, publishedDocsSpec},
		{"MANIFEST.in's prune", map[string]string{"MANIFEST.in": "prune docs\n"}, defaultSpec},
	} {
		dir := t.TempDir()
		writeFiles(t, dir, tt.files)
		got, why := specLocation(dir)
		if got != tt.want {
			t.Errorf("%s: specLocation = %q (%s), want %q", tt.what, got, why, tt.want)
		}
		if (got == publishedDocsSpec) != (why != "") {
			t.Errorf("%s: specLocation = %q with reason %q: a reason goes with spec/ and only with it", tt.what, got, why)
		}
	}
}

package main

import (
	"os"
	"path/filepath"
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

package decode

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"cuelang.org/go/mod/modregistrytest"

	"github.com/set-engine/set/engine/load"
)

// teamProfileModule serves examples/team-profile, Acme's goservice
// profile built on golang, at v0.1.0 from a registry on 127.0.0.1, and
// points CUE_REGISTRY at it.
func teamProfileModule(t *testing.T) {
	t.Helper()
	src := filepath.Join("..", "..", "..", "examples", "team-profile")
	files := fstest.MapFS{}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		files[path.Join("example.com_acme_profiles_v0.1.0", filepath.ToSlash(rel))] = &fstest.MapFile{Data: data}
		return nil
	})
	must(t, err)
	reg, err := modregistrytest.New(files, "")
	must(t, err)
	t.Cleanup(reg.Close)
	t.Setenv("CUE_REGISTRY", reg.Host()+"+insecure")
}

// writeTeamProject writes a project on the goservice team profile.
func writeTeamProject(t *testing.T, setCUE string) string {
	t.Helper()
	dir := writeProject(t, setCUE)
	teamProfileModule(t)
	mod := moduleCUE + `deps: "example.com/acme/profiles@v0": v: "v0.1.0"` + "\n"
	must(t, os.WriteFile(filepath.Join(dir, "cue.mod", "module.cue"), []byte(mod), 0o644))
	return dir
}

// TestThreeLevels: golang gives defaults, Acme's team profile replaces
// one of them, adds a convention, a test pattern and a gate with defaults
// of its own, and the project replaces Acme's defaults and drops one of
// golang's. The decoded project holds each level's word.
func TestThreeLevels(t *testing.T) {
	dir := writeTeamProject(t, `package demo

import "example.com/acme/profiles/goservice@v0"

project: goservice.#Project & {
	name: "demo"
	spec: ["docs/spec.md"]
	conventions: errors: "Wrap errors with %w."
	conventions: modules: ""
	testPatterns: integration: "it/**/*_test.go"
	gates: modverify: run: ["go", "mod", "verify", "-v"]
}
`)
	p, _, err := Load(dir, load.Options{})
	if err != nil {
		t.Fatal(load.Details(err, dir))
	}
	if p.Profile != "goservice" {
		t.Errorf("profile = %q, want goservice", p.Profile)
	}
	wantConventions := []string{
		"Wrap errors with %w.",                       // errors: Acme's default, the project's text
		"Format code with gofmt; keep go vet clean.", // gofmt: golang's default
		// modules: golang's, dropped by the project
		"Write table-driven tests beside the code in _test.go files; name the requirement ID (REQ-…) in the test it covers.", // tests: Acme's over golang's
	}
	if got := p.ConventionList(); !slices.Equal(got, wantConventions) {
		t.Errorf("conventions = %q, want %q", got, wantConventions)
	}
	if got, want := p.TestGlobs(), []string{"**/*_test.go", "it/**/*_test.go"}; !slices.Equal(got, want) {
		t.Errorf("test globs = %q, want %q", got, want)
	}
	if got := strings.Join(p.Gates["modverify"].Run, " "); got != "go mod verify -v" {
		t.Errorf("modverify runs %q, want the project's go mod verify -v", got)
	}
	for _, stack := range []string{"feature", "fix", "cleanup"} {
		if _, ok := p.Stacks[stack]["modverify"]; !ok {
			t.Errorf("stacks.%s lacks Acme's modverify", stack)
		}
	}
	if _, ok := p.Stacks["docs"]["modverify"]; ok {
		t.Errorf("stacks.docs runs modverify; Acme leaves docs alone")
	}
	if _, ok := p.Integration["modverify"]; !ok {
		t.Errorf("integration lacks Acme's modverify")
	}
	if p.Gates["test"].Order != 30 || p.Gates["modverify"].Order != 12 {
		t.Errorf("gate orders: test %d, modverify %d", p.Gates["test"].Order, p.Gates["modverify"].Order)
	}

	// Acme's plain value is final: a project cannot change it, and is
	// told that its value conflicts with Acme's (not that it is "not one
	// of" golang's default and Acme's, as if golang's were allowed).
	dir = writeTeamProject(t, `package demo

import "example.com/acme/profiles/goservice@v0"

project: goservice.#Project & {
	name: "demo"
	spec: ["docs/spec.md"]
	conventions: tests: "No tests."
}
`)
	_, _, err = Load(dir, load.Options{})
	if got, want := load.Details(err, dir), `project.conventions.tests: conflicting values "Write table-driven tests beside the code in _test.go files; name the requirement ID (REQ-…) in the test it covers." and "No tests.": set.cue:8:22`+"\n"; got != want {
		t.Errorf("overriding Acme's fixed convention: %s", got)
	}
}

// TestTwoDefaults: CUE keeps one default per field, so a derived profile
// that gives its own default over its parent's leaves the field
// ambiguous, and the error says which field, where each default comes
// from, and what to do.
func TestTwoDefaults(t *testing.T) {
	dir := writeProject(t, `package demo

import "github.com/set-engine/set/profiles/golang"

_team: golang.#Project & {
	conventions: gofmt: *"Format with gofumpt." | string
}

project: _team & {
	name: "demo"
	spec: ["docs/spec.md"]
}
`)
	_, _, err := Load(dir, load.Options{})
	want := `project.conventions.gofmt: has 2 defaults, "Format with gofumpt." and "Format code with gofmt; keep go vet clean.", and CUE keeps one default per field: set it in set.cue, or let the profile that builds on another give a plain value, or drop the other's entry and add its own (see schema #Profile): set.cue:6:15` + "\n"
	if got := load.Details(err, dir); got != want {
		t.Errorf("error:\n%s\nwant:\n%s", got, want)
	}
}

// acmeLearnings is a profile package of the project's module that ships
// two learnings: one with a plain text, one whose text is a default.
const acmeLearnings = `package acme

import "github.com/set-engine/set/profiles/golang"

#Project: golang.#Project & {
	learnings: "doc-comment": {kind: "convention", text: "Every Go file starts with a package comment."}
	learnings: "table-tests": {kind: "convention", text: *"Tests are table-driven." | string}
}
`

// writeAcmeProject writes a project on the acme profile package, whose
// project: adds the lines of body.
func writeAcmeProject(t *testing.T, body string) string {
	t.Helper()
	dir := writeProject(t, `package demo

import "example.com/demo/acme"

project: acme.#Project & {
	name: "demo"
	spec: ["docs/spec.md"]
`+body+`}
`)
	must(t, os.MkdirAll(filepath.Join(dir, "acme"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "acme", "acme.cue"), []byte(acmeLearnings), 0o644))
	return dir
}

// TestProfileLearnings: a project turns off a profile's learning with
// enabled: false, rewords one whose text the profile gave as a default,
// and narrows one to paths the profile left open; a profile's plain text
// it cannot reword, and the error says where it tried.
func TestProfileLearnings(t *testing.T) {
	dir := writeAcmeProject(t, `	learnings: "doc-comment": enabled: false
	learnings: "doc-comment": paths: ["internal/**"]
	learnings: "table-tests": text: "Tests are table-driven, one row per case."
`)
	p, _, err := Load(dir, load.Options{})
	if err != nil {
		t.Fatal(load.Details(err, dir))
	}
	doc, tables := p.Learnings["doc-comment"], p.Learnings["table-tests"]
	if doc.Enabled || doc.Text != "Every Go file starts with a package comment." || !slices.Equal(doc.Paths, []string{"internal/**"}) {
		t.Errorf("doc-comment = %+v, want the profile's text, turned off, on internal/**", doc)
	}
	if !tables.Enabled || tables.Text != "Tests are table-driven, one row per case." {
		t.Errorf("table-tests = %+v, want the project's text, on", tables)
	}

	dir = writeAcmeProject(t, `	learnings: "doc-comment": text: "Package comments first."
`)
	_, _, err = Load(dir, load.Options{})
	want := `project.learnings."doc-comment".text: conflicting values "Every Go file starts with a package comment." and "Package comments first.": set.cue:8:`
	if got := load.Details(err, dir); !strings.HasPrefix(got, want) {
		t.Errorf("rewording a profile's plain text:\n%s\nwant:\n%s…", got, want)
	}
}

// A project that gives a profile's learning another kind is told that
// it conflicts with the profile's, at its line; not that its kind, one
// of the schema's, is "not one of" the others.
func TestProfileLearningKind(t *testing.T) {
	dir := writeAcmeProject(t, `	learnings: "doc-comment": kind: "rule"
`)
	_, _, err := Load(dir, load.Options{})
	want := `project.learnings."doc-comment".kind: conflicting values "convention" and "rule": set.cue:8:34` + "\n"
	if got := load.Details(err, dir); got != want {
		t.Errorf("error:\n%s\nwant:\n%s", got, want)
	}
}

// A profile's learning that vet refuses is reported where the profile
// gives the field, not at the schema's declaration of it.
func TestProfileLearningPositions(t *testing.T) {
	dir := writeAcmeProject(t, "")
	profile := strings.Replace(acmeLearnings, `text: "Every Go file starts with a package comment."}`,
		`text: "Every Go file starts with a package comment.", paths: ["/abs"]}
	learnings: "no-print": {kind: "rule", text: "no printing", pattern: "fmt.Print("}`, 1)
	must(t, os.WriteFile(filepath.Join(dir, "acme", "acme.cue"), []byte(profile), 0o644))
	_, _, err := Load(dir, load.Options{})
	want := `project.learnings."doc-comment".paths: index 0: glob "/abs" is absolute; globs are relative to the project root: acme/acme.cue:6:103` + "\n" +
		"project.learnings.\"no-print\".pattern: invalid regular expression: error parsing regexp: missing closing ): `fmt.Print(`: acme/acme.cue:7:"
	if got := load.Details(err, dir); !strings.HasPrefix(got, want) {
		t.Errorf("error:\n%s\nwant:\n%s…", got, want)
	}
}

// Every check beyond the schema reports a profile's mistake where the
// profile gives the field: a forbidden pattern's paths, as a learning's.
func TestProfileFieldPositions(t *testing.T) {
	dir := writeAcmeProject(t, "")
	profile := strings.Replace(acmeLearnings, "\tlearnings: \"doc-comment\"",
		"\tforbidden: \"no-sleep\": {pattern: \"time.Sleep\", message: \"no sleeping\", paths: [\"[a\"]}\n\tlearnings: \"doc-comment\"", 1)
	must(t, os.WriteFile(filepath.Join(dir, "acme", "acme.cue"), []byte(profile), 0o644))
	_, _, err := Load(dir, load.Options{})
	want := `project.forbidden."no-sleep".paths: index 0: invalid glob "[a": segment "[a": syntax error in pattern: acme/acme.cue:6:`
	if got := load.Details(err, dir); !strings.HasPrefix(got, want) {
		t.Errorf("error:\n%s\nwant:\n%s…", got, want)
	}
}

package main

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cuelabs.dev/go/oci/ociregistry/ocimem"
	"cuelang.org/go/mod/modconfig"
	"cuelang.org/go/mod/modregistrytest"
	"cuelang.org/go/mod/module"

	set "github.com/set-engine/set"
	"github.com/set-engine/set/internal/clitest"
	"github.com/set-engine/set/internal/gittest"
)

// TestPublishedModules publishes set's CUE module (as `make cue-publish`
// does: the embedded files, written out by set.WriteModule) and Acme's
// example team profile (examples/team-profile) with the real `cue mod
// publish` to a registry on 127.0.0.1, then: the published set module
// holds exactly the embedded files; the real `cue vet` accepts and `cue
// export` evaluates the set.cue that `setctl init` writes for the golang
// profile and for Acme's; setctl vets and plans both with its own
// embedded set module; and the project of the team profile's README,
// on Acme's profile, applies: its change merges after Acme's own gate
// ran, with Acme's convention for tests in place of golang's in the
// agent's prompt; and once set v0.2.0 and a release of Acme's profile
// made for it are published, requiring either is refused.
func TestPublishedModules(t *testing.T) {
	cue := clitest.CUE.Require(t)
	// The Acme project's gates run the go tool: the machine's caches
	// (asked before HOME moves), never the network.
	t.Setenv("GOCACHE", goEnv("GOCACHE"))
	t.Setenv("GOMODCACHE", goEnv("GOMODCACHE"))
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "-buildvcs=false")
	t.Setenv("GOTOOLCHAIN", "local")
	// A writable registry: cue mod publish pushes to it.
	reg, err := modregistrytest.NewServer(ocimem.NewWithConfig(&ocimem.Config{ImmutableTags: true}), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	t.Setenv("CUE_REGISTRY", reg.Host()+"+insecure")
	t.Setenv("CUE_CACHE_DIR", filepath.Join(t.TempDir(), "cue-cache"))
	t.Setenv("HOME", t.TempDir())
	gittest.Hermetic(t, "[init]\n\tdefaultBranch = main\n")

	run := func(dir, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s in %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), dir, err, out)
		}
		return string(out)
	}
	setctl := func(dir string, args ...string) string {
		t.Helper()
		var stdout, stderr strings.Builder
		if code := Main(append([]string{"-C", dir}, args...), testProcess(&stdout, &stderr)); code != exitOK {
			t.Fatalf("setctl %s exited %d:\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
		}
		return stdout.String()
	}

	// Publish set's module as make cue-publish does, and Acme's profile.
	setDir := filepath.Join(t.TempDir(), "set")
	if err := set.WriteModule(setDir); err != nil {
		t.Fatal(err)
	}
	run(setDir, cue, "mod", "publish", set.ModuleVersion)
	acmeDir := t.TempDir()
	if err := os.CopyFS(acmeDir, os.DirFS(filepath.Join("..", "..", "examples", "team-profile"))); err != nil {
		t.Fatal(err)
	}
	run(acmeDir, cue, "mod", "publish", "v0.1.0")

	// The published set module is the embedded tree, file for file.
	cueReg, err := modconfig.NewRegistry(nil)
	if err != nil {
		t.Fatal(err)
	}
	mv := module.MustNewVersion(set.ModulePath, set.ModuleVersion)
	loc, err := cueReg.Fetch(context.Background(), mv)
	if err != nil {
		t.Fatal(err)
	}
	published := filesOf(t, loc.FS, loc.Dir)
	embedded := filesOf(t, set.Module, ".")
	if !slices.Equal(published, embedded) {
		t.Errorf("the published module holds\n  %s\nthe binary embeds\n  %s", strings.Join(published, "\n  "), strings.Join(embedded, "\n  "))
	}
	for _, f := range published {
		if !strings.HasSuffix(f, ".cue") {
			t.Errorf("the published module holds %s, which is no CUE file", f)
		}
	}

	var acmeProject string
	for _, tc := range []struct{ profile, name string }{
		{"golang", "golang"},
		{"example.com/acme/profiles/goservice", "goservice"},
	} {
		dir := filepath.Join(t.TempDir(), "app")
		acmeProject = dir
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		run(dir, "git", "init", "-q")
		setctl(dir, "init", "--profile", tc.profile)
		run(dir, cue, "vet", "-c", ".")
		if got := run(dir, cue, "export", "-e", "project.profile"); got != `"`+tc.name+`"`+"\n" {
			t.Errorf("%s: cue export -e project.profile = %s", tc.profile, got)
		}
		run(dir, "git", "add", "-A")
		run(dir, "git", "commit", "-qm", "Set up setctl")
		if got := setctl(dir, "vet"); !strings.HasPrefix(got, "set.cue: ok ("+tc.name+" profile") {
			t.Errorf("%s: setctl vet printed %s", tc.profile, got)
		}
		if got := setctl(dir, "plan"); !strings.Contains(got, "\nprofile "+tc.name+" · CUE module "+set.ModulePath+" "+set.ModuleVersion+"\n") {
			t.Errorf("%s: setctl plan does not name the profile and module version:\n%s", tc.profile, got)
		}
	}

	// The team profile README's project on Acme's profile (the last one
	// init wrote), made a Go module, with an exec agent that writes the
	// code and its test for the spec template's two requirements.
	agent := filepath.Join(t.TempDir(), "agent.sh")
	writeFiles(t, filepath.Dir(agent), map[string]string{"agent.sh": `#!/bin/sh
set -e
printf 'package app\n\n// Greet greets name, or the world.\nfunc Greet(name string) string {\n\tif name == "" {\n\t\tname = "world"\n\t}\n\treturn "Hello, " + name + "!"\n}\n' > greet.go
printf 'package app\n\nimport "testing"\n\n// REQ-GREET-01, REQ-GREET-02\nfunc TestGreet(t *testing.T) {\n\tfor _, tc := range []struct{ name, want string }{{"Ada", "Hello, Ada!"}, {"", "Hello, world!"}} {\n\t\tif got := Greet(tc.name); got != tc.want {\n\t\t\tt.Errorf("Greet(%%q) = %%q", tc.name, got)\n\t\t}\n\t}\n}\n' > greet_test.go
`})
	writeFiles(t, acmeProject, map[string]string{
		"set.cue": teamProfileREADMEProject(t) + "\nproject: agent: {adapter: \"exec\", argv: " + cueOf(t, []string{"sh", agent, "{prompt_file}"}) + "}\n",
		"go.mod":  "module example.com/app\n\ngo 1.26\n",
		"app.go":  "// Package app greets.\npackage app\n",
	})
	run(acmeProject, cue, "vet", "-c", ".")
	if got := setctl(acmeProject, "vet"); !strings.HasPrefix(got, "set.cue: ok (goservice profile, 10 gates)") {
		t.Errorf("setctl vet of the README's project printed %s", got)
	}
	run(acmeProject, "git", "add", "-A")
	run(acmeProject, "git", "commit", "-qm", "The README's project, a Go module")
	out := setctl(acmeProject, "apply", "--yes")
	for _, want := range []string{"greet +verify modverify: pass", "greet +integration modverify: pass", "greet +merged", "^Run success"} {
		if !matchLine(out, want) {
			t.Errorf("setctl apply printed no line matching %q:\n%s", want, out)
		}
	}
	// Acme's gate ran go mod verify, in verify and on the merged tree.
	for _, log := range []string{"verify-modverify-1.log", "integration-modverify-1.log"} {
		if data, err := os.ReadFile(filepath.Join(acmeProject, ".set", "logs", "greet", log)); err != nil || string(data) != "all modules verified\n" {
			t.Errorf(".set/logs/greet/%s: %q, %v; want go mod verify's output", log, data, err)
		}
	}
	if got := gitIn(t, acmeProject, "show", "main:greet.go"); !strings.Contains(got, `"Hello, " + name + "!"`) {
		t.Errorf("main's greet.go is not the agent's:\n%s", got)
	}
	// The conventions, level by level: the project's wording of Acme's
	// errors, golang's gofmt, Acme's tests in place of golang's; golang's
	// modules, which the project drops, is gone.
	prompt, err := os.ReadFile(filepath.Join(acmeProject, ".set", "changes", "greet", "prompt-1.md"))
	if err != nil {
		t.Fatal(err)
	}
	const conventions = `## Conventions
- Wrap errors with %w; log them once, where handled.
- Format code with gofmt; keep go vet clean.
- Write table-driven tests beside the code in _test.go files; name the requirement ID (REQ-…) in the test it covers.

`
	if !strings.Contains(string(prompt), conventions) {
		t.Errorf("the agent's prompt does not hold\n%s\nprompt:\n%s", conventions, prompt)
	}

	// A set module v0.2.0 and a release of Acme's profile made for it:
	// the project that requires either is refused, with both versions
	// named (set_module_version.txtar pins the whole messages).
	run(setDir, cue, "mod", "publish", "v0.2.0")
	data, err := os.ReadFile(filepath.Join(acmeDir, "cue.mod", "module.cue"))
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, acmeDir, map[string]string{"cue.mod/module.cue": strings.Replace(string(data), `v: "`+set.ModuleVersion+`"`, `v: "v0.2.0"`, 1)})
	run(acmeDir, cue, "mod", "publish", "v0.2.0")
	for _, tc := range []struct{ module, want string }{
		{set.ModulePath, "cue.mod/module.cue requires " + set.ModulePath + " at v0.2.0, newer than the " + set.ModuleVersion + " this setctl embeds"},
		{"example.com/acme/profiles@v0", "cue.mod/module.cue requires example.com/acme/profiles@v0 at v0.2.0, which requires " + set.ModulePath + " at v0.2.0, newer than the " + set.ModuleVersion + " this setctl embeds"},
	} {
		run(acmeProject, cue, "mod", "edit", "--require", strings.TrimSuffix(tc.module, "@v0")+"@v0.2.0")
		var stdout, stderr strings.Builder
		if code := Main([]string{"-C", acmeProject, "vet"}, testProcess(&stdout, &stderr)); code == exitOK || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("requiring %s at v0.2.0: setctl vet exited %d:\n%s%s\nwant %q", tc.module, code, stdout.String(), stderr.String(), tc.want)
		}
		run(acmeProject, "git", "checkout", "-q", "cue.mod/module.cue")
	}
}

// teamProfileREADMEProject is the set.cue of a project on Acme's profile
// that examples/team-profile/README.md shows.
func teamProfileREADMEProject(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "examples", "team-profile", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range docCUEBlock.FindAllStringSubmatch(string(readme), -1) {
		if strings.HasPrefix(m[1], "package ") {
			return m[1]
		}
	}
	t.Fatal("examples/team-profile/README.md shows no whole set.cue (a cue block with a package clause)")
	return ""
}

// filesOf lists the files below dir in fsys, as slash paths relative to
// dir, sorted.
func filesOf(t *testing.T, fsys fs.FS, dir string) []string {
	t.Helper()
	var out []string
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

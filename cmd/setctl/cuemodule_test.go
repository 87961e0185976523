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
// profile and for Acme's; and setctl vets, plans and applies the Acme
// project with its own embedded set module.
func TestPublishedModules(t *testing.T) {
	cue := clitest.CUE.Require(t)
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
		if code := Main(append([]string{"-C", dir}, args...), &stdout, &stderr); code != exitOK {
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

	for _, tc := range []struct{ profile, name string }{
		{"golang", "golang"},
		{"example.com/acme/profiles/goservice", "goservice"},
	} {
		dir := filepath.Join(t.TempDir(), "app")
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

package load

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FindRoot finds the project as git finds .git: the nearest directory up
// from the start that holds set.cue and cue.mod, no further than the git
// work tree's top.
func TestFindRoot(t *testing.T) {
	base := t.TempDir()
	touch := func(rel string) {
		t.Helper()
		path := filepath.Join(base, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mkdir := func(rel string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(base, filepath.FromSlash(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// app is a project at the top of its repository, with a set.cue in
	// a subdirectory that is not a project (no cue.mod).
	touch("app/set.cue")
	touch("app/cue.mod/module.cue")
	mkdir("app/.git")
	mkdir("app/docs/deep")
	touch("app/lib/set.cue")
	// mono is a repository with a project in a subdirectory.
	mkdir("mono/.git")
	touch("mono/services/pay/set.cue")
	touch("mono/services/pay/cue.mod/module.cue")
	mkdir("mono/services/pay/internal")
	mkdir("mono/tools")
	// inner is a repository inside app's directory tree, with no
	// project: app's set.cue is not its project.
	touch("app/vendor/inner/.git")
	mkdir("app/vendor/inner/src")
	// broken has set.cue but no cue.mod.
	touch("broken/set.cue")
	mkdir("broken/sub")

	for _, tt := range []struct{ from, want, err string }{
		{from: "app", want: "app"},
		{from: "app/docs/deep", want: "app"},
		{from: "app/lib", want: "app"},
		{from: "mono/services/pay/internal", want: "mono/services/pay"},
		{from: "mono/tools", err: "no set.cue in MONO/tools or a parent directory up to the git work tree's top MONO (run `setctl init` to create one)"},
		{from: "app/vendor/inner/src", err: "no set.cue in APP/vendor/inner/src or a parent directory up to the git work tree's top APP/vendor/inner (run `setctl init` to create one)"},
		{from: "broken/sub", want: "broken"},
	} {
		got, err := FindRoot(filepath.Join(base, filepath.FromSlash(tt.from)))
		if tt.err != "" {
			msg := ""
			if err != nil {
				msg = strings.NewReplacer(filepath.Join(base, "mono"), "MONO", filepath.Join(base, "app"), "APP").Replace(err.Error())
			}
			if msg != tt.err {
				t.Errorf("FindRoot(%s) = %q, %v; want the error %s", tt.from, got, err, tt.err)
			}
			continue
		}
		if want := filepath.Join(base, filepath.FromSlash(tt.want)); got != want || err != nil {
			t.Errorf("FindRoot(%s) = %q, %v; want %s", tt.from, got, err, want)
		}
	}
}

// Package profiletest loads the configuration of a test project built on
// one of the built-in profiles, as `setctl` would, for the tests of
// packages that take a decoded project (gates, planners, the sentinel,
// budgets).
package profiletest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/config/decode"
	"github.com/set-engine/set/engine/load"
)

// Load is the configuration of a project named demo, in a temporary
// directory, whose set.cue unifies the built-in profile (golang, node, …)
// with fields, CUE lines inside the project's struct ("" for none). It
// loads with CUE_CACHE_DIR in a directory of the test's and CUE_REGISTRY
// none, so nothing is read from outside the test, without changing the
// process's environment (a parallel test may call it).
func Load(t testing.TB, profile, fields string) *config.Project {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"cue.mod/module.cue": "module: \"example.com/demo@v0\"\nlanguage: version: \"v0.17.0\"\ndeps: \"github.com/set-engine/set@v0\": v: \"v0.1.0\"\n",
		"set.cue": "package demo\n\nimport \"github.com/set-engine/set/profiles/" + profile + "\"\n\n" +
			"project: " + profile + ".#Project & {\n\tname: \"demo\"\n\tspec: [\"docs/spec.md\"]\n" + fields + "}\n",
	}
	for name, data := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "CUE_CACHE_DIR="+filepath.Join(t.TempDir(), "cue-cache"), "CUE_REGISTRY=none")
	p, _, err := decode.Load(dir, load.Options{Env: env})
	if err != nil {
		t.Fatal(load.Details(err, dir))
	}
	return p
}

package sentinel

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/set-engine/set/engine/config/decode"
	"github.com/set-engine/set/engine/load"
)

// TestStdlibDefaults: the sentinel a golang project gets from the stdlib
// is the one these tests exercise (defaults), and it compiles.
func TestStdlibDefaults(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	t.Setenv("CUE_REGISTRY", "none")
	for name, data := range map[string]string{
		"cue.mod/module.cue": "module: \"example.com/demo@v0\"\nlanguage: version: \"v0.17.0\"\ndeps: \"github.com/set-engine/set@v0\": v: \"v0.1.0\"\n",
		"set.cue":            "package demo\n\nimport \"github.com/set-engine/set/profiles/golang\"\n\nproject: golang.#Project & {\n\tname: \"demo\"\n\tspec: [\"docs/spec.md\"]\n}\n",
	} {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, _, err := decode.Load(dir, load.Options{})
	if err != nil {
		t.Fatal(load.Details(err, dir))
	}
	got, _ := json.MarshalIndent(p.Sentinel, "", "  ")
	want, _ := json.MarshalIndent(defaults(), "", "  ")
	if string(got) != string(want) {
		t.Errorf("the stdlib's sentinel:\n%s\nwant (defaults in sentinel_test.go):\n%s", got, want)
	}
	if _, err := Compile(p.Sentinel); err != nil {
		t.Error(err)
	}
}

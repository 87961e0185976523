// Package set embeds the root CUE module github.com/set-engine/set@v0.
//
// The schema, stdlib and profiles below are the very bytes users import and
// the engine validates against: engine/load serves this tree to the CUE
// loader at ModuleVersion, so there is one source of truth for both.
package set

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ModuleVersion is the version at which the embedded CUE module is served.
// A project's cue.mod/module.cue depends on github.com/set-engine/set@v0 at
// this version.
const ModuleVersion = "v0.1.0"

// ModulePath is the CUE module path of the embedded module.
const ModulePath = "github.com/set-engine/set@v0"

// Module is the root CUE module: cue.mod/module.cue, schema/, stdlib/ and
// profiles/. Nothing else is embedded.
//
//go:embed cue.mod/module.cue schema/*.cue stdlib/*.cue profiles
var Module embed.FS

// WriteModule writes Module, file for file, into dir, which must be empty
// or not exist: the tree `make cue-publish` publishes, so that the
// published module holds exactly the bytes the binary serves.
func WriteModule(dir string) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("write the CUE module: %s is not empty", dir)
	}
	return fs.WalkDir(Module, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := fs.ReadFile(Module, p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
}

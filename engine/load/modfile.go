package load

import (
	"fmt"
	"os"
	"path/filepath"

	"cuelang.org/go/mod/modfile"

	set "github.com/set-engine/set"
	"github.com/set-engine/set/engine/atomicfile"
)

// LanguageVersion is the CUE language version set writes into new
// cue.mod/module.cue files.
const LanguageVersion = "v0.17.0"

// ModuleFileResult says what EnsureModuleFile did.
type ModuleFileResult int

const (
	ModuleFileUnchanged ModuleFileResult = iota
	ModuleFileCreated
	ModuleFileUpdated
)

// EnsureModuleFile makes dir/cue.mod/module.cue exist and depend on the
// embedded module at the version this binary serves. A new file declares
// modulePath (which must carry a major version, e.g. "example.com/app@v0");
// an existing file keeps everything else it says.
func EnsureModuleFile(dir, modulePath string) (ModuleFileResult, error) {
	path := filepath.Join(dir, "cue.mod", "module.cue")
	want := &modfile.Dep{Version: set.ModuleVersion}
	data, err := os.ReadFile(path)
	switch {
	case os.IsNotExist(err):
		f := &modfile.File{
			Module:   modulePath,
			Language: &modfile.Language{Version: LanguageVersion},
			Deps:     map[string]*modfile.Dep{set.ModulePath: want},
		}
		if err := writeModFile(path, f); err != nil {
			return 0, err
		}
		return ModuleFileCreated, nil
	case err != nil:
		return 0, err
	}
	f, err := modfile.Parse(data, path)
	if err != nil {
		return 0, err
	}
	if d := f.Deps[set.ModulePath]; d != nil && d.Version == want.Version {
		return ModuleFileUnchanged, nil
	}
	if f.Deps == nil {
		f.Deps = map[string]*modfile.Dep{}
	}
	f.Deps[set.ModulePath] = want
	if err := writeModFile(path, f); err != nil {
		return 0, err
	}
	return ModuleFileUpdated, nil
}

func writeModFile(path string, f *modfile.File) error {
	data, err := modfile.Format(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o644)
}

package load

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"cuelang.org/go/mod/modfile"
	"cuelang.org/go/mod/module"
	"golang.org/x/mod/semver"

	set "github.com/set-engine/set"
)

// LanguageVersion is the CUE language version set writes into new
// cue.mod/module.cue files.
const LanguageVersion = "v0.17.0"

// ModuleFileResult says what ModuleFile would change.
type ModuleFileResult int

const (
	ModuleFileUnchanged ModuleFileResult = iota
	ModuleFileCreated
	ModuleFileUpdated
)

// ModuleFilePath is the module file of the CUE module rooted at dir.
func ModuleFilePath(dir string) string { return filepath.Join(dir, "cue.mod", "module.cue") }

// ModuleFile computes dir/cue.mod/module.cue so that it depends on the
// embedded module at the version this binary serves, on each module of
// exact at exactly its version (module path with major version → version),
// and on each module of atLeast at its version or a higher one the file
// already names. It writes nothing: it returns the content and what
// writing it would do. A new file declares modulePath, which must be a
// valid CUE module path with a major version ("example.com/app@v0"); an
// existing file keeps everything else it says. The content is checked to
// parse back as a module file.
func ModuleFile(dir, modulePath string, exact, atLeast map[string]string) ([]byte, ModuleFileResult, error) {
	path := ModuleFilePath(dir)
	want := map[string]string{}
	for m, v := range atLeast {
		want[m] = v
	}
	for m, v := range exact {
		want[m] = v
	}
	want[set.ModulePath] = set.ModuleVersion
	isExact := func(m string) bool {
		_, ok := exact[m]
		return ok || m == set.ModulePath
	}
	data, err := os.ReadFile(path)
	var f *modfile.File
	res := ModuleFileUpdated
	switch {
	case os.IsNotExist(err):
		if err := module.CheckPath(modulePath); err != nil {
			return nil, 0, fmt.Errorf("module path for %s: %w", path, err)
		}
		f = &modfile.File{Module: modulePath, Language: &modfile.Language{Version: LanguageVersion}}
		res = ModuleFileCreated
	case err != nil:
		return nil, 0, err
	default:
		if f, err = modfile.Parse(data, path); err != nil {
			return nil, 0, err
		}
	}
	if f.Deps == nil {
		f.Deps = map[string]*modfile.Dep{}
	}
	changed := res == ModuleFileCreated
	for _, m := range slices.Sorted(maps.Keys(want)) {
		if d := f.Deps[m]; d != nil && (d.Version == want[m] || !isExact(m) && semver.Compare(d.Version, want[m]) > 0) {
			continue
		}
		f.Deps[m] = &modfile.Dep{Version: want[m]}
		changed = true
	}
	if !changed {
		return data, ModuleFileUnchanged, nil
	}
	out, err := modfile.Format(f)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := modfile.Parse(out, path); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return out, res, nil
}

// goMajorSuffix is the major-version suffix of a Go module path (/v2 and
// up); a CUE module carries its major version after "@" instead.
var goMajorSuffix = regexp.MustCompile(`/v([2-9]|[1-9][0-9]+)$`)

// ModulePathFromGo derives a CUE module path, at major version v0, from a
// Go module path: lower-cased (CUE module paths are), without a Go
// major-version suffix. ok is false when no valid CUE module path results
// (a path without a domain, or with characters CUE does not allow).
//
//	github.com/Masterminds/semver/v3 → github.com/masterminds/semver@v0
func ModulePathFromGo(goPath string) (string, bool) {
	p := goMajorSuffix.ReplaceAllString(strings.ToLower(goPath), "")
	if module.CheckPathWithoutVersion(p) != nil {
		return "", false
	}
	return p + "@v0", true
}

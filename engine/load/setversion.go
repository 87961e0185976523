package load

import (
	"context"
	"fmt"
	"os"
	"slices"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/mod/modfile"
	"cuelang.org/go/mod/module"
	"golang.org/x/mod/semver"

	set "github.com/set-engine/set"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/diag"
)

// checkSetVersion compares the version of the set module that the
// project's cue.mod/module.cue requires with the one this binary embeds
// and serves, set.ModuleVersion, which is the one setctl always checks
// set.cue against (the registry is never asked for set's module). A newer
// requirement is an error: set.cue may use what this binary does not know.
// An older one is a warning: setctl checks against its own version while
// the cue command would evaluate the older one. No requirement, or the
// same version, is neither. data is the module file's content (an
// overlay's, or the disk's), path its absolute path.
func checkSetVersion(path string, data []byte) (warning *diag.Diagnostic, err error) {
	f, err := modfile.Parse(data, path)
	if err != nil {
		return nil, err
	}
	dep := f.Deps[set.ModulePath]
	if dep == nil || dep.Version == set.ModuleVersion || !semver.IsValid(dep.Version) {
		return nil, nil
	}
	d := diag.Diagnostic{Severity: diag.Error, Pos: depVersionPos(path, data, set.ModulePath)}
	if semver.Compare(dep.Version, set.ModuleVersion) > 0 {
		d.Summary = fmt.Sprintf("cue.mod/module.cue requires %s at %s, newer than the %s this setctl embeds and checks set.cue against", set.ModulePath, dep.Version, set.ModuleVersion)
		d.Detail = fmt.Sprintf("Install setctl %s or newer (`setctl version` names the module version a setctl embeds), or require %s in cue.mod/module.cue.", dep.Version, set.ModuleVersion)
		return nil, d
	}
	d.Severity = diag.Warning
	d.Summary = fmt.Sprintf("cue.mod/module.cue requires %s at %s, but this setctl embeds %s and checks set.cue against %s, while the cue command evaluates it with %s", set.ModulePath, dep.Version, set.ModuleVersion, set.ModuleVersion, dep.Version)
	d.Detail = fmt.Sprintf(`Require %s there: deps: "%s": v: %q (or cue mod get %s@%s).`, set.ModuleVersion, set.ModulePath, set.ModuleVersion, set.ModulePath[:len(set.ModulePath)-len("@v0")], set.ModuleVersion)
	return &d, nil
}

// checkDepsSetVersion refuses a project whose cue.mod/module.cue requires
// a module (a team's profile) that itself requires a newer set module
// than this binary embeds: CUE's minimal version selection picks that
// newer version, which the cue command evaluates set.cue with and which
// the module may use, while setctl checks set.cue against its own. The
// registry answers for each module the file requires, in path order; a
// module it cannot answer for is left to the loader, which says so. path
// and data are as for checkSetVersion.
func checkDepsSetVersion(ctx context.Context, reg *Registry, path string, data []byte) error {
	f, err := modfile.Parse(data, path)
	if err != nil {
		return err
	}
	deps := make([]string, 0, len(f.Deps))
	for m := range f.Deps {
		deps = append(deps, m)
	}
	slices.Sort(deps)
	for _, m := range deps {
		if m == set.ModulePath {
			continue
		}
		mv, err := module.NewVersion(m, f.Deps[m].Version)
		if err != nil {
			continue
		}
		mf, err := reg.ModFile(ctx, mv)
		if err != nil {
			continue
		}
		need := mf.Deps[set.ModulePath]
		if need == nil || !semver.IsValid(need.Version) || semver.Compare(need.Version, set.ModuleVersion) <= 0 {
			continue
		}
		return diag.Diagnostic{
			Severity: diag.Error,
			Pos:      depVersionPos(path, data, m),
			Summary: fmt.Sprintf("cue.mod/module.cue requires %s at %s, which requires %s at %s, newer than the %s this setctl embeds and checks set.cue against",
				m, mv.Version(), set.ModulePath, need.Version, set.ModuleVersion),
			Detail: fmt.Sprintf("Install setctl %s or newer (`setctl version` names the module version a setctl embeds), or require a release of %s made for %s in cue.mod/module.cue.",
				need.Version, m, set.ModuleVersion),
		}
	}
	return nil
}

// depVersionPos is where the module file at path names the version of
// the module mpath (with its major version) it requires; the file alone
// when that cannot be found.
func depVersionPos(path string, data []byte, mpath string) config.Pos {
	pos := config.Pos{File: path}
	f, err := parser.ParseFile(path, data)
	if err != nil {
		return pos
	}
	var found bool
	ast.Walk(f, func(n ast.Node) bool {
		field, ok := n.(*ast.Field)
		if !ok || found {
			return !found
		}
		if name, _, _ := ast.LabelName(field.Label); name != mpath {
			return true
		}
		ast.Walk(field.Value, func(n ast.Node) bool {
			if v, ok := n.(*ast.Field); ok && !found {
				if name, _, _ := ast.LabelName(v.Label); name == "v" {
					pos, found = Position(v.Value.Pos()), true
				}
			}
			return !found
		}, nil)
		return !found
	}, nil)
	return pos
}

// readModuleFile is the project's module file, from the overlay or the
// disk.
func (o Options) readModuleFile(root string) (string, []byte, error) {
	path := ModuleFilePath(root)
	if data, ok := o.Overlay[path]; ok {
		return path, data, nil
	}
	data, err := os.ReadFile(path)
	return path, data, err
}

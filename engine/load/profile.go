package load

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/mod/module"
	"golang.org/x/mod/semver"

	set "github.com/set-engine/set"
)

// ProfilesDir is the directory of the embedded module that holds the
// built-in profiles, one package per subdirectory.
const ProfilesDir = "profiles"

// Profile is the package a project's set.cue builds on: a built-in profile
// of the embedded module, or a profile package of a module in the
// registry (CUE_REGISTRY), such as a team's shared profile.
type Profile struct {
	// ImportPath is what set.cue imports, e.g.
	// "github.com/set-engine/set/profiles/golang" or
	// "example.com/acme/profiles/gotools@v0".
	ImportPath string
	// Package is the package's name: the identifier set.cue refers to it by.
	Package string
	// Module is the module that holds a registry profile, with its major
	// version ("example.com/acme/profiles@v0"), and Version the version a
	// project depends on; both are empty for a built-in profile.
	Module, Version string
	// Requires are the registry module's own dependencies (module path with
	// major version → version), which a project's cue.mod/module.cue needs
	// at these versions or higher.
	Requires map[string]string
}

// BuiltinProfiles are the names of the embedded module's profiles, sorted.
func BuiltinProfiles() []string {
	entries, _ := fs.ReadDir(set.Module, ProfilesDir)
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// ResolveProfile finds the profile ref names: a built-in profile's name
// ("golang"), or a package import path in the registry, optionally with a
// major version or an exact version and a package qualifier:
//
//	example.com/acme/profiles/gotools          latest v0.x.y
//	example.com/acme/profiles/gotools@v1       latest v1.x.y
//	example.com/acme/profiles/gotools@v1.2.0   exactly v1.2.0
//	example.com/acme/profiles/go-tools:gotools the package named gotools
//
// The module holding the package is the longest prefix of the path that
// the registry has a module for (at that major version) and whose latest
// release (or the version given) contains the package's directory, as
// `cue mod get` and `cue mod tidy` resolve it. A version with no release
// falls back to the latest pre-release.
func ResolveProfile(ctx context.Context, ref string, opts Options) (*Profile, error) {
	if !strings.ContainsAny(ref, "./:@") {
		for _, name := range BuiltinProfiles() {
			if name == ref {
				return &Profile{ImportPath: path.Join(set.ModulePath[:len(set.ModulePath)-len("@v0")], ProfilesDir, name), Package: name}, nil
			}
		}
		return nil, fmt.Errorf("unknown profile %q (built-in: %s; or a package path in CUE_REGISTRY such as example.com/acme/profiles/gotools@v0)",
			ref, strings.Join(BuiltinProfiles(), ", "))
	}
	pkgPath, qualifier, hasQualifier := strings.Cut(ref, ":")
	base, version, _ := strings.Cut(pkgPath, "@")
	major := "v0"
	switch {
	case version == "":
	case semver.Major(version) == version:
		major, version = version, ""
	case semver.IsValid(version) && semver.Canonical(version) == version:
		major = semver.Major(version)
	default:
		return nil, fmt.Errorf("profile %q: %q is neither a major version (v0) nor a full version (v0.1.2)", ref, version)
	}
	if !hasQualifier {
		qualifier = path.Base(base)
	}
	if !ast.IsValidIdent(qualifier) || strings.HasPrefix(qualifier, "#") || strings.HasPrefix(qualifier, "_") {
		return nil, fmt.Errorf("profile %q: %q is not a valid package name; name the package after a colon (%s:mypkg)", ref, qualifier, pkgPath)
	}
	importPath := base + "@" + major
	if hasQualifier {
		importPath += ":" + qualifier
	}
	if err := module.CheckImportPath(importPath); err != nil {
		return nil, fmt.Errorf("profile %q: %w", ref, err)
	}

	env := opts.environ()
	reg, err := embeddedRegistry(env)
	if err != nil {
		return nil, err
	}
	elems := strings.Split(base, "/")
	for i := len(elems); i >= 1; i-- {
		mpath := strings.Join(elems[:i], "/")
		if module.CheckPathWithoutVersion(mpath) != nil {
			continue
		}
		versions, err := reg.ModuleVersions(ctx, mpath+"@"+major)
		if err != nil {
			return nil, fmt.Errorf("profile %q: %w", ref, err)
		}
		v := version
		if v == "" {
			v = latest(versions)
		} else if !slices.Contains(versions, v) {
			v = ""
		}
		if v == "" {
			continue
		}
		mv, err := module.NewVersion(mpath+"@"+major, v)
		if err != nil {
			return nil, fmt.Errorf("profile %q: %w", ref, err)
		}
		loc, err := reg.Fetch(ctx, mv)
		if err != nil {
			return nil, fmt.Errorf("profile %q: %w", ref, err)
		}
		if !hasCUEFiles(loc.FS, path.Join(loc.Dir, strings.Join(elems[i:], "/"))) {
			continue
		}
		mf, err := reg.ModFile(ctx, mv)
		if err != nil {
			return nil, fmt.Errorf("profile %q: %w", ref, err)
		}
		requires := map[string]string{}
		for m, d := range mf.Deps {
			requires[m] = d.Version
		}
		return &Profile{ImportPath: importPath, Package: qualifier, Module: mv.Path(), Version: v, Requires: requires}, nil
	}
	what := "any version"
	if version != "" {
		what = "version " + version
	}
	registry := lookupEnv(env, "CUE_REGISTRY")
	switch registry {
	case "none":
		return nil, fmt.Errorf("profile %q: CUE_REGISTRY is none, so no registry can provide package %s; set CUE_REGISTRY to the registry that holds it", ref, base)
	case "":
		registry = "the default registry (CUE_REGISTRY is unset)"
	}
	return nil, fmt.Errorf("profile %q: no module in %s provides package %s at %s of major version %s",
		ref, registry, base, what, major)
}

// environ is the environment Load and ResolveProfile read.
func (o Options) environ() []string {
	if o.Env == nil {
		return os.Environ()
	}
	return o.Env
}

// latest is the highest release among versions, or the highest
// pre-release when there is no release; "" when versions is empty.
func latest(versions []string) string {
	best, bestPre := "", ""
	for _, v := range versions {
		if !semver.IsValid(v) {
			continue
		}
		if semver.Prerelease(v) == "" {
			if best == "" || semver.Compare(v, best) > 0 {
				best = v
			}
		} else if bestPre == "" || semver.Compare(v, bestPre) > 0 {
			bestPre = v
		}
	}
	if best != "" {
		return best
	}
	return bestPre
}

// hasCUEFiles reports whether dir in fsys holds a .cue file.
func hasCUEFiles(fsys fs.FS, dir string) bool {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".cue") {
			return true
		}
	}
	return false
}

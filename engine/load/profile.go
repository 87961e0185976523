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
	"github.com/set-engine/set/engine/proc"
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
		return builtinProfile(ref)
	}
	r, err := parseProfileRef(ref)
	if err != nil {
		return nil, err
	}
	env := opts.environ()
	reg, err := embeddedRegistry(env)
	if err != nil {
		return nil, err
	}
	registry := proc.Getenv(env, "CUE_REGISTRY")
	elems := strings.Split(r.base, "/")
	for i := len(elems); i >= 1; i-- {
		p, err := r.inModule(ctx, reg, registry, strings.Join(elems[:i], "/"), strings.Join(elems[i:], "/"))
		if err != nil {
			return nil, fmt.Errorf("profile %q: %w", ref, err)
		}
		if p != nil {
			return p, nil
		}
	}
	return nil, r.notFound(registry)
}

// builtinProfile is the embedded module's profile called name.
func builtinProfile(name string) (*Profile, error) {
	if !slices.Contains(BuiltinProfiles(), name) {
		return nil, fmt.Errorf("unknown profile %q (built-in: %s; or a package path in CUE_REGISTRY such as example.com/acme/profiles/gotools@v0)",
			name, strings.Join(BuiltinProfiles(), ", "))
	}
	return &Profile{ImportPath: path.Join(set.ModulePath[:len(set.ModulePath)-len("@v0")], ProfilesDir, name), Package: name}, nil
}

// profileRef is a registry profile reference, parsed.
type profileRef struct {
	ref string
	// base is the package path without version or qualifier.
	base string
	// version is the exact version asked for, or "" for the latest of
	// major.
	version, major string
	// qualifier is the package name: the one after the colon, or the
	// path's last element.
	qualifier string
	// importPath is what set.cue imports: base@major, with ":qualifier"
	// when the reference named one.
	importPath string
}

func parseProfileRef(ref string) (profileRef, error) {
	pkgPath, qualifier, hasQualifier := strings.Cut(ref, ":")
	base, version, _ := strings.Cut(pkgPath, "@")
	r := profileRef{ref: ref, base: base, version: version, major: "v0", qualifier: qualifier}
	switch {
	case version == "":
	case semver.Major(version) == version:
		r.major, r.version = version, ""
	case semver.IsValid(version) && semver.Canonical(version) == version:
		r.major = semver.Major(version)
	default:
		return r, fmt.Errorf("profile %q: %q is neither a major version (v0) nor a full version (v0.1.2)", ref, version)
	}
	if !hasQualifier {
		r.qualifier = path.Base(base)
	}
	if !ast.IsValidIdent(r.qualifier) || strings.HasPrefix(r.qualifier, "#") || strings.HasPrefix(r.qualifier, "_") {
		return r, fmt.Errorf("profile %q: %q is not a valid package name; name the package after a colon (%s:mypkg)", ref, r.qualifier, pkgPath)
	}
	r.importPath = base + "@" + r.major
	if hasQualifier {
		r.importPath += ":" + r.qualifier
	}
	if err := module.CheckImportPath(r.importPath); err != nil {
		return r, fmt.Errorf("profile %q: %w", ref, err)
	}
	return r, nil
}

// inModule is the profile when module mpath, at the version r asks for
// (or its latest of r's major version), holds the package in its
// directory dir; nil when the registry has no such version or the
// version has no CUE files there. registry is CUE_REGISTRY's value, for
// the error when the registry does not answer.
func (r profileRef) inModule(ctx context.Context, reg *Registry, registry, mpath, dir string) (*Profile, error) {
	if module.CheckPathWithoutVersion(mpath) != nil {
		return nil, nil
	}
	versions, err := reg.ModuleVersions(ctx, mpath+"@"+r.major)
	if err != nil {
		return nil, registryFailed(registry, err)
	}
	v := r.version
	if v == "" {
		v = latest(versions)
	} else if !slices.Contains(versions, v) {
		v = ""
	}
	if v == "" {
		return nil, nil
	}
	mv, err := module.NewVersion(mpath+"@"+r.major, v)
	if err != nil {
		return nil, err
	}
	loc, err := reg.Fetch(ctx, mv)
	if err != nil {
		return nil, registryFailed(registry, err)
	}
	if !hasCUEFiles(loc.FS, path.Join(loc.Dir, dir)) {
		return nil, nil
	}
	mf, err := reg.ModFile(ctx, mv)
	if err != nil {
		return nil, registryFailed(registry, err)
	}
	requires := map[string]string{}
	for m, d := range mf.Deps {
		requires[m] = d.Version
	}
	if need := requires[set.ModulePath]; semver.Compare(need, set.ModuleVersion) > 0 {
		return nil, fmt.Errorf("%s %s requires %s at %s, newer than the %s this setctl embeds; install setctl %s or newer, or pick a release of the profile made for %s (--profile %s@<version>)",
			mv.Path(), v, set.ModulePath, need, set.ModuleVersion, need, set.ModuleVersion, r.base)
	}
	return &Profile{ImportPath: r.importPath, Package: r.qualifier, Module: mv.Path(), Version: v, Requires: requires}, nil
}

// notFound says that no module in registry (CUE_REGISTRY's value)
// provides r.
func (r profileRef) notFound(registry string) error {
	what := "any version"
	if r.version != "" {
		what = "version " + r.version
	}
	switch registry {
	case "none":
		return fmt.Errorf("profile %q: CUE_REGISTRY is none, so no registry can provide package %s; set CUE_REGISTRY to the registry that holds it", r.ref, r.base)
	case "":
		registry = "the default registry (CUE_REGISTRY is unset)"
	}
	return fmt.Errorf("profile %q: no module in %s provides package %s at %s of major version %s",
		r.ref, registry, r.base, what, r.major)
}

// registryFailed says which registry failed to answer (registry is
// CUE_REGISTRY's value: unset, the cue tool asks its default one) and
// what the user can do, with the registry client's error.
func registryFailed(registry string, err error) error {
	if registry == "" {
		return fmt.Errorf("CUE_REGISTRY is unset, so the cue tool's default registry (%s) was asked, and it failed: %w; set CUE_REGISTRY to the registry that holds the profile", defaultRegistry, err)
	}
	return fmt.Errorf("the registry CUE_REGISTRY names (%s) failed: %w; check that it is up and that CUE_REGISTRY names the registry that holds the profile", registry, err)
}

// defaultRegistry is the registry the cue tool and its client library ask
// when CUE_REGISTRY is unset.
const defaultRegistry = "registry.cue.works"

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

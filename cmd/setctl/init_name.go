package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/plan"
)

// manifest is a file that may declare a project's name, and how to read
// the name from it ("" when it declares none).
type manifest struct {
	file    string
	profile string // the built-in profile whose projects it describes
	read    func([]byte) (string, error)
}

// manifests are the files declaredName reads, in the order init looks for
// them to pick a profile.
var manifests = []manifest{
	{"go.mod", "golang", goModuleName},
	{"Cargo.toml", "rust", cargoName},
	{"pyproject.toml", "python", pyprojectName},
	{"setup.cfg", "python", setupCfgName},
	{"package.json", "node", packageJSONName},
}

// declaredName is the name init gives the project in dir when --name does
// not: the name its manifest declares, kebab-cased as set's names are,
// and where it comes from. The manifests of profile (the one init uses:
// package.json for node and web) are read first, then the others, each
// in the order of manifests: go.mod (its module path's last element, a
// major version suffix such as /v2 left out), Cargo.toml ([package]
// name), pyproject.toml ([project] name, or poetry's [tool.poetry]
// name), setup.cfg ([metadata] name) and package.json (its name without
// an npm scope such as @acme/). The first that names the project
// decides; when none does (none there, a Cargo workspace, a
// pyproject.toml with only tool sections), the name is the directory's.
// A manifest that does not parse is an error that says to pass --name.
func declaredName(dir, profile string) (name, why string, err error) {
	if profile == "web" {
		profile = "node"
	}
	ordered := slices.Clone(manifests)
	slices.SortStableFunc(ordered, func(a, b manifest) int {
		return cmp.Compare(boolRank(a.profile != profile), boolRank(b.profile != profile))
	})
	var silent []string // manifests dir has that name nothing
	for _, m := range ordered {
		data, err := os.ReadFile(filepath.Join(dir, m.file))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", "", err
		}
		declared, err := m.read(data)
		if err != nil {
			return "", "", fmt.Errorf("%s: %v (pass --name to name the project without it)", filepath.Join(dir, m.file), err)
		}
		if declared == "" {
			silent = append(silent, m.file)
			continue
		}
		name := declared
		if m.file == "package.json" {
			name = withoutScope(declared)
		}
		return plan.Kebab(name, "project-"), m.file + " names it " + declared, nil
	}
	why = "the directory's name"
	switch len(silent) {
	case 0:
	case 1:
		why += "; " + silent[0] + " declares none"
	default:
		why += "; " + english.List(silent) + " declare none"
	}
	return plan.Kebab(filepath.Base(dir), "project-"), why, nil
}

// boolRank orders false before true.
func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// goModuleName is the last element of go.mod's module path that is not a
// major version suffix (example.com/app/v2: app); "" without a module
// line.
func goModuleName(data []byte) (string, error) {
	p := modfile.ModulePath(data)
	if p == "" {
		return "", nil
	}
	if prefix, _, ok := module.SplitPathVersion(p); ok && prefix != "" {
		p = prefix
	}
	return path.Base(p), nil
}

// cargoName is Cargo.toml's [package] name; "" for a workspace without a
// root package.
func cargoName(data []byte) (string, error) {
	var manifest struct {
		Package struct {
			Name string `toml:"name"`
		} `toml:"package"`
	}
	if err := toml.Unmarshal(data, &manifest); err != nil {
		return "", err
	}
	return manifest.Package.Name, nil
}

// pyprojectName is pyproject.toml's [project] name, or poetry's [tool.poetry]
// name; "" when it has neither.
func pyprojectName(data []byte) (string, error) {
	var manifest struct {
		Project struct {
			Name string `toml:"name"`
		} `toml:"project"`
		Tool struct {
			Poetry struct {
				Name string `toml:"name"`
			} `toml:"poetry"`
		} `toml:"tool"`
	}
	if err := toml.Unmarshal(data, &manifest); err != nil {
		return "", err
	}
	if manifest.Project.Name != "" {
		return manifest.Project.Name, nil
	}
	return manifest.Tool.Poetry.Name, nil
}

// setupCfgName is setup.cfg's [metadata] name; "" when it has none.
// setup.cfg is an INI file as configparser reads it: a "name = value"
// or "name: value" line in the [metadata] section.
func setupCfgName(data []byte) (string, error) {
	section := ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.TrimSpace(line[1 : len(line)-1])
		case section == "metadata":
			key, value, ok := strings.Cut(line, "=")
			if k, v, colon := strings.Cut(line, ":"); colon && (!ok || len(k) < len(key)) {
				key, value, ok = k, v, true
			}
			if ok && strings.TrimSpace(key) == "name" {
				return strings.TrimSpace(value), nil
			}
		}
	}
	return "", nil
}

// packageJSONName is package.json's name; "" when it has none.
func packageJSONName(data []byte) (string, error) {
	var pkg struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return "", err
	}
	return pkg.Name, nil
}

// withoutScope is an npm package name without its scope (@acme/greeter:
// greeter).
func withoutScope(name string) string {
	if scope, base, ok := strings.Cut(name, "/"); ok && strings.HasPrefix(scope, "@") {
		return base
	}
	return name
}

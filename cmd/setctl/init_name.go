package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"

	"github.com/set-engine/set/engine/plan"
)

// declaredName is the name init gives the project in dir when --name does
// not: the name its manifest declares, kebab-cased as set's names are,
// and where it comes from. The manifest is the first of go.mod (its
// module path's last element, a major version suffix such as /v2 left
// out), Cargo.toml ([package] name), pyproject.toml ([project] name, or
// poetry's [tool.poetry] name) and package.json (its name without an npm
// scope such as @acme/) that dir has, as init looks for them to pick a
// profile; without one, or when it names nothing (a Cargo workspace, a
// pyproject.toml with only tool sections), the name is the directory's.
// A manifest that does not parse is an error that says to pass --name.
func declaredName(dir string) (name, why string, err error) {
	for _, m := range []struct {
		file string
		read func([]byte) (string, error)
	}{
		{"go.mod", goModuleName},
		{"Cargo.toml", cargoName},
		{"pyproject.toml", pyprojectName},
		{"package.json", packageJSONName},
	} {
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
			return plan.Kebab(filepath.Base(dir), "project-"), "the directory's name; " + m.file + " declares none", nil
		}
		name := declared
		if m.file == "package.json" {
			name = withoutScope(declared)
		}
		return plan.Kebab(name, "project-"), m.file + " names it " + declared, nil
	}
	return plan.Kebab(filepath.Base(dir), "project-"), "the directory's name", nil
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

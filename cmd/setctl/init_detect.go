package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// profileMarkers are, in the order they are looked for, the files whose
// presence in a project's root names its built-in profile. A Go module
// with a package.json for its web assets is a Go project: go.mod comes
// first. package.json is looked at last, and more closely (see
// nodeProfile).
var profileMarkers = []struct{ file, profile string }{
	{"go.mod", "golang"},
	{"Cargo.toml", "rust"},
	{"pyproject.toml", "python"},
	{"setup.py", "python"},
	{"requirements.txt", "python"},
}

// builtinProfiles are the built-in profiles as init presents them: what
// each is for, in its help, and, in the comment of the set.cue it
// writes, an override of one of its gates that a project of its
// ecosystem might make and a gate of its feature stack that a project
// might make non-blocking.
var builtinProfiles = []struct{ name, what, override, warn string }{
	{"golang", "Go modules: go build, gofmt, go vet, go test",
		`gates: test: run: ["go", "test", "-race", "./..."]`, "fmt"},
	{"node", "Node.js packages (npm, pnpm or yarn): tsc, eslint, the test script",
		`gates: test: run: ["npm", "run", "test:unit"]`, "lint"},
	{"python", "Python projects (uv, poetry or pip): ruff, mypy, pytest",
		`gates: test: env: PYTEST_ADDOPTS: "-x --strict-markers"`, "typecheck"},
	{"rust", "cargo crates and workspaces: build, fmt, clippy, test",
		`gates: test: run: ["cargo", "test", "--workspace", "--all-features"]`, "clippy"},
	{"web", "Next.js apps on node: next build, Playwright e2e, ORM client",
		`gates: e2e: timeout: "30m"`, "lint"},
}

// builtinProfilesHelp lists the built-in profiles for init's help, one a
// line with what it is for.
func builtinProfilesHelp() string {
	var b strings.Builder
	for _, p := range builtinProfiles {
		fmt.Fprintf(&b, "  %-8s %s\n", p.name, p.what)
	}
	return b.String()
}

// detectProfile is the built-in profile dir's files name, and why (the
// file that decided); "" when none does. Only a package.json that is
// not JSON is an error.
func detectProfile(dir string) (profile, why string, err error) {
	for _, m := range profileMarkers {
		if fileExists(filepath.Join(dir, m.file)) {
			return m.profile, "the project has " + m.file, nil
		}
	}
	return nodeProfile(filepath.Join(dir, "package.json"))
}

// nodeProfile is web when the package.json at path depends on next (in
// dependencies or devDependencies), node when it does not, and "" when
// there is no package.json.
func nodeProfile(path string) (profile, why string, err error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	var pkg struct {
		Dependencies    map[string]any `json:"dependencies"`
		DevDependencies map[string]any `json:"devDependencies"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return "", "", fmt.Errorf("%s: %v (pass --profile to choose the profile without it)", path, err)
	}
	if _, ok := pkg.Dependencies["next"]; ok {
		return "web", "package.json depends on next", nil
	}
	if _, ok := pkg.DevDependencies["next"]; ok {
		return "web", "package.json depends on next", nil
	}
	return "node", "the project has package.json", nil
}

func fileExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir()
}

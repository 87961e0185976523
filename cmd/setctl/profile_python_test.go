package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfilePython: a pip project (requirements-dev.txt) with pytest and
// mypy configured. The Python package index is out of this machine's
// reach, so pytest and mypy are Debian's (python3-pytest, python3-mypy):
// the install gate's .venv sees them through --system-site-packages, and
// pip finds the requirements satisfied without a download. ruff is in
// neither Debian bookworm nor npm's reach, so the sample does not
// configure it and the lint gate passes saying so.
func TestProfilePython(t *testing.T) {
	t.Parallel()
	python := pythonWith(t, "pytest", "mypy")
	p := newSample(t, `#!/bin/sh
# The first iteration greets without the comma; the second, whose prompt
# holds the test gate's failure, fixes it.
set -e
sep=""
grep -q '^Gate test ' "$1" && sep=","
cat > greeter/greet.py <<END
"""Greetings."""


def greet(name: str) -> str:
    """The greeting for name."""
    return f"Hello$sep {name}!"
END
cat > tests/test_greet.py <<'END'
from greeter.greet import greet


# REQ-GREET-01
def test_greets_by_name() -> None:
    assert greet("Ada") == "Hello, Ada!"
END
`, map[string]string{
		"pyproject.toml": `[project]
name = "greeter"
version = "0.1.0"
requires-python = ">=3.11"

[tool.mypy]
strict = true
`,
		"requirements-dev.txt": "pytest\nmypy\n",
		"greeter/__init__.py":  `"""Greeter greets."""` + "\n",
		"greeter/version.py":   `"""The version."""` + "\n\nVERSION = \"0.1.0\"\n",
		"tests/test_version.py": `from greeter.version import VERSION


def test_has_a_version() -> None:
    assert len(VERSION.split(".")) == 3
`,
		".gitignore":         ".venv/\n__pycache__/\n.mypy_cache/\n.pytest_cache/\n.set/\n",
		"docs/spec.md":       sampleSpec,
		"cue.mod/module.cue": sampleModule,
		"set.cue":            sampleSetCUE("python"),
	})
	// The gates run python3 from PATH: make it the one with the tools.
	bin := t.TempDir()
	if err := os.Symlink(python, filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}
	p.setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	p.commit()

	out := p.apply("greet", "install", "typecheck", "test")
	for _, want := range []string{`baseline lint: skipped, nothing to lint: no ruff`, `greet +verify lint: skipped, nothing to lint: no ruff`} {
		if !matchLine(out, want) {
			t.Errorf("apply's output has no line matching %q:\n%s", want, out)
		}
	}
	if log := p.read(p.baselineLog("lint")); !strings.Contains(log, "[set] skip: nothing to lint: no ruff or flake8 configuration, nor a pre-commit hook running them") {
		t.Errorf("the lint gate did not say why it was skipped:\n%s", log)
	}
	p.fixedOnMain("greeter/greet.py", `f"Hello, {name}!"`, "FAILED tests/test_greet.py::test_greets_by_name")
}

// pythonWith is the first of python3 on PATH and Debian's /usr/bin/python3
// that imports every module; without one t is skipped (failed under
// CI=true). Under -short t is skipped, as every profile sample is.
func pythonWith(t *testing.T, modules ...string) string {
	t.Helper()
	skipShort(t)
	var candidates []string
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	candidates = append(candidates, "/usr/bin/python3")
	importAll := "import " + strings.Join(modules, ", ")
	for _, c := range candidates {
		if exec.Command(c, "-c", importAll).Run() == nil && exec.Command(c, "-m", "venv", "--help").Run() == nil {
			return c
		}
	}
	requireToolchain(t, "the python profile's sample needs a python3 with venv, "+strings.Join(modules, " and ")+" (apt-get install python3-venv python3-pytest python3-mypy)",
		"/usr/bin/python3", "-c", importAll)
	t.Fatal("unreachable: requireToolchain passed where the import failed")
	return ""
}

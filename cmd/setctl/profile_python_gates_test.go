package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
)

// The python profile's gates decide from the tree what to run. These
// tests run them on small projects with stand-ins for the tools (a
// .venv/bin/python that records what it is asked to run), so that they
// need no package index and no installed tool: what they check is the
// command line each gate runs for the project's configuration.

// pythonGates writes files (path → content) into a new directory with a
// set.cue on the python profile, and returns the directory and the
// gates the profile declares there.
func pythonGates(t *testing.T, files map[string]string) (string, map[string]config.Gate) {
	t.Helper()
	dir := t.TempDir()
	files["set.cue"] = `package sample

import "github.com/set-engine/set/profiles/python"

project: python.#Project & {
	name: "sample"
	spec: ["docs/spec.md"]
	agent: {adapter: "exec", argv: ["true"]}
}
`
	files["cue.mod/module.cue"] = sampleModule
	files["docs/spec.md"] = sampleSpec
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := loadWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, ws.cfg.Gates
}

// fakePython is a .venv/bin/python for dir that appends its arguments,
// as a line, to dir/calls, says yes to `-c "import MODULE"` for the
// modules named, and behaves as ruff does for `-m ruff check`: without
// --no-fix, where pyproject.toml sets fix = true, it rewrites the files
// it checks (here app.py).
const fakePython = `#!/bin/sh
here=$(dirname "$0")/../..
echo "$*" >> "$here/calls"
case "$1 $2" in
"-c import "*) case " $FAKE_MODULES " in *" ${2#import } "*) exit 0 ;; esac; exit 1 ;;
"-m ruff")
	case " $* " in *" --no-fix "*) exit 0 ;; esac
	grep -q '^fix = true' "$here/pyproject.toml" && echo "# fixed by ruff" >> "$here/app.py"
	exit 0 ;;
esac
exit 0
`

// runGate runs argv in dir with the fake .venv/bin/python and env added
// to the process's environment, and returns its output and the calls the
// fake python recorded.
func runGate(t *testing.T, dir string, argv []string, env ...string) (out, calls string) {
	t.Helper()
	if len(argv) == 0 {
		t.Fatal("the gate has no argv (a describe missing?)")
	}
	if err := os.MkdirAll(filepath.Join(dir, ".venv", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".venv", "bin", "python"), []byte(fakePython), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "calls"))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, b)
	}
	c, _ := os.ReadFile(filepath.Join(dir, "calls"))
	return string(b), string(c)
}

// TestPythonTypecheckAsConfigured: typecheck runs the checker the project
// configures as it is configured: mypy without paths when its
// configuration names the files (paths would override them), mypy . when
// it names none, pyright (which reads its include) without mypy.
func TestPythonTypecheckAsConfigured(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, config string
		packages           []string // directories with an __init__.py
		want               string   // the fake python's calls
		said               string   // in the gate's output
	}{
		{"pyproject files", "pyproject.toml", "[project]\nname = \"app\"\n\n[tool.mypy]\nfiles = [\"src\"]\nstrict = true\n", nil, "-m mypy\n", "mypy (pyproject.toml [tool.mypy] files)"},
		{"pyproject without files", "pyproject.toml", "[tool.mypy]\nstrict = true\n\n[tool.other]\nfiles = [\"x\"]\n", nil, "-m mypy .\n", "mypy . (pyproject.toml [tool.mypy], which names no files: the project's code)"},
		{"src layout without files", "pyproject.toml", "[tool.mypy]\nstrict = true\n", []string{"src/app", "tests"}, "-m mypy src\n", "mypy src (pyproject.toml [tool.mypy], which names no files: the project's code)"},
		{"flat layout without files", "setup.cfg", "[mypy]\nstrict = true\n", []string{"app", "tools", "tests", "docs", "examples"}, "-m mypy app tools\n", "mypy app tools (setup.cfg [mypy], which names no files: the project's code)"},
		{"mypy.ini files", "mypy.ini", "[mypy]\nfiles = src, tests\n", nil, "-m mypy\n", "mypy (mypy.ini [mypy] files)"},
		{"setup.cfg files", "setup.cfg", "[metadata]\nname = app\n\n[mypy]\nfiles = app\n", nil, "-m mypy\n", "mypy (setup.cfg [mypy] files)"},
		{"pyright", "pyproject.toml", "[tool.pyright]\ninclude = [\"src\"]\n", nil, "-c import pyright\n-m pyright\n", "pyright (pyproject.toml [tool.pyright])"},
		{"nothing", "pyproject.toml", "[project]\nname = \"app\"\n", nil, "", "[set] skip: nothing to type-check: no mypy or pyright configuration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{tc.file: tc.config}
			for _, pkg := range tc.packages {
				files[pkg+"/__init__.py"] = ""
			}
			dir, gates := pythonGates(t, files)
			out, calls := runGate(t, dir, gates["typecheck"].Run, "FAKE_MODULES=pyright")
			if calls != tc.want {
				t.Errorf("typecheck ran python with\n%s\nwant\n%s", calls, tc.want)
			}
			if !strings.Contains(out, tc.said) {
				t.Errorf("typecheck's output does not say %q:\n%s", tc.said, out)
			}
			if said, _ := runGate(t, dir, gates["typecheck"].Describe, "FAKE_MODULES=mypy pyright"); strings.TrimSpace(said) != tc.said {
				t.Errorf("typecheck's describe says %q, want %q", said, tc.said)
			}
		})
	}
}

// TestPythonConfigAsToolsRead: the gates find a tool's configuration
// where the tool itself does: ruff's in [tool.ruff.lint] and
// [tool.ruff.format] without a [tool.ruff] (ruff's own layout), mypy's in
// pyproject.toml before setup.cfg (mypy's order), so the project's
// [tool.mypy] files is the one followed.
func TestPythonConfigAsToolsRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, gate string
		files      map[string]string
		want       string // the fake python's calls
		said       string // the describe's line, and in the gate's output
	}{
		{"ruff subsections", "lint", map[string]string{
			"pyproject.toml": "[project]\nname = \"app\"\n\n[tool.ruff.lint]\nselect = [\"E\"]\n\n[tool.ruff.format]\nquote-style = \"single\"\n",
		}, "-c import ruff\n-m ruff check --no-fix --output-format concise .\n", "ruff check --no-fix --output-format concise . (pyproject.toml [tool.ruff])"},
		{"ruff's name as a prefix", "lint", map[string]string{
			"pyproject.toml": "[project]\nname = \"app\"\n\n[tool.ruffle]\nx = 1\n",
		}, "", "[set] skip: nothing to lint: no ruff or flake8 configuration, nor a pre-commit hook running them"},
		{"mypy in pyproject before setup.cfg", "typecheck", map[string]string{
			"pyproject.toml": "[project]\nname = \"app\"\n\n[tool.mypy]\nfiles = [\"src\"]\n",
			"setup.cfg":      "[metadata]\nname = app\n\n[mypy]\nfiles = app\n",
		}, "-m mypy\n", "mypy (pyproject.toml [tool.mypy] files)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, gates := pythonGates(t, tc.files)
			out, calls := runGate(t, dir, gates[tc.gate].Run, "FAKE_MODULES=ruff")
			if calls != tc.want {
				t.Errorf("%s ran python with\n%s\nwant\n%s", tc.gate, calls, tc.want)
			}
			if !strings.Contains(out, tc.said) {
				t.Errorf("%s's output does not say %q:\n%s", tc.gate, tc.said, out)
			}
			if said, _ := runGate(t, dir, gates[tc.gate].Describe, "FAKE_MODULES=ruff mypy"); strings.TrimSpace(said) != tc.said {
				t.Errorf("%s's describe says %q, want %q", tc.gate, said, tc.said)
			}
		})
	}
}

// TestPythonLintNeverWrites: a project whose ruff configuration says fix =
// true does not get its tree rewritten by the lint gate: ruff runs with
// --no-fix, and the agent fixes what it reports.
func TestPythonLintNeverWrites(t *testing.T) {
	t.Parallel()
	const app = "import os\n"
	dir, gates := pythonGates(t, map[string]string{
		"pyproject.toml": "[project]\nname = \"app\"\n\n[tool.ruff]\nfix = true\nshow-fixes = true\n",
		"app.py":         app,
	})
	out, calls := runGate(t, dir, gates["lint"].Run, "FAKE_MODULES=ruff")
	if want := "-c import ruff\n-m ruff check --no-fix --output-format concise .\n"; calls != want {
		t.Errorf("lint ran python with\n%s\nwant\n%s", calls, want)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "app.py")); string(got) != app {
		t.Errorf("the lint gate changed app.py:\n%s\n(its output: %s)", got, out)
	}
	if said, _ := runGate(t, dir, gates["lint"].Describe, "FAKE_MODULES=ruff"); strings.TrimSpace(said) != "ruff check --no-fix --output-format concise . (pyproject.toml [tool.ruff])" {
		t.Errorf("lint's describe says %q", said)
	}
}

// TestPythonInstallForTests: the pip path installs the project (-e .)
// together with what it declares for its tests, the first of: dependency
// groups (test, tests, testing, typing, types, else dev, with their
// included groups), extras of those names, requirements files for
// development; requirements.txt besides. It builds the project without
// pip's isolated environment when the environment satisfies the build
// requirements. pip is a stand-in on PYTHONPATH that records its
// arguments, so the real interpreter runs the gate's program and nothing
// is downloaded.
func TestPythonInstallForTests(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil || exec.Command(python, "-c", "import tomllib").Run() != nil {
		requireToolchain(t, "the python install gate's program needs python3 3.11 or newer (tomllib)", "python3", "-c", "import tomllib")
	}
	const project = "[project]\nname = \"app\"\nversion = \"0.1.0\"\n\n"
	const backend = "[build-system]\nrequires = [\"no-such-backend>=1\"]\nbuild-backend = \"no_such_backend\"\n\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		pip   string // pip's arguments
		said  string // the end of the gate's first line
	}{
		{"src layout with dependency groups", map[string]string{
			"pyproject.toml":      project + backend + "[dependency-groups]\ndev = [\"sphinx\", {include-group = \"tests\"}]\ntests = [\"pytest>=7\", {include-group = \"typing\"}]\ntyping = [\"mypy\"]\n",
			"src/app/__init__.py": "",
		}, "install --disable-pip-version-check -e . pytest>=7 mypy", "the project (-e .); dependency groups tests, typing (pyproject.toml); built in an isolated environment pip downloads no-such-backend>=1"},
		{"dev group only", map[string]string{
			"pyproject.toml":      project + "[build-system]\nrequires = []\nbuild-backend = \"x\"\n\n[dependency-groups]\ndev = [\"pytest\"]\n",
			"src/app/__init__.py": "",
		}, "install --disable-pip-version-check --no-build-isolation -e . pytest", "the project (-e .); dependency groups dev (pyproject.toml); built with no requirements from the environment"},
		{"extras", map[string]string{
			"pyproject.toml": project + backend + "[project.optional-dependencies]\ncli = [\"click\"]\ntest = [\"pytest\"]\n",
		}, "install --disable-pip-version-check -e .[test]", "the project (-e .); extras test (pyproject.toml); built in an isolated environment pip downloads no-such-backend>=1"},
		{"requirements files", map[string]string{
			"pyproject.toml":       project + backend,
			"requirements.txt":     "attrs\n",
			"requirements-dev.txt": "pytest\n",
			"src/app/__init__.py":  "",
		}, "install --disable-pip-version-check -e . -r requirements.txt -r requirements-dev.txt", "the project (-e .); requirements.txt; requirements-dev.txt; built in an isolated environment pip downloads no-such-backend>=1"},
		{"flat layout without dependencies", map[string]string{
			"pyproject.toml":       project + "dependencies = [\"tomli; python_version < '3.0'\"]\n\n" + backend,
			"requirements-dev.txt": "pytest\n",
			"app/__init__.py":      "",
		}, "install --disable-pip-version-check -r requirements-dev.txt", "not the project itself (a flat layout without dependencies, imported from the root); requirements-dev.txt"},
		{"flat layout with dependencies", map[string]string{
			"pyproject.toml":       project + "dependencies = [\"attrs\"]\n\n" + backend,
			"requirements-dev.txt": "pytest\n",
			"app/__init__.py":      "",
		}, "install --disable-pip-version-check -e . -r requirements-dev.txt", "the project (-e .); requirements-dev.txt; built in an isolated environment pip downloads no-such-backend>=1"},
		{"requirements without a project", map[string]string{
			"requirements-dev.txt": "pytest\n",
		}, "install --disable-pip-version-check -r requirements-dev.txt", "requirements-dev.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, gates := pythonGates(t, tc.files)
			// The real interpreter as the project's .venv/bin/python, and a
			// pip that records its arguments in front of the real one.
			if err := os.MkdirAll(filepath.Join(dir, ".venv", "bin"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(python, filepath.Join(dir, ".venv", "bin", "python")); err != nil {
				t.Fatal(err)
			}
			stub := filepath.Join(t.TempDir(), "pip")
			if err := os.MkdirAll(stub, 0o755); err != nil {
				t.Fatal(err)
			}
			record := "import sys\nopen(" + pyString(filepath.Join(dir, "pip-args")) + ", \"w\").write(\" \".join(sys.argv[1:]))\n"
			if err := os.WriteFile(filepath.Join(stub, "__main__.py"), []byte(record), 0o644); err != nil {
				t.Fatal(err)
			}
			// The rest of pip (pip._vendor, whose packaging the program
			// reads requirements with) is the real one's.
			pipPath := "import os, sys\n__path__.extend(os.path.join(p, \"pip\") for p in sys.path if os.path.isdir(os.path.join(p, \"pip\", \"_vendor\")))\n"
			if err := os.WriteFile(filepath.Join(stub, "__init__.py"), []byte(pipPath), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(gates["install"].Run[0], gates["install"].Run[1:]...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Dir(stub))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("install: %v\n%s", err, out)
			}
			args, _ := os.ReadFile(filepath.Join(dir, "pip-args"))
			if string(args) != tc.pip {
				t.Errorf("pip ran with\n%s\nwant\n%s", args, tc.pip)
			}
			first, _, _ := strings.Cut(string(out), "\n")
			if !strings.HasPrefix(first, "pip install into .venv (Python ") || !strings.HasSuffix(first, "the existing .venv): "+tc.said) {
				t.Errorf("the install gate says\n%s\nwant it to end with\nthe existing .venv): %s", first, tc.said)
			}
		})
	}
}

// pyString is s as a Python string literal.
func pyString(s string) string {
	return "\"" + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + "\""
}

// TestPythonLockfileToolMissing: with uv.lock and no uv on PATH (or
// poetry.lock and no poetry), every gate, and its describe, which setctl
// doctor runs, fails with the line that installs the tool rather than
// with "uv: not found" halfway through.
func TestPythonLockfileToolMissing(t *testing.T) {
	t.Parallel()
	// PATH holds sh and awk, and neither uv nor poetry.
	bin := t.TempDir()
	for _, p := range []string{"sh", "awk"} {
		path, err := exec.LookPath(p)
		if err != nil {
			t.Skip(err)
		}
		if err := os.Symlink(path, filepath.Join(bin, p)); err != nil {
			t.Fatal(err)
		}
	}
	for lockfile, want := range map[string]string{
		"uv.lock":     "uv.lock asks for uv, which is not on PATH: install it (curl -LsSf https://astral.sh/uv/install.sh | sh, or pipx install uv)\n",
		"poetry.lock": "poetry.lock asks for poetry, which is not on PATH: install it (pipx install poetry)\n",
	} {
		dir, gates := pythonGates(t, map[string]string{
			"pyproject.toml": "[project]\nname = \"app\"\n\n[tool.ruff]\n\n[tool.mypy]\nfiles = [\"app\"]\n",
			lockfile:         "",
		})
		for _, gate := range []string{"install", "lint", "typecheck", "test"} {
			for _, argv := range [][]string{gates[gate].Run, gates[gate].Describe} {
				cmd := exec.Command(filepath.Join(bin, "sh"), argv[1:]...)
				cmd.Dir = dir
				cmd.Env = []string{"PATH=" + bin}
				out, err := cmd.CombinedOutput()
				if err == nil || string(out) != want {
					t.Errorf("%s, gate %s (%s): %v\n%s\nwant a failure saying\n%s", lockfile, gate, strings.Join(argv[len(argv)-1:], ""), err, out, want)
				}
			}
		}
	}
}

// TestPythonLintAsPreCommitRuns: a project that runs ruff or flake8 only
// through pre-commit (a hook of .pre-commit-config.yaml, no [tool.ruff],
// ruff.toml or .flake8) gets them run by the lint gate too, in check mode
// whatever the hook's args say (--fix), and flake8 on the files git
// tracks or would track, as pre-commit hands them to it, so that .venv is
// not linted.
func TestPythonLintAsPreCommitRuns(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip(err)
	}
	const ruffHook = "  - repo: https://github.com/astral-sh/ruff-pre-commit\n    rev: v0.14.10\n    hooks:\n      - id: ruff-format\n      - id: ruff-check\n        args: [--fix]\n"
	const flake8Hook = "  - repo: https://github.com/PyCQA/flake8\n    rev: 5.0.4\n    hooks:\n      - id: flake8 # style\n"
	const otherHooks = "  - repo: https://github.com/pre-commit/pre-commit-hooks\n    rev: v6.0.0\n    hooks:\n      - id: trailing-whitespace\n      - id: ruff-like\n"
	const ruffRun = "-c import ruff\n-m ruff check --no-fix --output-format concise .\n"
	const flake8Run = "-c import flake8\n-m flake8 app.py pkg/mod.py\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string // the fake python's calls
		said  string // the describe's line, and in the gate's output
	}{
		{"ruff hook", map[string]string{".pre-commit-config.yaml": "repos:\n" + ruffHook + otherHooks},
			ruffRun, "ruff check --no-fix --output-format concise . (.pre-commit-config.yaml hook, ruff's defaults)"},
		{"flake8 hook", map[string]string{".pre-commit-config.yaml": "repos:\n" + flake8Hook + otherHooks},
			flake8Run, "flake8 on the files git tracks (.pre-commit-config.yaml hook)"},
		{"both hooks", map[string]string{".pre-commit-config.yaml": "repos:\n" + flake8Hook + ruffHook},
			ruffRun + flake8Run, "ruff check --no-fix --output-format concise . (.pre-commit-config.yaml hook, ruff's defaults); flake8 on the files git tracks (.pre-commit-config.yaml hook)"},
		{"ruff configured, flake8 in .flake8", map[string]string{"ruff.toml": "line-length = 99\n", ".flake8": "[flake8]\nmax-line-length = 99\n", ".pre-commit-config.yaml": "repos:\n" + ruffHook},
			ruffRun + flake8Run, "ruff check --no-fix --output-format concise . (ruff.toml); flake8 on the files git tracks (.flake8)"},
		{"other hooks only", map[string]string{".pre-commit-config.yaml": "repos:\n" + otherHooks},
			"", "[set] skip: nothing to lint: no ruff or flake8 configuration, nor a pre-commit hook running them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.files["pyproject.toml"] = "[project]\nname = \"app\"\n"
			tc.files["app.py"] = "import os\n"
			tc.files["pkg/mod.py"] = ""
			tc.files["pkg/data.txt"] = ""
			tc.files[".gitignore"] = ".venv/\nbuild/\n"
			tc.files["build/lib/app.py"] = "" // ignored: not linted
			dir, gates := pythonGates(t, tc.files)
			if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			out, calls := runGate(t, dir, gates["lint"].Run, "FAKE_MODULES=ruff flake8")
			if calls != tc.want {
				t.Errorf("lint ran python with\n%s\nwant\n%s", calls, tc.want)
			}
			for _, said := range strings.Split(tc.said, "; ") {
				if !strings.Contains(out, said) {
					t.Errorf("lint's output does not say %q:\n%s", said, out)
				}
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "app.py")); string(got) != "import os\n" {
				t.Errorf("the lint gate changed app.py:\n%s", got)
			}
			if said, _ := runGate(t, dir, gates["lint"].Describe, "FAKE_MODULES=ruff flake8"); strings.TrimSpace(said) != tc.said {
				t.Errorf("lint's describe says %q, want %q", said, tc.said)
			}
		})
	}
}

// TestPythonInstallFlatLayoutWithOpenspec: a flat-layout project that
// leaves its packages to setuptools' automatic discovery installs though
// the tree holds set's openspec/, which that discovery takes for a
// package: with a package, setuptools stopped at "Multiple top-level
// packages discovered in a flat-layout: ['app', 'openspec']"; with one
// module, it packaged openspec in place of the module. The install gate
// names the packages (or the module) to setuptools from outside the tree,
// which stays as it was, and says, doctor too before set wrote openspec/,
// which line of pyproject.toml keeps the project's own builds from doing
// the same; git leaves the .venv it made out. A real pip, setuptools and
// venv, without a download.
func TestPythonInstallFlatLayoutWithOpenspec(t *testing.T) {
	t.Parallel()
	python := pythonWith(t, "pytest", "setuptools.discovery")
	const pyproject = "[project]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = []\n\n[project.optional-dependencies]\ntest = [\"pytest\"]\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		said  string // in the gate's first line
	}{
		{"package", map[string]string{"app/__init__.py": "NAME = \"app\"\n", "app/cli/__init__.py": ""},
			"the project (-e .); setuptools told packages = app, app.cli (its flat-layout discovery takes openspec/ for a package, and so will builds of your own until pyproject.toml says [tool.setuptools] packages = [\"app\", \"app.cli\"]); extras test (pyproject.toml)"},
		{"module", map[string]string{"app.py": "NAME = \"app\"\n"},
			"the project (-e .); setuptools told py_modules = app (its flat-layout discovery takes openspec/ for a package, and so will builds of your own until pyproject.toml says [tool.setuptools] py-modules = [\"app\"]); extras test (pyproject.toml)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.files["pyproject.toml"] = pyproject
			tc.files["tests/test_app.py"] = "import app\n\n\ndef test_name():\n    assert app.NAME == \"app\"\n"
			tc.files["openspec/specs/greet/spec.md"] = "# greet\n"
			tc.files["openspec/changes/archive/2026-01-01-greet/proposal.md"] = "# greet\n"
			dir, gates := pythonGates(t, tc.files)
			if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			before := treeFiles(t, dir)
			bin := t.TempDir()
			if err := os.Symlink(python, filepath.Join(bin, "python3")); err != nil {
				t.Fatal(err)
			}
			env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "PIP_NO_INDEX=1")
			// doctor says it before the first run, when set has not
			// written openspec/ yet.
			if err := os.Rename(filepath.Join(dir, "openspec"), filepath.Join(dir, "openspec.away")); err != nil {
				t.Fatal(err)
			}
			describe := gates["install"].Describe
			cmd := exec.Command(describe[0], describe[1:]...)
			cmd.Dir, cmd.Env = dir, env
			if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), tc.said) || !strings.Contains(string(out), "[set] warn: set keeps its specs in openspec/, which the flat-layout discovery of setuptools takes for a package: builds of your own (pip install -e .) stop at Multiple top-level packages until pyproject.toml says [tool.setuptools] ") {
				t.Errorf("the install gate's describe: %v\n%s\nwant it to say %q, and warn that the user's own builds stop", err, out, tc.said)
			}
			if err := os.Rename(filepath.Join(dir, "openspec.away"), filepath.Join(dir, "openspec")); err != nil {
				t.Fatal(err)
			}
			install := gates["install"].Run
			cmd = exec.Command(install[0], install[1:]...)
			cmd.Dir, cmd.Env = dir, env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("install: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), tc.said) {
				t.Errorf("the install gate does not say %q:\n%s", tc.said, out)
			}
			// The project is installed: its code imports from elsewhere,
			// and openspec is not a package of it.
			check := exec.Command(filepath.Join(dir, ".venv", "bin", "python"), "-c", "import app, importlib.util; assert app.NAME == \"app\"; assert importlib.util.find_spec(\"openspec\") is None, \"openspec is installed\"")
			check.Dir = t.TempDir()
			if out, err := check.CombinedOutput(); err != nil {
				t.Errorf("the installed project: %v\n%s", err, out)
			}
			// The tree holds what it held, and what the build makes
			// (.venv, app.egg-info); no configuration of set's.
			for name, content := range before {
				if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != content {
					t.Errorf("the install gate changed %s", name)
				}
			}
			// git leaves out the .venv the gate made, though the project
			// has no .gitignore.
			if out, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=all", "--", ".venv").CombinedOutput(); err != nil || len(out) > 0 {
				t.Errorf("git status sees the .venv the gate made: %v\n%s", err, out)
			}
			for name := range treeFiles(t, dir) {
				if _, ok := before[name]; !ok && !strings.HasPrefix(name, ".venv/") && !strings.HasPrefix(name, "app.egg-info/") && !strings.Contains(name, "__pycache__/") {
					t.Errorf("the install gate wrote %s into the tree", name)
				}
			}
		})
	}
}

// treeFiles is every file under dir but .git (slash-separated path →
// content; none for those under .venv).
func treeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if strings.HasPrefix(filepath.ToSlash(rel), ".venv/") {
			files[filepath.ToSlash(rel)] = ""
			return nil
		}
		b, err := os.ReadFile(path)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// Package clitest finds, for tests, the real command-line tools that .ci/run
// installs under bin/tools (the OpenSpec CLI, the agent CLIs, the cue
// command), so that every test that checks set against one of them looks
// in the same places and decides the same way when it is missing: skipped
// on a developer's machine, a failure under CI (CI=true), where .ci/run
// must have installed it.
package clitest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Tool is one pinned CLI.
type Tool struct {
	// Env names the variable that points at the CLI's executable, to test
	// another installation.
	Env string
	// Path is the executable's path below the repository's root, as .ci/run
	// installs it.
	Path string
	// Install says how to install it.
	Install string
}

// OpenSpec is the OpenSpec CLI set's archive and checks are compared with.
var OpenSpec = Tool{
	Env:     "SET_OPENSPEC_CLI",
	Path:    "bin/tools/openspec/node_modules/.bin/openspec",
	Install: "make openspec (npm install of the pinned @fission-ai/openspec; needs node >= 20.19)",
}

// CUE is the cue command, at the version of cuelang.org/go setctl is
// built with: the tests that evaluate set.cue files with it check that
// the published set module serves the cue tool as it serves setctl.
var CUE = Tool{
	Env:     "SET_CUE",
	Path:    "bin/tools/cue-v0.17.1",
	Install: "make cue (go install cuelang.org/go/cmd/cue@v0.17.1)",
}

// Find returns the absolute path of the tool's executable, or "" and why
// it is missing.
func (tool Tool) Find() (path, missing string) {
	if p := os.Getenv(tool.Env); p != "" {
		return p, ""
	}
	root, err := repoRoot()
	if err != nil {
		return "", err.Error()
	}
	p := filepath.Join(root, filepath.FromSlash(tool.Path))
	if _, err := os.Stat(p); err != nil {
		return "", filepath.Base(tool.Path) + " is not installed (" + tool.Path + "): run " + tool.Install + ", or set " + tool.Env
	}
	return p, ""
}

// Require returns the tool's executable; without it the test is skipped,
// or fails under CI. With -short (the inner loop) it is skipped: the
// tests that drive a real CLI run in make test.
func (tool Tool) Require(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the tests of a real CLI run in make test")
	}
	p, missing := tool.Find()
	if p == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %s", missing)
		}
		t.Skip(missing)
	}
	return p
}

// repoRoot is the directory holding go.mod, from the test's directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Chromium is the headless browser the dashboard's tests drive: $SET_CHROMIUM,
// else the first of chromium, chromium-browser, google-chrome and
// headless-shell on PATH (.ci/run installs Debian's chromium). Without one
// the test is skipped, or fails under CI.
func Chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("SET_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	missing := "no chromium on PATH: install it (apt-get install chromium, as .ci/run does), or set SET_CHROMIUM"
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and %s", missing)
	}
	t.Skip(missing)
	return ""
}

// OpenSpecEnv is the environment a test runs the OpenSpec CLI with: the
// test's own, with a HOME and XDG directories of its own below home (so
// no user's configuration is read, nor written), UTC, no colour, and
// every switch that keeps it off the network (telemetry, update check).
func OpenSpecEnv(home string) []string {
	return append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local/share"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"TZ=UTC",
		"NO_COLOR=1",
		"OPENSPEC_TELEMETRY=0",
		"DO_NOT_TRACK=1",
		"OPENSPEC_NO_UPDATE_CHECK=1",
	)
}

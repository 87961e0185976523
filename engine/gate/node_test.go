package gate

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/internal/profiletest"
)

// These tests run the exec gates of the embedded node profile
// (profiles/node) as a project gets them, on small npm packages written
// here, with the node and npm of PATH; without them they are skipped.

// nodeProfile is the configuration of a project that uses the node
// profile unchanged.
func nodeProfile(t *testing.T) *config.Project { t.Helper(); return profiletest.Load(t, "node", "") }

// requireNPM skips t without node and npm on PATH, and under -short:
// starting the real node and npm costs each test seconds, which the
// inner loop leaves to the full suite.
func requireNPM(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: runs the node profile's gates with the real node and npm")
	}
	for _, program := range []string{"node", "npm"} {
		if _, err := exec.LookPath(program); err != nil {
			t.Skipf("the node profile's gates need %s (apt-get install nodejs npm)", program)
		}
	}
}

// TestNodeTestPatterns: the files the node profile counts as tests are
// those the test runners find by default, wherever the project keeps
// them: jest and vitest beside the code, ava's test.js and test/, mocha's
// and node --test's test/, tsd's *.test-d.ts.
func TestNodeTestPatterns(t *testing.T) {
	patterns := nodeProfile(t).TestGlobs()
	for _, name := range []string{
		"src/greet.test.ts", "greet.spec.js", "src/__tests__/greet.js", // jest, vitest
		"test.js", "test/greet.js", "tests/greet.mjs", "src/test-greet.js", // ava
		"test/support/env.js",                     // mocha's test/
		"lib/greet-test.js", "lib/greet_test.cjs", // node --test
		"index.test-d.ts", "test-d/greet.ts", "src/test.ts", // tsd; a test.ts
	} {
		if !matchAny(patterns, name) {
			t.Errorf("%s is not a test file; the patterns: %q", name, patterns)
		}
	}
	for _, name := range []string{"index.js", "index.d.ts", "src/greet.ts", "lib/contest.js", "src/attest/a.js", "testing.md", "docs/latest-news.md"} {
		if matchAny(patterns, name) {
			t.Errorf("%s is a test file; the patterns: %q", name, patterns)
		}
	}
	// camelcase's tree: its ava and tsd tests, for the prompt.
	tree := []string{".npmrc", "index.d.ts", "index.js", "index.test-d.ts", "license", "package.json", "readme.md", "test.js"}
	if got := TestFiles(patterns, tree); !slices.Equal(got, []string{"index.test-d.ts", "test.js"}) {
		t.Errorf("TestFiles = %q", got)
	}
}

// TestNodeInstallWithoutLockfile: a package without a lockfile by design
// (.npmrc: package-lock=false) or without one committed installs what
// package.json asks, says so, and writes no lockfile into the tree.
func TestNodeInstallWithoutLockfile(t *testing.T) {
	requireNPM(t)
	p := nodeProfile(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the store of node_modules
	for _, tc := range []struct{ name, npmrc, says string }{
		{"by design", "package-lock=false\n", "no lockfile by design (.npmrc: package-lock=false)"},
		{"none committed", "", "no package-lock.json committed"},
	} {
		dir := t.TempDir()
		// A package without dependencies: npm installs it offline.
		writeTestFile(t, filepath.Join(dir, "package.json"), `{"name": "demo", "version": "1.0.0", "type": "module", "scripts": {"test": "node --test"}}`+"\n")
		if tc.npmrc != "" {
			writeTestFile(t, filepath.Join(dir, ".npmrc"), tc.npmrc)
		}
		res := runProfileGate(t, p, "install", dir)
		if res.Status != StatusPass || !strings.Contains(res.Tail, tc.says) {
			t.Errorf("%s: install %s (%s), want a pass that says %q:\n%s", tc.name, res.Status, res.Reason, tc.says, res.Tail)
		}
		if _, err := os.Stat(filepath.Join(dir, "package-lock.json")); err == nil {
			t.Errorf("%s: install wrote package-lock.json", tc.name)
		}
	}
}

// TestNodeInstallLockInStep: with package-lock.json, install decides as
// npm ci does whether it is in step with package.json: the versions it
// locks, not its bytes. A user's omit-lockfile-registry-resolved=true
// makes npm install drop every resolved URL of the committed lockfile,
// which is still in step; a package.json that asks for another version
// than the lockfile holds is not, and the message names the package in
// npm ci's words. The committed lockfile is left as it was either way.
// It installs is-number from the npm registry (through npm's cache).
func TestNodeInstallLockInStep(t *testing.T) {
	requireNPM(t)
	p := nodeProfile(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the store of node_modules
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "package.json"), `{"name": "demo", "version": "1.0.0", "dependencies": {"is-number": "7.0.0"}}`+"\n")
	npm := exec.Command("npm", "install", "--package-lock-only", "--omit-lockfile-registry-resolved=false", "--prefer-offline", "--no-audit", "--no-fund")
	// The lockfile as written without the setting, whatever the user's npmrc says.
	npm.Dir = dir
	if out, err := npm.CombinedOutput(); err != nil {
		t.Skipf("npm cannot reach is-number@7.0.0: %v\n%s", err, out)
	}
	committed, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(committed), `"resolved": "`) {
		t.Fatalf("the lockfile npm wrote has no resolved URL:\n%s", committed)
	}
	userconfig := filepath.Join(t.TempDir(), "npmrc")
	writeTestFile(t, userconfig, "omit-lockfile-registry-resolved=true\n")
	t.Setenv("NPM_CONFIG_USERCONFIG", userconfig)

	unchanged := func(when string) {
		t.Helper()
		if got, err := os.ReadFile(filepath.Join(dir, "package-lock.json")); err != nil || string(got) != string(committed) {
			t.Errorf("%s: install left package-lock.json changed (%v):\n%s", when, err, got)
		}
	}
	res := runProfileGate(t, p, "install", dir)
	if res.Status != StatusPass {
		t.Errorf("install under omit-lockfile-registry-resolved: %s (%s), want pass:\n%s", res.Status, res.Reason, res.Tail)
	}
	unchanged("in step")

	writeTestFile(t, filepath.Join(dir, "package.json"), `{"name": "demo", "version": "1.0.0", "dependencies": {"is-number": "6.0.0"}}`+"\n")
	res = runProfileGate(t, p, "install", dir)
	want := "Invalid: lock file's is-number@7.0.0 does not satisfy is-number@6.0.0"
	if res.Status != StatusFail || !strings.Contains(res.Tail, want) {
		t.Errorf("install with package.json asking for another version: %s (%s), want a failure saying %q:\n%s", res.Status, res.Reason, want, res.Tail)
	}
	unchanged("out of step")
}

// TestNodeChecksFollowTheProject: typecheck and lint run what the package
// uses (tsc, tsd; biome, xo, eslint from a configuration file or
// package.json's eslintConfig), and when npm test runs that program
// itself (in the test script, a pretest, or a script they run) they run
// nothing and are skipped, covered by the test gate, so that no gate
// passes pretending it checked; with nothing to check they pass saying
// so. The packages have no node_modules: a gate that runs its program
// fails.
func TestNodeChecksFollowTheProject(t *testing.T) {
	requireNPM(t)
	p := nodeProfile(t)
	for _, tc := range []struct {
		name, gate, pkg string
		files           map[string]string
		says            string // "": the gate runs its program, and fails
	}{
		{"xo in the test script", "lint", `{"scripts": {"test": "xo && ava && tsd"}, "devDependencies": {"xo": "^1", "ava": "^6", "tsd": "^0.33"}}`, nil,
			"covered by the test gate: the test script runs xo (xo && ava && tsd)"},
		{"tsd in the test script", "typecheck", `{"scripts": {"test": "xo && ava && tsd"}, "devDependencies": {"xo": "^1", "ava": "^6", "tsd": "^0.33"}}`, nil,
			"covered by the test gate: the test script runs tsd (xo && ava && tsd)"},
		{"eslint in a pretest's script", "lint", `{"scripts": {"pretest": "npm run lint", "lint": "eslint lib test", "test": "mocha"}}`, map[string]string{".eslintrc.yml": "root: true\n"},
			"covered by the test gate: the test script runs eslint (mocha)"},
		{"tsc in the test script", "typecheck", `{"scripts": {"test": "tsc --noEmit && vitest run"}}`, map[string]string{"tsconfig.json": "{}\n"},
			"covered by the test gate: the test script runs tsc (tsc --noEmit && vitest run)"},
		{"no linter", "lint", `{"scripts": {"test": "node --test"}}`, nil, "nothing to lint: no linter configured (eslint, xo or biome)"},
		{"no type checker", "typecheck", `{"scripts": {"test": "node --test"}}`, nil, "nothing to type-check: no tsconfig.json and no tsd"},
		{"xo, not in the test script", "lint", `{"scripts": {"test": "ava"}, "devDependencies": {"xo": "^1"}}`, nil, ""},
		{"eslintConfig in package.json", "lint", `{"scripts": {"test": "node --test"}, "eslintConfig": {"root": true}}`, nil, ""},
		{"biome.json", "lint", `{"scripts": {"test": "node --test"}}`, map[string]string{"biome.json": "{}\n"}, ""},
		{"tsd, not in the test script", "typecheck", `{"scripts": {"test": "ava"}, "devDependencies": {"tsd": "^0.33"}}`, nil, ""},
	} {
		dir := t.TempDir()
		writeTestFile(t, filepath.Join(dir, "package.json"), tc.pkg+"\n")
		for name, content := range tc.files {
			writeTestFile(t, filepath.Join(dir, name), content)
		}
		res := runProfileGate(t, p, tc.gate, dir)
		switch {
		case tc.says != "" && (res.Status != StatusSkip || res.Reason != tc.says):
			t.Errorf("%s: %s %s (%s), want it skipped, saying %q:\n%s", tc.name, tc.gate, res.Status, res.Reason, tc.says, res.Tail)
		case tc.says == "" && (res.Status != StatusFail || strings.Contains(res.Tail, "nothing to") || strings.Contains(res.Tail, "the test gate")):
			t.Errorf("%s: %s %s (%s), want it to run its program, which is not installed:\n%s", tc.name, tc.gate, res.Status, res.Reason, res.Tail)
		}
	}
}

// TestNodeInstallSharesNodeModules: once npm install passed in one
// worktree, another with the same package.json, lockfile and .npmrc gets
// its node_modules copied from the shared store instead of installing
// again, a copy of its own; a package with install-time scripts of its
// own (prepare …) always installs. An entry of the store whose content is
// not what npm installed there is discarded, and filling the store keeps
// the 8 entries used last. The dependency is a tarball beside
// package.json, so that npm installs it offline.
func TestNodeInstallSharesNodeModules(t *testing.T) {
	requireNPM(t)
	p := nodeProfile(t)
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	dep := t.TempDir()
	writeTestFile(t, filepath.Join(dep, "package.json"), `{"name": "dep", "version": "1.0.0"}`+"\n")
	writeTestFile(t, filepath.Join(dep, "index.js"), "module.exports = 42;\n")
	pack := exec.Command("npm", "pack", "--silent")
	pack.Dir = dep
	if out, err := pack.CombinedOutput(); err != nil {
		t.Fatalf("npm pack: %v\n%s", err, out)
	}
	tarball, err := os.ReadFile(filepath.Join(dep, "dep-1.0.0.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	worktree := func(scripts string) string {
		dir := t.TempDir()
		writeTestFile(t, filepath.Join(dir, "package.json"), `{"name": "demo", "version": "1.0.0", "scripts": {`+scripts+`}, "dependencies": {"dep": "file:dep-1.0.0.tgz"}}`+"\n")
		writeTestFile(t, filepath.Join(dir, ".npmrc"), "package-lock=false\n")
		writeTestFile(t, filepath.Join(dir, "dep-1.0.0.tgz"), string(tarball))
		return dir
	}
	const linked = "install: node_modules copied from the shared store " // + the store's directory
	// A node_modules an agent wrote before the install gate ran never
	// fills the store.
	tampered := worktree(`"test": "node --test"`)
	writeTestFile(t, filepath.Join(tampered, "node_modules", "dep", "package.json"), `{"name": "dep", "version": "1.0.0"}`+"\n")
	writeTestFile(t, filepath.Join(tampered, "node_modules", "dep", "index.js"), "module.exports = 666;\n")
	if res := runProfileGate(t, p, "install", tampered); res.Status != StatusPass || strings.Contains(res.Tail, linked) {
		t.Errorf("install over an agent's node_modules: %s (%s):\n%s", res.Status, res.Reason, res.Tail)
	}
	if stores, _ := filepath.Glob(filepath.Join(cache, "set", "node_modules", "*")); len(stores) != 0 {
		t.Errorf("an install over an existing node_modules filled the store: %q", stores)
	}
	for i, tc := range []struct {
		scripts string
		linked  bool
	}{
		{`"test": "node --test"`, false}, // fills the store
		{`"test": "node --test"`, true},
		{`"test": "node --test"`, true}, // the edit in the one before stayed there
		{`"test": "node --test", "prepare": "node -e 0"`, false},
		{`"test": "node --test", "prepare": "node -e 0"`, false},
	} {
		dir := worktree(tc.scripts)
		res := runProfileGate(t, p, "install", dir)
		if res.Status != StatusPass || strings.Contains(res.Tail, linked) != tc.linked {
			t.Errorf("install %d (linked from the store: %v): %s (%s):\n%s", i+1, tc.linked, res.Status, res.Reason, res.Tail)
		}
		index := filepath.Join(dir, "node_modules", "dep", "index.js")
		if data, err := os.ReadFile(index); err != nil || string(data) != "module.exports = 42;\n" {
			t.Errorf("install %d: node_modules/dep/index.js: %q, %v", i+1, data, err)
		}
		// An edit in place in one worktree reaches neither the store nor
		// the next worktree.
		if err := os.WriteFile(index, []byte("module.exports = 666;\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stores, _ := filepath.Glob(filepath.Join(cache, "set", "node_modules", "*", "node_modules", "dep"))
	if len(stores) != 1 {
		t.Fatalf("the store holds %q, want one package's node_modules", stores)
	}
	// A file planted in the store's entry (by an agent: the store is in
	// $HOME) makes the next install discard the entry and install, which
	// fills it again; filling keeps the 8 entries used last.
	entry := filepath.Dir(filepath.Dir(stores[0]))
	if err := os.WriteFile(filepath.Join(stores[0], "index.js"), []byte("module.exports = 666;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var others []string
	for i := range 8 {
		other := filepath.Join(cache, "set", "node_modules", fmt.Sprintf("%032x", i))
		if err := os.MkdirAll(filepath.Join(other, "node_modules"), 0o755); err != nil {
			t.Fatal(err)
		}
		used := time.Now().Add(time.Duration(i-10) * time.Hour)
		if err := os.Chtimes(other, used, used); err != nil {
			t.Fatal(err)
		}
		others = append(others, other)
	}
	dir := worktree(`"test": "node --test"`)
	res := runProfileGate(t, p, "install", dir)
	if res.Status != StatusPass || strings.Contains(res.Tail, linked) || !strings.Contains(res.Tail, "install: the shared store "+entry+" no longer holds what npm installed there") {
		t.Errorf("install from a tampered store: %s (%s):\n%s", res.Status, res.Reason, res.Tail)
	}
	for _, index := range []string{filepath.Join(dir, "node_modules", "dep", "index.js"), filepath.Join(stores[0], "index.js")} {
		if data, err := os.ReadFile(index); err != nil || string(data) != "module.exports = 42;\n" {
			t.Errorf("install from a tampered store: %s: %q, %v", index, data, err)
		}
	}
	if _, err := os.Stat(others[0]); !os.IsNotExist(err) {
		t.Errorf("the entry used least recently is still in the store after a fill made it 9: %v", err)
	}
	for _, other := range append(others[1:], entry) {
		if _, err := os.Stat(other); err != nil {
			t.Errorf("one of the 8 entries used last: %v", err)
		}
	}
}

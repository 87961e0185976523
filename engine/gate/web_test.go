package gate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/internal/profiletest"
)

// These tests run the exec gates of the embedded web profile
// (profiles/web, built on profiles/node) on the layouts of real Next.js
// apps, with stand-ins for the tools the gates run (scripts in
// node_modules/.bin that print how they were called), so that they need
// node and npm but nothing from the registry or the network.

// webProfile is the configuration of a project that uses the web profile
// unchanged.
func webProfile(t *testing.T) *config.Project { t.Helper(); return profiletest.Load(t, "web", "") }

// writeTool writes node_modules/.bin/NAME into dir: a shell script.
func writeTool(t *testing.T, dir, name, script string) {
	t.Helper()
	path := filepath.Join(dir, "node_modules", ".bin", name)
	writeTestFile(t, path, "#!/bin/sh\n"+script)
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestWebTestScriptThatWatches: a test script that watches (jest --watch,
// as Next.js's with-jest example has it) never exits, CI=true or not, so
// the test gate runs the package's test:ci instead and says so; without
// one it fails at once, saying why, instead of at its timeout.
func TestWebTestScriptThatWatches(t *testing.T) {
	requireNPM(t)
	p := webProfile(t)
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "package.json"), `{"scripts": {"test": "jest --watch", "test:ci": "jest --ci"}}`+"\n")
	writeTool(t, dir, "jest", "echo \"jest $*: once\"\n")
	res := runProfileGate(t, p, "test", dir)
	if res.Status != StatusPass || !strings.Contains(res.Tail, "test: npm run test:ci (the test script watches: jest --watch)") || !strings.Contains(res.Tail, "jest --ci: once") {
		t.Errorf("test with test:ci: %s (%s), want a pass running jest --ci:\n%s", res.Status, res.Reason, res.Tail)
	}

	writeTestFile(t, filepath.Join(dir, "package.json"), `{"scripts": {"test": "vitest --watch"}}`+"\n")
	res = runProfileGate(t, p, "test", dir)
	if res.Status != StatusFail || !strings.Contains(res.Tail, "package.json's test script watches (vitest --watch) and never exits: add a test:ci script that runs the tests once") {
		t.Errorf("test without test:ci: %s (%s), want a failure saying the script watches:\n%s", res.Status, res.Reason, res.Tail)
	}
}

// TestWebLintWithEslintrc: an .eslintrc that nothing installs or runs (as
// create-next-app left in apps that never installed eslint) is no
// linter. ESLint merges every .eslintrc from a file's directory up to /,
// so in a worktree under the project's .set/worktrees it would merge the
// main checkout's, resolving its extends where no node_modules is: with
// an .eslintrc above it, lint runs eslint with the project's alone.
func TestWebLintWithEslintrc(t *testing.T) {
	requireNPM(t)
	p := webProfile(t)
	main := t.TempDir()
	writeTestFile(t, filepath.Join(main, ".eslintrc.json"), `{"extends": "next/core-web-vitals"}`+"\n")
	dir := filepath.Join(main, ".set", "worktrees", "about")
	writeTestFile(t, filepath.Join(dir, ".eslintrc.json"), `{"extends": "next/core-web-vitals"}`+"\n")

	writeTestFile(t, filepath.Join(dir, "package.json"), `{"scripts": {"test": "jest"}}`+"\n")
	res := runProfileGate(t, p, "lint", dir)
	if says := "nothing to lint: .eslintrc.json, but neither package.json's dependencies nor its scripts have eslint"; res.Status != StatusSkip || res.Reason != says {
		t.Errorf("lint without eslint: %s (%s), want it skipped, saying %q:\n%s", res.Status, res.Reason, says, res.Tail)
	}

	writeTestFile(t, filepath.Join(dir, "package.json"), `{"scripts": {"test": "jest"}, "devDependencies": {"eslint": "8.57.0"}}`+"\n")
	writeTool(t, dir, "eslint", "echo \"eslint $*\"\n")
	res = runProfileGate(t, p, "lint", dir)
	if res.Status != StatusPass || !strings.Contains(res.Tail, "eslint --no-eslintrc -c .eslintrc.json .") {
		t.Errorf("lint under a directory with its own .eslintrc: %s (%s), want eslint --no-eslintrc -c .eslintrc.json .:\n%s", res.Status, res.Reason, res.Tail)
	}

	alone := t.TempDir()
	writeTestFile(t, filepath.Join(alone, ".eslintrc.json"), `{"extends": "next/core-web-vitals"}`+"\n")
	writeTestFile(t, filepath.Join(alone, "package.json"), `{"scripts": {"test": "jest"}, "devDependencies": {"eslint": "8.57.0"}}`+"\n")
	writeTool(t, alone, "eslint", "echo \"eslint $*\"\n")
	res = runProfileGate(t, p, "lint", alone)
	if res.Status != StatusPass || !strings.Contains(res.Tail, "eslint .") || strings.Contains(res.Tail, "--no-eslintrc") {
		t.Errorf("lint with no .eslintrc above: %s (%s), want eslint .:\n%s", res.Status, res.Reason, res.Tail)
	}
}

// TestWebTypecheckBeforeTypegen: before Next.js 15.5 (no next typegen), a
// fresh checkout lacks the git-ignored next-env.d.ts that next build and
// next dev write, which declares the types of imported styles and images;
// typecheck writes it, as they do, before tsc.
func TestWebTypecheckBeforeTypegen(t *testing.T) {
	requireNPM(t)
	p := webProfile(t)
	dir := newRepo(t, map[string]string{
		".gitignore":    "node_modules/\nnext-env.d.ts\n",
		"package.json":  `{"dependencies": {"next": "14.2.4"}}` + "\n",
		"tsconfig.json": "{}\n",
	}).dir
	writeTool(t, dir, "next", "echo 'Usage: next [options] [command]'\n")
	writeTool(t, dir, "tsc", "cat next-env.d.ts\n")
	res := runProfileGate(t, p, "typecheck", dir)
	if res.Status != StatusPass || !strings.Contains(res.Tail, `/// <reference types="next/image-types/global" />`) {
		t.Errorf("typecheck: %s (%s), want tsc run with next-env.d.ts written:\n%s", res.Status, res.Reason, res.Tail)
	}
}

// TestWebORMWithoutSchema: the orm gate passes without running its
// generator where its schema does not exist, as on main's baseline of an
// app without Prisma (the generator, not installed, would fail).
func TestWebORMWithoutSchema(t *testing.T) {
	requireNPM(t)
	p := webProfile(t)
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "package.json"), `{"dependencies": {"next": "15.5.4"}}`+"\n")
	res := runProfileGate(t, p, "orm", dir)
	if res.Status != StatusSkip || res.Reason != "nothing to generate: no prisma/schema.prisma" {
		t.Errorf("orm without prisma/schema.prisma: %s (%s), want it skipped, saying so:\n%s", res.Status, res.Reason, res.Tail)
	}
}

// TestWebBuildWithGoogleFontsOffline: next/font/google fetches its fonts
// from fonts.googleapis.com while next build runs and fails the build
// when it cannot. Out of its reach (offline.js makes node's fetch fail),
// build says so and gives next/font/google, through the variable it reads
// its answers from, a @font-face per family for every URL it asks.
func TestWebBuildWithGoogleFontsOffline(t *testing.T) {
	requireNPM(t)
	p := webProfile(t)
	dir := t.TempDir()
	offline := filepath.Join(t.TempDir(), "offline.js")
	writeTestFile(t, offline, `globalThis.fetch = () => Promise.reject(new Error("offline"));`+"\n")
	t.Setenv("NODE_OPTIONS", "--require="+offline)
	writeTestFile(t, filepath.Join(dir, "package.json"), `{"dependencies": {"next": "15.5.4"}}`+"\n")
	writeTestFile(t, filepath.Join(dir, "app", "layout.tsx"), "import { Inter, Roboto_Mono } from \"next/font/google\";\n")
	// Next.js 16's next build, whose default bundler is Turbopack.
	writeTool(t, dir, "next", `if [ "$*" = "build --help" ]; then echo "  --webpack                                Builds using webpack."; exit 0; fi
echo "next $*"
node -e 'console.log(require(process.env.NEXT_FONT_GOOGLE_MOCKED_RESPONSES)["https://fonts.googleapis.com/css2?family=Roboto+Mono:wght@400&family=Inter:wght@100..900&display=swap"])'`+"\n")
	res := runProfileGate(t, p, "build", dir)
	for _, want := range []string{
		"build: next/font/google fetches its fonts from fonts.googleapis.com when next build runs (app/layout.tsx), and fonts.googleapis.com is out of reach here",
		"build: Turbopack, next build's default here, takes no font that way: this build uses webpack (next build --webpack)",
		"next build --webpack",
		"font-family: 'Roboto Mono';",
		"font-family: 'Inter';",
		"src: url(https://fonts.gstatic.com/s/set-offline/Roboto%20Mono.woff2) format('woff2');",
	} {
		if res.Status != StatusPass || !strings.Contains(res.Tail, want) {
			t.Errorf("build offline: %s (%s), want a pass with %q:\n%s", res.Status, res.Reason, want, res.Tail)
		}
	}
}

// TestWebBuildWithoutItsOwnLint: a next build that lints (before Next.js
// 16) is run with --no-lint, since its ESLint 8 reads the .eslintrc of
// the checkout a worktree sits in: the lint gate lints.
func TestWebBuildWithoutItsOwnLint(t *testing.T) {
	requireNPM(t)
	p := webProfile(t)
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "package.json"), `{"dependencies": {"next": "14.2.4"}}`+"\n")
	writeTool(t, dir, "next", `if [ "$*" = "build --help" ]; then echo "  --no-lint  Disables linting."; exit 0; fi
echo "next $*"`+"\n")
	res := runProfileGate(t, p, "build", dir)
	for _, want := range []string{"build: next build --no-lint: the lint gate lints", "next build --no-lint"} {
		if res.Status != StatusPass || !strings.Contains(res.Tail, want) {
			t.Errorf("build: %s (%s), want a pass with %q:\n%s", res.Status, res.Reason, want, res.Tail)
		}
	}
}

// TestWebE2EOnSystemChromium: when Playwright's own Chromium is not
// installed, e2e puts links to CHROMIUM_PATH where Playwright looks for
// it (the paths it names when it cannot launch one), in a browsers
// directory of its own, so that a playwright.config that does not read
// CHROMIUM_PATH runs on the system's Chromium. The stand-in for
// @playwright/test fails to launch until that path exists.
func TestWebE2EOnSystemChromium(t *testing.T) {
	requireNPM(t)
	p := webProfile(t)
	dir := t.TempDir()
	t.Setenv("CHROMIUM_PATH", "/usr/bin/chromium-of-the-system")
	t.Setenv("PLAYWRIGHT_BROWSERS_PATH", t.TempDir()) // Playwright's own: empty
	writeTestFile(t, filepath.Join(dir, "package.json"), `{"devDependencies": {"@playwright/test": "1.55.1"}}`+"\n")
	writeTestFile(t, filepath.Join(dir, "playwright.config.ts"), "export default {};\n")
	writeTestFile(t, filepath.Join(dir, "node_modules", "@playwright", "test", "index.js"), `const fs = require("fs");
const exe = headless => process.env.PLAYWRIGHT_BROWSERS_PATH + (headless ? "/chromium_headless_shell-1193/chrome-linux/headless_shell" : "/chromium-1193/chrome-linux/chrome");
exports.chromium = {
	launch: async ({ headless }) => {
		if (!fs.existsSync(exe(headless))) throw new Error("browserType.launch: Executable doesn't exist at " + exe(headless));
		return { close: async () => {} };
	},
};
`)
	writeTool(t, dir, "playwright", `for f in chromium_headless_shell-1193/chrome-linux/headless_shell chromium-1193/chrome-linux/chrome; do echo "$f -> $(readlink "$PLAYWRIGHT_BROWSERS_PATH/$f")"; done`+"\n")
	res := runProfileGate(t, p, "e2e", dir)
	for _, want := range []string{
		"e2e: Playwright's own Chromium is not installed: its Chromium projects run on /usr/bin/chromium-of-the-system",
		"chromium_headless_shell-1193/chrome-linux/headless_shell -> /usr/bin/chromium-of-the-system",
		"chromium-1193/chrome-linux/chrome -> /usr/bin/chromium-of-the-system",
	} {
		if res.Status != StatusPass || !strings.Contains(res.Tail, want) {
			t.Errorf("e2e: %s (%s), want a pass with %q:\n%s", res.Status, res.Reason, want, res.Tail)
		}
	}
}

// TestWebTwoLockfiles: an app that keeps package-lock.json beside
// pnpm-lock.yaml (for whoever uses npm) installs and tests with npm where
// pnpm is not installed, and install says why.
func TestWebTwoLockfiles(t *testing.T) {
	requireNPM(t)
	if _, err := exec.LookPath("pnpm"); err == nil {
		t.Skip("pnpm is installed: the gates use it")
	}
	p := webProfile(t)
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "package.json"), `{"name": "store", "scripts": {"test": "echo tested by npm"}}`+"\n")
	writeTestFile(t, filepath.Join(dir, "package-lock.json"), `{"name": "store", "lockfileVersion": 3, "requires": true, "packages": {"": {"name": "store"}}}`+"\n")
	writeTestFile(t, filepath.Join(dir, "pnpm-lock.yaml"), "lockfileVersion: '9.0'\n")
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the store of node_modules
	res := runProfileGate(t, p, "install", dir)
	if says := "install: npm install --prefer-offline --no-audit --no-fund (package-lock.json, checked to be in step with package.json as npm ci checks it; pnpm-lock.yaml too, but pnpm is not installed)"; res.Status != StatusPass || !strings.Contains(res.Tail, says) {
		t.Errorf("install: %s (%s), want a pass that says %q:\n%s", res.Status, res.Reason, says, res.Tail)
	}
	res = runProfileGate(t, p, "test", dir)
	if res.Status != StatusPass || !strings.Contains(res.Tail, "tested by npm") {
		t.Errorf("test: %s (%s), want npm test:\n%s", res.Status, res.Reason, res.Tail)
	}
}

// TestWebNextLint: a project whose lint script is next lint lints what
// next lint lints (app, pages, components, lib, src), not every file as
// eslint . does (a vitest.setup.ts that next lint never reads); under a
// directory with an .eslintrc of its own, with eslint on those
// directories and the project's .eslintrc alone.
func TestWebNextLint(t *testing.T) {
	requireNPM(t)
	p := webProfile(t)
	main := t.TempDir()
	dir := filepath.Join(main, ".set", "worktrees", "about")
	for _, d := range []string{main, dir} {
		writeTestFile(t, filepath.Join(d, ".eslintrc.json"), `{"extends": "next/core-web-vitals"}`+"\n")
	}
	writeTestFile(t, filepath.Join(dir, "package.json"), `{"scripts": {"lint": "next lint"}, "devDependencies": {"eslint": "8.57.0", "next": "14.2.4"}}`+"\n")
	writeTestFile(t, filepath.Join(dir, "app", "page.tsx"), "export default function Page() { return null; }\n")
	writeTestFile(t, filepath.Join(dir, "src", "lib.ts"), "export const one = 1;\n")
	writeTool(t, dir, "eslint", "echo \"eslint $*\"\n")
	writeTool(t, dir, "next", "echo \"next $*\"\n")
	res := runProfileGate(t, p, "lint", dir)
	if res.Status != StatusPass || !strings.Contains(res.Tail, "eslint --no-eslintrc -c .eslintrc.json --ext .js,.jsx,.ts,.tsx,.mjs,.cjs app src") {
		t.Errorf("next lint under an .eslintrc: %s (%s), want eslint on app and src:\n%s", res.Status, res.Reason, res.Tail)
	}
	alone := t.TempDir()
	writeTestFile(t, filepath.Join(alone, ".eslintrc.json"), `{"extends": "next/core-web-vitals"}`+"\n")
	writeTestFile(t, filepath.Join(alone, "package.json"), `{"scripts": {"lint": "next lint"}, "devDependencies": {"eslint": "8.57.0", "next": "14.2.4"}}`+"\n")
	writeTool(t, alone, "next", "echo \"next $*\"\n")
	res = runProfileGate(t, p, "lint", alone)
	if res.Status != StatusPass || !strings.Contains(res.Tail, "next lint") {
		t.Errorf("next lint: %s (%s), want next lint:\n%s", res.Status, res.Reason, res.Tail)
	}
}

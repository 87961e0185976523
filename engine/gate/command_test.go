package gate

import (
	"testing"
)

// A script's argument is cut to its first line; one-line commands are
// quoted whole.
func TestCommandLine(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		argv []string
		want string
	}{
		{[]string{"go", "test", "./..."}, "go test ./..."},
		{[]string{"sh", "-c", "pkgs=$(go list ./...) || exit; exec go test ./..."}, `sh -c 'pkgs=$(go list ./...) || exit; exec go test ./...'`},
		{[]string{"sh", "-c", "if [ -f pnpm-lock.yaml ]; then pm=pnpm\nelse pm=npm\nfi\nexec $pm test\n", "sh", "--describe"}, `sh -c 'if [ -f pnpm-lock.yaml ]; then pm=pnpm …'`},
		{[]string{"sh", "-c", "\n\t  \n  set -e   \n  make\n"}, `sh -c 'set -e …'`},
	} {
		if got := CommandLine(tt.argv); got != tt.want {
			t.Errorf("CommandLine(%q) = %s, want %s", tt.argv, got, tt.want)
		}
	}
}

// The last marker line names the command; without one, the argv's short
// rendering does.
func TestExecCommandMarker(t *testing.T) {
	t.Parallel()
	script := "echo 'install: npm install'\necho '[set] $ npm exec --no -- tsc --noEmit'\necho '[set] $ npm test'\necho 'src/a.test.ts: 1 failed'\nexit 1\n"
	in, _ := execInput(t, "test", "sh", "-c", script)
	res := runGate(t, in)
	if res.Command != "npm test" {
		t.Errorf("command %q, want npm test", res.Command)
	}
	want(t, res, StatusFail, "exit code 1",
		"Gate test (`npm test`) failed with exit code 1. Last lines of its output:\n```\ninstall: npm install\n[set] $ npm exec --no -- tsc --noEmit\n[set] $ npm test\nsrc/a.test.ts: 1 failed\n```\n"+
			"Full log: .set/logs/auth-login/verify-test-1.log")

	in, _ = execInput(t, "lint", "sh", "-c", "echo checking\nexit 3\n")
	res = runGate(t, in)
	if res.Command != "sh -c 'echo checking …'" || res.Missing != "" || res.Caused() {
		t.Errorf("result %+v", res)
	}
}

// A program not found is said as the reason, with the earlier failed gate
// of the stack when there is one.
func TestExecMissingProgram(t *testing.T) {
	t.Parallel()
	// The shell's own words ("sh: 2: exec: xo-…: not found" with dash,
	// "sh: line 2: …" with bash).
	in, _ := execInput(t, "lint", "sh", "-c", "echo '[set] $ xo'\nexec xo-that-is-not-installed\n")
	res := runGate(t, in)
	if res.Missing != "xo-that-is-not-installed: not found" || !res.Caused() || res.ExitCode != 127 {
		t.Fatalf("result %+v", res)
	}

	in, _ = execInput(t, "lint", "sh", "-c", "echo '[set] $ xo'\necho 'sh: 1: xo: not found' >&2\nexit 127\n")
	in.After = []string{"install"}
	res = runGate(t, in)
	want(t, res, StatusFail, "could not run: xo: not found — the install gate failed before it (exit code 127)",
		"Gate lint (`xo`) could not run: xo: not found — the install gate failed before it (exit code 127). Last lines of its output:\n```\n[set] $ xo\nsh: 1: xo: not found\n```\n"+
			"Full log: .set/logs/auth-login/verify-lint-1.log")

	// An earlier failure alone does not make a gate's own failure one
	// that follows from it: fmt and a linter may both fail, each for its
	// reasons.
	in, _ = execInput(t, "test", "sh", "-c", "echo 1 failed; exit 1")
	in.After = []string{"install", "lint"}
	res = runGate(t, in)
	if res.Reason != "exit code 1" || res.Caused() || res.After != nil {
		t.Errorf("result %+v", res)
	}
}

func TestMissingProgram(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		code  int
		tail  string
		after bool
		want  string
	}{
		{127, "sh: 1: xo: not found", false, "xo: not found"},
		{127, "bash: line 1: ava: command not found\nmore\nand more\nand more", false, "ava: not found"},
		{127, "", false, "a program it runs was not found (exit code 127)"},
		{127, "[set] $ ruff check --no-fix .\nruff is configured (pyproject.toml [tool.ruff]) but neither installed in the project's environment nor on PATH\n", false,
			"ruff is configured (pyproject.toml [tool.ruff]) but neither installed in the project's environment nor on PATH"},
		{1, "/usr/bin/python3: No module named pytest", false, "No module named pytest"},
		{1, "npm error npx canceled due to missing packages and no YES option: [\"xo@2.0.2\"]\nnpm error A complete log of this run can be found in: /root/.npm/_logs/x.log", false, `npx canceled due to missing packages and no YES option: ["xo@2.0.2"]`},
		// A test's own output naming something not found, far from the
		// end, with an ordinary exit code: the command ran.
		{1, "lookup: not found\nok 1\nok 2\nnot ok 3\n1 failed", false, ""},
		{2, "FAIL src/a.test.ts", false, ""},
		// The code's own failures: a type error, a test importing a
		// module the change did not write, an HTTP test's output.
		{2, "src/a.ts(1,17): error TS2307: Cannot find module './foo' or its corresponding type declarations.", true, ""},
		{1, "E   ModuleNotFoundError: No module named 'mypkg.sub'", false, ""},
		{1, "E   ModuleNotFoundError: No module named 'mypkg.sub'", true, ""},
		{1, "GET /users/7\nuser: not found", false, ""},
		{1, "Cannot find module 'left-pad' from 'src/a.js'", false, ""},
		{1, `fork/exec: exec: "ruff": executable file not found in $PATH`, false, "ruff: not found"},
		// After a failed install, node's missing package far up the
		// output counts.
		{1, "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'ava' imported from /w/test.js\n    at a (x)\n    at b (y)\n{\n  code: 'ERR_MODULE_NOT_FOUND'\n}\n\nNode.js v22.0.0", true, "Cannot find package 'ava'"},
		{1, "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'ava' imported from /w/test.js\n    at a (x)\n    at b (y)\n{\n  code: 'ERR_MODULE_NOT_FOUND'\n}\n\nNode.js v22.0.0", false, ""},
	} {
		if got := missingProgram(tt.code, tt.tail, tt.after); got != tt.want {
			t.Errorf("missingProgram(%d, %q, %v) = %q, want %q", tt.code, tt.tail, tt.after, got, tt.want)
		}
	}
}

package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/spec"
)

var baseFiles = map[string]string{
	"go.mod":                     "module example.com/app\n",
	"go.sum":                     "",
	"cmd/main.go":                "package main\n\nfunc main() {}\n",
	"internal/auth/auth.go":      "package auth\n",
	"internal/auth/auth_test.go": "package auth\n\n// REQ-AUTH-02 was mentioned before the change.\n",
	"README.md":                  "# app\n",
}

func TestScopeCheckPass(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	r.write("internal/auth/login.go", "package auth\n\nfunc Login() {}\n")
	r.write("openspec/changes/auth-login/specs/auth/spec.md", "## ADDED Requirements\n")
	r.write("go.sum", "example.com/dep v1.0.0 h1:x\n")
	r.commit()
	res := runGate(t, r.input(config.KindScopeCheck, featureChange))
	want(t, res, StatusPass, "", "")
	if res.Runner != BuiltinRunner || res.Kind != config.KindScopeCheck || res.Expanded != nil {
		t.Errorf("result %+v", res)
	}
	if log := readLog(t, res); !strings.Contains(log, "result: pass\n") || !strings.Contains(log, "  - internal/auth/login.go\n") {
		t.Errorf("log:\n%s", log)
	}
}

func TestScopeCheckOutsideScope(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	r.write("internal/auth/login.go", "package auth\n")
	r.write("cmd/main.go", "package main\n\nfunc main() { println() }\n")
	r.remove("README.md")
	r.commit()
	// An uncommitted edit to a tracked file counts too.
	r.write("go.mod", "module example.com/app\n\ngo 1.26\n")
	res := runGate(t, r.input(config.KindScopeCheck, featureChange))
	want(t, res, StatusFail, "3 files outside the scope: README.md, cmd/main.go, go.mod",
		"Gate scope_check failed: the change touches 3 files outside its scope.\n"+
			"Outside the scope:\n"+
			"  - README.md\n"+
			"  - cmd/main.go\n"+
			"  - go.mod\n"+
			"The change may only touch paths matching:\n"+
			"  - internal/auth/**\n"+
			"Undo the changes to the files outside the scope (restore edited or deleted files as they are at "+r.base[:12]+", remove added ones), "+
			"or move that work inside the scope.")
	if log := readLog(t, res); !strings.Contains(log, "result: fail\n") || !strings.Contains(log, res.RetryContext) {
		t.Errorf("log does not hold the findings:\n%s", log)
	}
}

// TestScopeCheckRename: a move touches both paths.
func TestScopeCheckRename(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	r.git("mv", "cmd/main.go", "internal/auth/main.go")
	r.commit()
	res := runGate(t, r.input(config.KindScopeCheck, featureChange))
	if res.Status != StatusFail || res.Reason != "1 file outside the scope: cmd/main.go" {
		t.Errorf("status %q, reason %q", res.Status, res.Reason)
	}
}

func TestScopeCheckDirectoryScope(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	r.write("internal/auth/store/db.go", "package store\n")
	r.commit()
	c := featureChange
	c.Scope = []string{"internal/auth"}
	want(t, runGate(t, r.input(config.KindScopeCheck, c)), StatusPass, "", "")
}

func TestScopeCheckNoScope(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	r.write("anywhere/x.go", "package anywhere\n")
	r.commit()
	c := featureChange
	c.Scope = nil
	want(t, runGate(t, r.input(config.KindScopeCheck, c)), StatusPass, "", "")
}

func TestScopeCheckArtifactsOnly(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	r.write("openspec/changes/auth-login/proposal.md", "# why\n")
	r.write("internal/auth/NOTES.md", "notes\n")
	r.commit()
	want(t, runGate(t, r.input(config.KindScopeCheck, featureChange)), StatusFail,
		"the change touches only artifacts (openspec/, .set/, markdown)",
		"Gate scope_check failed: the change touches only specs and documentation "+
			"(files under openspec/ or .set/, and markdown files), but a feature change must change at least one other file, such as code or tests.\n"+
			"Changed files:\n"+
			"  - internal/auth/NOTES.md\n"+
			"  - openspec/changes/auth-login/proposal.md\n"+
			"Implement the change itself, not only its description.")

	// A docs change may touch only documentation.
	docs := featureChange
	docs.Type = "docs"
	want(t, runGate(t, r.input(config.KindScopeCheck, docs)), StatusPass, "", "")
}

// TestScopeCheckSymlinks: every symbolic link the change adds, committed
// or not, in its scope or not, is a finding.
func TestScopeCheckSymlinks(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	r.write("internal/auth/login.go", "package auth\n")
	r.symlink("/etc/passwd", "internal/auth/passwd")
	r.commit()
	want(t, runGate(t, r.input(config.KindScopeCheck, featureChange)), StatusFail,
		"internal/auth/passwd is a symbolic link; set does not follow links a change adds",
		"Gate scope_check failed: the change adds symbolic links, and set does not follow links a change adds:\n"+
			"  - internal/auth/passwd\n"+
			"Replace each link with the file or directory it should hold, or remove it.")

	// A tracked file turned into a link, not committed, counts too.
	r.remove("cmd/main.go")
	r.symlink("../go.mod", "cmd/main.go")
	res := runGate(t, r.input(config.KindScopeCheck, featureChange))
	if res.Status != StatusFail || res.Reason != "2 files are symbolic links (first: cmd/main.go); set does not follow links a change adds" {
		t.Errorf("status %q, reason %q", res.Status, res.Reason)
	}
}

// symlink makes name a symbolic link to target.
func (r *repo) symlink(target, name string) {
	r.t.Helper()
	p := filepath.Join(r.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		r.t.Fatal(err)
	}
}

func TestScopeCheckEmptyDiff(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	want(t, runGate(t, r.input(config.KindScopeCheck, featureChange)), StatusFail,
		"the change touches no file",
		"Gate scope_check failed: the change touches no file (nothing differs from the base commit "+r.base[:12]+").\n"+
			"Make the changes the task asks for in this worktree.")
}

func TestTestFilesPass(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	r.write("internal/auth/login.go", "package auth\n")
	r.write("internal/auth/login_test.go", "package auth\n")
	r.commit()
	res := runGate(t, r.input(config.KindTestFiles, featureChange))
	want(t, res, StatusPass, "", "")
	if log := readLog(t, res); !strings.Contains(log, "test files added or modified:\n  - internal/auth/login_test.go\n") {
		t.Errorf("log:\n%s", log)
	}

	// Modifying an existing test counts as well.
	r2 := newRepo(t, baseFiles)
	r2.write("internal/auth/auth_test.go", "package auth\n\nfunc TestX() {}\n")
	r2.commit()
	want(t, runGate(t, r2.input(config.KindTestFiles, featureChange)), StatusPass, "", "")
}

func TestTestFilesFail(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	r.write("internal/auth/login.go", "package auth\n")
	r.write("internal/auth/testdata/login_test.go.golden", "x\n")
	r.commit()
	want(t, runGate(t, r.input(config.KindTestFiles, featureChange)), StatusFail,
		"no test file added or modified",
		"Gate test_files failed: the change adds or modifies no test file. Test files are those matching:\n"+
			"  - **/*_test.go\n"+
			"Add or extend the tests that cover this change.")
}

func TestTestFilesOnlyDeleted(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	r.remove("internal/auth/auth_test.go")
	r.commit()
	want(t, runGate(t, r.input(config.KindTestFiles, featureChange)), StatusFail,
		"no test file added or modified",
		"Gate test_files failed: the change adds or modifies no test file. Test files are those matching:\n"+
			"  - **/*_test.go\n"+
			"The change only deletes test files:\n"+
			"  - internal/auth/auth_test.go\n"+
			"Add or extend the tests that cover this change.")
}

// TestTestFilesFromRunnerConfig: the files a test runner's configuration
// on the change's base names (here ava's files in package.json) are test
// files, and spec_verify reads the requirement IDs in them; without the
// runner among testRunners they are not, nor when the change itself
// writes the configuration that would count them.
func TestTestFilesFromRunnerConfig(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	r.write("package.json", `{"ava": {"files": ["checks/**/*.js"]}}`+"\n")
	r.commit()
	r.base = r.git("rev-parse", "HEAD")
	r.write("internal/auth/login.go", "package auth\n")
	r.write("checks/login.js", "// REQ-AUTH-01, REQ-AUTH-02\n")
	r.commit()
	in := r.input(config.KindTestFiles, featureChange)
	in.Project.TestRunners = map[string]bool{"ava": true}
	res := runGate(t, in)
	want(t, res, StatusPass, "", "")
	if log := readLog(t, res); !strings.Contains(log, "  - checks/login.js\n") {
		t.Errorf("log:\n%s", log)
	}
	in = r.input(config.KindSpecVerify, featureChange)
	in.Project.TestRunners = map[string]bool{"ava": true}
	want(t, runGate(t, in), StatusPass, "", "")

	in = r.input(config.KindTestFiles, featureChange)
	in.Project.TestRunners = map[string]bool{"ava": false}
	if res := runGate(t, in); res.Status != StatusFail {
		t.Errorf("without ava among testRunners: %s (%s), want a failure", res.Status, res.Reason)
	}

	r2 := newRepo(t, baseFiles)
	r2.write("package.json", `{"ava": {"files": ["**/*"]}}`+"\n")
	r2.write("internal/auth/login.go", "package auth\n")
	r2.commit()
	in = r2.input(config.KindTestFiles, featureChange)
	in.Project.TestRunners = map[string]bool{"ava": true}
	if res := runGate(t, in); res.Status != StatusFail {
		t.Errorf("with the change's own ava files: %s (%s), want a failure", res.Status, res.Reason)
	}
}

func TestTestFilesNoPatterns(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	in := r.input(config.KindTestFiles, featureChange)
	in.Project.TestPatterns = nil
	res := runGate(t, in)
	if res.Status != StatusError || res.RetryContext != "" || res.Err == nil {
		t.Errorf("result %+v, want an error", res)
	}
}

func TestSpecVerifyPass(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	r.write("internal/auth/login_test.go", "package auth\n\n// REQ-AUTH-01: login with a password\nfunc TestREQ_AUTH_02_Logout(t *testing.T) {}\n")
	r.commit()
	res := runGate(t, r.input(config.KindSpecVerify, featureChange))
	want(t, res, StatusPass, "", "")
	log := readLog(t, res)
	if !strings.Contains(log, "  - REQ-AUTH-01: internal/auth/login_test.go:3\n  - REQ-AUTH-02: internal/auth/login_test.go:4\n") {
		t.Errorf("log:\n%s", log)
	}
}

func TestSpecVerifyMissingID(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	// REQ-AUTH-01 is named in a test; REQ-AUTH-02 only in code, in a
	// test line the change did not add (the base), and as a prefix of
	// another ID.
	r.write("internal/auth/login_test.go", "package auth\n\n// Covers REQ-AUTH-01.\n// REQ-AUTH-020 is another one.\n")
	r.write("internal/auth/login.go", "package auth // REQ-AUTH-02\n")
	r.commit()
	in := r.input(config.KindSpecVerify, featureChange)
	in.Reqs = []spec.Requirement{
		{ID: "REQ-AUTH-01", Title: "Login with a password"},
		{ID: "REQ-AUTH-02", Title: "Logout"},
	}
	want(t, runGate(t, in), StatusFail,
		"requirements not referenced by a test: REQ-AUTH-02",
		"Gate spec_verify failed: 1 of the change's 2 requirements is not named by any test line this change adds:\n"+
			"  - REQ-AUTH-02: Logout\n"+
			"Name each ID in the test that covers it, in a line the change adds to a file matching **/*_test.go — "+
			"for example a comment `// REQ-AUTH-02` in the test, or REQ_AUTH_02 in the test's name.")
}

func TestSpecVerifyNoRequirements(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	c := featureChange
	c.Requirements = nil
	want(t, runGate(t, r.input(config.KindSpecVerify, c)), StatusPass, "", "")
}

func TestContainsID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want bool
	}{
		{"// REQ-AUTH-01", true},
		{"REQ-AUTH-01", true},
		{"func TestREQ_AUTH_01(t *testing.T)", true},
		{"func TestREQ_AUTH_01_Login(t *testing.T)", true},
		{`t.Run("REQ-AUTH-01/happy", …)`, true},
		{"REQ-AUTH-010", false},
		{"REQ-AUTH-01a", false},
		{"REQ-AUTH-010 and then REQ-AUTH-01.", true},
		{"req-auth-01", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := containsID(tt.text, "REQ-AUTH-01"); got != tt.want {
			t.Errorf("containsID(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestRulesHit(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	r.write("internal/auth/auth.go", "package auth\n\nfunc Login() {\n\tfmt.Println(\"DEBUG login\")\n}\n")
	// t.Skip( outside test files is not a finding of skipped-test.
	r.write("internal/auth/skip.go", "package auth\n\n// t.Skip( is fine here\n")
	r.write("internal/auth/auth_test.go", "package auth\n\n// REQ-AUTH-02 was mentioned before the change.\nfunc TestLogin(t *testing.T) {\n\tt.Skip(\"later\")\n\tprintln(\"XXX\")\n}\n")
	r.commit()
	want(t, runGate(t, r.input(config.KindRules, featureChange)), StatusFail,
		"3 matches of forbidden patterns in added lines (first: internal/auth/auth.go:4: debug-print)",
		"Gate rules failed: lines this change adds match forbidden patterns:\n"+
			"  - internal/auth/auth.go:4: debug-print: debug printing left in the code: fmt.Println(\"DEBUG login\")\n"+
			"  - internal/auth/auth_test.go:5: skipped-test: a test must not be skipped to make a gate pass: t.Skip(\"later\")\n"+
			"  - internal/auth/auth_test.go:6: debug-print: debug printing left in the code: println(\"XXX\")\n"+
			"Remove or rewrite these lines.")
}

// TestRulesLearning: an adopted rule learning is checked beside the
// forbidden patterns, its failure named as a learning with its text; a
// learning turned off, or of another kind, is not.
func TestRulesLearning(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	r.write("internal/auth/auth.go", "package auth\n\nfunc Login() {\n\tlog.Printf(\"login\")\n}\n")
	r.write("internal/auth/notes.md", "log.Printf( is fine here\n")
	r.commit()
	in := r.input(config.KindRules, featureChange)
	in.Project.Learnings = map[string]config.Learning{
		"no-log-printf": {Kind: config.LearningRule, Text: "log through the slog logger", Pattern: `log\.Printf\(`, Paths: []string{"**/*.go"}, Enabled: true},
		"off":           {Kind: config.LearningRule, Text: "no Login", Pattern: `Login`, Enabled: false},
		"convention":    {Kind: config.LearningConvention, Text: "Login is a word", Enabled: true},
	}
	want(t, runGate(t, in), StatusFail,
		"1 match of forbidden patterns in added lines (first: internal/auth/auth.go:4: learning no-log-printf)",
		"Gate rules failed: lines this change adds match forbidden patterns:\n"+
			"  - internal/auth/auth.go:4: learning no-log-printf: log through the slog logger: log.Printf(\"login\")\n"+
			"Remove or rewrite these lines.")
}

// TestRulesIgnoresRemovedAndBaseLines: only added lines are scanned.
func TestRulesIgnoresRemovedAndBaseLines(t *testing.T) {
	t.Parallel()
	r := newRepo(t, map[string]string{"a.go": "package a\n\nfunc f() {\n\tprintln(\"DEBUG\")\n}\n"})
	r.write("a.go", "package a\n\nfunc f() {\n\tprintln(\"DEBUG\")\n\treturn\n}\n")
	r.write("b.go", "package a\n")
	r.commit()
	want(t, runGate(t, r.input(config.KindRules, featureChange)), StatusPass, "", "")
}

func TestRulesCap(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	var b strings.Builder
	for range 60 {
		b.WriteString("println(\"DEBUG\")\n")
	}
	r.write("internal/auth/noise.go", b.String())
	r.commit()
	res := runGate(t, r.input(config.KindRules, featureChange))
	if res.Status != StatusFail {
		t.Fatalf("status %q", res.Status)
	}
	lines := strings.Split(res.RetryContext, "\n")
	// Headline, 50 findings, the rest, the advice.
	if len(lines) != 53 || lines[50] != "  - internal/auth/noise.go:50: debug-print: debug printing left in the code: println(\"DEBUG\")" ||
		lines[51] != "  … and 10 more" {
		t.Errorf("retry context has %d lines:\n%s", len(lines), res.RetryContext)
	}
	if !strings.HasPrefix(res.Reason, "60 matches") {
		t.Errorf("reason %q", res.Reason)
	}
}

func TestRulesBadPattern(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	in := r.input(config.KindRules, featureChange)
	in.Project.Forbidden["broken"] = config.Forbidden{Pattern: "(", Message: "x"}
	res := runGate(t, in)
	if res.Status != StatusError || !strings.Contains(fmt.Sprint(res.Err), `forbidden rule "broken": bad pattern`) {
		t.Errorf("result %+v", res)
	}
	if log := readLog(t, res); !strings.Contains(log, "result: error\n") {
		t.Errorf("log:\n%s", log)
	}
}

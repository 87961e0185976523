package gate

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/plan"
)

// rustLib is a crate whose tests are inline, as fnv's are: the
// #[cfg(test)] module at the end of lib.rs.
const rustLib = "pub fn a() -> u8 {\n    1\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn one() {\n        assert_eq!(a(), 1);\n    }\n}\n"

var rustChange = plan.Change{
	Name:         "hash32",
	Type:         "feature",
	Size:         "S",
	Requirements: []string{"REQ-HASH-01"},
	Scope:        []string{"**"},
}

// rustInput is the input of a gate of kind on r, in a project whose tests
// are tests/ files and inline #[cfg(test)] modules.
func rustInput(r *repo, kind string) Input {
	in := r.input(kind, rustChange)
	in.Project.TestPatterns = map[string]string{"integration": "**/tests/**/*.rs"}
	in.Project.InlineTests = map[string]config.Inline{"cfg-test": {Files: "**/*.rs", From: `^\s*#\[cfg\(test\)\]`}}
	return in
}

// A test added to the crate's inline test module is a test: test_files
// passes and spec_verify reads the ID it names.
func TestInlineTestsCount(t *testing.T) {
	t.Parallel()
	r := newRepo(t, map[string]string{"lib.rs": rustLib})
	r.write("lib.rs", "pub fn b() -> u8 {\n    2\n}\n\n"+strings.TrimSuffix(rustLib, "}\n")+
		"\n    // REQ-HASH-01\n    #[test]\n    fn two() {\n        assert_eq!(b(), 2);\n    }\n}\n")
	r.commit()
	res := runGate(t, rustInput(r, config.KindTestFiles))
	want(t, res, StatusPass, "", "")
	if log := readLog(t, res); !strings.Contains(log, "inline test lines added:\n  - lib.rs (6 lines)\n") {
		t.Errorf("log:\n%s", log)
	}
	res = runGate(t, rustInput(r, config.KindSpecVerify))
	want(t, res, StatusPass, "", "")
	if log := readLog(t, res); !strings.Contains(log, "REQ-HASH-01: lib.rs:") {
		t.Errorf("log:\n%s", log)
	}
}

// Code added above the test module is no test, and an ID named there is
// not read: both gates fail, saying where tests count.
func TestInlineTestsCodeIsNoTest(t *testing.T) {
	t.Parallel()
	r := newRepo(t, map[string]string{"lib.rs": rustLib})
	r.write("lib.rs", "// REQ-HASH-01\npub fn b() -> u8 {\n    2\n}\n\n"+rustLib)
	r.commit()
	want(t, runGate(t, rustInput(r, config.KindTestFiles)), StatusFail,
		"no test file added or modified",
		"Gate test_files failed: the change adds or modifies no test file. Test files are those matching:\n"+
			"  - **/tests/**/*.rs\n"+
			`Tests written inline count too: the lines of files matching **/*.rs from the last line matching ^\s*#\[cfg\(test\)\] on.`+"\n"+
			"Add or extend the tests that cover this change.")
	res := runGate(t, rustInput(r, config.KindSpecVerify))
	if res.Status != StatusFail || !strings.Contains(res.RetryContext, `a line the change adds to a file matching **/tests/**/*.rs, or to the lines of files matching **/*.rs from the last line matching ^\s*#\[cfg\(test\)\] on`) {
		t.Errorf("spec_verify: %s\n%s", res.Status, res.RetryContext)
	}
}

// TestsNaming reads inline tests on main too, and not the code above
// them.
func TestTestsNamingInline(t *testing.T) {
	t.Parallel()
	r := newRepo(t, nil)
	r.write("src/lib.rs", "// REQ-HASH-02 in the code\n"+strings.Replace(rustLib, "    #[test]\n", "    // REQ-HASH-01\n    #[test]\n", 1))
	r.write("src/plain.rs", "// REQ-HASH-02 in code without tests\n")
	r.write("tests/it.rs", "// REQ-HASH-02\n")
	r.commit()
	p := &config.Project{
		TestPatterns: map[string]string{"integration": "**/tests/**/*.rs"},
		InlineTests:  map[string]config.Inline{"cfg-test": {Files: "**/*.rs", From: `^\s*#\[cfg\(test\)\]`}},
	}
	got, err := TestsNaming(context.Background(), r.dir, "HEAD", p, []string{"REQ-HASH-01", "REQ-HASH-02"})
	if err != nil {
		t.Fatal(err)
	}
	wantPlaces := map[string][]string{"REQ-HASH-01": {"src/lib.rs:10"}, "REQ-HASH-02": {"tests/it.rs:1"}}
	if diff := cmp.Diff(wantPlaces, got); diff != "" {
		t.Errorf("TestsNaming (-want +got):\n%s", diff)
	}
}

// TestInlineStartIsTheLastMatch: a #[cfg(test)] import at the top of a
// file does not make the code below it a test; the test module at the
// end does.
func TestInlineStartIsTheLastMatch(t *testing.T) {
	rules := []inlineRule{{files: "**/*.rs", from: regexp.MustCompile(`^#\[cfg\(test\)\]`)}}
	content := "#[cfg(test)]\nuse pretty_assertions::assert_eq;\n\npub fn f() {}\n\n#[cfg(test)]\nmod tests {\n    #[cfg(test)]\n    fn g() {}\n}\n"
	if got := inlineStart(rules, "src/lib.rs", []byte(content)); got != 6 {
		t.Errorf("inlineStart = %d, want 6 (the test module's line)", got)
	}
}

// TestInlineTestLinesSkipsSymlinks: a symbolic link the change commits is
// not read, wherever it points.
func TestInlineTestLinesSkipsSymlinks(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.rs")
	if err := os.WriteFile(outside, []byte("#[cfg(test)]\nmod tests {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "x.rs")); err != nil {
		t.Fatal(err)
	}
	rules := []inlineRule{{files: "**/*.rs", from: regexp.MustCompile(`^#\[cfg\(test\)\]`)}}
	got, err := inlineTestLines(rules, nil, dir, []fileDiff{{Path: "x.rs", Added: []addedLine{{Line: 2, Text: "mod tests {}"}}}})
	if err != nil || len(got) != 0 {
		t.Errorf("inlineTestLines = %v, %v; want nothing", got, err)
	}
}

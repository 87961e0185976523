package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/set-engine/set/internal/clitest"
	"github.com/set-engine/set/internal/gittest"
)

// TestExampleApply runs the bundled example as `make demo` does: a copy of
// examples/linkshort in a fresh git repository, `setctl apply --yes` with the
// replay agent. Every change must reach main as one commit, on a straight
// line, with the living specs folded, and main's tests green.
func TestExampleApply(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the example's gates (go build, vet, test -race)")
	}
	dir := t.TempDir()
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	t.Setenv("CUE_REGISTRY", "none")
	gittest.Hermetic(t, "")
	t.Setenv("GOFLAGS", "-buildvcs=false")
	t.Setenv("GOPROXY", "off")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "examples", "linkshort"))); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string { t.Helper(); return gitIn(t, dir, args...) }
	initRepo(t, dir)

	var stdout, stderr strings.Builder
	code := Main([]string{"-C", dir, "apply", "--yes"}, testProcess(&stdout, &stderr))
	if code != exitOK {
		t.Fatalf("setctl apply exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"create-links   verify test: FAIL",                                     // the first iteration's bug
		"custom-alias   merging main conflicts in internal/httpapi/handler.go", // the real conflict
		"custom-alias   iteration 2: done",                                     // resolved by the agent
		"Run success",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if merges := git("rev-list", "--merges", "main"); merges != "" {
		t.Errorf("main is not linear: merge commits %s", merges)
	}
	// One commit per change, each holding its folded delta; no archive
	// commit of its own.
	changes := []string{"create-links", "resolve-links", "custom-alias", "click-stats", "admin-api"}
	if n := git("rev-list", "--count", "main"); n != strconv.Itoa(1+len(changes)) {
		t.Errorf("main has %s commits, want the skeleton and one per change:\n%s", n, git("log", "--oneline", "main"))
	}
	for _, c := range changes {
		commit := git("log", "--format=%H", "--grep=^Set-Change: "+c+"$", "main")
		if commit == "" {
			t.Errorf("%s is not on main", c)
			continue
		}
		if files := git("ls-tree", "-r", "--name-only", commit, "openspec/changes/"); !regexp.MustCompile(`(?m)^openspec/changes/archive/\d{4}-\d\d-\d\d-` + c + `/`).MatchString(files) {
			t.Errorf("%s's commit on main does not hold its archived change folder:\n%s", c, files)
		}
	}
	if branches := git("branch", "--list", "set/*"); branches != "" {
		t.Errorf("branches of merged changes left behind:\n%s", branches)
	}
	for _, capability := range []string{"links", "stats", "admin"} {
		if !strings.Contains(git("show", "main:openspec/specs/"+capability+"/spec.md"), "### Requirement:") {
			t.Errorf("openspec/specs/%s/spec.md has no requirement", capability)
		}
	}
	// The living specs carry their section's text as Purpose, and record
	// the whole spec: plan has nothing left to do.
	if got := git("show", "main:openspec/specs/links/spec.md"); !strings.Contains(got, "## Purpose\nCreating short links, resolving their codes") {
		t.Errorf("openspec/specs/links/spec.md has no Purpose from the spec:\n%s", got)
	}
	stdout.Reset()
	stderr.Reset()
	if code := Main([]string{"-C", dir, "plan", "--detailed-exitcode"}, testProcess(&stdout, &stderr)); code != exitOK {
		t.Errorf("setctl plan --detailed-exitcode after the run exited %d:\n%s%s", code, stdout.String(), stderr.String())
	}
	test := exec.Command("go", "test", "./...")
	test.Dir = dir
	if out, err := test.CombinedOutput(); err != nil {
		t.Errorf("go test on main: %v\n%s", err, out)
	}
	validateOpenSpec(t, dir)
}

// validateOpenSpec runs `openspec validate --all --strict` on the tree
// of the example after its run: main's living specs, and every change
// folder set wrote, put back where it was before its archive.
func validateOpenSpec(t *testing.T, dir string) {
	t.Helper()
	cli := clitest.OpenSpec.Require(t)
	tree := t.TempDir()
	if err := os.CopyFS(tree, os.DirFS(filepath.Join(dir, "openspec"))); err != nil {
		t.Fatal(err)
	}
	archived, err := filepath.Glob(filepath.Join(tree, "changes", "archive", "*"))
	if err != nil || len(archived) != 5 {
		t.Fatalf("archived change folders: %v, %v", archived, err)
	}
	for _, a := range archived {
		name := regexp.MustCompile(`^\d{4}-\d\d-\d\d-`).ReplaceAllString(filepath.Base(a), "")
		if err := os.Rename(a, filepath.Join(tree, "changes", name)); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Dir(tree)
	if err := os.Rename(tree, filepath.Join(root, "openspec")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cli, "validate", "--all", "--strict", "--no-interactive")
	cmd.Dir = root
	cmd.Env = clitest.OpenSpecEnv(t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("openspec validate --all --strict: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Totals: 8 passed, 0 failed (8 items)") {
		t.Errorf("openspec validate --all --strict did not validate the 3 specs and 5 changes:\n%s", out)
	}
}

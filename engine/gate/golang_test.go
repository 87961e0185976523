package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/internal/profiletest"
)

// These tests run the exec gates of the embedded golang profile
// (profiles/golang) as a project gets them, on real Go modules, and match
// their failures patterns against output the go command really printed
// (testdata/golang, from go1.26).

// golangProfile is the configuration of a project that uses the golang
// profile unchanged.
func golangProfile(t *testing.T) *config.Project {
	t.Helper()
	return profiletest.Load(t, "golang", "")
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// goEnv makes the go command local and quiet: no toolchain download, no
// module proxy, no workspace or flags from the developer's environment.
func goEnv(t *testing.T) {
	t.Setenv("GOTOOLCHAIN", "local")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "")
	t.Setenv("GOWORK", "off")
}

// runProfileGate runs the profile's gate name in dir.
func runProfileGate(t *testing.T, p *config.Project, name, dir string) Result {
	t.Helper()
	in := Input{
		Project:  p,
		Step:     graph.GateStep{Gate: name, Kind: config.KindExec, Mode: config.ModeRun, Runner: "host", Timeout: config.Duration(2 * time.Minute)},
		Stage:    graph.StageVerify,
		Attempt:  1,
		Worktree: dir,
		LogPath:  filepath.Join(t.TempDir(), name+".log"),
	}
	return runGate(t, in)
}

// TestGolangGatesOnModuleWithoutPackages: a new module with only its
// go.mod passes every gate (there is nothing to build, format, vet or
// test); a directory without a go.mod is no module, and fails.
func TestGolangGatesOnModuleWithoutPackages(t *testing.T) {
	goEnv(t)
	p := golangProfile(t)
	empty := t.TempDir()
	writeTestFile(t, filepath.Join(empty, "go.mod"), "module example.com/empty\n\ngo 1.26\n")
	writeTestFile(t, filepath.Join(empty, "docs", "spec.md"), "# Spec\n")
	for _, g := range []string{"build", "fmt", "vet", "test"} {
		if res := runProfileGate(t, p, g, empty); res.Status != StatusPass {
			t.Errorf("%s on a module without packages: %s (%s)\n%s", g, res.Status, res.Reason, res.Tail)
		}
	}
	noModule := t.TempDir()
	writeTestFile(t, filepath.Join(noModule, "main.go"), "package main\n\nfunc main() {}\n")
	for _, g := range []string{"build", "vet", "test"} {
		if res := runProfileGate(t, p, g, noModule); res.Status != StatusFail || res.ExitCode != 1 {
			t.Errorf("%s without go.mod: %s (exit code %d), want fail\n%s", g, res.Status, res.ExitCode, res.Tail)
		}
	}
	// With packages, vet and test run: a vet finding fails.
	writeTestFile(t, filepath.Join(empty, "a.go"), "package empty\n\nimport \"fmt\"\n\nfunc F() { fmt.Printf(\"%d\\n\", \"x\") }\n")
	res := runProfileGate(t, p, "vet", empty)
	if res.Status != StatusFail || !slices.Equal(res.Failures, []string{`a.go fmt.Printf format %d has arg "x" of wrong type string`}) {
		t.Errorf("vet on a finding: %s %q\n%s", res.Status, res.Failures, res.Tail)
	}
}

// TestGolangFmtLeavesOutWhatGoIgnores: fmt reports the files go build,
// vet and test compile, not those under testdata/ or vendor/ (golden and
// vendored files) or in directories the go command ignores (".x", "_x"),
// at any depth.
func TestGolangFmtLeavesOutWhatGoIgnores(t *testing.T) {
	goEnv(t)
	p := golangProfile(t)
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.26\n")
	unformatted := "package x\nfunc  F( ) {}\n"
	for _, f := range []string{"testdata/a.go", "sub/testdata/golden/b.go", "vendor/example.com/v/v.go", "sub/vendor/v.go", "_examples/e.go", ".hidden/h.go", "sub/.cache/c.go"} {
		writeTestFile(t, filepath.Join(dir, f), unformatted)
	}
	writeTestFile(t, filepath.Join(dir, "m.go"), "package m\n")
	if res := runProfileGate(t, p, "fmt", dir); res.Status != StatusPass {
		t.Errorf("fmt with unformatted files only where go does not look: %s (%s)\n%s", res.Status, res.Reason, res.Tail)
	}
	writeTestFile(t, filepath.Join(dir, "sub", "pkg", "with space.go"), unformatted)
	writeTestFile(t, filepath.Join(dir, "top.go"), unformatted)
	res := runProfileGate(t, p, "fmt", dir)
	if res.Status != StatusFail || !slices.Equal(res.Failures, []string{"sub/pkg/with space.go", "top.go"}) {
		t.Errorf("fmt: %s, failures %q\n%s", res.Status, res.Failures, res.Tail)
	}
	// A file gofmt cannot parse is not formatted either.
	for _, f := range []string{"sub/pkg/with space.go", "top.go"} {
		writeTestFile(t, filepath.Join(dir, f), "package x\n")
	}
	writeTestFile(t, filepath.Join(dir, "broken.go"), "package x\nfunc (\n")
	if res := runProfileGate(t, p, "fmt", dir); res.Status != StatusFail || !strings.Contains(res.Tail, "broken.go:2:8: expected") {
		t.Errorf("fmt on a file gofmt cannot parse: %s\n%s", res.Status, res.Tail)
	}
}

// TestGolangFailurePatterns: each pattern names, in real go output, every
// test and package that failed, every compiler and vet finding, and the go
// command's own errors, but not its progress lines.
func TestGolangFailurePatterns(t *testing.T) {
	p := golangProfile(t)
	mainTest := []string{"TestFails", "TestFails/sub", "example.com/gs/failing"}
	finding := `a/a.go fmt.Printf format %d has arg "x" of wrong type string`
	typeError := `b/b.go cannot use "x" (untyped string constant) as int value in return statement`
	goError := "go.mod requires go >= 1.99 (running go 1.26.8; GOTOOLCHAIN=local)"
	tests := []struct {
		gate, sample string
		want         []string
	}{
		{"test", "test-main.out", mainTest},
		{"test", "test-timeout.out", append(slices.Clone(mainTest), "example.com/gs/timeout")},
		{"test", "test-init-panic.out", append(slices.Clone(mainTest), "example.com/gs/initpanic")},
		{"test", "test-testmain-exit.out", append(slices.Clone(mainTest), "example.com/gs/mainexit")},
		{"test", "test-build-failed.out", append(slices.Clone(mainTest), "example.com/gs/broken")},
		{"test", "vet-go-error.out", []string{goError}},
		{"vet", "vet-main.out", []string{finding}},
		{"vet", "vet-type-error.out", []string{finding, typeError}},
		{"vet", "vet-go-error.out", []string{goError}},
		{"build", "build-main.out", []string{typeError}},
		{"build", "build-go-error.out", []string{goError}},
	}
	for _, tt := range tests {
		t.Run(tt.gate+"/"+tt.sample, func(t *testing.T) {
			out, err := os.ReadFile(filepath.Join("testdata", "golang", tt.sample))
			if err != nil {
				t.Fatal(err)
			}
			got := scan(t, p.Gates[tt.gate].Failures, string(out))
			slices.Sort(tt.want)
			if !slices.Equal(got, tt.want) {
				t.Errorf("failures = %q\nwant       %q", got, tt.want)
			}
		})
	}
	// The go command's progress and warnings are no failures.
	progress := "go: downloading github.com/google/go-cmp v0.7.0\ngo: finding module for package example.com/x\n" +
		"go: found example.com/x in example.com/x v1.0.0\ngo: warning: \"./...\" matched no packages\n"
	for _, g := range []string{"build", "vet", "test"} {
		if got := scan(t, p.Gates[g].Failures, progress); len(got) != 0 {
			t.Errorf("%s names progress lines: %q", g, got)
		}
	}
}

// TestGolangAcceptedTestFailures: with main's failing test accepted, a
// change that makes another package time out, panic in init or exit from
// TestMain fails the test gate, naming that package; main's own failures
// alone pass.
func TestGolangAcceptedTestFailures(t *testing.T) {
	p := golangProfile(t)
	mainOut, err := filepath.Abs(filepath.Join("testdata", "golang", "test-main.out"))
	if err != nil {
		t.Fatal(err)
	}
	replay := func(sample string) Input {
		in, _ := execInput(t, "test", "sh", "-c", `cat "$0"; exit 1`, filepath.Join(filepath.Dir(mainOut), sample))
		g := in.Project.Gates["test"]
		g.Failures = p.Gates["test"].Failures
		in.Project.Gates["test"] = g
		in.Accepted = scan(t, g.Failures, readFile(t, mainOut))
		return in
	}
	res := runGate(t, replay("test-main.out"))
	if res.Status != StatusPass || res.Reason != "exit code 1: 3 failures also on main, accepted" {
		t.Errorf("main's own failures: %s (%s)", res.Status, res.Reason)
	}
	for sample, pkg := range map[string]string{
		"test-timeout.out":       "example.com/gs/timeout",
		"test-init-panic.out":    "example.com/gs/initpanic",
		"test-testmain-exit.out": "example.com/gs/mainexit",
		"test-build-failed.out":  "example.com/gs/broken",
	} {
		res := runGate(t, replay(sample))
		if res.Status != StatusFail || res.Reason != "exit code 1: 1 failure not on main (3 also on main, accepted)" ||
			!strings.Contains(res.RetryContext, "does not have:\n- "+pkg+"\n") {
			t.Errorf("%s: %s (%s)\n%s", sample, res.Status, res.Reason, res.RetryContext)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

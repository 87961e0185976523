package baseline

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hexops/autogold/v2"
)

var (
	redFmt = Verdict{Branch: "main", Gate: "fmt", Command: `sh -c 'test -z "$(gofmt -l .)" || { gofmt -l .; exit 1; }'`, Pattern: `^(.+\.go)$`,
		Blocking: true, Result: "fail", ExitCode: 1, Reason: "exit code 1", Failures: []string{"testdata/old.go"},
		Tail: "testdata/old.go", Log: ".set/logs/_baseline/fmt.log"}
	redVet = Verdict{Branch: "main", Gate: "vet", Command: "go vet ./...", Pattern: `^(\S+\.go):\d+`, Blocking: true, Result: "fail",
		ExitCode: 1, Reason: "exit code 1", Failures: []string{"a.go", "b.go"}, Log: ".set/logs/_baseline/vet.log", Cached: true,
		Tail: strings.Repeat("noise\n", 20) + "a.go:1:1: x\nb.go:2:2: y"}
	redLint = Verdict{Branch: "main", Gate: "lint", Command: "golangci-lint run", Blocking: true, Result: "fail", ExitCode: 3,
		Reason: "exit code 3", Log: ".set/logs/_baseline/lint.log"}
	redTest = Verdict{Branch: "main", Gate: "test", Command: "go test ./...", Pattern: `^--- FAIL: (\S+)`, Blocking: true, Result: "fail",
		ExitCode: -1, TimedOut: true, Reason: "timed out after 15m0s", Tail: "=== RUN TestSlow", Log: ".set/logs/_baseline/test.log"}
	redBuild = Verdict{Branch: "main", Gate: "build", Command: "make", Pattern: `^ERROR (\S+)`, Blocking: true, Result: "fail",
		ExitCode: 2, Reason: "exit code 2", Tail: "make: *** No rule to make target", Log: ".set/logs/_baseline/build.log"}
)

// yes is `setctl apply --yes`.
var yes = Invocation{Flags: []string{"--yes"}}

func TestRedErrorOneGate(t *testing.T) {
	autogold.ExpectFile(t, autogold.Raw((&RedError{Gates: []Verdict{redFmt}, Apply: yes}).Error()+"\n"))
}

// TestRedErrorPlanFile: the ways on of `setctl apply --json plan.json`
// keep the plan file and its flags, and say to plan again after set.cue
// changed (the plan file is stale then).
func TestRedErrorPlanFile(t *testing.T) {
	plan := Invocation{Flags: []string{"--json"}, PlanFile: "plan.json"}
	autogold.ExpectFile(t, autogold.Raw((&RedError{Gates: []Verdict{redFmt, redLint}, Apply: plan}).Error()+"\n"))
}

func TestInvocationCommand(t *testing.T) {
	for _, tt := range []struct {
		in     Invocation
		accept bool
		want   string
	}{
		{Invocation{}, false, "setctl apply"},
		{Invocation{}, true, "setctl apply --accept-baseline"},
		{yes, true, "setctl apply --yes --accept-baseline"},
		{Invocation{Flags: []string{"--json", "--keep-branches"}, PlanFile: "out/plan.json"}, true, "setctl apply --json --keep-branches --accept-baseline out/plan.json"},
	} {
		if got := tt.in.Command(tt.accept); got != tt.want {
			t.Errorf("%+v.Command(%v) = %q, want %q", tt.in, tt.accept, got, tt.want)
		}
	}
}

func TestRedErrorComparableGates(t *testing.T) {
	autogold.ExpectFile(t, autogold.Raw((&RedError{Gates: []Verdict{redFmt, redVet}, Apply: yes}).Error()+"\n"))
}

func TestRedErrorGatesThatCannotBeAccepted(t *testing.T) {
	autogold.ExpectFile(t, autogold.Raw((&RedError{Gates: []Verdict{redBuild, redFmt, redLint, redTest}, Apply: yes}).Error()+"\n"))
}

func TestRedErrorRefusal(t *testing.T) {
	autogold.ExpectFile(t, autogold.Raw((&RedError{Gates: []Verdict{redBuild, redFmt, redLint, redTest}, Accepting: true, Apply: yes}).Error()+"\n"))
}

// TestRedErrorNamesTheMainBranch: a project whose main branch is master
// reads master wherever the message speaks of it, never main.
func TestRedErrorNamesTheMainBranch(t *testing.T) {
	var gates []Verdict
	for _, v := range []Verdict{redBuild, redFmt, redLint, redTest} {
		v.Branch = "master"
		gates = append(gates, v)
	}
	for _, e := range []*RedError{{Gates: gates[1:2]}, {Gates: gates}, {Gates: gates, Accepting: true}} {
		msg := e.Error()
		if regexp.MustCompile(`\bmain\b`).MatchString(msg) || !strings.Contains(msg, " on master") {
			t.Errorf("the message does not name master alone:\n%s", msg)
		}
	}
}

func TestWhy(t *testing.T) {
	for _, tt := range []struct {
		v    Verdict
		want string
	}{
		{redFmt, ""},
		{redLint, "it has no failures pattern, so set cannot tell its failures on main from a change's"},
		{redTest, "it timed out on main, so its failures are unknown"},
		{redBuild, "its failures pattern found nothing in its output on main"},
	} {
		if got := tt.v.Why(); got != tt.want || tt.v.Comparable() != (tt.want == "") {
			t.Errorf("%s: Why = %q, Comparable = %v", tt.v.Gate, got, tt.v.Comparable())
		}
	}
}

// A gate that could not run its program (after install failed, or on its
// own) is said so, and told to wait for install or to get its program:
// not to get a failures pattern, which could name nothing there. When
// every gate that cannot be compared is such a gate, --accept-baseline's
// refusal says to let them run first.
func TestRedErrorCouldNotRun(t *testing.T) {
	install := Verdict{Branch: "main", Gate: "install", Command: "npm install", Blocking: true, Result: "fail", ExitCode: 1,
		Reason: "exit code 1", Tail: "npm error code ECONNREFUSED", Log: ".set/logs/_baseline/install.log"}
	lint := Verdict{Branch: "main", Gate: "lint", Command: "npm exec --no -- xo", Blocking: true, Result: "fail", ExitCode: 127,
		Reason: "could not run: xo: not found — the install gate failed before it (exit code 127)", Missing: "xo: not found",
		After: []string{"install"}, Tail: "sh: 1: xo: not found", Log: ".set/logs/_baseline/lint.log"}
	test := Verdict{Branch: "main", Gate: "test", Command: "pytest", Pattern: `^FAILED (\S+)`, Blocking: true, Result: "fail", ExitCode: 1,
		Reason: "could not run: No module named pytest (exit code 1)", Missing: "No module named pytest",
		Tail: "/usr/bin/python3: No module named pytest", Log: ".set/logs/_baseline/test.log"}
	msg := (&RedError{Gates: []Verdict{install, lint, test}, Apply: yes}).Error()
	for _, not := range []string{"gates: lint: failures", "gates: test: failures"} {
		if strings.Contains(msg, not) {
			t.Errorf("the message tells to add %q:\n%s", not, msg)
		}
	}
	refusal := (&RedError{Gates: []Verdict{lint, test}, Apply: yes, Accepting: true}).Error()
	alone := (&RedError{Gates: []Verdict{test}, Apply: yes}).Error()
	autogold.ExpectFile(t, autogold.Raw(msg+"\n\n"+refusal+"\n\n"+alone+"\n"))
}

// TestRedErrorBaseLacks: a gate red on main in a container that passes
// on the host says the base lacks something, and is offered a fix of the
// base, naming it, instead of a fix of main; a gate red on the host too
// says so and is still main's to fix.
func TestRedErrorBaseLacks(t *testing.T) {
	race := Verdict{Branch: "main", Gate: "test", Command: "go test -race ./...", Pattern: `^go: (.+)$`, Blocking: true, Result: "fail",
		ExitCode: 1, Reason: "exit code 1", Failures: []string{"-race requires cgo; enable cgo by setting CGO_ENABLED=1"},
		Tail: "go: -race requires cgo; enable cgo by setting CGO_ENABLED=1", Log: ".set/logs/_baseline/test.log",
		Base: "rootfs ./rootfs", OnHost: "pass", HostLog: ".set/logs/_baseline/test.host.log"}
	vet := redVet
	vet.Base, vet.OnHost, vet.HostLog = "rootfs ./rootfs", "fail", ".set/logs/_baseline/vet.host.log"
	alone := (&RedError{Gates: []Verdict{race}, Apply: yes}).Error()
	both := (&RedError{Gates: []Verdict{vet, race}, Apply: yes}).Error()
	if !strings.Contains(alone, "rootfs ./rootfs") || strings.Contains(alone, "Fix main") {
		t.Errorf("the message does not name the base, or tells to fix main:\n%s", alone)
	}
	autogold.ExpectFile(t, autogold.Raw(alone+"\n\n"+both+"\n"))
}

package gate

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
)

func scan(t *testing.T, pattern string, chunks ...string) []string {
	t.Helper()
	s := newOutputScanner(regexp.MustCompile(pattern))
	for _, c := range chunks {
		if n, err := s.Write([]byte(c)); n != len(c) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	return s.failures()
}

func TestFailureScanner(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pattern string
		chunks  []string
		want    []string
	}{
		{"gofmt -l: one file a line", `^(.+\.go)$`,
			[]string{"b.go\nsub/a.go\n", "b.go\n\nREADME\n"}, []string{"b.go", "sub/a.go"}},
		{"a line split across writes, a last line without newline", `^--- FAIL: (\S+)`,
			[]string{"--- FA", "IL: TestA (0.00s)\n    --- FAIL: TestA/sub\n--- FAIL: TestB"}, []string{"TestA", "TestB"}},
		{"capture groups joined, empty groups left out", `^\s*--- FAIL: (\S+)|^FAIL\s+(\S+)\s+\[(.+)\]`,
			[]string{"    --- FAIL: TestA/sub (0.00s)\nFAIL\texample.com/x [build failed]\nFAIL\texample.com/y\t0.1s\nFAIL\n"},
			[]string{"TestA/sub", "example.com/x build failed"}},
		{"no groups: the whole match", `E\d+`, []string{"E1 and E22\r\nE1\n"}, []string{"E1", "E22"}},
		{"colour codes and carriage returns go", `^(\S+\.go):\d+: (.+)$`,
			[]string{"\x1b[31ma.go:3: oops\x1b[0m\r\n"}, []string{"a.go oops"}},
		{"matches that name nothing are ignored", `^(x*)`, []string{"abc\nxx\n"}, []string{"xx"}},
		{"nothing found", `^FAIL: (\S+)`, []string{"ok\n"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := scan(t, tt.pattern, tt.chunks...); !slices.Equal(got, tt.want) {
				t.Errorf("failures = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestFailureScannerLongLine: a line longer than the bound is cut, never
// held whole.
func TestFailureScannerLongLine(t *testing.T) {
	t.Parallel()
	s := newOutputScanner(regexp.MustCompile(`^(x+)$`))
	long := strings.Repeat("x", 3*maxFailureLine)
	s.Write([]byte(long[:maxFailureLine]))
	s.Write([]byte(long[maxFailureLine:]))
	if len(s.line) != maxFailureLine {
		t.Errorf("held %d bytes of one line, want %d", len(s.line), maxFailureLine)
	}
	s.Write([]byte("\nxy\n"))
	if got := s.failures(); len(got) != 1 || len(got[0]) != maxFailureLine {
		t.Errorf("failures = %d of lengths %v", len(got), len(got[0]))
	}
}

func TestNewFailures(t *testing.T) {
	t.Parallel()
	if got := NewFailures([]string{"a", "b", "c"}, []string{"b", "z"}); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("got %q", got)
	}
	if got := NewFailures([]string{"a"}, []string{"a"}); got != nil {
		t.Errorf("got %q, want none", got)
	}
}

// acceptedInput is a gate whose command reports the failures a and b.
func acceptedInput(t *testing.T, accepted []string) Input {
	in, _ := execInput(t, "lint", "sh", "-c", "echo 'bad: a'; echo 'bad: b'; echo done; exit 1")
	g := in.Project.Gates["lint"]
	g.Failures = `^bad: (\S+)$`
	in.Project.Gates["lint"] = g
	in.Accepted = accepted
	return in
}

func TestExecFailuresFound(t *testing.T) {
	t.Parallel()
	res := runGate(t, acceptedInput(t, nil))
	want(t, res, StatusFail, "exit code 1",
		"Gate lint (`sh -c 'echo '\\''bad: a'\\''; echo '\\''bad: b'\\''; echo done; exit 1'`) failed with exit code 1. Last lines of its output:\n"+
			"```\nbad: a\nbad: b\ndone\n```\n"+
			"Full log: .set/logs/auth-login/verify-lint-1.log")
	if !slices.Equal(res.Failures, []string{"a", "b"}) || res.Tail != "bad: a\nbad: b\ndone" {
		t.Errorf("failures %q, tail %q", res.Failures, res.Tail)
	}
}

func TestExecAllFailuresAccepted(t *testing.T) {
	t.Parallel()
	res := runGate(t, acceptedInput(t, []string{"a", "b", "c"}))
	want(t, res, StatusPass, "exit code 1: 2 failures also on main, accepted", "")
	if log := readLog(t, res); log != "bad: a\nbad: b\ndone\n\n[set] exit code 1: 2 failures also on main, accepted\n" {
		t.Errorf("log %q", log)
	}
}

func TestExecNewFailureBeyondAccepted(t *testing.T) {
	t.Parallel()
	res := runGate(t, acceptedInput(t, []string{"a"}))
	want(t, res, StatusFail, "exit code 1: 1 failure not on main (1 also on main, accepted)",
		"Gate lint (`sh -c 'echo '\\''bad: a'\\''; echo '\\''bad: b'\\''; echo done; exit 1'`) failed with exit code 1. "+
			"main fails this gate too: 1 failure already on main is accepted (setctl apply --accept-baseline) and not yours to fix. "+
			"Your change adds 1 failure that main does not have:\n"+
			"- b\n"+
			"Full log: .set/logs/auth-login/verify-lint-1.log")

	// In warn mode the same finding does not block.
	in := acceptedInput(t, []string{"a"})
	in.Step.Mode = config.ModeWarn
	if res := runGate(t, in); res.Status != StatusWarn || !strings.Contains(res.RetryContext, "- b\n") {
		t.Errorf("warn mode: %q %q", res.Status, res.RetryContext)
	}
}

// TestExecAcceptedNamesTheMainBranch: the reason and the retry context
// name the project's main branch.
func TestExecAcceptedNamesTheMainBranch(t *testing.T) {
	t.Parallel()
	in := acceptedInput(t, []string{"a"})
	in.Project.MainBranch = "master"
	res := runGate(t, in)
	if res.Reason != "exit code 1: 1 failure not on master (1 also on master, accepted)" ||
		!strings.Contains(res.RetryContext, " master fails this gate too: 1 failure already on master is accepted ") ||
		!strings.Contains(res.RetryContext, "Your change adds 1 failure that master does not have:") {
		t.Errorf("reason %q, retry context:\n%s", res.Reason, res.RetryContext)
	}
	in.Accepted = []string{"a", "b"}
	if res := runGate(t, in); res.Reason != "exit code 1: 2 failures also on master, accepted" {
		t.Errorf("reason %q", res.Reason)
	}
}

// TestExecAcceptedButNothingToCompare: a failure the pattern cannot name,
// or one with nothing accepted in it, is judged by the exit code alone.
func TestExecAcceptedButNothingToCompare(t *testing.T) {
	t.Parallel()
	in, _ := execInput(t, "lint", "sh", "-c", "echo 'cannot parse'; exit 2")
	g := in.Project.Gates["lint"]
	g.Failures = `^bad: (\S+)$`
	in.Project.Gates["lint"] = g
	in.Accepted = []string{"a"}
	res := runGate(t, in)
	if res.Status != StatusFail || res.Reason != "exit code 2" || len(res.Failures) != 0 || !strings.Contains(res.RetryContext, "cannot parse") {
		t.Errorf("result %+v", res)
	}
	res = runGate(t, acceptedInput(t, []string{"z"}))
	if res.Status != StatusFail || res.Reason != "exit code 1" || !strings.Contains(res.RetryContext, "Last lines of its output") {
		t.Errorf("result %+v", res)
	}
}

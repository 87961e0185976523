package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/redact"
	"github.com/set-engine/set/engine/runner"
	"github.com/set-engine/set/engine/runner/host"
)

// execInput is an exec gate named name running argv on a repo with one
// change.
func execInput(t *testing.T, name string, argv ...string) (Input, *repo) {
	t.Helper()
	r := newRepo(t, baseFiles)
	r.write("internal/auth/login.go", "package auth\n")
	r.commit()
	in := r.input(config.KindExec, featureChange)
	in.Step.Gate = name
	in.Step.Timeout = config.Duration(time.Minute)
	in.Project.Gates[name] = config.Gate{Kind: config.KindExec, Run: argv}
	in.LogRel = ".set/logs/auth-login/verify-" + name + "-1.log"
	return in, r
}

func TestExecPass(t *testing.T) {
	t.Parallel()
	in, r := execInput(t, "build", "sh", "-c", "pwd; echo built")
	res := runGate(t, in)
	want(t, res, StatusPass, "", "")
	if res.Runner != "host" || res.Base != "host" || res.ExitCode != 0 || res.Kind != config.KindExec || res.Duration <= 0 {
		t.Errorf("result %+v", res)
	}
	if log := readLog(t, res); log != r.dir+"\nbuilt\n" {
		t.Errorf("log %q", log)
	}
}

func TestExecFailRetryContextTail(t *testing.T) {
	t.Parallel()
	in, _ := execInput(t, "test", "sh", "-c", "i=1; while [ $i -le 100 ]; do echo line $i; i=$((i+1)); done; echo boom >&2; exit 2")
	res := runGate(t, in)
	var tail []string
	for i := 42; i <= 100; i++ {
		tail = append(tail, fmt.Sprintf("line %d", i))
	}
	tail = append(tail, "boom")
	want(t, res, StatusFail, "exit code 2",
		"Gate test (`sh -c 'i=1; while [ $i -le 100 ]; do echo line $i; i=$((i+1)); done; echo boom >&2; exit 2'`) failed with exit code 2. Last lines of its output:\n"+
			"```\n"+strings.Join(tail, "\n")+"\n```\n"+
			"Full log: .set/logs/auth-login/verify-test-1.log")
	if res.ExitCode != 2 {
		t.Errorf("exit code %d", res.ExitCode)
	}
	if log := readLog(t, res); !strings.HasPrefix(log, "line 1\nline 2\n") || !strings.HasSuffix(log, "line 100\nboom\n") {
		t.Errorf("the log does not hold the full output:\n%s", log)
	}
}

func TestExecFailNoOutput(t *testing.T) {
	t.Parallel()
	in, _ := execInput(t, "lint", "false")
	want(t, runGate(t, in), StatusFail, "exit code 1",
		"Gate lint (`false`) failed with exit code 1. It printed nothing.\n"+
			"Full log: .set/logs/auth-login/verify-lint-1.log")
}

func TestExecTimeout(t *testing.T) {
	t.Parallel()
	in, _ := execInput(t, "slow", "sh", "-c", "echo waiting; sleep 30")
	in.Step.Timeout = config.Duration(300 * time.Millisecond)
	res := runGate(t, in)
	want(t, res, StatusFail, "timed out after 300ms",
		"Gate slow (`sh -c 'echo waiting; sleep 30'`) timed out after 300ms. Last lines of its output:\n"+
			"```\nwaiting\n```\n"+
			"Full log: .set/logs/auth-login/verify-slow-1.log")
	if res.ExitCode != -1 || !res.TimedOut {
		t.Errorf("exit code %d, timed out %v", res.ExitCode, res.TimedOut)
	}
	if log := readLog(t, res); log != "waiting\n\n[set] timed out after 300ms\n" {
		t.Errorf("log %q", log)
	}
}

func TestExecWarnMode(t *testing.T) {
	t.Parallel()
	in, _ := execInput(t, "lint", "sh", "-c", "echo style; exit 1")
	in.Step.Mode = config.ModeWarn
	res := runGate(t, in)
	if res.Status != StatusWarn || res.Blocking() || res.Mode != config.ModeWarn {
		t.Errorf("status %q, want warn", res.Status)
	}
	if !strings.HasPrefix(res.RetryContext, "Gate lint (`sh -c 'echo style; exit 1'`) failed with exit code 1.") {
		t.Errorf("retry context %q", res.RetryContext)
	}
	// A passing gate in warn mode passes.
	in.Project.Gates["lint"] = config.Gate{Run: []string{"true"}}
	if res := runGate(t, in); res.Status != StatusPass {
		t.Errorf("status %q, want pass", res.Status)
	}
}

func TestExecEnv(t *testing.T) {
	t.Parallel()
	in, _ := execInput(t, "env", "sh", "-c", `echo "$A $B $C|$ANTHROPIC_API_KEY|$GOCACHE|$LC_ALL|$OFF"`)
	g := in.Project.Gates["env"]
	g.Env = map[string]string{"B": "gate-b", "A": "gate-a"}
	in.Project.Gates["env"] = g
	in.Project.PassEnv = map[string]bool{"C": true, "GOCACHE": true, "OFF": false}
	in.Env = []string{"PATH=" + os.Getenv("PATH"), "A=base-a", "C=base-c", "ANTHROPIC_API_KEY=sk-ant-planted", "GOCACHE=/cache", "LC_ALL=C", "OFF=off"}
	res := runGate(t, in)
	if log := readLog(t, res); res.Status != StatusPass || log != "gate-a gate-b base-c||/cache|C|\n" {
		t.Errorf("status %q, log %q", res.Status, log)
	}
	if got := ExecEnv([]string{"X=1", "PATH=/bin", "HOME=/h"}, []string{"X"}, map[string]string{"Z": "3", "Y": "2"}); !slices.Equal(got, []string{"X=1", "PATH=/bin", "HOME=/h", "Y=2", "Z=3"}) {
		t.Errorf("ExecEnv = %q", got)
	}
}

func TestExecLogRedacted(t *testing.T) {
	t.Parallel()
	in, _ := execInput(t, "leak", "sh", "-c", `printf 'key sk-ant-'; printf 'planted-secret-123456\n'; echo "$MY_TOKEN"; exit 1`)
	in.Project.PassEnv = map[string]bool{"MY_TOKEN": true}
	in.Env = []string{"PATH=" + os.Getenv("PATH"), "MY_TOKEN=planted-token-abcdef"}
	in.Redact = redact.New(in.Env, nil)
	res := runGate(t, in)
	if log := readLog(t, res); res.Status != StatusFail || log != "key [REDACTED]\n[REDACTED]\n" {
		t.Errorf("status %q, log %q", res.Status, log)
	}
}

func TestHostEnv(t *testing.T) {
	t.Parallel()
	environ := []string{"PATH=/bin", "HOME=/h", "USER=u", "TMPDIR=/t", "LANG=C.UTF-8", "LC_CTYPE=C", "TERM=dumb",
		"ANTHROPIC_API_KEY=sk-ant-x", "GITHUB_TOKEN=ghp_x", "AWS_SECRET_ACCESS_KEY=x", "GOCACHE=/c", "GOFLAGS=-mod=mod", "EDITOR=vi"}
	want := []string{"PATH=/bin", "HOME=/h", "USER=u", "TMPDIR=/t", "LANG=C.UTF-8", "LC_CTYPE=C", "TERM=dumb", "GOCACHE=/c"}
	if got := HostEnv(environ, []string{"GOCACHE"}); !slices.Equal(got, want) {
		t.Errorf("HostEnv = %q\nwant %q", got, want)
	}
}

func TestExecCommandNotFound(t *testing.T) {
	t.Parallel()
	in, _ := execInput(t, "tool", "set-no-such-command-xyz", "--flag")
	res := runGate(t, in)
	if res.Status != StatusError || res.Err == nil || res.RetryContext != "" {
		t.Fatalf("result %+v, want an error", res)
	}
	if !strings.HasPrefix(res.Reason, "gate \"tool\" (`set-no-such-command-xyz --flag`): cannot start") {
		t.Errorf("reason %q", res.Reason)
	}
	if log := readLog(t, res); !strings.Contains(log, "[set] could not run: cannot start") {
		t.Errorf("log %q", log)
	}
}

func TestExecErrorsBeforeRunning(t *testing.T) {
	t.Parallel()
	in, _ := execInput(t, "test", "true")
	tests := []struct {
		name    string
		edit    func(*Input) map[string]runner.Runner
		wantErr string
	}{
		{"missing runner", func(in *Input) map[string]runner.Runner {
			in.Step.Runner = "dagger"
			return map[string]runner.Runner{"host": host.New()}
		}, `gate "test": no runner "dagger" is available (have: host)`},
		{"undefined gate", func(in *Input) map[string]runner.Runner {
			in.Step.Gate = "nope"
			return nil
		}, `gate "nope" is not defined in the project`},
		{"empty command", func(in *Input) map[string]runner.Runner {
			in.Project.Gates["test"] = config.Gate{}
			return nil
		}, `exec gate "test" has no command (run is empty)`},
		{"unknown kind", func(in *Input) map[string]runner.Runner {
			in.Step.Kind = "lint"
			return nil
		}, `unknown gate kind "lint"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := in
			in.Project = testProject()
			in.Project.Gates["test"] = config.Gate{Run: []string{"true"}}
			runners := tt.edit(&in)
			res := Run(context.Background(), in, runners)
			if res.Status != StatusError || res.Err == nil || res.Err.Error() != tt.wantErr || res.Reason != tt.wantErr || res.RetryContext != "" {
				t.Errorf("result %+v, want error %q", res, tt.wantErr)
			}
			if log := readLog(t, res); !strings.Contains(log, "result: error\n") || !strings.Contains(log, tt.wantErr) {
				t.Errorf("log %q", log)
			}
		})
	}
}

func TestExecCanceled(t *testing.T) {
	t.Parallel()
	in, _ := execInput(t, "test", "sleep", "30")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res := Run(ctx, in, map[string]runner.Runner{"host": host.New()})
	if res.Status != StatusError || !errors.Is(res.Err, context.Canceled) {
		t.Errorf("result %+v, want a cancelled error", res)
	}
}

// fakeRunner records the Exec it got and returns a fixed result.
type fakeRunner struct {
	got runner.Exec
	res runner.ExecResult
}

func (f *fakeRunner) Name() string { return "dagger" }

func (f *fakeRunner) Exec(_ context.Context, e runner.Exec) (runner.ExecResult, error) {
	f.got = e
	return f.res, nil
}

func TestExecThroughOtherRunner(t *testing.T) {
	t.Parallel()
	in, r := execInput(t, "test", "go", "test", "./...")
	in.Step.Runner = "dagger"
	in.Env = []string{"HOME=/root"}
	fake := &fakeRunner{res: runner.ExecResult{ExitCode: 0, Base: "golang:1.26", Duration: time.Second}}
	res := Run(context.Background(), in, map[string]runner.Runner{"dagger": fake})
	want(t, res, StatusPass, "", "")
	if res.Runner != "dagger" || res.Base != "golang:1.26" || res.Duration != time.Second {
		t.Errorf("result %+v", res)
	}
	if !slices.Equal(fake.got.Argv, []string{"go", "test", "./..."}) || fake.got.Dir != r.dir ||
		!slices.Equal(fake.got.Env, []string{"HOME=/root", BaseVar + "=" + in.Base}) || fake.got.Vars[BaseVar] != in.Base ||
		fake.got.Timeout != time.Minute || fake.got.Log == nil {
		t.Errorf("exec %+v", fake.got)
	}
}

func TestOutputTail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, out, want string
	}{
		{"empty", "", ""},
		{"trailing newlines", "a\nb\n\n", "a\nb"},
		{"colour", "\x1b[31mFAIL\x1b[0m x\n", "FAIL x"},
		{"carriage return", "progress 10%\rprogress 100%\r\ndone\r\n", "progress 100%\ndone"},
		{"invalid utf-8", "bad \xff byte\n", "bad \uFFFD byte"},
	}
	for _, tt := range tests {
		if got := outputTail([]byte(tt.out)); got != tt.want {
			t.Errorf("%s: outputTail = %q, want %q", tt.name, got, tt.want)
		}
	}
	// Long lines: 8 KiB at most, starting at a line boundary.
	long := strings.Repeat(strings.Repeat("x", 999)+"\n", 20) + "end\n"
	got := outputTail([]byte(long))
	if len(got) > retryTailBytes || !strings.HasPrefix(got, "xxx") || !strings.HasSuffix(got, "\nend") || strings.Count(got, "\n") != 8 {
		t.Errorf("long tail: %d bytes, %d lines", len(got), strings.Count(got, "\n")+1)
	}
}

func TestFenceFor(t *testing.T) {
	t.Parallel()
	if got := fenceFor("no ticks"); got != "```" {
		t.Errorf("got %q", got)
	}
	if got := fenceFor("a ```` b ` c"); got != "`````" {
		t.Errorf("got %q", got)
	}
}

func TestCommandLineQuotes(t *testing.T) {
	t.Parallel()
	got := CommandLine([]string{"go", "test", "-run", "Test A", "it's", "", "./..."})
	if want := `go test -run 'Test A' 'it'\''s' '' ./...`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

package host

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/proc"
	"github.com/set-engine/set/engine/runner"
)

func run(t *testing.T, e runner.Exec) (runner.ExecResult, error) {
	t.Helper()
	if e.Dir == "" {
		e.Dir = t.TempDir()
	}
	return New().Exec(context.Background(), e)
}

func TestName(t *testing.T) {
	if got := New().Name(); got != "host" {
		t.Errorf("Name() = %q", got)
	}
}

func TestExitCodes(t *testing.T) {
	for _, code := range []int{0, 3} {
		var log bytes.Buffer
		res, err := run(t, runner.Exec{
			Argv: []string{"sh", "-c", "echo out; echo err >&2; exit \"$1\"", "sh", string(rune('0' + code))},
			Log:  &log,
		})
		if err != nil {
			t.Fatalf("exit %d: %v", code, err)
		}
		if res.ExitCode != code || res.TimedOut || res.Base != "host" {
			t.Errorf("exit %d: result %+v", code, res)
		}
		if got := string(res.Output); got != "out\nerr\n" {
			t.Errorf("exit %d: output %q", code, got)
		}
		if got := log.String(); got != "out\nerr\n" {
			t.Errorf("exit %d: log %q", code, got)
		}
	}
}

func TestDirAndEnv(t *testing.T) {
	dir := t.TempDir()
	res, err := run(t, runner.Exec{
		Argv: []string{"sh", "-c", "pwd; echo \"$GATE_VAR\""},
		Dir:  dir,
		Env:  []string{"GATE_VAR=hello", "PATH=/usr/bin:/bin"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Output), dir+"\nhello\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
}

// TestOutputTailBounded: the log gets everything, the result only the last
// OutputCap bytes.
func TestOutputTailBounded(t *testing.T) {
	var log bytes.Buffer
	// 20000 lines "line N": about 170 KiB.
	res, err := run(t, runner.Exec{
		Argv: []string{"sh", "-c", "i=0; while [ $i -lt 20000 ]; do echo line $i; i=$((i+1)); done"},
		Log:  &log,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Output) != runner.OutputCap {
		t.Errorf("output holds %d bytes, want %d", len(res.Output), runner.OutputCap)
	}
	if !strings.HasSuffix(string(res.Output), "line 19999\n") {
		t.Errorf("output does not end with the last line: %q", res.Output[len(res.Output)-40:])
	}
	if !bytes.HasSuffix(log.Bytes(), res.Output) || !strings.HasPrefix(log.String(), "line 0\n") {
		t.Error("the log does not hold the full output")
	}
}

func TestTimeout(t *testing.T) {
	start := time.Now()
	res, err := run(t, runner.Exec{
		Argv:    []string{"sh", "-c", "echo started; sleep 30"},
		Timeout: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode != -1 {
		t.Errorf("result %+v, want a timeout", res)
	}
	if string(res.Output) != "started\n" {
		t.Errorf("output %q", res.Output)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestCommandNotFound(t *testing.T) {
	_, err := run(t, runner.Exec{Argv: []string{"set-no-such-command-xyz"}})
	if !errors.Is(err, proc.ErrStart) {
		t.Errorf("err = %v, want proc.ErrStart", err)
	}
}

func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res, err := New().Exec(ctx, runner.Exec{Argv: []string{"sleep", "30"}, Dir: t.TempDir()})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if res.ExitCode != -1 {
		t.Errorf("exit code %d, want -1", res.ExitCode)
	}
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("disk full")
}

// TestLogWriteError: a failing log neither kills the command nor loses
// the tail; the error is reported after the run.
func TestLogWriteError(t *testing.T) {
	log := &failingWriter{}
	res, err := run(t, runner.Exec{
		Argv: []string{"sh", "-c", "echo one; echo two; exit 0"},
		Log:  log,
	})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("err = %v, want the log error", err)
	}
	if res.ExitCode != 0 || string(res.Output) != "one\ntwo\n" {
		t.Errorf("result %+v", res)
	}
	if log.n != 1 {
		t.Errorf("log written %d times after failing, want 1", log.n)
	}
}

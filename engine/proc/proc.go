// Package proc runs the child processes of a run (agents and host gates).
// Every child gets its own process group, so that a timeout, a stall or a
// cancelled context kills the whole tree it started, not only its leader;
// and a PID file names that group until the child ends, so that a set
// started after a crash can kill what the crashed one left running.
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Spec describes one child process (spec.Spec is the product spec,
// another thing).
type Spec struct {
	Argv []string
	Dir  string
	// Env is the complete environment; nil means the parent's.
	Env    []string
	Stdin  io.Reader // nil means /dev/null
	Stdout io.Writer // nil discards
	Stderr io.Writer // nil discards
	// Timeout bounds the whole run; zero means none.
	Timeout time.Duration
	// OnOutput, if set, is called (from the copying goroutines) each time
	// the child writes.
	OnOutput func()
}

// Outcome is how a child ended.
type Outcome struct {
	// ExitCode is the child's exit status; -1 when it was killed by a
	// signal (including our own kill on timeout or cancel).
	ExitCode int
	Duration time.Duration
	TimedOut bool
	// Canceled is set when ctx ended before the child did.
	Canceled bool
	// Signal names the signal that ended the child ("SIGKILL",
	// "SIGTERM", …), ours or anyone's; "" when it exited by itself, with
	// ExitCode.
	Signal string
}

// ErrStart wraps a failure to start the child (command not found,
// directory missing): the command never ran.
var ErrStart = errors.New("cannot start")

// killGrace is how long a process group gets between SIGTERM and SIGKILL.
const killGrace = 2 * time.Second

// outputGrace is how long Run still copies output once the child has
// exited: a process it left running may hold its stdout, and Run must not
// wait for that process to end.
const outputGrace = time.Second

// Run starts the child and waits for it. The returned error is non-nil
// only when the child could not be started (it wraps ErrStart); a child
// that ran and failed reports it in Outcome.
func Run(ctx context.Context, s Spec) (Outcome, error) {
	if len(s.Argv) == 0 {
		return Outcome{}, fmt.Errorf("%w: empty command", ErrStart)
	}
	cmd := exec.Command(s.Argv[0], s.Argv[1:]...)
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	cmd.Stdin = s.Stdin
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = outputGrace
	DieWithParent(cmd)

	touch := func() {
		if s.OnOutput != nil {
			s.OnOutput()
		}
	}
	cmd.Stdout = &activityWriter{w: orDiscard(s.Stdout), touch: touch}
	cmd.Stderr = &activityWriter{w: orDiscard(s.Stderr), touch: touch}
	if s.Stdout != nil && s.Stdout == s.Stderr {
		// One writer for both streams keeps their interleaving and avoids
		// concurrent writes to it.
		cmd.Stderr = cmd.Stdout
	}

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Outcome{ExitCode: -1}, fmt.Errorf("%w %s: %v", ErrStart, s.Argv[0], err)
	}
	if dir := pidDir(ctx); dir != "" {
		if marker, err := writeRecord(dir, cmd.Process.Pid, s.Argv); err == nil {
			defer os.Remove(marker)
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var timeout <-chan time.Time
	if s.Timeout > 0 {
		t := time.NewTimer(s.Timeout)
		defer t.Stop()
		timeout = t.C
	}

	var out Outcome
	canceled := ctx.Done()
	for {
		select {
		case err := <-done:
			out.Duration = time.Since(start)
			// What the child left running in its group (a server started
			// in the background, a stray job) ends with it.
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			out.ExitCode = ExitCode(err)
			out.Signal = Signal(cmd.ProcessState)
			if errors.Is(err, exec.ErrWaitDelay) {
				out.ExitCode = cmd.ProcessState.ExitCode()
			}
			if out.TimedOut || out.Canceled {
				out.ExitCode = -1
			}
			return out, nil
		case <-canceled:
			out.Canceled, canceled = true, nil
			kill(cmd, killGrace, killNow(ctx))
		case <-timeout:
			out.TimedOut, timeout = true, nil
			kill(cmd, killGrace, nil)
		}
	}
}

// kill ends the child's process group: SIGTERM, then SIGKILL once grace
// has passed or now is closed, whichever comes first (a nil now never
// is). The group is signalled by the negative PID, so grandchildren go
// too.
func kill(cmd *exec.Cmd, grace time.Duration, now <-chan struct{}) {
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	go func() {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C:
		case <-now:
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}()
}

// Getenv is the value of key in the environment list env (KEY=VALUE
// entries, as Spec.Env) as a child started with it sees it: the last
// entry wins; "" when env has none.
func Getenv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// ExitCode is the exit status of a command whose Run or Wait returned
// err: 0 for nil, -1 when it did not exit by itself (a signal killed it,
// or it never started).
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1
		}
		return ee.ExitCode()
	}
	return -1
}

// Signal names the signal that ended the process of state ("SIGKILL"),
// "" when it exited by itself or did not end.
func Signal(state *os.ProcessState) string {
	if state == nil {
		return ""
	}
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return ""
	}
	if name := unix.SignalName(ws.Signal()); name != "" {
		return name
	}
	return fmt.Sprintf("signal %d", int(ws.Signal()))
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

type activityWriter struct {
	w     io.Writer
	touch func()
}

func (a *activityWriter) Write(p []byte) (int, error) {
	a.touch()
	return a.w.Write(p)
}

type killNowKey struct{}

// WithKillNow returns a context under which a child that Run is stopping
// because ctx ended is killed with SIGKILL as soon as now is closed,
// without the grace it otherwise gets after SIGTERM. It serves a second
// Ctrl-C: the first ends the context, the second should not wait.
func WithKillNow(ctx context.Context, now <-chan struct{}) context.Context {
	return context.WithValue(ctx, killNowKey{}, now)
}

func killNow(ctx context.Context) <-chan struct{} {
	now, _ := ctx.Value(killNowKey{}).(<-chan struct{})
	return now
}

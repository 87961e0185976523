package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
)

// TestInterruptsLadder: the first signal ends the context and sets the
// exit status, the second kills children at once, the third exits.
func TestInterruptsLadder(t *testing.T) {
	var stderr bytes.Buffer
	exited := 0
	in := &interrupts{stderr: &stderr, killNow: make(chan struct{}), exit: func(code int) { exited = code }}
	in.ctx, in.cancel = context.WithCancel(context.Background())
	if in.interrupted() || in.exitCode() != 0 {
		t.Fatal("interrupted before any signal")
	}
	in.runStarts()

	in.handle("apply", syscall.SIGTERM)
	if in.ctx.Err() == nil {
		t.Error("the first signal did not end the context")
	}
	select {
	case <-in.killNow:
		t.Error("the first signal already kills children at once")
	default:
	}
	if got := in.exitCode(); got != 143 {
		t.Errorf("exit status after SIGTERM = %d, want 143", got)
	}

	in.handle("apply", syscall.SIGINT)
	select {
	case <-in.killNow:
	default:
		t.Error("the second signal does not kill children at once")
	}
	if got := in.exitCode(); got != 143 {
		t.Errorf("exit status = %d after SIGTERM then SIGINT, want 143 (the first signal's)", got)
	}
	if exited != 0 {
		t.Fatal("exited after two signals")
	}

	in.handle("apply", syscall.SIGINT)
	if exited != 143 {
		t.Errorf("third signal: exit(%d), want exit(143)", exited)
	}
	want := []string{
		"setctl apply: terminated: stopping; agents and gates are ended and the run recorded as interrupted (interrupt again to kill them at once)",
		"setctl apply: killing agents and gates now; interrupt once more to exit without waiting",
		"setctl apply: exiting without waiting; every event recorded so far is kept: run `setctl apply` to continue",
	}
	if got := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr.String(), strings.Join(want, "\n"))
	}
}

// brokenPipe fails every write with EPIPE after the first n bytes.
type brokenPipe struct {
	bytes.Buffer
	room int
}

func (b *brokenPipe) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.room {
		return 0, syscall.EPIPE
	}
	return b.Buffer.Write(p)
}

func TestPipeWriter(t *testing.T) {
	dst := &brokenPipe{room: 6}
	w := &pipeWriter{w: dst}
	for _, s := range []string{"line1\n", "line2\n", "line3\n"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Errorf("Write(%q) = %d, %v; want %d, nil: a closed pipe ends the output silently", s, n, err, len(s))
		}
	}
	if dst.String() != "line1\n" {
		t.Errorf("written %q, want only the first line", dst.String())
	}

	other := errors.New("disk full")
	w = &pipeWriter{w: errWriter{other}}
	if _, err := w.Write([]byte("x")); !errors.Is(err, other) {
		t.Errorf("Write = %v, want %v: only EPIPE is swallowed", err, other)
	}
}

type errWriter struct{ err error }

func (e errWriter) Write([]byte) (int, error) { return 0, e.err }

// TestInterruptBeforeTheRun: before the run starts (at the confirmation
// prompt) a signal stops the command, which says so itself.
func TestInterruptBeforeTheRun(t *testing.T) {
	var stderr bytes.Buffer
	in := &interrupts{stderr: &stderr, killNow: make(chan struct{}), exit: func(int) { t.Fatal("exited") }}
	in.ctx, in.cancel = context.WithCancel(context.Background())
	in.handle("apply", syscall.SIGINT)
	if in.ctx.Err() == nil || in.exitCode() != 130 {
		t.Errorf("after SIGINT: context %v, exit status %d; want ended, 130", in.ctx.Err(), in.exitCode())
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr = %q, want nothing", stderr.String())
	}
	// A second one: no agent or gate runs, so none is killed.
	in.handle("apply", syscall.SIGINT)
	if want := "setctl apply: stopping before any agent or gate started; interrupt once more to exit without waiting\n"; stderr.String() != want {
		t.Errorf("stderr = %q, want %q", stderr.String(), want)
	}
}

// TestInterruptNoticesGoToSay: once a command names where its notices go
// (apply --json: diagnostics on stdout), none reaches stderr.
func TestInterruptNoticesGoToSay(t *testing.T) {
	var stderr bytes.Buffer
	var said []string
	in := &interrupts{stderr: &stderr, killNow: make(chan struct{}), exit: func(int) {}}
	in.ctx, in.cancel = context.WithCancel(context.Background())
	in.sayWith(func(msg string) { said = append(said, msg) })
	in.runStarts()
	in.handle("apply", syscall.SIGTERM)
	in.handle("apply", syscall.SIGINT)
	want := []string{
		"terminated: stopping; agents and gates are ended and the run recorded as interrupted (interrupt again to kill them at once)",
		"killing agents and gates now; interrupt once more to exit without waiting",
	}
	if strings.Join(said, "\n") != strings.Join(want, "\n") || stderr.Len() > 0 {
		t.Errorf("said %q, stderr %q; want %q and nothing on stderr", said, stderr.String(), want)
	}
}

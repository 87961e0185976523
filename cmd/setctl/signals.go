package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/set-engine/set/engine/proc"
)

// interrupts is how a run answers SIGINT (Ctrl-C), SIGTERM and SIGPIPE.
//
//   - The first SIGINT or SIGTERM ends ctx: the orchestrator stops agents
//     and gates (SIGTERM to their process groups, SIGKILL after a grace),
//     records the run as interrupted and releases the lock; before the
//     run (at the confirmation prompt), the command just stops. exitCode
//     is then 128 + the signal's number: 130 for SIGINT, 143 for SIGTERM.
//   - The second kills the agents' and gates' process groups at once,
//     without the grace; the run is still recorded as interrupted.
//   - The third exits at once. Every journal event is on disk when it is
//     appended, so nothing recorded is lost; the next `setctl apply` ends
//     leftover agents and gates and continues.
//
// SIGPIPE is caught and dropped, so that a write to a closed stdout fails
// with EPIPE (see pipeWriter) instead of killing the process. Catching,
// rather than ignoring, leaves SIGPIPE at its default in agents and gates.
type interrupts struct {
	ctx     context.Context
	cancel  context.CancelFunc
	signals chan os.Signal
	done    chan struct{}
	stopped chan struct{}
	stderr  io.Writer
	killNow chan struct{}
	exit    func(code int)

	mu      sync.Mutex
	first   syscall.Signal // 0 until a signal came
	count   int
	running bool // the run has started: a signal stops it
	// say takes a notice, if set (see sayWith); else it goes to stderr.
	say func(msg string)
}

// watchInterrupts starts answering signals for the command name until
// stop. Its messages go to stderr.
func watchInterrupts(name string, stderr io.Writer) *interrupts {
	in := &interrupts{
		signals: make(chan os.Signal, 4),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
		stderr:  stderr,
		killNow: make(chan struct{}),
		exit:    os.Exit,
	}
	ctx := proc.WithKillNow(context.Background(), in.killNow)
	in.ctx, in.cancel = context.WithCancel(ctx)
	signal.Notify(in.signals, os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE)
	go in.loop(name)
	return in
}

func (in *interrupts) loop(name string) {
	defer close(in.stopped)
	for {
		select {
		case <-in.done:
			return
		case s := <-in.signals:
			sig, _ := s.(syscall.Signal)
			if sig == syscall.SIGPIPE {
				continue
			}
			in.handle(name, sig)
		}
	}
}

// handle answers one SIGINT or SIGTERM.
func (in *interrupts) handle(name string, sig syscall.Signal) {
	in.mu.Lock()
	if in.count == 0 {
		in.first = sig
	}
	in.count++
	count, code := in.count, 128+int(in.first)
	in.mu.Unlock()
	switch count {
	case 1:
		what := "interrupted"
		if sig == syscall.SIGTERM {
			what = "terminated"
		}
		if !in.isRunning() {
			// The command says how it stopped.
			in.cancel()
			return
		}
		in.tell(name, "%s: stopping; agents and gates are ended and the run recorded as interrupted (interrupt again to kill them at once)", what)
		in.cancel()
	case 2:
		if in.isRunning() {
			in.tell(name, "killing agents and gates now; interrupt once more to exit without waiting")
		} else {
			in.tell(name, "stopping before any agent or gate started; interrupt once more to exit without waiting")
		}
		close(in.killNow)
	default:
		in.tell(name, "exiting without waiting; every event recorded so far is kept: run `setctl %s` to continue", name)
		in.exit(code)
	}
}

// tell gives one notice of the command name to say, or else prints it to
// stderr as "setctl NAME: MESSAGE".
func (in *interrupts) tell(name, format string, args ...any) {
	in.mu.Lock()
	say := in.say
	in.mu.Unlock()
	msg := fmt.Sprintf(format, args...)
	if say == nil {
		fmt.Fprintf(in.stderr, "setctl %s: %s\n", name, msg)
		return
	}
	say(msg)
}

// sayWith makes say take in's notices, each one message without the
// command's name: a live view prints them above its block, apply --json
// writes them as diagnostics.
func (in *interrupts) sayWith(say func(msg string)) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.say = say
}

// runStarts tells in that the run starts: from now on, a signal stops a
// run and says so.
func (in *interrupts) runStarts() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.running = true
}

func (in *interrupts) isRunning() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.running
}

// interrupted reports whether a SIGINT or SIGTERM came.
func (in *interrupts) interrupted() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.count > 0
}

// exitCode is 128 + the number of the first SIGINT or SIGTERM, or 0 when
// none came.
func (in *interrupts) exitCode() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.count == 0 {
		return 0
	}
	return 128 + int(in.first)
}

// stop stops answering signals: from then on they have their default
// effect again.
func (in *interrupts) stop() {
	signal.Stop(in.signals)
	close(in.done)
	<-in.stopped
	in.cancel()
}

// pipeWriter writes to w until a write fails because nobody reads any
// more (EPIPE, as when `setctl apply | head` has its lines); from then on
// it drops what it is given and reports success. A closed stdout ends the
// output of a run, never the run. It is safe for concurrent use.
type pipeWriter struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

func (p *pipeWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return len(b), nil
	}
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		p.closed = true
		return len(b), nil
	}
	return n, err
}

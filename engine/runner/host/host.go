// Package host runs gate commands as processes on the engine's machine, in
// the change's worktree. Each command gets its own process group (through
// engine/proc), so a timeout kills everything it started.
package host

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/set-engine/set/engine/proc"
	"github.com/set-engine/set/engine/runner"
)

// Name is the host runner's name, and the Base of every result it returns.
const Name = "host"

// New returns the host runner.
func New() runner.Runner { return hostRunner{} }

type hostRunner struct{}

func (hostRunner) Name() string { return Name }

// Exec runs e.Argv in e.Dir. The full combined output goes to e.Log and its
// last runner.OutputCap bytes to the result. It returns an error when the
// command cannot start, when ctx is cancelled before the command ends (the
// result then says how far it got), or when writing e.Log fails (the result
// is complete).
func (hostRunner) Exec(ctx context.Context, e runner.Exec) (runner.ExecResult, error) {
	tail := runner.NewTail(runner.OutputCap)
	out := &teeWriter{tail: tail, log: e.Log}
	o, err := proc.Run(ctx, proc.Spec{
		Argv:    e.Argv,
		Dir:     e.Dir,
		Env:     e.Env,
		Stdout:  out,
		Stderr:  out,
		Timeout: e.Timeout,
	})
	res := runner.ExecResult{
		ExitCode: o.ExitCode,
		Output:   tail.Bytes(),
		Duration: o.Duration,
		TimedOut: o.TimedOut,
		Base:     Name,
	}
	switch {
	case err != nil:
		return res, err
	case o.Canceled:
		return res, fmt.Errorf("%s: %w", e.Argv[0], context.Cause(ctx))
	case out.err != nil:
		return res, fmt.Errorf("writing the log of %s: %w", e.Argv[0], out.err)
	}
	return res, nil
}

// teeWriter copies the output to the tail and the log. It never fails: a
// log that cannot be written must not make the child die of a broken pipe,
// so the first log error is kept and reported after the run.
type teeWriter struct {
	mu   sync.Mutex
	tail *runner.Tail
	log  io.Writer
	err  error
}

func (w *teeWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tail.Write(p)
	if w.log != nil && w.err == nil {
		_, w.err = w.log.Write(p)
	}
	return len(p), nil
}

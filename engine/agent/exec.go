package agent

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/set-engine/set/engine/proc"
)

// Exec runs any command as the agent. Argv is a template: {prompt_file},
// {worktree}, {change} and {iteration} are replaced inside every element
// (no shell is involved, so the values need no quoting). The command runs
// in the worktree with the prompt on stdin and req.Env as its
// environment; its stdout and stderr go to req.Log. Done is exit code 0.
// Exec reports no model calls; Summary is the tail of its output.
// (runner.Exec is one gate command, another thing.)
type Exec struct {
	Argv []string
}

// Name is "exec".
func (e *Exec) Name() string { return "exec" }

func (e *Exec) argv(req Request) []string {
	r := strings.NewReplacer(
		"{prompt_file}", req.PromptFile,
		"{worktree}", req.Worktree,
		"{change}", req.Change,
		"{iteration}", strconv.Itoa(req.Iteration),
	)
	out := make([]string, len(e.Argv))
	for i, a := range e.Argv {
		out[i] = r.Replace(a)
	}
	return out
}

// Run runs one iteration.
func (e *Exec) Run(ctx context.Context, req Request) (Result, error) {
	start := time.Now()
	tail := &tailWriter{max: maxSummary}
	log := newSyncWriter(io.MultiWriter(newSyncWriter(req.Log), tail))
	out, err := proc.Run(ctx, proc.Spec{
		Argv:     e.argv(req),
		Dir:      req.Worktree,
		Env:      req.Env,
		Stdin:    strings.NewReader(req.Prompt),
		Stdout:   log,
		Stderr:   log,
		OnOutput: req.OnActivity,
	})
	res := Result{
		SessionID: req.SessionID,
		ExitCode:  out.ExitCode,
		Signal:    out.Signal,
		Duration:  time.Since(start),
	}
	if err != nil {
		return res, fmt.Errorf("agent exec: %w", err)
	}
	res.Summary = truncate(tail.String(), maxSummary)
	if out.Canceled {
		return res, runErr(ctx, "exec")
	}
	res.Done = out.ExitCode == 0
	return res, nil
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// String is the kept tail, starting at a rune boundary.
func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	for len(b) > 0 && b[0]&0xC0 == 0x80 {
		b = b[1:]
	}
	return string(b)
}

package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/set-engine/set/engine/proc"
)

// lineHandler consumes one line of a JSONL stream; n is its 1-based line
// number. Blank lines never reach it.
type lineHandler func(n int, line []byte) error

// lineSplitter is the stdout of a streaming agent: it copies every byte to
// the log and hands complete lines to a handler. After the handler's first
// error it only copies, and err keeps that first error.
//
// Invariant: only one goroutine writes to it (proc's stdout copier), and
// it is read (flush, err) only after proc.Run has returned, which waits
// for the copier to finish.
type lineSplitter struct {
	log    io.Writer
	handle lineHandler
	buf    []byte
	n      int
	err    error
}

func (s *lineSplitter) Write(p []byte) (int, error) {
	_, _ = s.log.Write(p)
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			break
		}
		s.line(s.buf[:i])
		s.buf = s.buf[i+1:]
	}
	// Reclaim the consumed prefix so a long stream does not pin memory.
	if len(s.buf) == 0 {
		s.buf = nil
	}
	return len(p), nil
}

// flush handles a last line that had no newline.
func (s *lineSplitter) flush() {
	if len(s.buf) > 0 {
		s.line(s.buf)
		s.buf = nil
	}
}

func (s *lineSplitter) line(l []byte) {
	s.n++
	if s.err != nil {
		return
	}
	l = bytes.TrimSpace(l)
	if len(l) == 0 {
		return
	}
	s.err = s.handle(s.n, l)
}

// decodeLine unmarshals one JSON object line into v. A line that is not
// a JSON object is reported as "<who> stream line N: invalid JSON: <the
// first 200 bytes>".
func decodeLine(who string, n int, line []byte, v any) error {
	if len(line) == 0 || line[0] != '{' || !json.Valid(line) {
		return fmt.Errorf("%s stream line %d: invalid JSON: %s", who, n, head(line, 200))
	}
	if err := json.Unmarshal(line, v); err != nil {
		return fmt.Errorf("%s stream line %d: %v: %s", who, n, err, head(line, 200))
	}
	return nil
}

// head is the first n bytes of b as a string.
func head(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}

// streamRun is one run of a CLI whose stdout is a JSONL stream.
type streamRun struct {
	out   proc.Outcome
	split *lineSplitter
}

// runStream runs argv in req.Worktree with stdin from /dev/null, stdout
// parsed line by line by handle and copied to req.Log with stderr. The
// error is non-nil only when the command could not start.
func runStream(ctx context.Context, req Request, argv, envList []string, handle lineHandler) (streamRun, error) {
	log := newSyncWriter(req.Log)
	split := &lineSplitter{log: log, handle: handle}
	out, err := proc.Run(ctx, proc.Spec{
		Argv:     argv,
		Dir:      req.Worktree,
		Env:      envList,
		Stdout:   split,
		Stderr:   log,
		OnOutput: req.OnActivity,
	})
	if err != nil {
		return streamRun{}, err
	}
	split.flush()
	return streamRun{out: out, split: split}, nil
}

// settle records how the stream's process ended in res and decides the
// endings every streaming adapter shares: cancelled (an error), an
// unreadable stream (an error). A success the stream already reported
// stays in res.Done however the process ended, except when the stream
// could not be read. It reports
// whether it decided; if not, the adapter judges the stream.
func (run streamRun) settle(ctx context.Context, name string, res *Result, start time.Time) (bool, error) {
	res.ExitCode = run.out.ExitCode
	res.Signal = run.out.Signal
	res.Duration = time.Since(start)
	switch {
	case run.out.Canceled:
		return true, runErr(ctx, name)
	case run.split.err != nil:
		res.Done = false
		return true, run.split.err
	}
	return false, nil
}

// runningCommands are the shell commands an agent started and has not
// ended, oldest first, as its stream tells them; the latest one is the
// command the agent runs now, which onCommand hears of at each change
// (Request.OnCommand; nil: nobody listens).
type runningCommands struct {
	running   []runningCommand
	onCommand func(string)
}

type runningCommand struct{ id, line string }

// start records that command id, running line, started.
func (c *runningCommands) start(id, line string) {
	if line == "" || slices.ContainsFunc(c.running, func(r runningCommand) bool { return r.id == id }) {
		return
	}
	c.running = append(c.running, runningCommand{id, line})
	c.report()
}

// end records that command id ended; an id never started is ignored.
func (c *runningCommands) end(id string) {
	i := slices.IndexFunc(c.running, func(r runningCommand) bool { return r.id == id })
	if i < 0 {
		return
	}
	c.running = slices.Delete(c.running, i, i+1)
	c.report()
}

// report tells onCommand the command that runs now: the latest one still
// running, or "" when none is.
func (c *runningCommands) report() {
	if c.onCommand == nil {
		return
	}
	if len(c.running) == 0 {
		c.onCommand("")
		return
	}
	c.onCommand(c.running[len(c.running)-1].line)
}

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
)

func logsCommand() command {
	return command{
		name:    "logs",
		summary: "print the output of a change's agent or gate",
		arg:     "change",
		usage: `Usage: setctl logs CHANGE [--run ID] [--gate GATE | --agent] [--iteration N] [--follow]

Logs prints the log of one of a change's agent iterations or gate runs
(under .set/logs/CHANGE/) to stdout, as it is, and says which log on
stderr. Which one:

  (nothing)     what runs for the change now; else its latest log
  --agent       its agent's latest iteration, or iteration N
  --gate GATE   gate GATE's latest run, in either stage
                (--gate integration/test for one stage), or its attempt
                N: 1 for the first run, 2 after the first retry

Iterations and attempts are numbered across every setctl apply of the
project, so N names one log even after a new apply retried the change:
logs looks among the logs of every run. --run ID looks only among the
logs that run ID's events name (setctl runs lists the runs), with the
change as that run left it.

--follow prints the log as it grows, and ends when the agent iteration or
the gate ends, or the run does (its RUN_FINISHED, or its setctl apply
gone); a log of what already ended is printed once.

Examples:
  setctl logs greet
  setctl logs greet --follow
  setctl logs greet --gate test
  setctl logs greet --gate integration/test --iteration 2
  setctl logs greet --agent --iteration 1 | tail -20
  setctl logs greet --run 20261127T075754Z --gate test
`,
		run: runLogs,
	}
}

func runLogs(e *env, args []string) int {
	c := logsCommand()
	fs := c.flagSet(e)
	gate := fs.String("gate", "", "the log of gate `GATE` (or STAGE/GATE)")
	agentLog := fs.Bool("agent", false, "the log of the change's agent")
	iteration := fs.Int("iteration", 0, "the agent's iteration `N`, or the gate's attempt N (default: the latest)")
	follow := fs.Bool("follow", false, "print the log as it grows, until its agent iteration or gate ends")
	runID := fs.String("run", "", "only the logs of run `ID` (default: every run's)")
	if code, done := c.parse(e, fs, args); done {
		return code
	}
	switch {
	case fs.NArg() == 0:
		return c.usageError(e, "which change? setctl logs CHANGE")
	case *gate != "" && *agentLog:
		return c.usageError(e, "--gate and --agent name different logs; give one")
	case fs.Changed("iteration") && *gate == "" && !*agentLog:
		return c.usageError(e, "--iteration applies to --gate or --agent")
	case fs.Changed("iteration") && *iteration < 1:
		return c.usageError(e, "--iteration counts from 1, not %d", *iteration)
	}
	v, err := readRun(e, *runID)
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	ch, err := v.change(fs.Arg(0))
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	events := ofChange(v.Journal, ch.Name)
	if *runID != "" {
		events = v.own(ch.Name)
	}
	logs, err := state.Logs(events)
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	ref, err := state.PickLog(ch, v.Live.Held, logs, state.LogQuery{Gate: *gate, Agent: *agentLog, N: *iteration})
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	fmt.Fprintf(e.stderr, "==> %s (%s) <==\n", ref.Path, ref)
	path := filepath.Join(v.layout.Root(), filepath.FromSlash(ref.Path))
	if !*follow || ref.Result != "" || !v.Live.Held {
		if err := copyLog(e.stdout, path); err != nil {
			return e.errorf(c.name, "%v", err)
		}
		return exitOK
	}
	if err := followLog(e.stdout, v, path, ref); err != nil {
		return e.errorf(c.name, "%v", err)
	}
	return exitOK
}

// copyLog writes the log at path to w.
func copyLog(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("the log cannot be read: %w", err)
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// logPoll is how often a followed log is read for what it gained.
const logPoll = 200 * time.Millisecond

// followLog writes the log at path, of ref, to w as it grows, until the
// journal records the end of its agent iteration or gate run, or the run
// ends.
func followLog(w io.Writer, v *runView, path string, ref state.Log) error {
	done := make(chan error, 1)
	go func() {
		done <- followRun(v, v.State.LastSeq, func(e journal.Event) bool {
			logs, _ := state.Logs([]journal.Event{e}) // an event that does not decode ends no log
			for _, l := range logs {
				if l.Path == ref.Path && l.Result != "" {
					return true
				}
			}
			return false
		})
	}()
	var off int64
	tail := func() error {
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil // not written yet
		}
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return err
		}
		n, err := io.Copy(w, f)
		off += n
		return err
	}
	t := time.NewTicker(logPoll)
	defer t.Stop()
	for {
		if err := tail(); err != nil {
			return err
		}
		select {
		case err := <-done:
			if err != nil {
				return err
			}
			return tail()
		case <-t.C:
		}
	}
}

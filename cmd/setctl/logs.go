package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/journal"
)

func logsCommand() command {
	return command{
		name:    "logs",
		summary: "print the output of a change's agent or gate",
		arg:     "change",
		usage: `Usage: setctl logs CHANGE [--gate GATE | --agent] [--iteration N] [--follow]

Logs prints the log of one of a change's agent iterations or gate runs
(under .set/logs/CHANGE/) to stdout, as it is, and says which log on
stderr. Which one:

  (nothing)     what runs for the change now; else its latest log
  --agent       its agent's latest iteration, or iteration N
  --gate GATE   gate GATE's latest run, in either stage
                (--gate integration/test for one stage), or its attempt
                N: 1 for the first run, 2 after the first retry

--follow prints the log as it grows, and ends when the agent iteration or
the gate ends, or the run does (its RUN_FINISHED, or its setctl apply
gone); a log of what already ended is printed once.

Examples:
  setctl logs greet
  setctl logs greet --follow
  setctl logs greet --gate test
  setctl logs greet --gate integration/test --iteration 2
  setctl logs greet --agent --iteration 1 | tail -20
`,
		run: runLogs,
	}
}

// logRef is a log of a change that its events name.
type logRef struct {
	path string // relative to the project
	// kind is "agent" or "gate"; stage and gate name a gate's run; n is
	// the agent's iteration or the gate's attempt.
	kind, stage, gate string
	n                 int
	// result is how it ended ("done", "fail", …); "" while it runs (or
	// its run was cut short).
	result string
}

// String names the log as the stderr header does.
func (l logRef) String() string {
	what := fmt.Sprintf("agent, iteration %d", l.n)
	if l.kind == "gate" {
		what = fmt.Sprintf("%s %s, attempt %d", l.stage, l.gate, l.n)
	}
	return what + ": " + cmp.Or(l.result, "running")
}

// logRefs are the logs that events (of one change) name, in the order
// they were first named.
func logRefs(events []journal.Event) []logRef {
	var refs []logRef
	at := map[string]int{}
	add := func(r logRef) {
		if r.path == "" {
			return
		}
		if i, ok := at[r.path]; ok {
			if r.result != "" {
				refs[i].result = r.result
			}
			return
		}
		at[r.path] = len(refs)
		refs = append(refs, r)
	}
	for _, e := range events {
		switch e.Type {
		case journal.AgentSessionDecision:
			d, _ := journal.Decode[journal.AgentSessionDecisionData](e)
			add(logRef{path: d.Log, kind: "agent", n: d.Iteration})
		case journal.AgentIteration:
			d, _ := journal.Decode[journal.AgentIterationData](e)
			add(logRef{path: d.Log, kind: "agent", n: d.Iteration, result: d.Result})
		case journal.GateStarted:
			d, _ := journal.Decode[journal.GateStartedData](e)
			add(logRef{path: d.Log, kind: "gate", stage: d.Stage, gate: d.Gate, n: d.Attempt})
		case journal.VerifyGate:
			d, _ := journal.Decode[journal.VerifyGateData](e)
			add(logRef{path: d.Log, kind: "gate", stage: d.Stage, gate: d.Gate, n: d.Attempt, result: d.Result})
		}
	}
	return refs
}

func runLogs(e *env, args []string) int {
	c := logsCommand()
	fs := c.flagSet(e)
	gate := fs.String("gate", "", "the log of gate `GATE` (or STAGE/GATE)")
	agentLog := fs.Bool("agent", false, "the log of the change's agent")
	iteration := fs.Int("iteration", 0, "the agent's iteration `N`, or the gate's attempt N (default: the latest)")
	follow := fs.Bool("follow", false, "print the log as it grows, until its agent iteration or gate ends")
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
	v, ch, events, err := readChange(e, fs.Arg(0))
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	ref, err := pickLog(v, ch.Name, logRefs(events), *gate, *agentLog, *iteration)
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	fmt.Fprintf(e.stderr, "==> %s (%s) <==\n", ref.path, ref)
	path := filepath.Join(v.layout.Root(), filepath.FromSlash(ref.path))
	if !*follow || ref.result != "" || !v.live.Held {
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

// pickLog chooses the log of change that the flags ask for among refs.
func pickLog(v *runView, change string, refs []logRef, gate string, agentLog bool, n int) (logRef, error) {
	if len(refs) == 0 {
		return logRef{}, fmt.Errorf("change %s has no log yet: it is %s", change, v.st.Changes[change].Status)
	}
	var pick []logRef
	switch {
	case agentLog:
		for _, r := range refs {
			if r.kind == "agent" {
				pick = append(pick, r)
			}
		}
		if len(pick) == 0 {
			return logRef{}, fmt.Errorf("change %s has no agent log yet", change)
		}
	case gate != "":
		stage, name, staged := strings.Cut(gate, "/")
		if !staged {
			stage, name = "", gate
		}
		var names []string
		for _, r := range refs {
			if r.kind != "gate" {
				continue
			}
			if !slices.Contains(names, r.gate) {
				names = append(names, r.gate)
			}
			if r.gate == name && (stage == "" || r.stage == stage) {
				pick = append(pick, r)
			}
		}
		if len(pick) == 0 {
			msg := fmt.Sprintf("change %s has no log of gate %s", change, gate)
			if best := english.Closest(name, names); best != "" && best != name {
				msg += fmt.Sprintf("; did you mean %s?", best)
			}
			if len(names) > 0 {
				msg += fmt.Sprintf(" (its gates: %s)", strings.Join(names, ", "))
			}
			return logRef{}, errors.New(msg)
		}
	default:
		if a := v.st.Changes[change].Activity; a != nil && a.Log != "" && v.live.Held {
			for _, r := range refs {
				if r.path == a.Log {
					return r, nil
				}
			}
		}
		return refs[len(refs)-1], nil
	}
	if n == 0 {
		return pick[len(pick)-1], nil
	}
	var have []string
	for i := len(pick) - 1; i >= 0; i-- {
		if pick[i].n == n {
			return pick[i], nil
		}
	}
	for _, r := range pick {
		have = append(have, fmt.Sprint(r.n))
	}
	what := "iteration"
	if !agentLog {
		what = "attempt"
	}
	those := what
	if len(have) > 1 {
		those += "s"
	}
	return logRef{}, fmt.Errorf("change %s has no log of %s %d (it has %s %s)", change, what, n, those, english.List(have))
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
func followLog(w io.Writer, v *runView, path string, ref logRef) error {
	done := make(chan error, 1)
	go func() {
		done <- followRun(v, v.st.LastSeq, func(e journal.Event) bool {
			for _, r := range logRefs([]journal.Event{e}) {
				if r.path == ref.path && r.result != "" {
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

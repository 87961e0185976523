package state

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/journal"
)

// Log is a log of a change that its events name: of an agent iteration
// or of a gate run.
type Log struct {
	// Path is where it is, relative to the project, in forward slashes.
	Path string
	// Kind is "agent" or "gate"; Stage and Gate name a gate's run; N is
	// the agent's iteration or the gate's attempt.
	Kind, Stage, Gate string
	N                 int
	// Result is how it ended ("done", "fail", …); "" while it runs (or
	// its run was cut short).
	Result string
}

// String names the log as `setctl logs` does: "agent, iteration 2: done",
// "verify test, attempt 1: running".
func (l Log) String() string {
	what := fmt.Sprintf("agent, iteration %d", l.N)
	if l.Kind == "gate" {
		what = fmt.Sprintf("%s %s, attempt %d", l.Stage, l.Gate, l.N)
	}
	return what + ": " + cmp.Or(l.Result, "running")
}

// logsNamed is the log each event type names, if any.
var logsNamed = journal.NewTable(
	journal.On(func(_ struct{}, _ journal.Event, d journal.AgentSessionDecisionData) Log {
		return Log{Path: d.Log, Kind: "agent", N: d.Iteration}
	}),
	journal.On(func(_ struct{}, _ journal.Event, d journal.AgentIterationData) Log {
		return Log{Path: d.Log, Kind: "agent", N: d.Iteration, Result: d.Result}
	}),
	journal.On(func(_ struct{}, _ journal.Event, d journal.GateStartedData) Log {
		return Log{Path: d.Log, Kind: "gate", Stage: d.Stage, Gate: d.Gate, N: d.Attempt}
	}),
	journal.On(func(_ struct{}, _ journal.Event, d journal.VerifyGateData) Log {
		return Log{Path: d.Log, Kind: "gate", Stage: d.Stage, Gate: d.Gate, N: d.Attempt, Result: d.Result}
	}),
)

// Logs are the logs that events (of one change) name, in the order they
// were first named, each with the result of the last event that names
// it. An event whose payload does not decode is an error.
func Logs(events []journal.Event) ([]Log, error) {
	var logs []Log
	at := map[string]int{}
	for _, e := range events {
		l, named, err := logsNamed.Handle(struct{}{}, e)
		if err != nil {
			return nil, err
		}
		if !named || l.Path == "" {
			continue
		}
		if i, ok := at[l.Path]; ok {
			if l.Result != "" {
				logs[i].Result = l.Result
			}
			continue
		}
		at[l.Path] = len(logs)
		logs = append(logs, l)
	}
	return logs, nil
}

// LogQuery is which log of a change `setctl logs` asks for: its agent's
// (Agent), a gate's (Gate, "GATE" or "STAGE/GATE"), or, with neither,
// what runs for the change now, else its latest log. N is the agent's
// iteration or the gate's attempt; 0 for the latest.
type LogQuery struct {
	Gate  string
	Agent bool
	N     int
}

// PickLog chooses the log of change c that q asks for among logs, the
// logs of c's events (Logs). running says whether c's run is going on:
// only then is the log of c's activity the one it works on now. The
// error says what c has instead.
func PickLog(c *Change, running bool, logs []Log, q LogQuery) (Log, error) {
	if len(logs) == 0 {
		return Log{}, fmt.Errorf("change %s has no log yet: it is %s", c.Name, c.Status)
	}
	var pick []Log
	switch {
	case q.Agent:
		for _, l := range logs {
			if l.Kind == "agent" {
				pick = append(pick, l)
			}
		}
		if len(pick) == 0 {
			return Log{}, fmt.Errorf("change %s has no agent log yet", c.Name)
		}
	case q.Gate != "":
		var err error
		if pick, err = gateLogs(c.Name, logs, q.Gate); err != nil {
			return Log{}, err
		}
	default:
		if a := c.Activity; a != nil && a.Log != "" && running {
			for _, l := range logs {
				if l.Path == a.Log {
					return l, nil
				}
			}
		}
		return logs[len(logs)-1], nil
	}
	if q.N == 0 {
		return pick[len(pick)-1], nil
	}
	for i := len(pick) - 1; i >= 0; i-- {
		if pick[i].N == q.N {
			return pick[i], nil
		}
	}
	var have []string
	for _, l := range pick {
		have = append(have, fmt.Sprint(l.N))
	}
	what := "iteration"
	if !q.Agent {
		what = "attempt"
	}
	those := what
	if len(have) > 1 {
		those += "s"
	}
	return Log{}, fmt.Errorf("change %s has no log of %s %d (it has %s %s)", c.Name, what, q.N, those, english.List(have))
}

// gateLogs are the logs of gate ("GATE", or "STAGE/GATE") among the logs
// of change; none is an error naming the gates it has.
func gateLogs(change string, logs []Log, gate string) ([]Log, error) {
	stage, name, staged := strings.Cut(gate, "/")
	if !staged {
		stage, name = "", gate
	}
	var pick []Log
	var names []string
	for _, l := range logs {
		if l.Kind != "gate" {
			continue
		}
		if !slices.Contains(names, l.Gate) {
			names = append(names, l.Gate)
		}
		if l.Gate == name && (stage == "" || l.Stage == stage) {
			pick = append(pick, l)
		}
	}
	if len(pick) > 0 {
		return pick, nil
	}
	msg := fmt.Sprintf("change %s has no log of gate %s", change, gate)
	if best := english.Closest(name, names); best != "" && best != name {
		msg += fmt.Sprintf("; did you mean %s?", best)
	}
	if len(names) > 0 {
		msg += fmt.Sprintf(" (its gates: %s)", strings.Join(names, ", "))
	}
	return nil, errors.New(msg)
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/set-engine/set/engine/control"
	"github.com/set-engine/set/engine/journal"
)

func pauseCommand() command {
	return command{
		name:    "pause",
		summary: "pause a change of the running apply, or all of them",
		arg:     "change",
		usage: `Usage: setctl pause CHANGE | --all [--json] [--wait DURATION]

Pause asks the setctl apply that runs in this project (from another
terminal) to pause a change: its agent or gates are stopped where they
are, and the change waits, paused, with its worktree, its branch and its
agent session kept. A change not started yet is held: it is not
dispatched until setctl resume lets it go. --all pauses every change at
work and holds the ones not yet started. The apply keeps running the
other changes, and waits for setctl resume before it ends.

The request goes through .set/control.jsonl, which the running apply
reads; pause then waits (up to --wait) for the apply to journal what it
did (a CONTROL event, with who asked: "setctl pause (user alice)"), and
says it. The dashboard's Pause and Resume make the same requests. A
change in the merge queue is not paused: the queue finishes it. With no
apply running, there is nothing to pause; a change a rule paused (a spent
token budget) resumes with the next setctl apply.

Exit status: 0 when the apply took the request, 1 otherwise (no apply
running, an unknown change, or no answer within --wait).

Examples:
  setctl pause add-login
  setctl pause --all
  setctl resume add-login
`,
		run: func(e *env, args []string) int { return runControl(e, pauseCommand(), control.Pause, args) },
	}
}

func resumeCommand() command {
	return command{
		name:    "resume",
		summary: "resume a paused change of the running apply, or all of them",
		arg:     "change",
		usage: `Usage: setctl resume CHANGE | --all [--json] [--wait DURATION]

Resume asks the setctl apply that runs in this project to take a paused
change up again where it was paused: its agent resumes in its worktree and
session, or its gates run again. --all resumes every paused change and
lets the changes not yet started go.

With no apply running, run setctl apply: a new apply resumes every paused
change (a change a rule paused is paused again if the rule still holds:
raise the budget in set.cue and commit it first).

Exit status: 0 when the apply took the request, 1 otherwise.

Examples:
  setctl resume add-login
  setctl resume --all --json
`,
		run: func(e *env, args []string) int { return runControl(e, resumeCommand(), control.Resume, args) },
	}
}

// runControl is pause and resume: it appends the request to the control
// file of the running apply and waits for its CONTROL event.
func runControl(e *env, c command, action string, args []string) int {
	fs := c.flagSet(e)
	all := fs.Bool("all", false, "every change of the run")
	asJSON := fs.Bool("json", false, "write the apply's answer as JSON (the CONTROL event's data)")
	wait := fs.Duration("wait", 30*time.Second, "how long to wait for the running apply to answer")
	if code, done := c.parse(e, fs, args); done {
		return code
	}
	rest := fs.Args()
	switch {
	case *all && len(rest) > 0:
		return c.usageError(e, "give a change or --all, not both")
	case !*all && len(rest) != 1:
		return c.usageError(e, "give one change, or --all")
	}
	v, err := readRun(e, "")
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	if !v.Live.Held {
		return e.errorf(c.name, "no setctl apply is running in this project: %s", notRunningHint(action))
	}
	change := ""
	if !*all {
		ch, err := v.change(rest[0])
		if err != nil {
			return e.errorf(c.name, "%v", err)
		}
		change = ch.Name
	}
	from := v.State.LastSeq
	req, err := control.Append(v.layout.Control(), control.Request{
		Time: time.Now().UTC(), Action: action, Change: change,
		By: fmt.Sprintf("setctl %s (user %s)", action, control.User()),
	})
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *wait)
	defer cancel()
	answer, err := control.AwaitAnswer(ctx, v.layout.Events(), from, req.ID)
	if errors.Is(err, context.DeadlineExceeded) {
		return e.errorf(c.name, "the running apply did not answer within --wait; it takes requests between its steps: see `setctl events`")
	}
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	if *asJSON {
		data, _ := json.MarshalIndent(answer, "", "  ")
		fmt.Fprintln(e.stdout, string(data))
	} else {
		writeControl(e, action, answer)
	}
	if change != "" && len(answer.Changes) == 0 {
		return exitError
	}
	return exitOK
}

// notRunningHint says what to do instead when no apply runs.
func notRunningHint(action string) string {
	if action == control.Resume {
		return "`setctl apply` resumes every paused change"
	}
	return "there is nothing to pause"
}

// writeControl says what the apply did with the request.
func writeControl(e *env, action string, d journal.ControlData) {
	verb := map[string]string{control.Pause: "paused", control.Resume: "resumed"}[action]
	if len(d.Changes) > 0 {
		fmt.Fprintf(e.stdout, "%s: %s\n", verb, strings.Join(d.Changes, ", "))
	}
	for _, name := range slices.Sorted(maps.Keys(d.Skipped)) {
		fmt.Fprintf(e.stdout, "not %s: %s (%s)\n", verb, name, d.Skipped[name])
	}
	if len(d.Changes) == 0 && len(d.Skipped) == 0 {
		fmt.Fprintf(e.stdout, "nothing to %s\n", action)
	}
	if action == control.Pause && d.Change == "" {
		fmt.Fprintln(e.stdout, "new changes are held until `setctl resume --all`")
	}
}

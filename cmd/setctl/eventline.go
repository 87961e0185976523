package main

import (
	"fmt"
	"path"
	"strings"

	"github.com/fatih/color"

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
)

// palette colours the lines of a run's views.
type palette struct{ red, green, yellow, dim *color.Color }

// newPalette is a palette that colours when on is set.
func newPalette(on bool) palette {
	p := palette{red: color.New(color.FgRed), green: color.New(color.FgGreen), yellow: color.New(color.FgYellow), dim: color.New(color.Faint)}
	for _, c := range []*color.Color{p.red, p.green, p.yellow, p.dim} {
		if on {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	return p
}

// noColors is the palette of text without colour (the JSON stream's).
var noColors = newPalette(false)

// eventLine is what setctl says about one event of a run. The plain view's
// line and the JSON stream's @message and @level all come from it, so the
// two views never disagree.
type eventLine struct {
	// text is the line, without the time and the change; never empty.
	text string
	// level is "error" for a failure, "warn" for what goes back to the
	// agent, does not block or stops the run short of a failure, and
	// "info" for the rest.
	level string
	// shown: the plain view prints the line. The routine events it leaves
	// out (heartbeats, model calls, the state changes its live rows show)
	// are in the JSON stream only.
	shown bool
	// notable: on a live terminal the line stays above the rows: progress
	// through main, and every failure. Other shown lines only update the
	// rows.
	notable bool
}

// agentName is an agent as the views name it: its adapter, and its model
// when it has one ("claude opus-4").
func agentName(adapter, model string) string {
	if model == "" {
		return adapter
	}
	return adapter + " " + model
}

// describeEvent describes e of a run whose main branch is mainBranch,
// coloured with pal. Every type of journal.Types has its own line; an
// unknown type (a journal from a newer setctl) gets its name.
func describeEvent(e journal.Event, mainBranch string, pal palette) eventLine {
	info := func(text string) eventLine { return eventLine{text: text, level: "info", shown: true, notable: true} }
	routine := func(text string) eventLine { return eventLine{text: text, level: "info", shown: true} }
	hidden := func(text string) eventLine { return eventLine{text: text, level: "info"} }
	warn := func(text string) eventLine { return eventLine{text: text, level: "warn", shown: true, notable: true} }
	failure := func(text string) eventLine { return eventLine{text: text, level: "error", shown: true, notable: true} }

	switch e.Type {
	case journal.RunStarted:
		d, _ := journal.Decode[journal.RunStartedData](e)
		verb := "started"
		if d.Resumed {
			verb = "resumed"
		}
		return info(fmt.Sprintf("run %s %s: %s, up to %d at once", e.Run, verb, english.Plural(len(d.Changes), "change"), d.MaxParallel))
	case journal.PlanCreated:
		d, _ := journal.Decode[journal.PlanCreatedData](e)
		return hidden(fmt.Sprintf("plan created (%s): %s, %s", d.Strategy, english.Plural(len(d.Changes), "change"), english.Plural(d.Requirements, "requirement")))
	case journal.StateChange:
		d, _ := journal.Decode[journal.StateChangeData](e)
		switch s := state.Status(d.To); {
		case s.Failed(), s == state.DepBlocked:
			return failure(pal.red.Sprintf("%s: %s", d.To, d.Reason))
		case s == state.Queued && d.From == string(state.Integrating):
			return routine(pal.yellow.Sprintf("queued again: %s", d.Reason))
		case s == state.Queued, s == state.Integrating:
			return routine(d.To)
		}
		msg := d.From + " → " + d.To
		if d.Reason != "" {
			msg += ": " + d.Reason
		}
		return hidden(msg)
	case journal.Dispatch:
		d, _ := journal.Decode[journal.DispatchData](e)
		verb := "dispatched to"
		if d.Reused {
			verb = "resumed in"
		}
		return info(fmt.Sprintf("%s %s (branch %s from %s)", verb, d.Worktree, d.Branch, shortSHA(d.Base)))
	case journal.AgentSessionDecision:
		d, _ := journal.Decode[journal.AgentSessionDecisionData](e)
		if d.Iteration == 0 { // a journal that did not record the iteration
			return hidden(fmt.Sprintf("agent session: %s (%s)", d.Decision, d.Reason))
		}
		msg := fmt.Sprintf("iteration %d: %s started, %s session (%s)", d.Iteration, agentName(d.Adapter, d.Model), d.Decision, d.Reason)
		if d.Permissions != "" {
			msg += "; permissions " + d.Permissions
		}
		return hidden(msg)
	case journal.AgentIteration:
		d, _ := journal.Decode[journal.AgentIterationData](e)
		msg := fmt.Sprintf("iteration %d: %s (%s, %s tokens, %s)", d.Iteration, d.Result, ms(d.DurationMS), english.Tokens(d.Tokens.Total()), english.Plural(d.Commits, "commit"))
		if d.Error != "" {
			msg += ": " + d.Error
		}
		if d.Signal != "" {
			msg += " (" + d.Signal + ")"
		}
		if d.Result == "stalled" || d.Result == "stopped" || d.Result == "error" || d.Result == "api-error" {
			return failure(msg)
		}
		return routine(msg)
	case journal.LLMCall:
		d, _ := journal.Decode[journal.LLMCallData](e)
		return hidden(fmt.Sprintf("%s call to %s: %s tokens", d.Role, d.Model, english.Tokens(d.Tokens.Total())))
	case journal.GateSetExpanded:
		d, _ := journal.Decode[journal.GateSetExpandedData](e)
		return info(fmt.Sprintf("%s %s added: %s", d.Stage, d.Gate, d.Condition))
	case journal.GateStarted:
		d, _ := journal.Decode[journal.GateStartedData](e)
		msg := fmt.Sprintf("%s %s: started", d.Stage, d.Gate)
		if len(d.Command) > 0 {
			msg += " (" + strings.Join(d.Command, " ") + ")"
		}
		return hidden(msg)
	case journal.VerifyGate:
		d, _ := journal.Decode[journal.VerifyGateData](e)
		switch d.Result {
		case "pass":
			if d.Reason != "" { // failures main has too, accepted
				return routine(fmt.Sprintf("%s %s: %s (%s): %s", d.Stage, d.Gate, pal.green.Sprint("pass"), ms(d.DurationMS), d.Reason))
			}
			return routine(fmt.Sprintf("%s %s: %s (%s)", d.Stage, d.Gate, pal.green.Sprint("pass"), ms(d.DurationMS)))
		case "skip":
			return routine(pal.dim.Sprintf("%s %s: skipped, %s", d.Stage, d.Gate, d.Reason))
		case "warn":
			return warn(pal.yellow.Sprintf("%s %s: failed, not blocking (warn): %s", d.Stage, d.Gate, d.Reason))
		}
		return failure(fmt.Sprintf("%s %s: %s (%s): %s; log %s", d.Stage, d.Gate, pal.red.Sprint(strings.ToUpper(d.Result)), ms(d.DurationMS), d.Reason, d.Log))
	case journal.RetryScheduled:
		d, _ := journal.Decode[journal.RetryScheduledData](e)
		return warn(pal.yellow.Sprintf("retry %d/%d (%s): back to the agent", d.Attempt, d.Budget, d.Stage))
	case journal.MergeQueued:
		d, _ := journal.Decode[journal.MergeQueuedData](e)
		return hidden("in the merge queue at " + shortSHA(d.Head))
	case journal.ChangeIntegrationFailed:
		d, _ := journal.Decode[journal.ChangeIntegrationFailedData](e)
		if d.Reason == "conflict" {
			return warn(pal.yellow.Sprintf("merging %s conflicts in %s", mainBranch, strings.Join(d.Paths, ", ")))
		}
		return warn(pal.yellow.Sprintf("integration failed: %s", d.Gate))
	case journal.IntegrationAttempt:
		d, _ := journal.Decode[journal.IntegrationAttemptData](e)
		if len(d.Ahead) == 0 {
			return hidden(fmt.Sprintf("integration attempt %d onto %s %s", d.Attempt, mainBranch, shortSHA(d.Onto)))
		}
		return routine(fmt.Sprintf("integration attempt %d onto %s with %s (%s), ahead of it in the queue", d.Attempt, mainBranch, strings.Join(d.Ahead, ", "), shortSHA(d.Onto)))
	case journal.Merged:
		d, _ := journal.Decode[journal.MergedData](e)
		msg := fmt.Sprintf("merged: %s %s → %s", mainBranch, shortSHA(d.Previous), shortSHA(d.Commit))
		if d.Attempt > 1 {
			msg += fmt.Sprintf(", the candidate of integration attempt %d", d.Attempt)
		}
		return info(pal.green.Sprint(msg))
	case journal.Archived:
		d, _ := journal.Decode[journal.ArchivedData](e)
		if d.Skipped != "" {
			return info("archived: nothing to fold, " + d.Skipped)
		}
		specs := make([]string, len(d.Capabilities))
		for i, c := range d.Capabilities {
			specs[i] = path.Join("openspec/specs", c)
		}
		return info(fmt.Sprintf("archived: %s updated, change folder in %s", strings.Join(specs, ", "), d.ArchiveDir))
	case journal.MonitorHeartbeat:
		d, _ := journal.Decode[journal.MonitorHeartbeatData](e)
		return hidden(fmt.Sprintf("heartbeat: %d active, %d queued", len(d.Active), len(d.Queued)))
	case journal.BudgetExceeded:
		d, _ := journal.Decode[journal.BudgetExceededData](e)
		if d.Field != "" {
			return failure(pal.red.Sprintf("%s budget spent (%d of %d, %s)", d.Budget, d.Used, d.Limit, d.Field))
		}
		return failure(pal.red.Sprintf("%s budget spent (%d of %d)", d.Budget, d.Used, d.Limit))
	case journal.SentinelAction:
		d, _ := journal.Decode[journal.SentinelActionData](e)
		msg := fmt.Sprintf("sentinel: %s, rule %s (step %d of %d): %s", d.Action, d.Rule, d.Step, d.Steps, d.When)
		if d.BackoffMS > 0 {
			msg += fmt.Sprintf("; restarts in %s", ms(d.BackoffMS))
		}
		if d.Action == "warn" {
			return warn(pal.yellow.Sprint(msg))
		}
		return failure(pal.red.Sprint(msg))
	case journal.Control:
		d, _ := journal.Decode[journal.ControlData](e)
		what := d.Change
		if what == "" {
			what = "--all"
		}
		msg := fmt.Sprintf("setctl %s %s: %s", d.Action, what, strings.Join(d.Changes, ", "))
		if len(d.Changes) == 0 {
			msg = fmt.Sprintf("setctl %s %s: nothing to %s", d.Action, what, d.Action)
		}
		return info(msg)
	case journal.Replanned:
		d, _ := journal.Decode[journal.ReplannedData](e)
		msg := fmt.Sprintf("replan %d: %s uncovered (%s did not reach %s)", d.Cycle, strings.Join(d.Uncovered, ", "), strings.Join(d.Dropped, ", "), mainBranch)
		if d.Error != "" {
			return failure(pal.red.Sprint(msg + "; the planner gave no changes: " + d.Error))
		}
		return info(msg + "; added " + strings.Join(d.Added, ", "))
	case journal.RunFinished:
		d, _ := journal.Decode[journal.RunFinishedData](e)
		l := hidden(fmt.Sprintf("run finished: %s (%s)", d.Result, ms(d.DurationMS)))
		switch d.Result {
		case "success":
		case "interrupted", "paused":
			l.level = "warn"
		default:
			l.level = "error"
		}
		return l
	case journal.BaselineGate:
		d, _ := journal.Decode[journal.BaselineGateData](e)
		when := ms(d.DurationMS)
		if d.Cached {
			when = "judged before"
		}
		switch {
		case d.Result == "pass":
			return info(fmt.Sprintf("baseline %s: %s (%s)", d.Gate, pal.green.Sprint("pass"), when))
		case d.Mode == "warn":
			return warn(pal.yellow.Sprintf("baseline %s: fails on %s, not blocking (warn): %s (%s); log %s", d.Gate, mainBranch, d.Reason, when, d.Log))
		}
		return failure(fmt.Sprintf("baseline %s: %s on %s: %s (%s); log %s", d.Gate, pal.red.Sprint("FAIL"), mainBranch, d.Reason, when, d.Log))
	case journal.BaselineAccepted:
		d, _ := journal.Decode[journal.BaselineAcceptedData](e)
		return warn(pal.yellow.Sprintf("baseline %s: %s of %s accepted; changes fail it only on others", d.Gate, english.Plural(len(d.Failures), "failure"), mainBranch))
	case journal.Repaired:
		d, _ := journal.Decode[journal.RepairedData](e)
		text := "repaired after a crash: " + d.Problem
		if len(d.Removed) > 0 {
			text += "; removed " + strings.Join(d.Removed, ", ")
		}
		if d.Done != "" {
			text += "; " + d.Done
		}
		return warn(pal.yellow.Sprint(text))
	}
	return hidden(strings.ToLower(string(e.Type)))
}

package main

import (
	"fmt"
	"path"
	"strings"

	"github.com/fatih/color"

	"github.com/set-engine/set/engine/control"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/gate"
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
// coloured with pal, by its type's entry in eventLines. A type without an
// entry (one of a newer setctl) gets its name; an event whose payload does
// not decode gets an error line that says so.
func describeEvent(e journal.Event, mainBranch string, pal palette) eventLine {
	l, handled, err := eventLines.Handle(lineStyle{main: mainBranch, pal: pal}, e)
	switch {
	case err != nil:
		return failureLine("cannot describe " + err.Error())
	case !handled:
		return hiddenLine(strings.ToLower(string(e.Type)))
	}
	return l
}

// lineStyle is how a view writes the lines of a run's events: the run's
// main branch, which lines name, and the palette that colours them.
type lineStyle struct {
	main string
	pal  palette
}

// The kinds of line: infoLine is notable, routineLine only updates the
// live rows, hiddenLine is in the JSON stream only, warnLine and
// failureLine are notable warnings and errors (see eventLine).
func infoLine(text string) eventLine {
	return eventLine{text: text, level: "info", shown: true, notable: true}
}
func routineLine(text string) eventLine { return eventLine{text: text, level: "info", shown: true} }
func hiddenLine(text string) eventLine  { return eventLine{text: text, level: "info"} }
func warnLine(text string) eventLine {
	return eventLine{text: text, level: "warn", shown: true, notable: true}
}
func failureLine(text string) eventLine {
	return eventLine{text: text, level: "error", shown: true, notable: true}
}

// eventLines is what the views say about each event type: every type of
// journal.Types has its entry (a test keeps it complete). It is a table
// of the same kind as the state's projection (journal.Table), so both
// decode a payload once, the same way, and neither sees a payload that
// did not decode.
var eventLines = journal.NewTable(
	journal.On(func(_ lineStyle, e journal.Event, d journal.RunStartedData) eventLine {
		verb := "started"
		if d.Resumed {
			verb = "resumed"
		}
		return infoLine(fmt.Sprintf("run %s %s: %s, up to %d at once", e.Run, verb, english.Plural(len(d.Changes), "change"), d.MaxParallel))
	}),
	journal.On(func(_ lineStyle, _ journal.Event, d journal.PlanCreatedData) eventLine {
		return hiddenLine(fmt.Sprintf("plan created (%s): %s, %s", d.Strategy, english.Plural(len(d.Changes), "change"), english.Plural(d.Requirements, "requirement")))
	}),
	journal.On(func(v lineStyle, _ journal.Event, d journal.StateChangeData) eventLine {
		switch s := state.Status(d.To); {
		case s.Failed(), s == state.DepBlocked:
			return failureLine(v.pal.red.Sprintf("%s: %s", d.To, d.Reason))
		case s == state.Queued && (d.From == string(state.Integrating) || d.From == string(state.InReview)):
			// Integrating: the remote's main moved under its push, or a
			// change ahead failed; in review: its pull request conflicts
			// with the main that moved under it.
			return routineLine(v.pal.yellow.Sprintf("queued again: %s", d.Reason))
		case s == state.Queued, s == state.Integrating:
			return routineLine(d.To)
		}
		msg := d.From + " → " + d.To
		if d.Reason != "" {
			msg += ": " + d.Reason
		}
		return hiddenLine(msg)
	}),
	journal.On(func(_ lineStyle, _ journal.Event, d journal.DispatchData) eventLine {
		verb := "dispatched to"
		if d.Reused {
			verb = "resumed in"
		}
		return infoLine(fmt.Sprintf("%s %s (branch %s from %s)", verb, d.Worktree, d.Branch, shortSHA(d.Base)))
	}),
	journal.On(func(_ lineStyle, _ journal.Event, d journal.AgentSessionDecisionData) eventLine {
		if d.Iteration == 0 { // a journal that did not record the iteration
			return hiddenLine(fmt.Sprintf("agent session: %s (%s)", d.Decision, d.Reason))
		}
		msg := fmt.Sprintf("iteration %d: %s started, %s session (%s)", d.Iteration, agentName(d.Adapter, d.Model), d.Decision, d.Reason)
		if d.Permissions != "" {
			msg += "; permissions " + d.Permissions
		}
		return hiddenLine(msg)
	}),
	journal.On(func(_ lineStyle, _ journal.Event, d journal.AgentIterationData) eventLine {
		// No tokens is no usage reported (an exec agent's): the line
		// leaves them out rather than claim the iteration used none.
		tokens := ""
		if n := d.Tokens.Total(); n > 0 {
			tokens = english.Tokens(n) + " tokens, "
		}
		msg := fmt.Sprintf("iteration %d: %s (%s, %s%s)", d.Iteration, d.Result, ms(d.DurationMS), tokens, english.Plural(d.Commits, "commit"))
		if d.Error != "" {
			msg += ": " + d.Error
		}
		if d.Signal != "" {
			msg += " (" + d.Signal + ")"
		}
		if d.Result == "stalled" || d.Result == "stopped" || d.Result == "error" || d.Result == "api-error" {
			return failureLine(msg)
		}
		return routineLine(msg)
	}),
	journal.On(func(_ lineStyle, _ journal.Event, d journal.LLMCallData) eventLine {
		return hiddenLine(fmt.Sprintf("%s call to %s: %s tokens", d.Role, d.Model, english.Tokens(d.Tokens.Total())))
	}),
	journal.On(func(_ lineStyle, _ journal.Event, d journal.GateSetExpandedData) eventLine {
		return infoLine(fmt.Sprintf("%s %s added: %s", d.Stage, d.Gate, d.Condition))
	}),
	journal.On(func(_ lineStyle, _ journal.Event, d journal.GateStartedData) eventLine {
		msg := fmt.Sprintf("%s %s: started", d.Stage, d.Gate)
		if len(d.Command) > 0 {
			msg += " (" + gate.CommandLine(d.Command) + ")"
		}
		return hiddenLine(msg)
	}),
	journal.On(func(v lineStyle, _ journal.Event, d journal.VerifyGateData) eventLine {
		switch d.Result {
		case "pass":
			if d.Reason != "" { // failures main has too, accepted
				return routineLine(fmt.Sprintf("%s %s: %s (%s): %s", d.Stage, d.Gate, v.pal.green.Sprint("pass"), ms(d.DurationMS), d.Reason))
			}
			return routineLine(fmt.Sprintf("%s %s: %s (%s)", d.Stage, d.Gate, v.pal.green.Sprint("pass"), ms(d.DurationMS)))
		case "skip":
			return routineLine(v.pal.dim.Sprintf("%s %s: skipped, %s", d.Stage, d.Gate, d.Reason))
		case "warn":
			return warnLine(v.pal.yellow.Sprintf("%s %s: failed, not blocking (warn): %s", d.Stage, d.Gate, d.Reason))
		}
		return failureLine(fmt.Sprintf("%s %s: %s (%s): %s; log %s", d.Stage, d.Gate, v.pal.red.Sprint(strings.ToUpper(d.Result)), ms(d.DurationMS), d.Reason, d.Log))
	}),
	journal.On(func(v lineStyle, _ journal.Event, d journal.RetryScheduledData) eventLine {
		if d.Stage == state.StageConflict {
			// Not a retry of the agent's: a bound on a change that never
			// gets through.
			return warnLine(v.pal.yellow.Sprintf("conflict %d/%d: back to the agent to resolve it", d.Attempt, d.Budget))
		}
		return warnLine(v.pal.yellow.Sprintf("retry %d/%d (%s): back to the agent", d.Attempt, d.Budget, d.Stage))
	}),
	journal.On(func(_ lineStyle, _ journal.Event, d journal.MergeQueuedData) eventLine {
		return hiddenLine("in the merge queue at " + shortSHA(d.Head))
	}),
	journal.On(func(v lineStyle, _ journal.Event, d journal.ChangeIntegrationFailedData) eventLine {
		switch d.Reason {
		case journal.ReasonConflict:
			return warnLine(v.pal.yellow.Sprintf("merging %s conflicts in %s", v.main, strings.Join(d.Paths, ", ")))
		case journal.ReasonReview:
			return warnLine(v.pal.yellow.Sprint("a review of its pull request requested changes"))
		case journal.ReasonCheck:
			return warnLine(v.pal.yellow.Sprint("a check of its pull request failed"))
		}
		return warnLine(v.pal.yellow.Sprintf("integration failed: %s", d.Gate))
	}),
	journal.On(func(v lineStyle, _ journal.Event, d journal.IntegrationAttemptData) eventLine {
		if len(d.Ahead) == 0 {
			return hiddenLine(fmt.Sprintf("integration attempt %d onto %s %s", d.Attempt, v.main, shortSHA(d.Onto)))
		}
		return routineLine(fmt.Sprintf("integration attempt %d onto %s with %s (%s), ahead of it in the queue", d.Attempt, v.main, strings.Join(d.Ahead, ", "), shortSHA(d.Onto)))
	}),
	journal.On(func(v lineStyle, _ journal.Event, d journal.MergedData) eventLine {
		msg := fmt.Sprintf("merged: %s %s → %s", v.main, shortSHA(d.Previous), shortSHA(d.Commit))
		if d.PullRequest != 0 {
			msg = fmt.Sprintf("merged by the forge: pull request #%d, %s %s → %s", d.PullRequest, v.main, shortSHA(d.Previous), shortSHA(d.Commit))
		}
		if d.Attempt > 1 {
			msg += fmt.Sprintf(", the candidate of integration attempt %d", d.Attempt)
		}
		if len(d.Union) > 0 {
			msg += fmt.Sprintf(" (conflicts in %s merged as a union)", strings.Join(d.Union, ", "))
		}
		return infoLine(v.pal.green.Sprint(msg))
	}),
	journal.On(func(_ lineStyle, _ journal.Event, d journal.ArchivedData) eventLine {
		if d.Skipped != "" {
			return infoLine("archived: nothing to fold, " + d.Skipped)
		}
		if len(d.Capabilities) == 0 { // skip_specs: true, a folder with no delta
			return infoLine("archived: no spec of openspec/specs updated, change folder in " + d.ArchiveDir)
		}
		specs := make([]string, len(d.Capabilities))
		for i, c := range d.Capabilities {
			specs[i] = path.Join("openspec/specs", c)
		}
		return infoLine(fmt.Sprintf("archived: %s updated, change folder in %s", strings.Join(specs, ", "), d.ArchiveDir))
	}),
	journal.On(func(_ lineStyle, _ journal.Event, d journal.MonitorHeartbeatData) eventLine {
		return hiddenLine(fmt.Sprintf("heartbeat: %d active, %d queued", len(d.Active), len(d.Queued)))
	}),
	journal.On(func(v lineStyle, _ journal.Event, d journal.BudgetExceededData) eventLine {
		if d.Field != "" {
			return failureLine(v.pal.red.Sprintf("%s budget spent (%d of %d, %s)", d.Budget, d.Used, d.Limit, d.Field))
		}
		return failureLine(v.pal.red.Sprintf("%s budget spent (%d of %d)", d.Budget, d.Used, d.Limit))
	}),
	journal.On(func(v lineStyle, _ journal.Event, d journal.SentinelActionData) eventLine {
		msg := fmt.Sprintf("sentinel: %s, rule %s (step %d of %d): %s", d.Action, d.Rule, d.Step, d.Steps, d.When)
		if d.BackoffMS > 0 {
			msg += fmt.Sprintf("; restarts in %s", ms(d.BackoffMS))
		}
		if d.Action == "warn" {
			return warnLine(v.pal.yellow.Sprint(msg))
		}
		return failureLine(v.pal.red.Sprint(msg))
	}),
	journal.On(func(v lineStyle, _ journal.Event, d journal.PushingData) eventLine {
		if d.Branch != "" {
			over := "a new branch"
			if d.Previous != "" {
				over = shortSHA(d.Previous)
			}
			return routineLine(fmt.Sprintf("pushing %s to %s's %s (over %s)", shortSHA(d.Commit), d.Remote, d.Branch, over))
		}
		return routineLine(fmt.Sprintf("pushing %s to %s's %s (over %s)", shortSHA(d.Commit), d.Remote, v.main, shortSHA(d.Previous)))
	}),
	journal.On(func(v lineStyle, _ journal.Event, d journal.PullRequestOpenedData) eventLine {
		msg := fmt.Sprintf("pull request #%d open: %s (%s at %s)", d.Number, d.URL, d.Branch, shortSHA(d.Head))
		switch {
		case d.MergeRefused != "":
			return warnLine(msg + "; the forge did not take it to merge: " + d.MergeRefused)
		case d.Way == "merge-queue" && d.QueueState != "":
			msg += fmt.Sprintf(", in %s's merge queue (%s)", v.main, strings.ToLower(d.QueueState))
		case d.Way == "merge-queue":
			msg += fmt.Sprintf(", in %s's merge queue", v.main)
		case d.Way != "":
			msg += ", auto-merge armed"
		default:
			msg += ", for a person to merge"
		}
		return infoLine(msg)
	}),
	journal.On(func(_ lineStyle, _ journal.Event, d journal.PullRequestFeedbackData) eventLine {
		if d.Kind == journal.FeedbackCheck {
			return warnLine(fmt.Sprintf("pull request #%d: the check %s failed; back to the agent", d.Number, d.By))
		}
		return warnLine(fmt.Sprintf("pull request #%d: %s requested changes; back to the agent", d.Number, d.By))
	}),
	journal.On(func(v lineStyle, _ journal.Event, d journal.GitDirChangedData) eventLine {
		changes := make([]string, len(d.Changes))
		for i, c := range d.Changes {
			changes[i] = fmt.Sprintf("%s (%s): %s", c.What, c.Path, c.Do)
		}
		return warnLine(v.pal.yellow.Sprintf("security: the repository's git directory, which every worktree shares, changed while no run watched it (the run before was killed): %s; set left it as it is",
			strings.Join(changes, "; ")))
	}),
	journal.On(func(_ lineStyle, _ journal.Event, d journal.ControlData) eventLine {
		what := d.Change
		if what == "" {
			what = "--all"
		}
		msg := fmt.Sprintf("setctl %s %s: %s", d.Action, what, strings.Join(d.Changes, ", "))
		if len(d.Changes) == 0 {
			msg = fmt.Sprintf("setctl %s %s: nothing to %s", d.Action, what, d.Action)
		}
		if d.By == "" {
			return infoLine(msg) // journaled before requests said who asked
		}
		// Who asked says where it came from: setctl or the dashboard.
		msg = strings.TrimPrefix(msg, "setctl ")
		if d.Action == control.Stop {
			msg = "stop: the run stops as on Ctrl-C"
		}
		return infoLine(msg + "; asked by " + d.By)
	}),
	journal.On(func(v lineStyle, _ journal.Event, d journal.ReplannedData) eventLine {
		msg := fmt.Sprintf("replan %d: %s uncovered (%s did not reach %s)", d.Cycle, strings.Join(d.Uncovered, ", "), strings.Join(d.Dropped, ", "), v.main)
		if d.Error != "" {
			return failureLine(v.pal.red.Sprint(msg + "; the planner gave no changes: " + d.Error))
		}
		return infoLine(msg + "; added " + strings.Join(d.Added, ", "))
	}),
	journal.On(func(_ lineStyle, _ journal.Event, d journal.RunFinishedData) eventLine {
		l := hiddenLine(fmt.Sprintf("run finished: %s (%s)", d.Result, ms(d.DurationMS)))
		switch d.Result {
		case "success":
		case "interrupted", "paused", "open":
			l.level = "warn"
		default:
			l.level = "error"
		}
		return l
	}),
	journal.On(func(v lineStyle, _ journal.Event, d journal.BaselineGateData) eventLine {
		when := ms(d.DurationMS)
		if d.Cached {
			when = "judged before"
		}
		// A gate red in a container that passes on the host fails for
		// what its base lacks.
		lacks := ""
		if d.OnHost == "pass" {
			lacks = fmt.Sprintf("; passes on the host (log %s): the base (%s) lacks something", d.HostLog, d.Base)
		}
		switch {
		case d.Result == "pass":
			return infoLine(fmt.Sprintf("baseline %s: %s (%s)", d.Gate, v.pal.green.Sprint("pass"), when))
		case d.Result == "skip": // the gate checked nothing (gate.SkipMarker)
			return infoLine(v.pal.dim.Sprintf("baseline %s: skipped, %s", d.Gate, d.Reason))
		case d.Mode == "warn":
			return warnLine(v.pal.yellow.Sprintf("baseline %s: fails on %s, not blocking (warn): %s (%s); log %s%s", d.Gate, v.main, d.Reason, when, d.Log, lacks))
		}
		return failureLine(fmt.Sprintf("baseline %s: %s on %s: %s (%s); log %s%s", d.Gate, v.pal.red.Sprint("FAIL"), v.main, d.Reason, when, d.Log, lacks))
	}),
	journal.On(func(v lineStyle, _ journal.Event, d journal.BaselineGateStartedData) eventLine {
		msg := fmt.Sprintf("baseline %s: started on %s", d.Gate, v.main)
		if len(d.Command) > 0 {
			msg += " (" + gate.CommandLine(d.Command) + ")"
		}
		return hiddenLine(msg)
	}),
	journal.On(func(v lineStyle, _ journal.Event, d journal.BaselineAcceptedData) eventLine {
		return warnLine(v.pal.yellow.Sprintf("baseline %s: %s of %s accepted; changes fail it only on others", d.Gate, english.Plural(len(d.Failures), "failure"), v.main))
	}),
	journal.On(func(v lineStyle, _ journal.Event, d journal.RepairedData) eventLine {
		text := "repaired after a crash: " + d.Problem
		if len(d.Removed) > 0 {
			text += "; removed " + strings.Join(d.Removed, ", ")
		}
		if d.Done != "" {
			text += "; " + d.Done
		}
		return warnLine(v.pal.yellow.Sprint(text))
	}),
)

package main

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/history"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/report"
	"github.com/set-engine/set/engine/state"
)

func explainCommand() command {
	return command{
		name:    "explain",
		summary: "tell why a change is where it is, from its journal",
		arg:     "change",
		usage: `Usage: setctl explain CHANGE [--run ID]

Explain tells the story of one change in one run of the project, from
its journal: what it is (its requirements, its dependencies, and, for a
change folder people wrote with OpenSpec, how many of the tasks of its
tasks.md are checked off: on the change's branch while it has one, else
on the main branch, in the folder or, once merged, in its archived
copy), then a timeline of every event of the change with its time, where
each gate's failure comes with the last lines of its output and the path
of its full log, each agent iteration with its prompt and log (and the
learnings the prompt carried: set.cue's adopted conventions that match
the change, what the run's other changes learnt), and every retry
context handed back to the agent in full; and last, where the change
stands now: what runs for it, what it waits for and why (a dependency,
the baseline's gate judging main, a free slot, the merge queue, a setctl
apply to continue), or why it failed and which budget it spent.

The run is the latest, or run ID with --run (setctl runs lists them):
the counts (iterations, gate runs, retries, tokens) and the timeline are
that run's own events of the change, and where it stands is where that
run left it. When the latest run did not work on the change, explain
tells the story of the latest run that did, and says so; an earlier
run's story says when a later run worked on the change again.

Examples:
  setctl explain greet
  setctl explain greet --run 20261127T075754Z
  setctl explain greet | less
  setctl -C examples/linkshort explain create-links
`,
		run: runExplain,
	}
}

func runExplain(e *env, args []string) int {
	c := explainCommand()
	fs := c.flagSet(e)
	runID := fs.String("run", "", "tell the change's story in run `ID` (default: the latest run that worked on it)")
	if code, done := c.parse(e, fs, args); done {
		return code
	}
	if fs.NArg() == 0 {
		return c.usageError(e, "which change? setctl explain CHANGE")
	}
	v, err := readRun(e, *runID)
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	name := fs.Arg(0)
	note, err := pickRun(v, name, *runID != "")
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	ch, err := v.change(name)
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	now := time.Now()
	rc, err := ownChange(v, ch.Name, now)
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	tasks := ""
	if v.userFolders() {
		tasks = v.tasksLine(ch)
	}
	var b bytes.Buffer
	explain(&b, v, ch, rc, v.own(ch.Name), note, tasks, now)
	if _, err := e.stdout.Write(b.Bytes()); err != nil {
		return e.errorf(c.name, "%v", err)
	}
	return exitOK
}

// logTailLines is how many of the last lines of a failing gate's log
// explain shows.
const logTailLines = 10

// pickRun settles the run v shows for the story of change: the run
// --run asked for (asked), else the latest run that worked on it (has
// events of it), or the latest run when none did. note is the line that
// says why the story is not the latest run's, or that the change's
// story goes on in a later run; "" when there is nothing to say.
func pickRun(v *runView, change string, asked bool) (note string, err error) {
	last, ok := lastRunOf(v, change)
	switch {
	case !ok:
		return "", nil
	case len(v.own(change)) > 0:
		if last.First > v.Run.First {
			return fmt.Sprintf("%s was worked on again in a later run, last in run %s (--run %[2]s)", change, last.ID), nil
		}
		return "", nil
	case asked:
		return fmt.Sprintf("run %s did not work on %s; it was last worked on in run %s (--run %[3]s)", v.Run.ID, change, last.ID), nil
	}
	note = fmt.Sprintf("%s was last worked on in run %s, not in the latest run %s; --run picks another run", change, last.ID, v.Run.ID)
	return note, v.Show(last)
}

// lastRunOf is the latest run of v's journal with events of change.
func lastRunOf(v *runView, change string) (history.Run, bool) {
	for i := len(v.Runs) - 1; i >= 0; i-- {
		if len(ofChange(v.Runs[i].Own(v.Journal), change)) > 0 {
			return v.Runs[i], true
		}
	}
	return history.Run{}, false
}

// ownChange is change name as the run v shows left it, at now, with the
// counts of the run's own work on it: its iterations, gate runs, retries,
// tokens and cost less what they were at the run's start. (A change
// goes on from an earlier run under the same work; a later plan that
// starts it again sets its counts to 0 but for its iteration numbers,
// which go on across runs.)
func ownChange(v *runView, name string, now time.Time) (report.Change, error) {
	st := state.New()
	for _, e := range v.Journal[:v.Run.First] {
		if err := state.Apply(st, e); err != nil {
			return report.Change{}, err
		}
	}
	var before report.Change
	prev := st.Changes[name]
	if prev != nil {
		before = report.ChangeOf(st, prev, report.Liveness{}, now)
	}
	for _, e := range v.own("") {
		if err := state.Apply(st, e); err != nil {
			return report.Change{}, err
		}
	}
	c := st.Changes[name]
	if c == nil {
		return report.Change{}, fmt.Errorf("no change %q in run %s", name, v.Run.ID)
	}
	rc := report.ChangeOf(st, c, v.Live, now)
	rc.Iteration -= before.Iteration
	if c == prev {
		g, b := &rc.Gates, before.Gates
		g.Runs, g.Passed, g.Failed, g.Warned, g.Skipped = g.Runs-b.Runs, g.Passed-b.Passed, g.Failed-b.Failed, g.Warned-b.Warned, g.Skipped-b.Skipped
		rc.Retries.Verify.Used -= before.Retries.Verify.Used
		rc.Retries.Integration.Used -= before.Retries.Integration.Used
		rc.Retries.Conflicts.Used -= before.Retries.Conflicts.Used
		rc.Calls -= before.Calls
		rc.Tokens.Used -= before.Tokens.Used
		rc.CostUSD -= before.CostUSD
	}
	return rc, nil
}

// explain writes the story of change ch in the run v shows at now: rc
// is the change as the run left it, with the counts of the run's own
// work (ownChange), events the run's own events of the change, note
// a line that says why the run is not the one asked for ("" when it is)
// and tasks the line of its OpenSpec task progress (tasksLine; "" for a
// change without a tasks.md).
func explain(w io.Writer, v *runView, ch *state.Change, rc report.Change, events []journal.Event, note, tasks string, now time.Time) {
	r := v.report(now)
	fmt.Fprintf(w, "%s: %s\n", ch.Name, ch.Status)
	reqs, deps := "none", "nothing"
	if len(ch.Requirements) > 0 {
		reqs = strings.Join(ch.Requirements, ", ")
	}
	if len(ch.DependsOn) > 0 {
		deps = strings.Join(ch.DependsOn, ", ")
	}
	fmt.Fprintf(w, "  requirements %s; depends on %s\n", reqs, deps)
	if tasks != "" {
		fmt.Fprintf(w, "  %s\n", tasks)
	}
	fmt.Fprintf(w, "  %s, %s (%d passed, %d failed, %d warned), retries %s verify and %s integration%s, %s\n",
		english.Plural(rc.Iteration, "iteration"), english.Plural(rc.Gates.Runs, "gate run"), rc.Gates.Passed, rc.Gates.Failed, rc.Gates.Warned,
		report.Used(rc.Retries.Verify, report.Count), report.Used(rc.Retries.Integration, report.Count), conflictsPart(rc.Retries.Conflicts),
		report.TokensAndCost(rc))
	fmt.Fprintf(w, "  run %s: %s\n", cmp.Or(r.Run.ID, "-"), runLine(r.Run, now))
	if note != "" {
		fmt.Fprintf(w, "  %s\n", note)
	}

	fmt.Fprintln(w, "\nTimeline:")
	// Sentinel actions (SENTINEL_ACTION, once the sentinel journals them)
	// take their place here like every event of the change: each is
	// described by describeEvent.
	main := v.mainBranch()
	if len(events) == 0 {
		fmt.Fprintf(w, "  (no event of %s in run %s)\n", ch.Name, cmp.Or(r.Run.ID, "-"))
	}
	reused := reusedLogs(events)
	for i, e := range events {
		if e.Type == journal.GateStarted && verdictFollows(events[i+1:], e) {
			continue // its verdict says it all
		}
		fmt.Fprintf(w, "  %s  %s\n", eventTime(e.Time), describeEvent(e, main, noColors).text)
		if e.Type == journal.ChangeIntegrationFailed && retryFollows(events[i+1:], e) {
			continue // the retry's line quotes its context
		}
		for _, line := range eventDetail(v, e, reused[i]) {
			fmt.Fprintf(w, "      %s\n", line)
		}
	}

	fmt.Fprintln(w, "\nNow:")
	for _, line := range standing(rc, ch, events, main, now) {
		fmt.Fprintf(w, "  %s\n", line)
	}
}

// verdictFollows reports whether the verdict of the gate run that started
// with start is among later.
func verdictFollows(later []journal.Event, start journal.Event) bool {
	s, err := journal.Decode[journal.GateStartedData](start)
	if err != nil {
		return false
	}
	for _, e := range later {
		if e.Type != journal.VerifyGate {
			continue
		}
		if d, err := journal.Decode[journal.VerifyGateData](e); err == nil && d.Stage == s.Stage && d.Gate == s.Gate && d.Attempt == s.Attempt {
			return true
		}
	}
	return false
}

// retryFollows reports whether the retry that integration failure failed
// schedules is among later, with the same retry context: a conflict or a
// red integration gate journals its context, and the retry journals it
// again. A retry comes before the change's next integration failure.
func retryFollows(later []journal.Event, failed journal.Event) bool {
	f, err := journal.Decode[journal.ChangeIntegrationFailedData](failed)
	if err != nil || f.RetryContext == "" {
		return false
	}
	for _, e := range later {
		switch e.Type {
		case journal.ChangeIntegrationFailed:
			return false
		case journal.RetryScheduled:
			d, err := journal.Decode[journal.RetryScheduledData](e)
			return err == nil && d.RetryContext == f.RetryContext
		}
	}
	return false
}

// reusedLogs are the indexes of the gate verdicts among events whose log
// a later event names again. Only a journal written before gate numbers
// went on across plans has them (journal.VerifyGateData.Attempt): a
// later plan's gate run took the same number, and its log is the file.
func reusedLogs(events []journal.Event) map[int]bool {
	last := map[string]int{}
	for i, e := range events {
		logs, _ := state.Logs([]journal.Event{e}) // an event that does not decode names no log
		for _, l := range logs {
			last[l.Path] = i
		}
	}
	reused := map[int]bool{}
	for i, e := range events {
		if e.Type != journal.VerifyGate {
			continue
		}
		if logs, _ := state.Logs([]journal.Event{e}); len(logs) == 1 && last[logs[0].Path] > i {
			reused[i] = true
		}
	}
	return reused
}

// eventDetail is what explain shows under an event's line: a failing
// gate's log and the end of its output, an iteration's prompt and log,
// the retry context handed to the agent. reused says that a later gate
// run wrote its log over the gate verdict e's (reusedLogs): the end of
// the file would be that run's output, not e's.
func eventDetail(v *runView, e journal.Event, reused bool) []string {
	switch e.Type {
	case journal.VerifyGate:
		d, err := journal.Decode[journal.VerifyGateData](e)
		if err != nil || d.Result == "pass" || d.Result == "skip" || d.Log == "" {
			return nil
		}
		lines := []string{"log " + d.Log}
		if d.Result == "fail" {
			lines = nil // the line names the log
		}
		if reused {
			return append(lines, "(a later run of the gate wrote its own output over this log)")
		}
		return append(lines, logTail(v, d.Log, logTailLines)...)
	case journal.AgentSessionDecision:
		d, err := journal.Decode[journal.AgentSessionDecisionData](e)
		if err != nil {
			return nil
		}
		return promptCarried(d)
	case journal.AgentIteration:
		d, err := journal.Decode[journal.AgentIterationData](e)
		if err != nil {
			return nil
		}
		return []string{fmt.Sprintf("prompt %s, log %s", d.Prompt, d.Log)}
	case journal.GateStarted:
		d, err := journal.Decode[journal.GateStartedData](e)
		if err != nil || d.Log == "" {
			return nil
		}
		return []string{"log " + d.Log}
	case journal.RetryScheduled:
		d, err := journal.Decode[journal.RetryScheduledData](e)
		if err != nil {
			return nil
		}
		return retryContext(d.RetryContext)
	case journal.ChangeIntegrationFailed:
		d, err := journal.Decode[journal.ChangeIntegrationFailedData](e)
		if err != nil {
			return nil
		}
		return retryContext(d.RetryContext)
	}
	return nil
}

// promptCarried is what an iteration's prompt carried beyond the change
// and its retry context, as its AGENT_SESSION_DECISION names it: the
// adopted learnings (conventions) and the episodes of the run's other
// changes.
func promptCarried(d journal.AgentSessionDecisionData) []string {
	var lines []string
	if len(d.Learnings) > 0 {
		noun := "learning"
		if len(d.Learnings) > 1 {
			noun = "learnings"
		}
		lines = append(lines, "its prompt carried the "+noun+" "+english.List(d.Learnings))
	}
	if len(d.Siblings) > 0 {
		lines = append(lines, "its prompt carried what other changes of this run learnt:")
		for _, s := range d.Siblings {
			lines = append(lines, "│ "+s)
		}
	}
	return lines
}

// retryContext is a retry context as explain quotes it.
func retryContext(rc string) []string {
	if rc == "" {
		return nil
	}
	lines := []string{"retry context handed to the agent:"}
	for _, l := range strings.Split(strings.TrimRight(rc, "\n"), "\n") {
		lines = append(lines, "│ "+l)
	}
	return lines
}

// logTail is the last n lines of the log at rel (relative to the
// project), each quoted; a line that says so when the log is gone.
func logTail(v *runView, rel string, n int) []string {
	data, err := os.ReadFile(filepath.Join(v.layout.Root(), filepath.FromSlash(rel)))
	if err != nil {
		return []string{fmt.Sprintf("(the log cannot be read: %v)", errorText(err))}
	}
	text := strings.TrimRight(string(data), "\n")
	if text == "" {
		return []string{"(the log is empty)"}
	}
	all := strings.Split(text, "\n")
	var out []string
	if len(all) > n {
		out = append(out, fmt.Sprintf("│ … (%s before)", english.Plural(len(all)-n, "line")))
		all = all[len(all)-n:]
	}
	for _, l := range all {
		out = append(out, "│ "+l)
	}
	return out
}

// errorText is err without the path an *os.PathError repeats.
func errorText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// standing says where the change stands at now: what runs for it, what it
// waits for, why it failed, or that it is on the main branch main.
func standing(rc report.Change, ch *state.Change, events []journal.Event, main string, now time.Time) []string {
	switch {
	case ch.Status == state.Archived:
		return []string{fmt.Sprintf("It is on %s: commit %s.", main, report.Short(ch.MergedCommit))}
	case rc.Activity != nil:
		a := rc.Activity
		line := fmt.Sprintf("It is at work: %s", a.Name)
		if a.Iteration > 0 { // an agent: its command names the agent
			line += fmt.Sprintf(" %s, iteration %d", a.Command, a.Iteration)
		}
		if a.Attempt > 0 {
			line += fmt.Sprintf(", %s attempt %d", a.Stage, a.Attempt)
		}
		line += fmt.Sprintf(", for %s.", age(now.Sub(a.Since)))
		lines := []string{line}
		if a.Command != "" && a.Iteration == 0 {
			lines = append(lines, "Command: "+a.Command)
		}
		if a.Log != "" {
			lines = append(lines, "Log: "+a.Log+" (setctl logs "+ch.Name+" --follow)")
		}
		return lines
	case rc.Waiting != "":
		return []string{"It waits for " + rc.Waiting + "."}
	}
	lines := []string{fmt.Sprintf("It %s: %s.", map[bool]string{true: "failed", false: "is blocked"}[ch.Status.Failed()], ch.Error)}
	if b := lastBudget(events); b != "" {
		lines = append(lines, b)
	}
	return append(lines, "A new `setctl apply` retries it with fresh budgets.")
}

// lastBudget describes the last BUDGET_EXCEEDED of events; "" when none.
func lastBudget(events []journal.Event) string {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == journal.BudgetExceeded {
			d, err := journal.Decode[journal.BudgetExceededData](events[i])
			if err != nil {
				return ""
			}
			used, limit := fmt.Sprint(d.Used), fmt.Sprint(d.Limit)
			switch d.Budget {
			case "tokens":
				used, limit = english.Tokens(d.Used), english.Tokens(d.Limit)
			case "wallTime":
				used, limit = report.Duration(d.Used), report.Duration(d.Limit)
			}
			return fmt.Sprintf("Budget spent: %s, %s used of %s.", d.Budget, used, limit)
		}
	}
	return ""
}

// conflictsPart is the conflicts a change went back to its agent for,
// after its retries in explain's summary line; "" for a run that recorded
// no conflicts budget and a change that had none.
func conflictsPart(c report.Budgeted) string {
	if c.Budget == 0 && c.Used == 0 {
		return ""
	}
	return fmt.Sprintf(", %s conflicts", report.Used(c, report.Count))
}

// Package rundir owns the layout of a project's run directory, .set: the
// one place that knows where each stage keeps its journal, state, plan,
// logs, process files, worktrees, prompts and baseline.
//
// Invariants:
//   - Every path is below <root>/.set, and every path a journal event or a
//     message records (a log, a prompt) is the same file as a slash path
//     relative to the project root (".set/logs/greet/verify-test-1.log"),
//     whatever the operating system.
//   - A change's files are below folders named after the change; a name
//     that starts with "_" is never a change's, as a change's name is
//     kebab-case.
//   - Nothing a run writes replaces a file an earlier run wrote and its
//     events name: what every run writes anew (its report, its plan, the
//     baseline's logs) is kept in the run's own folder, Run(id), and the
//     numbers that name a change's logs and prompts go on across runs
//     (see state.Change.Iteration). Report and Plan are copies of the
//     latest run's, for the habits and tools that read them there. A run
//     is gone only when setctl prune (or the history.keep retention)
//     removes it.
package rundir

import (
	"fmt"
	"path"
	"path/filepath"
	"strconv"

	"github.com/set-engine/set/engine/journal"
)

// Name is the run directory's name in the project root.
const Name = ".set"

// Layout is the run directory of the project at a root.
type Layout struct {
	root string
}

// New is the layout of the run directory of the project at root.
func New(root string) Layout { return Layout{root: root} }

// Root is the project root.
func (l Layout) Root() string { return l.root }

// Dir is the run directory, <root>/.set.
func (l Layout) Dir() string { return filepath.Join(l.root, Name) }

// Events is the run's journal (see journal.Open).
func (l Layout) Events() string { return l.abs(journal.EventsFile) }

// State is the snapshot of the state rebuilt from the journal.
func (l Layout) State() string { return l.abs("state.json") }

// Report is the latest run's report, written at the end of every run
// (see engine/report) beside its own copy, RunReport.
func (l Layout) Report() string { return l.abs("report.md") }

// Plan is the plan the latest run executes (a copy of RunPlan's).
func (l Layout) Plan() string { return l.abs("plan.json") }

// Runs holds a folder per run, named by its ID: what each run writes
// once per run (report, plan, the baseline's logs), kept until the run is
// pruned.
func (l Layout) Runs() string { return l.abs(RunsDir) }

// RunsDir is the name of Runs in the run directory.
const RunsDir = "runs"

// Run is the folder of the run with ID id: .set/runs/<id>.
func (l Layout) Run(id string) string { return l.abs(RunsDir, id) }

// RunReport is the report of the run with ID id, written at its end:
// .set/runs/<id>/report.md.
func (l Layout) RunReport(id string) string { return l.abs(RunsDir, id, "report.md") }

// RunPlan is the plan the run with ID id executes:
// .set/runs/<id>/plan.json.
func (l Layout) RunPlan(id string) string { return l.abs(RunsDir, id, "plan.json") }

// Procs holds a PID file for each agent and gate process while it runs.
func (l Layout) Procs() string { return l.abs("procs") }

// Control is the file of requests to the running apply (setctl pause and
// setctl resume append to it; see engine/control).
func (l Layout) Control() string { return l.abs("control.jsonl") }

// FastForward records the move of main's checkout that the merge queue is
// making, from before it starts until it is done (see git.FastForward),
// so that a run killed half-way through it finishes it on resume.
func (l Layout) FastForward() string { return l.abs("fast-forward.json") }

// Worktrees holds the worktree of each change at work.
func (l Layout) Worktrees() string { return l.abs("worktrees") }

// Worktree is the worktree of a change.
func (l Layout) Worktree(change string) string { return l.abs("worktrees", change) }

// SpareWorktree is the n-th worktree a run keeps for reuse (see
// git.ParkWorktree), beside the changes' worktrees under a name no change
// has (change names never start with a dot).
func (l Layout) SpareWorktree(n int) string {
	return l.abs("worktrees", ".spare-"+strconv.Itoa(n))
}

// Trash is the n-th directory a run moves a removed worktree's files
// into before it deletes them (see git.SetAsideWorktree), beside the
// changes' worktrees under a name no change has: reconcile discards one
// a stopped run left.
func (l Layout) Trash(n int) string {
	return l.abs("worktrees", ".trash-"+strconv.Itoa(n))
}

// Sessions holds the running totals of the agents' sessions.
func (l Layout) Sessions() string { return l.abs("sessions") }

// Logs is the folder of a change's logs.
func (l Layout) Logs(change string) string { return l.abs("logs", change) }

// GateLog is the log of one gate run of a change's stage, as an absolute
// path and as the slash path relative to the root that the journal
// records: .set/logs/<change>/<stage>-<gate>-<attempt>.log.
func (l Layout) GateLog(change, stage, gate string, attempt int) (abs, rel string) {
	return l.both("logs", change, fmt.Sprintf("%s-%s-%d.log", stage, gate, attempt))
}

// AgentLog is the output of a change's agent in iteration n:
// .set/logs/<change>/agent-<n>.log (absolute, and relative as journaled).
func (l Layout) AgentLog(change string, n int) (abs, rel string) {
	return l.both("logs", change, fmt.Sprintf("agent-%d.log", n))
}

// Prompt is the prompt of a change's agent in iteration n:
// .set/changes/<change>/prompt-<n>.md (absolute, and relative as
// journaled).
func (l Layout) Prompt(change string, n int) (abs, rel string) {
	return l.both("changes", change, fmt.Sprintf("prompt-%d.md", n))
}

// RegenerateLog is the output of the commands that regenerated a change's
// generated files in integration attempt attempt (INTEGRATION_ATTEMPT):
// .set/logs/<change>/regenerate-<attempt>.log (absolute, and relative to
// the root). No event names it; prune finds it from the attempt's event.
func (l Layout) RegenerateLog(change string, attempt int) (abs, rel string) {
	return l.both("logs", change, fmt.Sprintf("regenerate-%d.log", attempt))
}

// DaggerLog is the output of the Dagger engine the container runner
// talks to.
func (l Layout) DaggerLog() string { return l.abs("logs", "dagger.log") }

// Baseline is the detached checkout of main the baseline's gates run in.
func (l Layout) Baseline() string { return l.abs("baseline") }

// GitDirSnapshot holds the snapshot of the shared git directory's hooks
// and configuration a run's guard compares with (git.ExecSnapshot), from
// before the run's first dispatch until the run's last check: one left
// there was taken by a run killed before its end.
func (l Layout) GitDirSnapshot() string { return l.abs("gitdir.json") }

// BaselineCache holds the baseline's verdicts on main's trees.
func (l Layout) BaselineCache() string { return l.abs("baseline.json") }

// BaselineLog is the log of a gate judging main in the run with ID run:
// .set/runs/<run>/baseline/<gate>.log (absolute, and relative as
// journaled). A verdict from the cache names the log of the run that
// judged the tree.
func (l Layout) BaselineLog(run, gate string) (abs, rel string) {
	return l.both(RunsDir, run, "baseline", gate+".log")
}

// BaselineHostLog is the log of a gate that failed on main in a container,
// run again on the host to tell the base's fault from main's:
// .set/runs/<run>/baseline/<gate>.host.log (a gate's name has no dot, so
// no gate's own log can be named so).
func (l Layout) BaselineHostLog(run, gate string) (abs, rel string) {
	return l.both(RunsDir, run, "baseline", gate+".host.log")
}

// DashboardLogs is the folder, under logs, of the output of the applies
// the dashboard started: a name no change can have.
const DashboardLogs = "_dashboard"

// DashboardApplyStamp is the time format of the stamp that names a
// dashboard's apply log (DashboardApplyLog), in UTC.
const DashboardApplyStamp = "20060102T150405.000Z"

// DashboardApplyLog is the output of a setctl apply the dashboard started
// at the run-ID-like time stamp at: .set/logs/_dashboard/apply-<at>.log
// (absolute, and relative as the page asks for it).
func (l Layout) DashboardApplyLog(at string) (abs, rel string) {
	return l.both("logs", DashboardLogs, "apply-"+at+".log")
}

// abs is the path of elem below the run directory.
func (l Layout) abs(elem ...string) string {
	return filepath.Join(append([]string{l.root, Name}, elem...)...)
}

// both is the path of elem below the run directory, absolute and as a
// slash path relative to the root.
func (l Layout) both(elem ...string) (abs, rel string) {
	rel = path.Join(append([]string{Name}, elem...)...)
	return filepath.Join(l.root, filepath.FromSlash(rel)), rel
}

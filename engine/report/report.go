// Package report says where a run stands, for people and for machines: a
// Report built from the projection of the journal (engine/state) and the
// liveness of the run's setctl apply. setctl status prints it (as text,
// or as JSON with --json), and every run ends by writing it to
// .set/report.md (Markdown).
//
// Invariants: a Report holds nothing the projection does not say, apart
// from the run's liveness and the time it is built at; its changes come in
// plan order, its roles and coverage sorted, so that the same journal
// gives the same Report at the same time.
package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/gate"
	"github.com/set-engine/set/engine/llm/usage"
	"github.com/set-engine/set/engine/state"
)

// FormatVersion is the version of the Report's JSON (setctl status
// --json, the dashboard's overview). Within a version fields are only
// added (run.later and a change's agent were, to version 1); renaming or
// removing one makes a new version.
const FormatVersion = 1

// Run states: where the latest run stands.
const (
	// NoRun: the project has no run in its journal and no apply holds
	// its lock.
	NoRun = "none"
	// Starting: an apply holds the lock but has not journaled its
	// RUN_STARTED yet.
	Starting = "starting"
	// Running: the run's apply holds the lock.
	Running = "running"
	// NotRunning: the run did not finish and no apply holds the lock:
	// its apply is gone (killed, or the machine went down). `setctl
	// apply` continues it.
	NotRunning = "not running"
	// Finished: the run journaled RUN_FINISHED.
	Finished = "finished"
)

// Liveness is what the project's run lock says (state.LockHolder).
type Liveness struct {
	// Held: a process holds the lock; PID is its PID (0 when unknown).
	Held bool
	PID  int
	// Later is the ID of the run that came after the one reported, when
	// it is an earlier run of the journal (setctl status --run, the
	// dashboard's ?run=); "" for the latest. An earlier run is never
	// running, and one that stopped before its end was not resumed:
	// nothing of it waits for an apply to continue it.
	Later string
}

// Report is where a run stands.
type Report struct {
	Version int `json:"version"`
	Run     Run `json:"run"`
	// Changes are the changes of the latest plan, in plan order.
	Changes []Change `json:"changes"`
	// Roles are the model calls of the run by role, sorted by name.
	Roles []Role `json:"roles"`
	// Coverage maps each requirement of the plan to the change that
	// implements it, sorted by requirement.
	Coverage []Coverage `json:"coverage"`
	// (The sentinel's actions join the report once the sentinel journals
	// them, through the projection like every other fact here.)
}

// Run is the run as a whole, as the report shows it (the orchestrator's,
// planner's and dashboard's unexported run types are their work on one
// run: orchestrator.run, planner.run, dashboard.run).
type Run struct {
	ID string `json:"id,omitempty"`
	// State is NoRun, Starting, Running, NotRunning or Finished.
	State string `json:"state"`
	// Result is a finished run's: "success", "failed" or "interrupted".
	Result string `json:"result,omitempty"`
	// PID is the run's apply: the lock holder's while it runs, else the
	// one RUN_STARTED recorded.
	PID         int `json:"pid,omitempty"`
	MaxParallel int `json:"maxParallel,omitempty"`
	// Started is when the run's latest apply started; LastEvent the time
	// of its last event, its last heartbeat.
	Started   time.Time `json:"started,omitzero"`
	LastEvent time.Time `json:"lastEvent,omitzero"`
	// DurationMS is the time from Started to LastEvent, or to now while
	// the run goes.
	DurationMS int64 `json:"durationMs"`
	// Changes counts the plan's changes, OnMain those archived.
	Changes int `json:"changes"`
	OnMain  int `json:"onMain"`
	// Statuses counts the changes by status.
	Statuses map[string]int `json:"statuses"`
	// Baseline is the gate judging main while the run waits for its
	// baseline, before it dispatches anything (stage "baseline"); nil
	// when none runs, and always once the run is over or gone. Waiting
	// then says what the run waits for, as a change's Waiting does; ""
	// when Baseline is nil.
	Baseline *Activity `json:"baseline,omitempty"`
	Waiting  string    `json:"waiting,omitempty"`
	// Later is the run that came after this one (Liveness.Later), when
	// the report is of an earlier run; "" for the latest.
	Later string `json:"later,omitempty"`
}

// Change is one change of the run, as the report shows it. The report's
// types are their own, not the state's they are built from
// (state.Change here): their JSON is setctl status --json, a published
// format with its own FormatVersion, which the state snapshot is not.
type Change struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	// Since is when it took its status. AgeMS is its age: for a change on
	// its way, how long it has been in its status, until now (also once
	// the run is over: a change paused or left pending waits still); for
	// a change done (merged, archived, failed, blocked), its age at its end, the
	// time from its plan to its last status that a run was going (the sum
	// of its Stages), not how close to the run's end it finished.
	Since time.Time `json:"since,omitzero"`
	AgeMS int64     `json:"ageMs"`
	// Activity is what runs for it now; nil when nothing does (and
	// always once the run is over or gone).
	Activity *Activity `json:"activity,omitempty"`
	// Waiting says what it waits for, and why; "" when it waits for
	// nothing: at work, on main, failed or blocked (Error says why).
	Waiting string `json:"waiting,omitempty"`
	// Iteration is the agent iteration it is at: the last one started,
	// whether it ran to its end, runs, or was interrupted.
	Iteration int `json:"iteration"`
	// Agent is the adapter of its last agent iteration (state.Change's):
	// an "exec" agent reports no tokens.
	Agent   string  `json:"agent,omitempty"`
	Gates   Gates   `json:"gates"`
	Retries Retries `json:"retries"`
	// Calls counts the model calls journaled for it (LLM_CALL, of every
	// role): 0 when its agent reported no usage (an exec agent, a replay
	// without usage) and nothing else called a model for it, and then
	// Tokens and CostUSD say nothing of its work (TokensAndCost).
	Calls   int      `json:"calls"`
	Tokens  Budgeted `json:"tokens"`
	CostUSD float64  `json:"costUsd"`
	// Stages is the time it spent in each stage of its way to main.
	Stages Stages `json:"stages"`
	// Error is why it failed or is blocked.
	Error        string   `json:"error,omitempty"`
	DependsOn    []string `json:"dependsOn"`
	Requirements []string `json:"requirements"`
	// Commit is its one commit on main, once merged.
	Commit string `json:"commit,omitempty"`
	// PullRequest is its pull request (pull-request delivery), once one
	// was opened.
	PullRequest *PullRequest `json:"pullRequest,omitempty"`
	// Tasks is the progress of its OpenSpec tasks.md, where its work
	// stands (the change's branch, else main, else its archived folder);
	// nil for a change without one. The journal does not hold it: setctl
	// status --json reads it from git, and a report built from the
	// journal alone leaves it nil.
	Tasks *Tasks `json:"tasks,omitempty"`
}

// Tasks counts the tasks of a change's tasks.md as OpenSpec does
// (`openspec list`): Done of Total are checked off.
type Tasks struct {
	Done  int `json:"done"`
	Total int `json:"total"`
}

// PullRequest is a change's pull request on the forge.
type PullRequest struct {
	Number int    `json:"number"`
	URL    string `json:"url"`
	// Head is the candidate it was last opened with; Way how the forge
	// merges it ("merge-queue", "auto-merge", "" for a person).
	Head string `json:"head"`
	Way  string `json:"way,omitempty"`
}

// Activity is what runs for a change (state.Activity, named).
type Activity struct {
	// Name is "agent", "gate:<name>" or "integrate".
	Name      string `json:"name"`
	Stage     string `json:"stage,omitempty"`
	Attempt   int    `json:"attempt,omitempty"`
	Iteration int    `json:"iteration,omitempty"`
	// Command is what runs: an exec gate's command line (gate.CommandLine:
	// a script cut to its first line), or the agent's adapter and model.
	Command string    `json:"command,omitempty"`
	Log     string    `json:"log,omitempty"`
	Since   time.Time `json:"since"`
}

// Gates counts a change's gate verdicts: those of every run, and Latest.
type Gates struct {
	Runs    int `json:"runs"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Warned  int `json:"warned"`
	Skipped int `json:"skipped"`
	// Latest counts its gates, each by its latest verdict in each stage:
	// a gate run again (a retry, a resume, a merge-conflict round) counts
	// once.
	Latest Verdicts `json:"latest"`
}

// Verdicts counts gates by verdict.
type Verdicts struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Warned  int `json:"warned"`
	Skipped int `json:"skipped"`
}

// Retries are the retries a change used in each stage, against its
// budgets (0 when the run did not record them). cond.Retries, the same
// counts without the budgets, is what conditions read. Conflicts are the
// merge conflicts it went back to its agent for, which are not its
// agent's mistakes and spend neither of the others.
type Retries struct {
	Verify      Budgeted `json:"verify"`
	Integration Budgeted `json:"integration"`
	Conflicts   Budgeted `json:"conflicts"`
}

// Budgeted is an amount used against its budget; Budget is 0 when there is
// none, or the journal does not say.
type Budgeted struct {
	Used   int64 `json:"used"`
	Budget int64 `json:"budget"`
}

// Stages is the time a change spent on each stage of its way to main, in
// milliseconds, counted only while a run was going: waiting (pending: its
// dependencies, a free slot), with its agent (dispatched, implementing, and
// sent back after a failure), verifying, in the merge queue, and being
// integrated (merged, until archived).
type Stages struct {
	WaitMS      int64 `json:"waitMs"`
	AgentMS     int64 `json:"agentMs"`
	VerifyMS    int64 `json:"verifyMs"`
	QueueMS     int64 `json:"queueMs"`
	IntegrateMS int64 `json:"integrateMs"`
}

// Role is the model calls of one role, summed: the report's line for an
// llm.Role.
type Role struct {
	// Name is the role: "agent" (the coding agents' calls, journaled as
	// role "implement"), or the role as journaled.
	Name    string       `json:"name"`
	Calls   int          `json:"calls"`
	Tokens  usage.Tokens `json:"tokens"`
	CostUSD float64      `json:"costUsd"`
}

// Coverage is one requirement of the plan and where it stands.
type Coverage struct {
	Requirement string `json:"requirement"`
	Change      string `json:"change"`
	Status      string `json:"status"`
	// Commit is the change's commit on main, once merged.
	Commit string `json:"commit,omitempty"`
}

// Build is the report of the run s projects, whose lock says live, at now.
func Build(s *state.State, live Liveness, now time.Time) Report {
	r := Report{Version: FormatVersion, Run: run(s, live), Changes: []Change{}, Roles: []Role{}, Coverage: []Coverage{}}
	// Once the run is over, times run to its last event, so that the
	// report of a finished run is the same whenever it is made.
	end := now
	if r.Run.State != Running {
		end = s.Updated
	}
	if !r.Run.Started.IsZero() {
		r.Run.DurationMS = max(end.Sub(r.Run.Started), 0).Milliseconds()
	}
	usage := map[string]state.Usage{}
	addUsage := func(m map[string]state.Usage) {
		for role, u := range m {
			t := usage[role]
			usage[role] = state.Usage{Calls: t.Calls + u.Calls, Tokens: t.Tokens.Add(u.Tokens), CostUSD: t.CostUSD + u.CostUSD}
		}
	}
	addUsage(s.Usage)
	for _, name := range Names(s) {
		c := s.Changes[name]
		r.Changes = append(r.Changes, change(s, c, r.Run, end, now))
		r.Run.Statuses[string(c.Status)]++
		if c.Status == state.Archived {
			r.Run.OnMain++
		}
		addUsage(c.Usage)
		for _, req := range c.Requirements {
			r.Coverage = append(r.Coverage, Coverage{Requirement: req, Change: name, Status: string(c.Status), Commit: c.MergedCommit})
		}
	}
	r.Run.Changes = len(r.Changes)
	for _, role := range slices.Sorted(maps.Keys(usage)) {
		u := usage[role]
		r.Roles = append(r.Roles, Role{Name: RoleName(role), Calls: u.Calls, Tokens: u.Tokens, CostUSD: u.CostUSD})
	}
	slices.SortStableFunc(r.Coverage, func(a, b Coverage) int { return cmp.Compare(a.Requirement, b.Requirement) })
	return r
}

// ChangeOf is change c of s as Build reports it, whose lock says live,
// at now; also a change the latest plan of s does not name (Build leaves
// it out), as setctl explain tells the story of a change of an earlier
// plan.
func ChangeOf(s *state.State, c *state.Change, live Liveness, now time.Time) Change {
	rr := run(s, live)
	end := now
	if rr.State != Running {
		end = s.Updated
	}
	return change(s, c, rr, end, now)
}

// Names are the changes of the latest plan of s, in plan order; every
// known change when no plan names any.
func Names(s *state.State) []string {
	if len(s.Plan.Changes) == 0 {
		return slices.Clone(s.Order)
	}
	var names []string
	for _, name := range s.Order {
		if slices.Contains(s.Plan.Changes, name) && s.Changes[name] != nil {
			names = append(names, name)
		}
	}
	return names
}

// RoleName is the name a report gives the model calls of a journaled
// role: "agent" for the coding agents' ("implement").
func RoleName(role string) string {
	if role == "implement" {
		return "agent"
	}
	return role
}

// run is the run's part of the report, but its duration.
func run(s *state.State, live Liveness) Run {
	r := Run{ID: s.Run, PID: s.PID, MaxParallel: s.MaxParallel, Started: s.Started, LastEvent: s.Updated, Statuses: map[string]int{}, Later: live.Later}
	switch {
	case live.Held && (s.Run == "" || s.Finished):
		r.State, r.PID = Starting, live.PID
	case live.Held:
		r.State, r.PID = Running, live.PID
	case s.Run == "":
		r.State = NoRun
	case s.Finished:
		r.State, r.Result = Finished, s.Result
	default:
		r.State = NotRunning
	}
	if a := s.Baseline; a != nil && r.State == Running {
		r.Baseline = &Activity{Name: a.Name(), Stage: a.Stage, Command: gate.CommandLine(a.Command), Log: a.Log, Since: a.Since}
		r.Waiting = baselineWaiting(s)
	}
	return r
}

// change is c's part of the report at now; rr is the run's part and end
// the time the report's times run to.
func change(s *state.State, c *state.Change, rr Run, end, now time.Time) Change {
	runState := rr.State
	rc := Change{
		Name: c.Name, Status: string(c.Status), Since: c.Since, Iteration: max(c.Iteration, c.StartedIteration),
		Gates:     Gates{Runs: c.Gates.Runs(), Passed: c.Gates.Passed, Failed: c.Gates.Failed, Warned: c.Gates.Warned, Skipped: c.Gates.Skipped},
		Calls:     c.Calls(),
		Tokens:    Budgeted{Used: c.Tokens.Total()},
		CostUSD:   c.CostUSD,
		Error:     c.Error,
		DependsOn: nonNil(c.DependsOn), Requirements: nonNil(c.Requirements),
		Commit: c.MergedCommit, Agent: c.Agent,
	}
	if pr := c.PullRequest; pr != nil {
		rc.PullRequest = &PullRequest{Number: pr.Number, URL: pr.URL, Head: pr.Head, Way: pr.Way}
	}
	latest := state.Latest(c.GateResults)
	rc.Gates.Latest = Verdicts{Passed: latest.Passed, Failed: latest.Failed, Warned: latest.Warned, Skipped: latest.Skipped}
	rc.Retries.Verify.Used, rc.Retries.Integration.Used = int64(c.VerifyAttempts), int64(c.IntegrationAttempts)
	rc.Retries.Conflicts.Used = int64(c.ConflictAttempts)
	if b := s.Budgets; b != nil {
		rc.Retries.Verify.Budget, rc.Retries.Integration.Budget = int64(b.RetriesVerify), int64(b.RetriesIntegration)
		rc.Retries.Conflicts.Budget = int64(b.RetriesConflicts)
		rc.Tokens.Budget = b.Tokens[c.Size]
	}
	if a := c.Activity; a != nil && runState == Running {
		rc.Activity = &Activity{
			Name: a.Name(), Stage: a.Stage, Attempt: a.Attempt, Iteration: a.Iteration,
			Command: gate.CommandLine(a.Command), Log: a.Log, Since: a.Since,
		}
		if a.Kind == state.ActivityAgent {
			rc.Activity.Command = strings.TrimSpace(a.Agent + " " + a.Model)
		}
	}
	in := func(sts ...state.Status) int64 {
		var d time.Duration
		for _, st := range sts {
			d += c.TimeIn(st, end)
		}
		return d.Milliseconds()
	}
	rc.Stages = Stages{
		WaitMS:      in(state.Pending),
		AgentMS:     in(state.Dispatched, state.Implementing, state.VerifyFailed, state.IntegrationFailed),
		VerifyMS:    in(state.Verifying),
		QueueMS:     in(state.Queued),
		IntegrateMS: in(state.Integrating, state.InReview, state.Merged),
	}
	switch {
	case c.Status.Terminal():
		st := rc.Stages
		rc.AgeMS = st.WaitMS + st.AgentMS + st.VerifyMS + st.QueueMS + st.IntegrateMS
	case c.Status == state.Merged:
		// On main: its work is done; the time until its archive is not
		// its own.
		st := rc.Stages
		rc.AgeMS = st.WaitMS + st.AgentMS + st.VerifyMS + st.QueueMS + st.IntegrateMS - c.TimeIn(state.Merged, end).Milliseconds()
	case !c.Since.IsZero():
		rc.AgeMS = max(now.Sub(c.Since), 0).Milliseconds()
	}
	rc.Waiting = Waiting(s, c, runState)
	if rc.Waiting != "" && rr.Later != "" {
		// An earlier run is not continued: a later run went on.
		rc.Waiting = fmt.Sprintf("a later run: this one stopped before its end, and run %s came after it", rr.Later)
	}
	return rc
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Waiting says what change c of s waits for, and why, when the run is in
// runState: "" when it waits for nothing (at work, on main, failed or
// blocked).
func Waiting(s *state.State, c *state.Change, runState string) string {
	stopped := runState != Running && runState != Starting
	switch st := c.Status; {
	case st.Terminal():
		return ""
	case st == state.Pending:
		var deps []string
		for _, d := range c.DependsOn {
			if dc := s.Changes[d]; dc == nil || dc.Status != state.Archived {
				status := state.Pending
				if dc != nil {
					status = dc.Status
				}
				deps = append(deps, fmt.Sprintf("%s (%s)", d, status))
			}
		}
		switch {
		case len(deps) > 0:
			return fmt.Sprintf("%s to reach main: %s", dependencies(len(deps)), english.List(deps))
		case stopped:
			return "a `setctl apply` to dispatch it"
		case s.Baseline != nil:
			return baselineWaiting(s)
		}
		if holder := crossCuttingHolder(s, c); holder != "" {
			return holder
		}
		return fmt.Sprintf("a free slot: %s at work, at most %d at once", english.Plural(atWork(s), "change"), s.MaxParallel)
	case st == state.InReview && c.PullRequest != nil:
		how := "a person to merge it"
		switch c.PullRequest.Way {
		case "merge-queue":
			how = "its merge queue"
		case "auto-merge":
			how = "its auto-merge"
		}
		msg := fmt.Sprintf("the forge: pull request #%d (%s) is open, for %s", c.PullRequest.Number, c.PullRequest.URL, how)
		if stopped {
			msg += "; the next `setctl apply` watches it"
		}
		return msg
	case stopped:
		return fmt.Sprintf("a `setctl apply` to continue: the run stopped while it was %s", st)
	case st == state.Queued:
		ahead := queueAhead(s, c)
		if len(ahead) == 0 {
			return "the merge queue: it is next"
		}
		return fmt.Sprintf("the merge queue: behind %s", english.List(ahead))
	case st == state.VerifyFailed:
		return fmt.Sprintf("its agent: verify failed, retry %d of %d", c.RetriesUsed(state.StageVerify), budget(s, state.StageVerify))
	case st == state.IntegrationFailed && c.RetryStage == state.StageConflict:
		return fmt.Sprintf("its agent: to resolve a merge conflict, conflict %d of %d", c.RetriesUsed(state.StageConflict), budget(s, state.StageConflict))
	case st == state.IntegrationFailed:
		return fmt.Sprintf("its agent: integration failed, retry %d of %d", c.RetriesUsed(state.StageIntegration), budget(s, state.StageIntegration))
	case st == state.Merged:
		return "its archive: main holds it, the run is recording the fold"
	}
	return ""
}

// baselineWaiting is what the run s and its changes free to go wait for
// while a gate judges main (s.Baseline, which must be set): "the
// baseline: gate test runs on main before any change is dispatched".
func baselineWaiting(s *state.State) string {
	return fmt.Sprintf("the baseline: gate %s runs on %s before any change is dispatched", s.Baseline.Gate, cmp.Or(s.MainBranch, "main"))
}

func dependencies(n int) string {
	if n == 1 {
		return "its dependency"
	}
	return "its dependencies"
}

// budget is the retry budget of stage in the run s; 0 when unknown.
func budget(s *state.State, stage string) int { return s.Budgets.Retries(stage) }

// atWork counts the changes a worker holds: active, and not in the merge
// queue's hands.
func atWork(s *state.State) int {
	n := 0
	for _, c := range s.Changes {
		if c.Status.Active() && c.Status != state.Queued && c.Status != state.Integrating {
			n++
		}
	}
	return n
}

// queueAhead are the changes the merge queue takes before c: the one it
// integrates, then those queued before c.
func queueAhead(s *state.State, c *state.Change) []string {
	var integrating, queued []*state.Change
	for _, o := range s.Changes {
		switch {
		case o.Status == state.Integrating:
			integrating = append(integrating, o)
		case o.Status == state.Queued && o != c && (o.Since.Before(c.Since) || o.Since.Equal(c.Since) && o.Name < c.Name):
			queued = append(queued, o)
		}
	}
	byTime := func(a, b *state.Change) int {
		return cmp.Or(a.Since.Compare(b.Since), cmp.Compare(a.Name, b.Name))
	}
	slices.SortFunc(queued, byTime)
	var names []string
	for _, o := range append(integrating, queued...) {
		names = append(names, o.Name)
	}
	return names
}

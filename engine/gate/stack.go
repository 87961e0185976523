package gate

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/redact"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/runner"
	"github.com/set-engine/set/engine/spec"
)

// StackInput is one stage's stack of one change: its gates, run in order
// on one tree.
type StackInput struct {
	Project *config.Project
	Change  plan.Change
	Reqs    []spec.Requirement
	// Delta and Removing are passed to every gate (see Input).
	Delta    map[string][]byte
	Removing []string
	// UserFolder is passed to every gate (see Input).
	UserFolder bool
	// Stage is graph.StageVerify or graph.StageIntegration.
	Stage   string
	Attempt int
	// Layout is the run directory; each gate's log goes to its GateLog.
	Layout rundir.Layout
	// Worktree is the tree the gates check; Base the commit they diff
	// against (see Input).
	Worktree, Base string
	Env            []string
	Redact         *redact.Redactor // masks secrets in the gates' logs (see Input.Redact)
	// Steps are the stack's gates, in run order.
	Steps []graph.GateStep
	// Skipped are gates of the stage the plan does not run for the change;
	// each is recorded as skipped, with its reason, before any gate runs.
	Skipped []graph.SkippedGate
	// Accepted are main's failures the run accepted, by gate (see
	// Input.Accepted).
	Accepted map[string][]string
	Runners  map[string]runner.Runner
	// Models configures the model calls of model-graded gates; nil when
	// the run has none (such a gate is then an error). RunStack sets its
	// OnCall to journal each call as an LLM_CALL of the change, after
	// calling the OnCall it has, if any.
	Models *llm.Config
	// AfterGate, if set, is called after each gate that did not block; a
	// non-empty rejection fails the stack at that gate with it as the
	// retry context (the integration stack rejects a gate that changed the
	// tree it checks). An error is a run error.
	AfterGate func(ctx context.Context, r Result) (rejection string, err error)
}

// StackResult is how a stack ended. Exactly one of Passed, Interrupted and
// a non-nil Blocking holds.
type StackResult struct {
	// Passed: every gate ran and none blocked.
	Passed bool
	// Interrupted: ctx ended while a gate ran; that gate is not recorded
	// and the gates after it did not run.
	Interrupted bool
	// Blocking is the gate that stopped the stack: its status "fail", or
	// AfterGate rejected it.
	Blocking *Result
	// Rejection is AfterGate's rejection of Blocking; empty when the gate
	// failed by itself.
	Rejection string
}

// RetryContext is what the agent must fix: the rejection, or the blocking
// gate's retry context; empty unless the stack was blocked.
func (s StackResult) RetryContext() string {
	if s.Blocking == nil {
		return ""
	}
	return cmp.Or(s.Rejection, s.Blocking.RetryContext)
}

// RunStack runs in's gates in order and stops at the first blocking one.
// Each gate's log goes to in.Layout.GateLog; emit records, for each gate,
// its GATE_STARTED, a GATE_SET_EXPANDED when its run-time condition held,
// then its VERIFY_GATE (see Event); a gate cut short by ctx has only its
// GATE_STARTED. A model-graded gate's model calls are journaled as
// LLM_CALL events between the two. A gate that could not run (status "error") is a run error,
// returned after its event is recorded, as is emit failing.
func RunStack(ctx context.Context, in StackInput, emit func(journal.Payload) error) (StackResult, error) {
	for _, sk := range in.Skipped {
		if err := emit(journal.VerifyGateData{Stage: in.Stage, Gate: sk.Gate, Result: StatusSkip, Reason: sk.Reason, Attempt: in.Attempt}); err != nil {
			return StackResult{}, err
		}
	}
	var models Asker
	if in.Models != nil {
		cfg := *in.Models
		then := cfg.OnCall
		cfg.OnCall = func(c llm.Call) error {
			if then != nil {
				if err := then(c); err != nil {
					return err
				}
			}
			return emit(c.Event())
		}
		models = llm.New(cfg)
	}
	// failed are the exec gates of the stack that failed so far without
	// stopping it (in mode "warn"): a later gate may fail because of them.
	var failed []string
	for _, step := range in.Steps {
		logPath, logRel := in.Layout.GateLog(in.Change.Name, in.Stage, step.Gate, in.Attempt)
		if err := emit(started(in, step, logRel)); err != nil {
			return StackResult{}, err
		}
		res := Run(ctx, Input{
			Project: in.Project, Change: in.Change, Reqs: in.Reqs, Delta: in.Delta, Removing: in.Removing, UserFolder: in.UserFolder, Step: step, Stage: in.Stage,
			Attempt: in.Attempt, Worktree: in.Worktree, Base: in.Base,
			LogPath: logPath, LogRel: logRel, Env: in.Env, Redact: in.Redact, Accepted: in.Accepted[step.Gate],
			After: slices.Clone(failed), Models: models,
		}, in.Runners)
		if ctx.Err() != nil {
			return StackResult{Interrupted: true}, nil
		}
		if res.Expanded != nil && res.Expanded.Held {
			if err := emit(journal.GateSetExpandedData{Stage: in.Stage, Gate: res.Gate, Condition: res.Expanded.Condition, Files: res.Expanded.Files}); err != nil {
				return StackResult{}, err
			}
		}
		if err := emit(Event(in.Stage, in.Attempt, res)); err != nil {
			return StackResult{}, err
		}
		switch res.Status {
		case StatusWarn:
			if res.Kind == config.KindExec {
				failed = append(failed, res.Gate)
			}
		case StatusError:
			return StackResult{}, fmt.Errorf("%s gate %s of %s could not run: %w", in.Stage, res.Gate, in.Change.Name, res.Err)
		case StatusFail:
			return StackResult{Blocking: &res}, nil
		}
		if in.AfterGate != nil {
			rejection, err := in.AfterGate(ctx, res)
			if err != nil {
				return StackResult{}, err
			}
			if rejection != "" {
				return StackResult{Blocking: &res, Rejection: rejection}, nil
			}
		}
	}
	return StackResult{Passed: true}, nil
}

// started is the GATE_STARTED payload of step in the stack in, whose log
// is logRel.
func started(in StackInput, step graph.GateStep, logRel string) journal.GateStartedData {
	d := journal.GateStartedData{
		Stage: in.Stage, Gate: step.Gate, Kind: cmp.Or(step.Kind, config.KindExec), Attempt: in.Attempt, Log: logRel,
	}
	if d.Kind == config.KindExec {
		d.Runner = cmp.Or(step.Runner, defaultRunner)
		if in.Project != nil {
			d.Command = in.Project.Gates[step.Gate].Run
		}
	}
	return d
}

// Event is the VERIFY_GATE payload of a gate result of stage's attempt:
// it records the first EventFailures of the gate's named failures.
func Event(stage string, attempt int, r Result) journal.VerifyGateData {
	return journal.VerifyGateData{
		Stage: stage, Gate: r.Gate, Kind: r.Kind, Mode: r.Mode, Runner: r.Runner, Base: r.Base,
		Result: r.Status, ExitCode: r.ExitCode, DurationMS: r.Duration.Milliseconds(),
		Log: cmp.Or(r.LogRel, r.Log), Reason: r.Reason, RetryContext: r.RetryContext, Attempt: attempt,
		Failures: slices.Clone(r.Failures[:min(len(r.Failures), EventFailures)]),
	}
}

// EventFailures is how many of a gate's named failures its VERIFY_GATE
// records: enough to tell one failure from another across rounds and
// runs (setctl learn's signatures), bounded so that a gate naming
// thousands does not swell the journal.
const EventFailures = 20

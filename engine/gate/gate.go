// Package gate evaluates one gate of a change's stack on the change's
// worktree and says what the agent must fix when it fails.
//
// Invariants:
//   - Run never panics on a gate's input and always returns a Result whose
//     Status is one of the Status constants.
//   - Status "error" means the engine could not evaluate the gate (a
//     missing runner, a git failure, a bad configuration, a cancelled
//     context). Its Reason and Err are for the operator; it is never a
//     verdict on the change, and RetryContext is empty.
//   - Status "fail" is the only blocking outcome: a failing gate in mode
//     "warn" reports "warn". RetryContext is non-empty exactly when the
//     status is "fail" or "warn".
//   - Every run leaves a log at Input.LogPath (when set): the command's
//     output for exec gates, the findings for built-ins and skipped gates,
//     the error for gates that could not run (best effort: a log that
//     cannot be written is itself an error result).
//   - Diffs are always read against Input.Base with git (no shell), from the
//     working tree, so uncommitted edits to tracked files count.
package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/set-engine/set/engine/cond"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/redact"
	"github.com/set-engine/set/engine/runner"
	"github.com/set-engine/set/engine/spec"
)

// Statuses of a Result.
const (
	StatusPass  = "pass"
	StatusFail  = "fail"
	StatusWarn  = "warn"
	StatusSkip  = "skip"
	StatusError = "error"
)

// BuiltinRunner is the Runner of a Result of a built-in gate (scope_check,
// test_files, spec_verify, rules, review): the engine evaluates those
// itself from the diff (asking a model for review and an "llm"
// spec_verify), whatever runner the stack names.
const BuiltinRunner = "engine"

// defaultRunner is the runner of an exec gate whose step names none.
const defaultRunner = "host"

// Input is everything one gate run needs.
type Input struct {
	Project *config.Project
	Change  plan.Change
	// Reqs are the change's requirements (for their titles in retry
	// context); the IDs checked are Change.Requirements.
	Reqs []spec.Requirement
	// Delta is the change's delta specs as set writes them for the main
	// the change meets now (rewritten at each verify round, see the
	// orchestrator's ownFolder): path in the change folder ("specs/<capability>/spec.md") → content.
	// spec_verify fails in the verify stage when the worktree's
	// openspec/changes/<change>/specs/ holds anything else. With
	// UserFolder it is the folder's specs/ and .openspec.yaml as main has
	// them (".openspec.yaml" → its content, when main has one). Nil: not
	// checked.
	Delta map[string][]byte
	// Removing lists the change's requirements the spec removed: no test
	// is to name them, so spec_verify does not look for one.
	Removing []string
	// UserFolder says the change's OpenSpec change folder is one the
	// project's people wrote on main (planner strategy "openspec"), not
	// one set wrote: Delta is then the folder's specs/ and .openspec.yaml
	// as main has them, which spec_verify holds the change to with its
	// own wording, and a test line traces a requirement of Reqs also by
	// the user's ID its title starts with, or by its OpenSpec name.
	UserFolder bool
	// Step is the resolved gate: name, kind, mode, runner, run-time
	// condition, timeout.
	Step graph.GateStep
	// Stage is graph.StageVerify or graph.StageIntegration ("baseline"
	// when main itself is judged before a run).
	Stage   string
	Attempt int
	// Worktree is the absolute path of the tree to check.
	Worktree string
	// Base is the commit to diff against (the merge base with main).
	Base string
	// LogPath is the absolute path the full output goes to; its parent
	// directories are created. Empty means no log.
	LogPath string
	// LogRel is LogPath as the agent should read it, relative to the
	// project root (".set/logs/<change>/verify-test-1.log"); it is quoted
	// in retry context. Empty falls back to LogPath.
	LogRel string
	// Env is the environment exec gates on the host take their variables
	// from; nil means the engine's own. Only what HostEnv keeps of it
	// (with the project's passEnv) reaches the gate; the gate's env is
	// added on top.
	Env []string
	// Redact masks the secrets in the gate's log (nil: none are masked).
	// The Result is not redacted: the journal masks what it records.
	Redact *redact.Redactor
	// Accepted are the failures of this gate that main already had and
	// the run accepted (setctl apply --accept-baseline); nil when none
	// were. An exec gate with a failures pattern whose command fails with
	// only accepted failures passes, and a failure's retry context names
	// only the failures that are not accepted.
	Accepted []string
	// After are the gates of the same stack that failed (blocking or
	// not) before this one on the same tree, in run order: a failure of
	// this gate may follow from theirs (Result.After).
	After []string
	// Models asks the models of model-graded gates (config.Gate.Graded);
	// nil makes such a gate an error. Other gates do not use it.
	Models Asker
}

// Result is the outcome of one gate run; its fields map one to one onto
// journal.VerifyGateData.
type Result struct {
	Gate, Kind, Mode, Runner string
	// Base is what an exec gate ran on ("host", an image); empty for
	// built-ins.
	Base string
	// Status is one of the Status constants.
	Status   string
	ExitCode int
	Duration time.Duration
	// Log is Input.LogPath; LogRel is Input.LogRel, the same file relative
	// to the project, as the journal records it.
	Log, LogRel string
	// Reason is one line: why the gate failed, was skipped or errored.
	Reason string
	// RetryContext is what the agent needs to fix a failure; empty unless
	// Status is "fail" or "warn".
	RetryContext string
	// Failures are the failures an exec gate's failures pattern found in
	// the output of a command that failed (exited non-zero without timing
	// out), sorted; nil otherwise, and for gates without a pattern.
	Failures []string
	// Tail is the last lines of an exec gate's output, as retry context
	// quotes them; empty for built-ins.
	Tail string
	// Command is what an exec gate ran, as its messages name it: what the
	// last CommandMarker line of its output says, else CommandLine of its
	// argv; empty for built-ins.
	Command string
	// Missing says which program (or module) an exec gate's failed
	// command could not find ("xo: not found"); empty when none was
	// missing.
	Missing string
	// After is Input.After for an exec gate that could not run (Missing
	// is set): the earlier gates of its stack that failed on the same
	// tree, the likely reason; nil otherwise.
	After []string
	// TimedOut is set when an exec gate's command ran out of time.
	TimedOut bool
	// Err is set exactly when Status is "error".
	Err error
	// Expanded is non-nil when a run-time condition was evaluated; the
	// orchestrator records GATE_SET_EXPANDED when it Held.
	Expanded *Expansion
}

// Expansion is the evaluation of a gate's run-time `when`.
type Expansion struct {
	Condition string
	// Files are the paths the change touches, as the condition saw them.
	Files []string
	Held  bool
}

// verdict is a checked gate's finding before the mode is applied (the
// orchestrator's verdict is that of a whole verify stack, orchestrator.verdict).
type verdict struct {
	fail bool
	// warn: the gate passes, with findings to report (a model-graded
	// gate's findings below its blockOn); reason and retry are set.
	warn   bool
	reason string // one line
	retry  string // for the agent; set when fail or warn
	detail string // for the log: what was checked
	// log goes into the gate's log before the verdict, whatever the
	// outcome, an error included (a model-graded gate's prompt and
	// answers).
	log string
}

// Run evaluates the gate of in.Step on in.Worktree. runners maps runner
// names to runners; only exec gates use them.
func Run(ctx context.Context, in Input, runners map[string]runner.Runner) Result {
	start := time.Now()
	res := Result{
		Gate:   in.Step.Gate,
		Kind:   cmp.Or(in.Step.Kind, config.KindExec),
		Mode:   cmp.Or(in.Step.Mode, config.ModeRun),
		Runner: BuiltinRunner,
		Log:    in.LogPath,
		LogRel: in.LogRel,
	}
	if res.Kind == config.KindExec {
		res.Runner = cmp.Or(in.Step.Runner, defaultRunner)
	}
	res = evaluate(ctx, in, runners, res)
	if res.Duration == 0 {
		res.Duration = time.Since(start)
	}
	return res
}

// failStatus is the status of a failing gate in res's mode: a gate in
// warn mode never blocks.
func failStatus(res Result) string {
	if res.Mode == config.ModeWarn {
		return StatusWarn
	}
	return StatusFail
}

func evaluate(ctx context.Context, in Input, runners map[string]runner.Runner, res Result) Result {
	switch {
	case res.Mode == config.ModeSkip:
		res.Status, res.Reason = StatusSkip, `mode "skip"`
		return withReport(in, res, "")
	case in.Worktree == "":
		return errorResult(in, res, errors.New("gate input lacks a worktree"))
	}
	d := &changeDiff{dir: in.Worktree, base: in.Base}

	if in.Step.Condition != "" {
		exp, err := evalCondition(ctx, in, d)
		res.Expanded = exp
		if err != nil {
			return errorResult(in, res, err)
		}
		if !exp.Held {
			res.Status = StatusSkip
			res.Reason = fmt.Sprintf("when: %s is false", in.Step.Condition)
			return withReport(in, res, "files: "+strings.Join(exp.Files, ", "))
		}
	}

	var check func(context.Context, Input, *changeDiff) (verdict, error)
	switch res.Kind {
	case config.KindExec:
		return runExec(ctx, in, runners, res)
	case config.KindScopeCheck:
		check = scopeCheck
	case config.KindTestFiles:
		check = testFiles
	case config.KindSpecVerify:
		check = specVerify
		if in.Project != nil && in.Project.Gates[in.Step.Gate].Graded() {
			check = graded
		}
	case config.KindRules:
		check = rules
	case config.KindReview:
		check = graded
	default:
		return errorResult(in, res, fmt.Errorf("unknown gate kind %q", res.Kind))
	}
	v, err := check(ctx, in, d)
	if err != nil {
		return errorResult(in, res, err, v.log)
	}
	res.Status = StatusPass
	switch {
	case v.fail:
		res.Status, res.Reason, res.RetryContext = failStatus(res), v.reason, v.retry
	case v.warn:
		res.Status, res.Reason, res.RetryContext = StatusWarn, v.reason, v.retry
	}
	body := v.detail
	if v.fail || v.warn {
		body = v.retry
	}
	if v.log != "" {
		// The verdict last, where a reader of the log's end looks.
		body = strings.TrimRight(v.log, "\n") + "\n\n--- verdict ---\n" + body
	}
	return withReport(in, res, body)
}

// evalCondition decides the step's run-time condition on the change's
// touched files.
func evalCondition(ctx context.Context, in Input, d *changeDiff) (*Expansion, error) {
	exp := &Expansion{Condition: in.Step.Condition}
	c, err := cond.CompileGate(in.Step.Condition)
	if err != nil {
		return exp, err
	}
	files, err := d.files(ctx)
	if err != nil {
		return exp, err
	}
	exp.Files = files
	exp.Held, err = c.Eval(cond.GateEnv{Change: in.Change, UserFolder: in.UserFolder, Files: files})
	return exp, err
}

// errorResult makes res an error result and writes its log: what before
// says, then err (best effort: the result is an error already).
func errorResult(in Input, res Result, err error, before ...string) Result {
	res = asError(res, err)
	if in.LogPath != "" {
		body := err.Error()
		if b := strings.TrimRight(strings.Join(before, ""), "\n"); b != "" {
			body = b + "\n\n--- error ---\n" + body
		}
		_ = writeFile(in.LogPath, []byte(in.Redact.String(report(in, res, body))))
	}
	return res
}

// asError makes res an error result without touching its log.
func asError(res Result, err error) Result {
	res.Status, res.Err = StatusError, err
	res.Reason, _, _ = strings.Cut(err.Error(), "\n")
	res.RetryContext = ""
	return res
}

// withReport writes the log of a gate that ran no command. A log that
// cannot be written turns the result into an error, so that a Result's Log
// always exists.
func withReport(in Input, res Result, body string) Result {
	if in.LogPath == "" {
		return res
	}
	if err := writeFile(in.LogPath, []byte(in.Redact.String(report(in, res, body)))); err != nil {
		return asError(res, err)
	}
	return res
}

// report is the log text of a gate that ran no command: a header, the
// status and reason, and body.
func report(in Input, res Result, body string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "gate %s (%s), %s attempt %d\n", res.Gate, res.Kind, cmp.Or(in.Stage, "?"), in.Attempt)
	fmt.Fprintf(&b, "base: %s\n", in.Base)
	if in.Step.Condition != "" {
		fmt.Fprintf(&b, "when: %s\n", in.Step.Condition)
	}
	fmt.Fprintf(&b, "result: %s\n", res.Status)
	if res.Reason != "" {
		fmt.Fprintf(&b, "reason: %s\n", res.Reason)
	}
	if body != "" {
		b.WriteString("\n" + strings.TrimRight(body, "\n") + "\n")
	}
	return b.String()
}

func writeFile(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return fmt.Errorf("gate log: %w", err)
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		return fmt.Errorf("gate log: %w", err)
	}
	return nil
}

// Package runner defines where a gate's command runs. A Runner executes one
// argv in a checkout of the change and reports how it ended; the gate
// package decides what that means (pass, fail, warn). A Runner never
// interprets an exit code: a command that ran and failed is a result, not an
// error.
package runner

import (
	"context"
	"io"
	"time"
)

// OutputCap is how many bytes of a command's combined output an ExecResult
// keeps: the tail, where test failures and compiler errors end up. The full
// output goes to Exec.Log.
const OutputCap = 64 << 10

// Exec is one command to run (agent.Exec is an agent adapter that runs a
// command, another thing).
type Exec struct {
	// Argv is the command and its arguments; it is never run through a
	// shell.
	Argv []string
	// Dir is the absolute path of the tree to run in (the change's worktree).
	Dir string
	// Env is the complete environment of the command on the host; nil
	// means the engine's own.
	Env []string
	// Vars are the gate's own variables (already part of Env). A container
	// runner sets only these and its own configured variables: the host's
	// environment never enters a container.
	Vars map[string]string
	// Export lists files, relative to Dir, that a container runner copies
	// back into Dir after the command ran (a regenerated lockfile). The
	// host runner has nothing to copy.
	Export []string
	// Timeout bounds the run; zero means none.
	Timeout time.Duration
	// Log receives the full combined output (stdout and stderr, in the
	// order written); nil discards it.
	Log io.Writer
}

// ExecResult is how a command ended.
type ExecResult struct {
	// ExitCode is the command's exit status; -1 when it was killed
	// (timeout or cancellation).
	ExitCode int
	// Output is the tail of the combined output, at most OutputCap bytes.
	Output   []byte
	Duration time.Duration
	TimedOut bool
	// Base is what the command ran on: "host" for the host, the image or
	// rootfs for a container runner.
	Base string
}

// Runner runs gate commands, where a config.Runner says.
type Runner interface {
	// Name is the runner's name as gates refer to it ("host", "dagger").
	Name() string
	// Exec runs e. A non-nil error means the command could not run at all
	// (not found, no such directory, the runner is unavailable, ctx was
	// cancelled): a run error, never a gate failure. A command that ran and
	// exited non-zero, or timed out, returns a nil error.
	Exec(ctx context.Context, e Exec) (ExecResult, error)
}

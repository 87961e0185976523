// Package agent runs the coding agents that implement changes: adapters
// for Claude Code (claude), Codex (codex), any command (exec) and recorded
// patches (replay). An adapter runs exactly one iteration per Run call in
// the change's worktree; the agent loop that decides how many iterations to
// run lives next to it in this package.
//
// Invariants shared by every adapter:
//   - every child process goes through engine/proc, in its own process
//     group: a cancelled ctx kills the whole tree (the sentinel stops a
//     stalled agent that way, see Steering);
//   - raw output goes to Request.Log, and Request.OnActivity is called
//     whenever the agent shows life;
//   - a cancelled ctx returns an error wrapping ctx.Err() together with
//     the partial Result: the calls so far, the session, and Done when the
//     agent had already reported success (a success is kept however the
//     process ends: stalled, cancelled, killed by a signal);
//   - Result.Signal names the signal that ended the agent's process, ""
//     when it exited by itself;
//   - a stream the adapter cannot understand is an error naming the line
//     number and the line, never a panic;
//   - Result.Summary is at most maxSummary bytes of valid UTF-8.
package agent

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/llm/usage"
)

// Request is one iteration of an agent on one change (llm.Request is one
// question to a model, control.Request a line of the control file).
type Request struct {
	Change     string    // change name
	Worktree   string    // absolute path of the change's worktree (cwd of the agent)
	Iteration  int       // 1-based
	Prompt     string    // full prompt text
	PromptFile string    // absolute path of the prompt file (already written)
	Model      string    // may be ""
	SessionID  string    // non-empty: resume this session (claude --resume / codex exec resume)
	Env        []string  // complete environment for the child (nil: the parent's)
	Log        io.Writer // the iteration's log file: raw output goes here (nil discards)
	OnActivity func()    // called whenever the agent shows life (output), may be nil
	// OnCommand, when set, is called with the command line of a shell
	// command when the agent starts one (claude: a Bash tool_use; codex:
	// item.started of a command_execution), and with the one still
	// running, or "", when one ends (claude: its tool_result; codex: its
	// item.completed). It is called from the goroutine that reads the
	// agent's output; exec and replay never call it.
	OnCommand func(command string)
}

// Result is how one iteration ended (gate.Result is how one gate ended,
// another thing).
type Result struct {
	// Done: the agent reports success (claude: a result event that is not
	// an error and has no permission denials; codex: a turn.completed and
	// no turn.failed; exec: exit code 0; replay: the patch applied and the
	// recording says done, which it does by default).
	Done      bool
	SessionID string
	// Calls are the model calls with their token usage (claude: one from
	// the result event's totals; codex: one per turn.completed, the
	// difference of the cumulative usage; replay: one from <n>.json).
	Calls    []CallUsage
	ExitCode int
	// Signal names the signal that ended the agent's process ("SIGKILL",
	// "SIGTERM", …), whoever sent it; "" when it exited by itself (and
	// for replay, which runs no agent process).
	Signal   string
	Duration time.Duration
	// APIError is the provider's message when the model API or its
	// transport failed the iteration (claude: an error result with
	// terminal_reason "api_error" or an API error status; codex:
	// turn.failed, or error events and no turn); "" otherwise.
	APIError string
	// Summary is the last assistant message or result text, for the
	// journal; at most 2000 bytes.
	Summary string
}

// CallUsage is the usage of one model call (or of a group of calls
// reported together), as an agent's CLI reports it. It is not an llm.Call:
// set makes no call of its own here, and knows of the agent's calls no
// more than their model, tokens and cost.
type CallUsage struct {
	Model   string
	Tokens  usage.Tokens
	CostUSD float64
}

// Adapter runs one agent.
type Adapter interface {
	Name() string
	// Run runs one iteration. A non-nil error means the agent could not run or its output could
	// not be understood (malformed stream line → error naming the line number and content, never a panic);
	// it becomes failed:agent_error after the loop's retries. Context cancellation kills the process group.
	Run(ctx context.Context, req Request) (Result, error)
}

// New returns the adapter cfg.Adapter names. root is the project root:
// a relative cfg.Recordings is resolved against it, and claude and codex
// keep the running totals of their sessions in <root>/.set/sessions (see
// sessionStore; root "" keeps them in memory only). For claude and
// codex, cfg.Argv, when set, replaces the command ("claude" / "codex" on
// PATH) and the adapter's flags follow it, and cfg.Permissions picks
// their permission mode (see ClaudePermissions, CodexPermissions); for exec it is the whole
// command template. cfg.Env and cfg.Models are the loop's business: the
// adapters use Request.Env and Request.Model as given.
func New(cfg config.Agent, root string) (Adapter, error) {
	switch cfg.Adapter {
	case "claude":
		c := &Claude{Prefix: prefixOr(cfg.Argv, "claude"), Permissions: cfg.Permissions}
		c.sessions.dir = sessionsDir(root)
		return c, nil
	case "codex":
		c := &Codex{Prefix: prefixOr(cfg.Argv, "codex"), Permissions: cfg.Permissions}
		c.sessions.dir = sessionsDir(root)
		return c, nil
	case "exec":
		if len(cfg.Argv) == 0 {
			return nil, fmt.Errorf("agent exec: argv is empty")
		}
		return &Exec{Argv: append([]string(nil), cfg.Argv...)}, nil
	case "replay":
		if cfg.Recordings == "" {
			return nil, fmt.Errorf("agent replay: recordings is empty")
		}
		dir := cfg.Recordings
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("agent replay: %w", err)
		}
		return &Replay{Dir: abs}, nil
	case "":
		return nil, fmt.Errorf("agent: no adapter configured")
	default:
		return nil, fmt.Errorf("agent: unknown adapter %q (want claude, codex, exec or replay)", cfg.Adapter)
	}
}

func prefixOr(argv []string, def string) []string {
	if len(argv) == 0 {
		return []string{def}
	}
	return append([]string(nil), argv...)
}

// maxSummary bounds Result.Summary.
const maxSummary = 2000

// maxAPIError bounds Result.APIError.
const maxAPIError = 500

// apiMessage is a provider's error message on one line, at most
// maxAPIError bytes.
func apiMessage(s string) string {
	return truncate(strings.Join(strings.Fields(s), " "), maxAPIError)
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence,
// marking a cut with "…".
func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	const ell = "…"
	cut := n - len(ell)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ell
}

// env returns the child's environment: req.Env (or the parent's when nil)
// with extra appended, later entries winning.
func env(reqEnv []string, extra ...string) []string {
	base := reqEnv
	if base == nil {
		base = os.Environ()
	}
	return append(append([]string(nil), base...), extra...)
}

// syncWriter serialises writes from the stdout and stderr copiers.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func newSyncWriter(w io.Writer) *syncWriter {
	if w == nil {
		w = io.Discard
	}
	return &syncWriter{w: w}
}

// Write never fails: a log that cannot be written must not kill the
// agent through a broken pipe.
func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = s.w.Write(p)
	return len(p), nil
}

// runErr is the error of a run that ended because ctx did.
func runErr(ctx context.Context, name string) error {
	return fmt.Errorf("agent %s: %w", name, ctx.Err())
}

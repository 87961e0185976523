package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/llm"
)

// Codex runs the Codex CLI headless:
//
//	<Prefix> exec --json --skip-git-repo-check <sandbox> [-m M] <prompt>
//	<Prefix> exec resume SESSION --json --skip-git-repo-check <sandbox, as -c> [-m M] <prompt>
//
// with stdin from /dev/null. The sandbox follows Permissions (see
// CodexPermissions): for workspace-write, `--sandbox workspace-write` with
// the worktree's git directory and the repository's common git directory
// as `--add-dir` writable roots, so that the agent's own `git commit`
// works (a linked worktree's git directory lies in the main repository's
// .git, outside the workspace); `exec resume` has neither flag (it would
// default to read-only), so it gets them as -c sandbox_mode and -c
// sandbox_workspace_write.writable_roots. For bypass,
// --dangerously-bypass-approvals-and-sandbox.
//
// The usage in turn.completed is cumulative
// over the thread, across `exec resume` too, so each turn becomes one CallUsage
// with the difference from the previous total. The previous total of a
// resumed thread comes from the session store (sessionStore); a thread
// it does not know starts from zero, and a total that went down is taken
// as a fresh count. input_tokens includes the cached and cache-write
// tokens: CallUsage.Tokens splits them, so Tokens.Total() is input + output.
// Codex reports no cost, so CostUSD stays 0.
type Codex struct {
	// Prefix is the command the subcommand follows, e.g. ["codex"].
	Prefix []string
	// Permissions is agent.permissions: "auto" (or ""), "bypass" or
	// "acceptEdits" (see CodexPermissions).
	Permissions string

	sessions sessionStore
}

// Name is "codex".
func (c *Codex) Name() string { return "codex" }

// Codex's sandbox modes, as Permissions.Mode reports them.
const (
	CodexWorkspaceWrite = "workspace-write"
	CodexBypass         = "bypass"
)

// CodexPermissions is the sandbox codex runs in for the setting
// agent.permissions: "bypass" runs it with
// --dangerously-bypass-approvals-and-sandbox (for a machine that is a
// sandbox itself); "auto", "" and "acceptEdits" with the workspace-write
// sandbox, where commands run and writes stay in the worktree and its git
// directories. Codex has no mode that allows edits but denies commands,
// so acceptEdits is workspace-write too. Its bundled sandbox works as
// root: the user does not matter.
func CodexPermissions(setting string) Permissions {
	switch setting {
	case PermissionsBypass:
		return Permissions{Mode: CodexBypass, Why: "set by agent.permissions: no sandbox, no approvals"}
	case PermissionsAcceptEdits:
		return Permissions{Mode: CodexWorkspaceWrite, Why: "agent.permissions acceptEdits: codex has no mode that denies only commands; writes stay in the worktree and its git directories"}
	}
	return Permissions{Mode: CodexWorkspaceWrite, Why: "writes stay in the worktree and its git directories"}
}

// PermissionMode is CodexPermissions of the adapter's setting; env does
// not matter.
func (c *Codex) PermissionMode([]string) (Permissions, error) {
	return CodexPermissions(c.Permissions), nil
}

// argv is the command line of one iteration; writable are the directories
// the workspace-write sandbox adds to the worktree.
func (c *Codex) argv(req Request, writable []string) ([]string, error) {
	prompt, err := llm.PromptArg(req.Prompt)
	if err != nil {
		return nil, fmt.Errorf("agent codex: %w", err)
	}
	bypass := CodexPermissions(c.Permissions).Mode == CodexBypass
	a := append([]string(nil), c.Prefix...)
	switch {
	case req.SessionID != "":
		a = append(a, "exec", "resume", req.SessionID, "--json", "--skip-git-repo-check")
		if bypass {
			break
		}
		a = append(a, "-c", `sandbox_mode="workspace-write"`)
		if len(writable) > 0 {
			roots, _ := json.Marshal(writable) // a JSON array of strings is a TOML array
			a = append(a, "-c", "sandbox_workspace_write.writable_roots="+string(roots))
		}
	default:
		a = append(a, "exec", "--json", "--skip-git-repo-check")
		if bypass {
			break
		}
		a = append(a, "--sandbox", "workspace-write")
		for _, d := range writable {
			a = append(a, "--add-dir", d)
		}
	}
	if bypass {
		a = append(a, "--dangerously-bypass-approvals-and-sandbox")
	}
	if req.Model != "" {
		a = append(a, "-m", req.Model)
	}
	return append(a, prompt), nil
}

// gitDirs are the worktree's git directory and the repository's common
// one, when they differ; none when the worktree is in no git repository.
func gitDirs(ctx context.Context, worktree string) []string {
	gitDir, common, err := git.GitDirs(ctx, worktree)
	switch {
	case err != nil:
		return nil
	case gitDir == common:
		return []string{common}
	}
	return []string{gitDir, common}
}

// Run runs one iteration. Done needs a turn.completed and no
// turn.failed; a turn.failed, or error events and no turn, are the
// provider failing (Result.APIError); a stream with neither a turn nor an
// error is an error.
func (c *Codex) Run(ctx context.Context, req Request) (Result, error) {
	start := time.Now()
	argv, err := c.argv(req, gitDirs(ctx, req.Worktree))
	if err != nil {
		return Result{}, err
	}
	st := codexStream{model: req.Model, thread: req.SessionID, commands: runningCommands{onCommand: req.OnCommand}}
	c.sessions.load("codex", req.SessionID, &st.prev)
	run, err := runStream(ctx, req, argv, env(req.Env), st.line)
	if err != nil {
		return Result{ExitCode: -1, Duration: time.Since(start)}, fmt.Errorf("agent codex: %w", err)
	}
	if st.turns > 0 {
		c.sessions.save("codex", st.thread, st.prev, newSyncWriter(req.Log))
	}
	res := st.result()
	if decided, err := run.settle(ctx, "codex", &res, start); decided {
		return res, err
	}
	// A model the endpoint does not serve fails every iteration alike:
	// it is a configuration error, not a run to try again.
	for _, msg := range []string{st.failMsg, st.lastError} {
		if msg != "" && llm.IsModelNotFound(0, "", msg) {
			return res, llm.ModelNotServed(req.Model, "", msg)
		}
	}
	if st.turns == 0 && !st.failed && st.lastError == "" {
		return res, fmt.Errorf("codex stream ended without turn.completed, turn.failed or an error (exit code %d)", run.out.ExitCode)
	}
	return res, nil
}

// codexStream accumulates what the stream said.
type codexStream struct {
	model     string
	thread    string
	prev      llm.CodexUsage // cumulative usage at the previous turn.completed
	turns     int            // turn.completed seen
	calls     []CallUsage
	failed    bool
	failMsg   string
	lastText  string // last agent_message
	lastError string // last error item or error event
	// commands are the commands started and not yet ended.
	commands runningCommands
}

func (s *codexStream) line(n int, line []byte) error {
	var ev llm.CodexEvent
	if err := decodeLine("codex", n, line, &ev); err != nil {
		return err
	}
	switch ev.Type {
	case "thread.started":
		if ev.ThreadID != "" {
			s.thread = ev.ThreadID
		}
	case "item.completed", "item.started", "item.updated":
		// Items only feed the summary: one of an unexpected shape is
		// skipped rather than failing the iteration.
		it, ok := ev.ItemOf()
		if !ok {
			return nil
		}
		if it.Type == "command_execution" {
			s.command(ev.Type, it)
		}
		if ev.Type != "item.completed" {
			return nil
		}
		switch it.Type {
		case "agent_message":
			if strings.TrimSpace(it.Text) != "" {
				s.lastText = it.Text
			}
		case "error":
			s.lastError = it.Message
		}
	case "turn.completed":
		u := llm.CodexUsage{}
		if ev.Usage != nil {
			u = *ev.Usage
		}
		base := s.prev
		if u.Below(base) {
			base = llm.CodexUsage{}
		}
		s.calls = append(s.calls, CallUsage{Model: s.model, Tokens: u.Since(base)})
		s.prev = u
		s.turns++
	case "turn.failed":
		s.failed = true
		if ev.Error != nil {
			s.failMsg = ev.Error.Message
		}
	case "error":
		s.lastError = ev.Message
	}
	return nil
}

// command follows the commands the agent runs: item.started of a
// command_execution starts one, item.completed ends it.
func (s *codexStream) command(event string, it llm.CodexItem) {
	switch event {
	case "item.started":
		s.commands.start(it.ID, it.Command)
	case "item.completed":
		s.commands.end(it.ID)
	}
}

func (s *codexStream) result() Result {
	res := Result{SessionID: s.thread, Calls: s.calls}
	res.Done = s.turns > 0 && !s.failed
	var summary string
	switch {
	case s.failed:
		msg := s.failMsg
		if msg == "" {
			msg = s.lastError
		}
		res.APIError = apiMessage(msg)
		summary = "turn failed: " + msg
	case s.turns == 0 && s.lastError != "":
		res.APIError = apiMessage(s.lastError)
		summary = "error: " + s.lastError
	case s.lastText != "":
		summary = s.lastText
	case s.lastError != "":
		summary = "error: " + s.lastError
	}
	res.Summary = truncate(summary, maxSummary)
	return res
}

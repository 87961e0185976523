package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/llm"
	"github.com/set-engine/set/engine/llm/usage"
	"github.com/set-engine/set/engine/proc"
)

// Claude runs Claude Code headless:
//
//	<Prefix> -p <prompt> --output-format stream-json --verbose [--model M]
//	         [--resume SESSION] <permission flag>
//
// with stdin from /dev/null. The permission flag follows Permissions (see
// ClaudePermissions): --dangerously-skip-permissions for "bypass",
// --permission-mode acceptEdits for "acceptEdits".
//
// The stream is read line by line: system/init gives the session and the
// model, assistant events their text and the Bash commands they start
// (their usage is unreliable), user events the ends of those commands, and
// result events the outcome, the token totals and the cost.
//
// One run may carry several result events: when a Bash command outlasts
// Claude Code's tool timeout it moves to the background, the run ends
// with a result, and the command's end (a system/task_notification)
// starts a second turn, with its own system/init and result. Each
// result's usage covers only the calls since the previous result, so the
// run's tokens are the sum over all of them; the outcome (Done, the
// summary, an API failure) is the last result's. Summing is robust to
// whatever the stream carries, one result or many. set does not set
// CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1 or raise BASH_DEFAULT_TIMEOUT_MS /
// BASH_MAX_TIMEOUT_MS instead: that would kill at the tool timeout a
// command the agent legitimately runs for longer (a full test suite, an
// install), and the agent's environment (agent.env) can still set them.
//
// total_cost_usd and modelUsage, unlike usage, cover the whole session so
// far (a resumed one too). So the run's cost is the last result's total,
// less the session's previous total for a resumed session (sessionStore),
// or, with no previous total, the session cost scaled by this run's share
// of the session's tokens (modelUsage). Should the last result's
// modelUsage cover fewer tokens than the summed usage (figures per result
// rather than per session), the results' costs are added up instead.
//
// Claude Code's auto-memory is off in every iteration (ClaudeNoMemory):
// what an agent learns reaches the next one only through set's prompts,
// from the journal, never through notes kept on one machine unseen.
type Claude struct {
	// Prefix is the command the flags follow, e.g. ["claude"].
	Prefix []string
	// Permissions is agent.permissions: "auto" (or ""), "bypass" or
	// "acceptEdits" (see ClaudePermissions).
	Permissions string
	// Euid reports the effective user ID, which decides the permission
	// flags; nil means os.Geteuid.
	Euid func() int

	sessions sessionStore
}

// claudeTotals is what the session store keeps for a claude session.
type claudeTotals struct {
	CostUSD float64 `json:"costUsd"`
}

// Name is "claude".
func (c *Claude) Name() string { return "claude" }

// Permission modes of agent.permissions.
const (
	PermissionsAuto        = "auto"
	PermissionsBypass      = "bypass"
	PermissionsAcceptEdits = "acceptEdits"
)

// Permissions is the permission mode an agent runs with and why.
type Permissions struct {
	// Mode is "bypass" or "acceptEdits" for claude, the sandbox mode
	// ("workspace-write", "danger-full-access") for codex.
	Mode string
	// Why says what decided the mode and what it denies.
	Why string
	// Fix says what to set when the mode is a fallback the user did not
	// choose; "" otherwise.
	Fix string
}

// String is "mode (why)", or "mode (why: fix)".
func (p Permissions) String() string {
	if p.Fix != "" {
		return p.Mode + " (" + p.Why + ": " + p.Fix + ")"
	}
	return p.Mode + " (" + p.Why + ")"
}

// PermissionReporter is an adapter whose agent runs under a permission
// mode (claude, codex): the loop records it on the first iteration of a
// run, and setctl doctor reports it.
type PermissionReporter interface {
	// PermissionMode is the mode the agent runs with in the child
	// environment env (nil: the parent's), or why it cannot run.
	PermissionMode(env []string) (Permissions, error)
}

// PermissionMode is the mode claude runs with in the child environment
// env (nil: the parent's); see ClaudePermissions.
func (c *Claude) PermissionMode(envList []string) (Permissions, error) {
	euid := os.Geteuid
	if c.Euid != nil {
		euid = c.Euid
	}
	if envList == nil {
		envList = os.Environ()
	}
	return ClaudePermissions(c.Permissions, euid(), envList)
}

// ClaudePermissions is the permission mode claude runs with for the
// setting agent.permissions, as effective user euid with the child
// environment env. Claude Code refuses --dangerously-skip-permissions as
// root unless IS_SANDBOX=1 or CLAUDE_CODE_BUBBLEWRAP=1 says the machine is
// a sandbox, and --permission-mode acceptEdits denies Bash. So:
//   - "bypass": --dangerously-skip-permissions; as root without either
//     variable, a *llm.ConfigError saying what to set;
//   - "acceptEdits": --permission-mode acceptEdits (Bash is denied);
//   - "auto" or "": bypass, except as root without either variable, where
//     acceptEdits is all Claude Code accepts.
//
// setctl doctor reports the same decision.
func ClaudePermissions(setting string, euid int, env []string) (Permissions, error) {
	sandbox := ""
	for _, k := range []string{"IS_SANDBOX", "CLAUDE_CODE_BUBBLEWRAP"} {
		if proc.Getenv(env, k) == "1" {
			sandbox = k + "=1"
			break
		}
	}
	refused := euid == 0 && sandbox == ""
	switch setting {
	case PermissionsBypass:
		if refused {
			return Permissions{}, &llm.ConfigError{Reason: `agent.permissions is "bypass", but claude refuses --dangerously-skip-permissions as root without IS_SANDBOX=1 (or CLAUDE_CODE_BUBBLEWRAP=1) in the agent's environment: set agent: env: IS_SANDBOX: "1" when this machine is a sandbox, or agent: permissions: "acceptEdits"`}
		}
		return Permissions{Mode: PermissionsBypass, Why: "set by agent.permissions"}, nil
	case PermissionsAcceptEdits:
		return Permissions{Mode: PermissionsAcceptEdits, Why: "set by agent.permissions; Bash is denied"}, nil
	}
	switch {
	case refused:
		return Permissions{Mode: PermissionsAcceptEdits, Why: "running as root without IS_SANDBOX=1; Bash is denied",
			Fix: `set agent: env: IS_SANDBOX: "1" in a sandbox, or agent: permissions: "acceptEdits" to accept it`}, nil
	case euid == 0:
		return Permissions{Mode: PermissionsBypass, Why: "running as root with " + sandbox}, nil
	}
	return Permissions{Mode: PermissionsBypass, Why: "not running as root"}, nil
}

// argv is the command line of one iteration with the permission mode
// perm.
func (c *Claude) argv(req Request, perm Permissions) ([]string, error) {
	prompt, err := llm.PromptArg(req.Prompt)
	if err != nil {
		return nil, fmt.Errorf("agent claude: %w", err)
	}
	a := append([]string(nil), c.Prefix...)
	a = append(a, "-p", prompt, "--output-format", "stream-json", "--verbose")
	if req.Model != "" {
		a = append(a, "--model", req.Model)
	}
	if req.SessionID != "" {
		a = append(a, "--resume", req.SessionID)
	}
	if perm.Mode == PermissionsAcceptEdits {
		a = append(a, "--permission-mode", "acceptEdits")
	} else {
		a = append(a, "--dangerously-skip-permissions")
	}
	return a, nil
}

// ClaudeNoMemory turns Claude Code's auto-memory off in the agent's
// environment, after agent.env, so that a project's env cannot turn it
// on: what carries between iterations and runs is the journal, which set
// reads (engine/learn), and the repository's own CLAUDE.md, which set
// never edits.
const ClaudeNoMemory = "CLAUDE_CODE_DISABLE_AUTO_MEMORY=1"

// Run runs one iteration. See Claude for the stream it expects and
// Result for what Done means. Permission denials in the last result are a
// *llm.ConfigError naming the fix: every iteration would meet them.
func (c *Claude) Run(ctx context.Context, req Request) (Result, error) {
	start := time.Now()
	envList := env(req.Env, append(llm.ClaudeQuietEnv(), ClaudeNoMemory)...)
	perm, err := c.PermissionMode(envList)
	if err != nil {
		return Result{}, err
	}
	argv, err := c.argv(req, perm)
	if err != nil {
		return Result{}, err
	}
	st := claudeStream{commands: runningCommands{onCommand: req.OnCommand}}
	run, err := runStream(ctx, req, argv, envList, st.line)
	if err != nil {
		return Result{ExitCode: -1, Duration: time.Since(start)}, fmt.Errorf("agent claude: %w", err)
	}
	var base *claudeTotals
	if req.SessionID != "" {
		var t claudeTotals
		if c.sessions.load("claude", req.SessionID, &t) {
			base = &t
		}
	}
	res := st.result(req, base)
	if st.final != nil {
		c.sessions.save("claude", res.SessionID, claudeTotals{CostUSD: st.final.TotalCostUSD}, newSyncWriter(req.Log))
	}
	if decided, err := run.settle(ctx, "claude", &res, start); decided {
		return res, err
	}
	if st.final == nil {
		return res, fmt.Errorf("claude stream ended without a result event (exit code %d)", run.out.ExitCode)
	}
	// A model the endpoint does not serve fails every iteration alike:
	// it is a configuration error, not a run to try again.
	var ce *llm.ConfigError
	if err := st.final.Failure(req.Model); errors.As(err, &ce) {
		return res, err
	}
	if d := st.final.PermissionDenials; len(d) > 0 {
		return res, deniedError(d, perm)
	}
	return res, nil
}

// deniedError is the configuration error of a run whose tools the
// permission mode perm denied.
func deniedError(denials []llm.PermissionDenial, perm Permissions) error {
	var tools []string
	for _, d := range denials {
		if !slices.Contains(tools, d.ToolName) {
			tools = append(tools, d.ToolName)
		}
	}
	fix := fmt.Sprintf(`set agent: permissions: "auto" or "bypass" (as root, in a sandbox, with agent: env: IS_SANDBOX: "1"), or allow the tools with agent: argv: ["claude", "--allowedTools", %q]`, strings.Join(tools, ","))
	if perm.Mode == PermissionsBypass {
		fix = "check the deny rules of Claude Code's settings (~/.claude/settings.json, .claude/settings.json)"
	}
	return &llm.ConfigError{Reason: fmt.Sprintf("claude was denied %s (%s) with permissions %s (%s): %s",
		english.List(tools), english.Plural(len(denials), "permission denial"), perm.Mode, perm.Why, fix)}
}

// claudeEvent is the part of a stream-json line the adapter reads.
type claudeEvent struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Model     string `json:"model"` // system/init
}

// claudeMessage is the message of an assistant or user event: its
// content blocks. A user event's content may be a plain string, which
// carries no tool result.
type claudeMessage struct {
	Message struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type claudeBlock struct {
	Type  string   `json:"type"`
	Text  string   `json:"text"` // text
	ID    string   `json:"id"`   // tool_use
	Name  string   `json:"name"` // tool_use
	Input struct { // tool_use
		Command string `json:"command"` // Bash
	} `json:"input"`
	ToolUseID string `json:"tool_use_id"` // tool_result
}

// blocks is the message's content blocks; nil when it has none or they
// have an unexpected shape (only the text and the Bash commands matter,
// not worth failing the iteration for).
func (m claudeMessage) blocks() []claudeBlock {
	var b []claudeBlock
	if json.Unmarshal(m.Message.Content, &b) != nil {
		return nil
	}
	return b
}

// claudeStream accumulates what the stream said.
type claudeStream struct {
	sessionID string
	model     string // from system/init
	lastText  string // last assistant text
	final     *llm.ClaudeResult
	results   int          // result events seen
	tokens    usage.Tokens // summed over the result events
	costs     float64      // total_cost_usd summed over the result events
	// commands are the Bash commands started and not yet ended.
	commands runningCommands
}

func (s *claudeStream) line(n int, line []byte) error {
	var ev claudeEvent
	if err := decodeLine("claude", n, line, &ev); err != nil {
		return err
	}
	switch ev.Type {
	case "system":
		if ev.Subtype == "init" {
			if ev.SessionID != "" {
				s.sessionID = ev.SessionID
			}
			if ev.Model != "" {
				s.model = ev.Model
			}
		}
	case "assistant":
		var m claudeMessage
		if json.Unmarshal(line, &m) != nil {
			return nil
		}
		var parts []string
		for _, b := range m.blocks() {
			switch {
			case b.Type == "text" && strings.TrimSpace(b.Text) != "":
				parts = append(parts, b.Text)
			case b.Type == "tool_use" && b.Name == "Bash" && b.Input.Command != "":
				s.commands.start(b.ID, b.Input.Command)
			}
		}
		if len(parts) > 0 {
			s.lastText = strings.Join(parts, "\n")
		}
	case "user":
		var m claudeMessage
		if json.Unmarshal(line, &m) != nil {
			return nil
		}
		for _, b := range m.blocks() {
			if b.Type != "tool_result" {
				continue
			}
			s.commands.end(b.ToolUseID)
		}
	case "result":
		var r llm.ClaudeResult
		if err := json.Unmarshal(line, &r); err != nil {
			return fmt.Errorf("claude stream line %d: result event: %v: %s", n, err, head(line, 200))
		}
		s.final = &r
		s.results++
		s.tokens = s.tokens.Add(r.Tokens())
		s.costs += r.TotalCostUSD
		if r.SessionID != "" {
			s.sessionID = r.SessionID
		}
	}
	return nil
}

// result turns the stream into a Result (without exit code, signal, stall
// and duration). Done needs a last result event that succeeded, without
// an error or permission denials; the tokens are those of every result
// event. base is the session's previous totals when known.
func (s *claudeStream) result(req Request, base *claudeTotals) Result {
	res := Result{SessionID: s.sessionID, Summary: truncate(s.lastText, maxSummary)}
	if res.SessionID == "" {
		res.SessionID = req.SessionID
	}
	r := s.final
	if r == nil {
		return res
	}
	res.Done = !r.IsError && r.Subtype == "success" && len(r.PermissionDenials) == 0
	res.APIError = apiMessage(r.APIFailure())
	summary := r.Result
	if strings.TrimSpace(summary) == "" {
		summary = s.lastText
	}
	if r.IsError || r.Subtype != "success" {
		summary = fmt.Sprintf("claude error (%s): %s", r.Subtype, summary)
	}
	if len(r.PermissionDenials) > 0 {
		var tools []string
		for _, d := range r.PermissionDenials {
			tools = append(tools, d.ToolName)
		}
		summary = fmt.Sprintf("%d permission denial(s): %s. %s", len(tools), strings.Join(tools, ", "), summary)
	}
	res.Summary = truncate(summary, maxSummary)
	res.Calls = []CallUsage{{Model: s.resultModel(req), Tokens: s.tokens, CostUSD: s.runCost(req, base)}}
	return res
}

// runCost is the cost of this run (see Claude): the last result's
// total_cost_usd for a new session; for a resumed one, the growth of the
// session's total since base, or without base, the session total scaled
// by this run's share of its tokens. When the last result's modelUsage
// covers fewer tokens than the results' summed usage, its figures are not
// the session's, and the results' costs are added up.
func (s *claudeStream) runCost(req Request, base *claudeTotals) float64 {
	var session int64
	for _, u := range s.final.ModelUsage {
		session += u.InputTokens + u.OutputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	}
	run := s.tokens.Total()
	total := s.final.TotalCostUSD
	switch {
	case s.results > 1 && session < run:
		return s.costs
	case req.SessionID == "":
		return total
	case base != nil && total >= base.CostUSD:
		return total - base.CostUSD
	case base != nil:
		return total
	case session > 0 && run < session:
		return total * float64(run) / float64(session)
	}
	return total
}

// resultModel names the model of the result's totals: the one that cost
// the most (llm.ClaudeResult.TopModel), else the init event's model, else
// the requested one.
func (s *claudeStream) resultModel(req Request) string {
	switch {
	case s.final.TopModel() != "":
		return s.final.TopModel()
	case s.model != "":
		return s.model
	}
	return req.Model
}

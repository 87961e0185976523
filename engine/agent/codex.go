package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm"
)

// Codex runs the Codex CLI headless:
//
//	<Prefix> exec --json --skip-git-repo-check --sandbox workspace-write [-m M] <prompt>
//	<Prefix> exec resume SESSION --json --skip-git-repo-check -c sandbox_mode="workspace-write" [-m M] <prompt>
//
// with stdin from /dev/null (`exec resume` has no --sandbox flag and
// would default to read-only). The usage in turn.completed is cumulative
// over the thread, across `exec resume` too, so each turn becomes one Call
// with the difference from the previous total. The previous total of a
// resumed thread comes from the session store (sessionStore); a thread
// it does not know starts from zero, and a total that went down is taken
// as a fresh count. input_tokens includes the cached and cache-write
// tokens: Call.Tokens splits them, so Tokens.Total() is input + output.
// Codex reports no cost, so CostUSD stays 0.
type Codex struct {
	// Prefix is the command the subcommand follows, e.g. ["codex"].
	Prefix []string

	sessions sessionStore
}

// Name is "codex".
func (c *Codex) Name() string { return "codex" }

func (c *Codex) argv(req Request) ([]string, error) {
	prompt, err := llm.PromptArg(req.Prompt)
	if err != nil {
		return nil, fmt.Errorf("agent codex: %w", err)
	}
	a := append([]string(nil), c.Prefix...)
	if req.SessionID != "" {
		a = append(a, "exec", "resume", req.SessionID, "--json", "--skip-git-repo-check",
			"-c", `sandbox_mode="workspace-write"`)
	} else {
		a = append(a, "exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write")
	}
	if req.Model != "" {
		a = append(a, "-m", req.Model)
	}
	return append(a, prompt), nil
}

// Run runs one iteration. Done needs a turn.completed and no
// turn.failed; a stream with neither is an error.
func (c *Codex) Run(ctx context.Context, req Request) (Result, error) {
	start := time.Now()
	argv, err := c.argv(req)
	if err != nil {
		return Result{}, err
	}
	st := codexStream{model: req.Model, thread: req.SessionID}
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
	switch {
	case st.turns == 0 && !st.failed:
		msg := ""
		if st.lastError != "" {
			msg = ": " + st.lastError
		}
		return res, fmt.Errorf("codex stream ended without turn.completed or turn.failed (exit code %d)%s",
			run.out.ExitCode, head([]byte(msg), 500))
	}
	return res, nil
}

// codexUsage is the usage object of turn.completed. InputTokens includes
// CachedInputTokens and CacheWriteInputTokens.
type codexUsage struct {
	InputTokens           int64 `json:"input_tokens"`
	CachedInputTokens     int64 `json:"cached_input_tokens"`
	CacheWriteInputTokens int64 `json:"cache_write_input_tokens"`
	OutputTokens          int64 `json:"output_tokens"`
}

func (u codexUsage) below(v codexUsage) bool {
	return u.InputTokens < v.InputTokens || u.CachedInputTokens < v.CachedInputTokens ||
		u.CacheWriteInputTokens < v.CacheWriteInputTokens || u.OutputTokens < v.OutputTokens
}

type codexEvent struct {
	Type     string      `json:"type"`
	ThreadID string      `json:"thread_id"`
	Usage    *codexUsage `json:"usage"`
	Message  string      `json:"message"` // error events
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"` // turn.failed
	Item json.RawMessage `json:"item"`
}

type codexItem struct {
	Type    string `json:"type"`
	Text    string `json:"text"`    // agent_message
	Message string `json:"message"` // error
}

// codexStream accumulates what the stream said.
type codexStream struct {
	model     string
	thread    string
	prev      codexUsage // cumulative usage at the previous turn.completed
	turns     int        // turn.completed seen
	calls     []Call
	failed    bool
	failMsg   string
	lastText  string // last agent_message
	lastError string // last error item or error event
}

func (s *codexStream) line(n int, line []byte) error {
	var ev codexEvent
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
		var it codexItem
		if ev.Type != "item.completed" || len(ev.Item) == 0 || json.Unmarshal(ev.Item, &it) != nil {
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
		u := codexUsage{}
		if ev.Usage != nil {
			u = *ev.Usage
		}
		base := s.prev
		if u.below(base) {
			base = codexUsage{}
		}
		s.calls = append(s.calls, Call{Model: s.model, Tokens: tokensOf(u, base)})
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

// tokensOf is the usage between the cumulative totals base and u, with the
// cached and cache-write parts of the input counted only as CacheRead and
// CacheWrite. base is never above u (see below).
func tokensOf(u, base codexUsage) journal.Tokens {
	cached := u.CachedInputTokens - base.CachedInputTokens
	written := u.CacheWriteInputTokens - base.CacheWriteInputTokens
	input := u.InputTokens - base.InputTokens - cached - written
	return journal.Tokens{
		Input:      max(input, 0),
		Output:     u.OutputTokens - base.OutputTokens,
		CacheRead:  cached,
		CacheWrite: written,
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
		summary = "turn failed: " + msg
	case s.lastText != "":
		summary = s.lastText
	case s.lastError != "":
		summary = "error: " + s.lastError
	}
	res.Summary = truncate(summary, maxSummary)
	return res
}

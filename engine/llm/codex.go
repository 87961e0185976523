package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/set-engine/set/engine/llm/usage"
)

// codexCLI asks Codex non-interactively, read-only and without saving
// the session:
//
//	<command> exec --json --skip-git-repo-check --sandbox read-only --ephemeral
//	          -m M [--output-schema FILE] <prompt>
//
// with stdin from /dev/null. Codex has no system prompt flag: the
// instructions go first in the prompt. The answer is the last
// agent_message; the usage is turn.completed's (input_tokens includes the
// cached tokens, which count as CacheRead). Codex reports no cost.
type codexCLI struct {
	command []string
	env     []string
	dir     string
}

func (c *codexCLI) call(ctx context.Context, model string, req Request) (result, error) {
	text := req.Prompt
	if req.System != "" {
		text = req.System + "\n\n" + req.Prompt
	}
	prompt, err := PromptArg(text)
	if err != nil {
		return result{}, err
	}
	argv := append([]string(nil), c.command...)
	argv = append(argv, "exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only", "--ephemeral", "-m", model)
	if len(req.Schema) > 0 {
		dir, err := os.MkdirTemp("", "set-codex-schema-")
		if err != nil {
			return result{}, err
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "schema.json")
		if err := os.WriteFile(path, req.Schema, 0o600); err != nil {
			return result{}, err
		}
		argv = append(argv, "--output-schema", path)
	}
	argv = append(argv, prompt)
	stdout, stderr, err := runCLI(ctx, "codex", argv, c.env, c.dir)
	if err != nil {
		return result{}, err
	}
	s := parseCodex(stdout)
	res := result{model: model, tokens: s.tokens, text: s.text}
	switch {
	case s.failed != "":
		return res, classifyCodex(model, s.failed)
	case !s.completed && s.lastError != "":
		return res, classifyCodex(model, s.lastError)
	case !s.completed:
		return res, fmt.Errorf("codex ended without turn.completed: %s", tail(stdout, stderr))
	}
	return res, nil
}

// codexRun is what a codex exec --json stream said.
type codexRun struct {
	text      string // last agent_message
	tokens    usage.Tokens
	completed bool
	failed    string // turn.failed's message
	lastError string // last error event or item
}

func parseCodex(out []byte) codexRun {
	var s codexRun
	for _, line := range bytes.Split(out, []byte("\n")) {
		var ev CodexEvent
		if json.Unmarshal(bytes.TrimSpace(line), &ev) != nil {
			continue
		}
		switch ev.Type {
		case "item.completed":
			it, ok := ev.ItemOf()
			switch {
			case !ok:
			case it.Type == "agent_message":
				s.text = it.Text
			case it.Type == "error":
				s.lastError = it.Message
			}
		case "turn.completed":
			s.completed = true
			if u := ev.Usage; u != nil {
				s.tokens = u.Since(CodexUsage{})
			}
		case "turn.failed":
			s.failed = "turn failed"
			if ev.Error != nil && ev.Error.Message != "" {
				s.failed = ev.Error.Message
			}
		case "error":
			s.lastError = ev.Message
		}
	}
	return s
}

// CodexEvent is one line of the JSON-lines stream `codex exec --json`
// prints, as set reads it: the model call (llm) and the coding agent
// (engine/agent) both read it through this type.
type CodexEvent struct {
	// Type is thread.started, turn.completed, turn.failed, error, or
	// item.started, item.updated and item.completed.
	Type     string      `json:"type"`
	ThreadID string      `json:"thread_id"` // thread.started
	Usage    *CodexUsage `json:"usage"`     // turn.completed
	Message  string      `json:"message"`   // error
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"` // turn.failed
	// Item is an item event's item, decoded by ItemOf.
	Item json.RawMessage `json:"item"`
}

// ItemOf decodes the event's item; ok is false when it has none or one of
// an unexpected shape, which a reader skips: items only say what the
// agent did and answered, never how the turn ended.
func (ev CodexEvent) ItemOf() (it CodexItem, ok bool) {
	if len(ev.Item) == 0 || json.Unmarshal(ev.Item, &it) != nil {
		return CodexItem{}, false
	}
	return it, true
}

// CodexItem is the item of an item event.
type CodexItem struct {
	ID      string `json:"id"`
	Type    string `json:"type"`    // agent_message, error, command_execution …
	Text    string `json:"text"`    // agent_message
	Message string `json:"message"` // error
	Command string `json:"command"` // command_execution
}

// CodexUsage is the usage of turn.completed: the thread's running totals,
// across `codex exec resume` too. InputTokens includes CachedInputTokens
// and CacheWriteInputTokens.
type CodexUsage struct {
	InputTokens           int64 `json:"input_tokens"`
	CachedInputTokens     int64 `json:"cached_input_tokens"`
	CacheWriteInputTokens int64 `json:"cache_write_input_tokens"`
	OutputTokens          int64 `json:"output_tokens"`
}

// Below reports whether any count of u is below v's: u is then not a
// later total of the same thread (a fresh count), and Since must not take
// v as its base.
func (u CodexUsage) Below(v CodexUsage) bool {
	return u.InputTokens < v.InputTokens || u.CachedInputTokens < v.CachedInputTokens ||
		u.CacheWriteInputTokens < v.CacheWriteInputTokens || u.OutputTokens < v.OutputTokens
}

// Since is the usage between the running totals base and u (base zero
// for u's own), with the cached and cache-write parts of the input
// counted only as CacheRead and CacheWrite, so that Tokens.Total() is
// input + output. base is never above u (see Below).
func (u CodexUsage) Since(base CodexUsage) usage.Tokens {
	cached := u.CachedInputTokens - base.CachedInputTokens
	written := u.CacheWriteInputTokens - base.CacheWriteInputTokens
	input := u.InputTokens - base.InputTokens - cached - written
	return usage.Tokens{
		Input:      max(input, 0),
		Output:     u.OutputTokens - base.OutputTokens,
		CacheRead:  cached,
		CacheWrite: written,
	}
}

// codexTransient matches Codex's words for a failure worth another try:
// its message for an overloaded endpoint ("We're currently experiencing
// high demand"), rate limits, server errors and timeouts.
var codexTransient = regexp.MustCompile(`(?i)high demand|overloaded|rate limit|too many requests|\b(429|500|502|503|504|529)\b|timed? ?out|stream disconnected`)

// classifyCodex classifies a failure Codex reports only by its message.
func classifyCodex(model, msg string) error {
	err := fmt.Errorf("codex: %s", oneLine(msg))
	switch {
	case IsModelNotFound(0, "", msg):
		return ModelNotServed(model, "", msg)
	case codexTransient.MatchString(strings.TrimSpace(msg)):
		return &transientError{err}
	}
	return err
}

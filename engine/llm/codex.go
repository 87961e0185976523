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

	"github.com/set-engine/set/engine/journal"
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
	tokens    journal.Tokens
	completed bool
	failed    string // turn.failed's message
	lastError string // last error event or item
}

func parseCodex(out []byte) codexRun {
	var s codexRun
	for _, line := range bytes.Split(out, []byte("\n")) {
		var ev struct {
			Type  string `json:"type"`
			Usage *struct {
				InputTokens           int64 `json:"input_tokens"`
				CachedInputTokens     int64 `json:"cached_input_tokens"`
				CacheWriteInputTokens int64 `json:"cache_write_input_tokens"`
				OutputTokens          int64 `json:"output_tokens"`
			} `json:"usage"`
			Message string `json:"message"`
			Error   *struct {
				Message string `json:"message"`
			} `json:"error"`
			Item *struct {
				Type    string `json:"type"`
				Text    string `json:"text"`
				Message string `json:"message"`
			} `json:"item"`
		}
		if json.Unmarshal(bytes.TrimSpace(line), &ev) != nil {
			continue
		}
		switch ev.Type {
		case "item.completed":
			switch {
			case ev.Item == nil:
			case ev.Item.Type == "agent_message":
				s.text = ev.Item.Text
			case ev.Item.Type == "error":
				s.lastError = ev.Item.Message
			}
		case "turn.completed":
			s.completed = true
			if u := ev.Usage; u != nil {
				s.tokens = journal.Tokens{
					Input:      max(u.InputTokens-u.CachedInputTokens-u.CacheWriteInputTokens, 0),
					Output:     u.OutputTokens,
					CacheRead:  u.CachedInputTokens,
					CacheWrite: u.CacheWriteInputTokens,
				}
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

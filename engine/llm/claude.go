package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/set-engine/set/engine/llm/usage"
	"github.com/set-engine/set/engine/proc"
)

// ClaudeQuietEnv is the environment that keeps Claude Code off the
// network except for its model endpoint: no telemetry, no non-essential
// traffic, no auto-update.
func ClaudeQuietEnv() []string {
	return []string{
		"DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
	}
}

// ClaudeResult is the result event Claude Code prints last in print mode:
// alone with --output-format json, as the last line of stream-json.
type ClaudeResult struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	IsError bool   `json:"is_error"`
	// APIErrorStatus and APIErrorType are the HTTP status and error type
	// of the API failure that ended the run, when one did.
	APIErrorStatus int    `json:"api_error_status"`
	APIErrorType   string `json:"api_error_type"`
	SessionID      string `json:"session_id"`
	Result         string `json:"result"`
	// StructuredOutput is the answer of a run with --json-schema.
	StructuredOutput json.RawMessage `json:"structured_output"`
	TotalCostUSD     float64         `json:"total_cost_usd"`
	Usage            struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
	ModelUsage map[string]struct {
		InputTokens              int64   `json:"inputTokens"`
		OutputTokens             int64   `json:"outputTokens"`
		CacheReadInputTokens     int64   `json:"cacheReadInputTokens"`
		CacheCreationInputTokens int64   `json:"cacheCreationInputTokens"`
		CostUSD                  float64 `json:"costUSD"`
	} `json:"modelUsage"`
	PermissionDenials []PermissionDenial `json:"permission_denials"`
	// TerminalReason is why the run ended: "completed", "api_error", …
	TerminalReason string `json:"terminal_reason"`
}

// PermissionDenial is one tool call Claude Code's permission mode denied.
type PermissionDenial struct {
	ToolName string `json:"tool_name"`
}

// APIFailure is the provider's message when the run ended because the
// model API or its transport failed: an error result whose
// terminal_reason is "api_error", that carries an API error status, or
// whose text is Claude Code's "API Error: …". It is "" otherwise.
func (r *ClaudeResult) APIFailure() string {
	if !r.IsError {
		return ""
	}
	msg := oneLine(r.Result)
	if r.TerminalReason != "api_error" && r.APIErrorStatus == 0 && !strings.HasPrefix(msg, "API Error") {
		return ""
	}
	if msg == "" {
		msg = strings.TrimSpace(fmt.Sprintf("API error %d %s", r.APIErrorStatus, r.APIErrorType))
	}
	return msg
}

// Tokens is the run's usage (result.usage).
func (r *ClaudeResult) Tokens() usage.Tokens {
	return usage.Tokens{
		Input:      r.Usage.InputTokens,
		Output:     r.Usage.OutputTokens,
		CacheRead:  r.Usage.CacheReadInputTokens,
		CacheWrite: r.Usage.CacheCreationInputTokens,
	}
}

// TopModel is the model that cost the most in modelUsage (then: most
// tokens, then: name); "" when modelUsage is empty.
func (r *ClaudeResult) TopModel() string {
	names := make([]string, 0, len(r.ModelUsage))
	for name := range r.ModelUsage {
		names = append(names, name)
	}
	sort.Strings(names)
	best := ""
	for _, name := range names {
		if best == "" {
			best = name
			continue
		}
		u, b := r.ModelUsage[name], r.ModelUsage[best]
		if u.CostUSD > b.CostUSD ||
			(u.CostUSD == b.CostUSD && u.InputTokens+u.OutputTokens > b.InputTokens+b.OutputTokens) {
			best = name
		}
	}
	return best
}

// Failure is why the run failed, classified, or nil when it did not end
// in an error: a model the endpoint does not serve is a *ConfigError
// about model (the model asked for), an overloaded or rate-limited
// endpoint is transient.
func (r *ClaudeResult) Failure(model string) error {
	if !r.IsError && r.Subtype == "success" {
		return nil
	}
	msg := oneLine(r.Result)
	err := fmt.Errorf("claude: %s (%s)", msg, r.Subtype)
	if r.APIErrorStatus != 0 {
		err = fmt.Errorf("claude: API error %d %s: %s", r.APIErrorStatus, r.APIErrorType, msg)
	}
	if !r.IsError && r.APIErrorStatus == 0 {
		return err // error_max_turns and the like: the run, not the endpoint
	}
	return classify(model, r.APIErrorStatus, r.APIErrorType, r.Result, err)
}

// claudeCLI asks Claude Code in print mode, without tools:
//
//	<command> -p <prompt> --output-format json --model M --tools ""
//	          --no-session-persistence [--system-prompt S] [--json-schema SCHEMA]
//
// with stdin from /dev/null and the client's environment plus
// ClaudeQuietEnv and, unless set, CLAUDE_CODE_MAX_RETRIES=0 (the Client
// retries and falls back itself).
type claudeCLI struct {
	command []string
	env     []string
	dir     string
}

func (c *claudeCLI) argv(model string, req Request) ([]string, error) {
	prompt, err := PromptArg(req.Prompt)
	if err != nil {
		return nil, err
	}
	a := append([]string(nil), c.command...)
	a = append(a, "-p", prompt, "--output-format", "json", "--model", model, "--tools", "", "--no-session-persistence")
	if req.System != "" {
		a = append(a, "--system-prompt", req.System)
	}
	if len(req.Schema) > 0 {
		a = append(a, "--json-schema", string(req.Schema))
	}
	return a, nil
}

func (c *claudeCLI) call(ctx context.Context, model string, req Request) (result, error) {
	argv, err := c.argv(model, req)
	if err != nil {
		return result{}, err
	}
	env := append(append([]string(nil), c.env...), ClaudeQuietEnv()...)
	if proc.Getenv(env, "CLAUDE_CODE_MAX_RETRIES") == "" {
		env = append(env, "CLAUDE_CODE_MAX_RETRIES=0")
	}
	stdout, stderr, err := runCLI(ctx, "claude", argv, env, c.dir)
	if err != nil {
		return result{}, err
	}
	r, ok := lastResult(stdout)
	if !ok {
		return result{}, fmt.Errorf("claude printed no result: %s", tail(stdout, stderr))
	}
	res := result{model: r.TopModel(), tokens: r.Tokens(), costUSD: r.TotalCostUSD, text: r.Result}
	if res.model == "" {
		res.model = model
	}
	if err := r.Failure(model); err != nil {
		return res, err
	}
	if len(req.Schema) > 0 {
		if len(r.StructuredOutput) == 0 || string(r.StructuredOutput) == "null" {
			return res, fmt.Errorf("claude gave no structured answer: %s", oneLine(r.Result))
		}
		res.text = string(r.StructuredOutput)
	}
	return res, nil
}

// lastResult is the last line of out that is a result event.
func lastResult(out []byte) (*ClaudeResult, bool) {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		var r ClaudeResult
		if json.Unmarshal(bytes.TrimSpace(lines[i]), &r) == nil && r.Type == "result" {
			return &r, true
		}
	}
	return nil, false
}

// runCLI runs a CLI transport's command with stdin from /dev/null in its
// own process group, killed with ctx. A command that cannot start is a
// ConfigError; the exit status is left to the caller, which judges the
// output.
func runCLI(ctx context.Context, name string, argv, env []string, dir string) (stdout, stderr []byte, err error) {
	var out, errOut bytes.Buffer
	o, err := proc.Run(ctx, proc.Spec{Argv: argv, Dir: dir, Env: env, Stdout: &out, Stderr: &errOut})
	if err != nil {
		if errors.Is(err, proc.ErrStart) {
			return nil, nil, &ConfigError{Reason: fmt.Sprintf("the %s transport cannot run %s: %v (install the CLI, or pick another transport)", name, argv[0], err)}
		}
		return nil, nil, err
	}
	if o.Canceled || o.TimedOut {
		return out.Bytes(), errOut.Bytes(), fmt.Errorf("%s: %w", name, ctx.Err())
	}
	return out.Bytes(), errOut.Bytes(), nil
}

// tail is the end of a CLI's output, for an error message.
func tail(stdout, stderr []byte) string {
	s := strings.TrimSpace(string(stdout) + "\n" + string(stderr))
	if len(s) > 500 {
		s = "…" + s[len(s)-500:]
	}
	if s == "" {
		return "no output"
	}
	return s
}

// maxArg is the largest single argv element Linux accepts
// (MAX_ARG_STRLEN, 32 pages).
const maxArg = 128*1024 - 1

// PromptArg is the prompt as a positional argument: one that starts with
// "-" gets a leading newline so that no CLI parses it as a flag.
func PromptArg(p string) (string, error) {
	if strings.HasPrefix(p, "-") {
		p = "\n" + p
	}
	if len(p) > maxArg {
		return "", fmt.Errorf("prompt is %d bytes, more than one argument may hold (%d)", len(p), maxArg)
	}
	return p, nil
}

// Package llm makes the model calls of set's roles (plan, review, verify,
// later sentinel) through a configured transport: the Claude Code CLI in
// print mode (claude), `codex exec` (codex), or the Anthropic and OpenAI
// HTTP APIs through their official Go SDKs (anthropic, openai).
//
// A Client holds a Route per role: a primary Target and its fallbacks.
// Invariants:
//   - a call that fails transiently (HTTP 429, 500, 502, 503, 504, 529, an
//     overloaded or rate-limit error, a timeout, a broken connection) is
//     retried on the same target up to Config.Retries times, then goes to
//     the next target of the route; any other failure ends the call;
//   - a ConfigError (missing credentials, a CLI that is not installed, a
//     model the endpoint does not serve) is never retried and never falls
//     back: it names what to change;
//   - every attempt, failed or not, is reported to Config.OnCall as a Call,
//     which holds what an LLM_CALL event needs (Call.Event);
//   - with Request.Schema set, Answer.Text is the model's JSON answer as
//     the transport returned it; the caller validates it (a planner
//     repairs an invalid answer by asking again with the errors).
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm/usage"
)

// Role is what a model call is for (report.Role sums the calls of one).
type Role string

// The roles that call models. The agent that implements changes
// ("implement") runs through engine/agent, not through this package.
const (
	Plan     Role = "plan"
	Review   Role = "review"
	Verify   Role = "verify"
	Sentinel Role = "sentinel"
)

// Transport names.
const (
	TransportClaude    = "claude"
	TransportCodex     = "codex"
	TransportAnthropic = "anthropic"
	TransportOpenAI    = "openai"
)

// Transports are the transport names a Target may use.
var Transports = []string{TransportClaude, TransportCodex, TransportAnthropic, TransportOpenAI}

// Target is one model reached through one transport.
type Target struct {
	Transport string // one of Transports
	Model     string
	// Field is the CUE path that names the model, with its position when
	// known ("project.agent.models.plan (set.cue:9:12)"); a ConfigError
	// about the model tells the user to change it.
	Field string
}

func (t Target) String() string { return t.Model + " via " + t.Transport }

// Route is a role's targets: the primary first, then the fallbacks used,
// in order, only when the one before failed transiently.
type Route []Target

// Request is one question to a model (agent.Request is an agent's
// iteration, control.Request a line of the control file).
type Request struct {
	Role   Role
	System string // instructions; "" for none
	Prompt string
	// Schema, when set, is the JSON Schema (an object schema) the answer
	// must satisfy; the transport asks for structured output (a forced
	// tool for Anthropic, a json_schema text format for OpenAI,
	// --json-schema for Claude Code, --output-schema for Codex).
	Schema json.RawMessage
	// MaxTokens bounds the answer; 0 means 16000.
	MaxTokens int64
}

// Answer is a successful call's answer.
type Answer struct {
	// Text is the answer: with Request.Schema, the JSON answer.
	Text string
	// Call is the attempt that answered.
	Call Call
}

// Call is one attempt of a model call: what an LLM_CALL event records.
type Call struct {
	Role      Role
	Transport string
	// Model is the model that answered as the endpoint reported it, else
	// the one asked for.
	Model    string
	Tokens   usage.Tokens
	CostUSD  float64 // 0 when the transport reports none (anthropic, openai, codex)
	Duration time.Duration
	// Err is why the attempt failed; nil for the one that answered.
	Err error
}

// Event is the LLM_CALL event of the call.
func (c Call) Event() journal.LLMCallData {
	d := journal.LLMCallData{
		Role: string(c.Role), Model: c.Model, Transport: c.Transport,
		Tokens: c.Tokens, CostUSD: c.CostUSD, DurationMS: c.Duration.Milliseconds(),
	}
	if c.Err != nil {
		d.Error = c.Err.Error()
	}
	return d
}

// Config configures a Client.
type Config struct {
	// Routes holds each role's route.
	Routes map[Role]Route
	// Unrouted, when set, explains why a role has no route (what to
	// configure); nil says only that no model is configured.
	Unrouted func(Role) *ConfigError
	// Env is the environment the API keys and base URLs are read from
	// (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL,
	// OPENAI_API_KEY, OPENAI_BASE_URL) and that the CLIs run with; nil
	// means the process's environment.
	Env []string
	// Dir is the working directory of the CLI transports; "" means the
	// current one.
	Dir string
	// ClaudeCommand and CodexCommand are the commands the CLI transports'
	// flags follow; nil means ["claude"] and ["codex"] on PATH.
	ClaudeCommand, CodexCommand []string
	// Timeout bounds one attempt; 0 means 10 minutes. An attempt that
	// times out is a transient failure.
	Timeout time.Duration
	// Retries is how many times a transient failure is retried on the
	// same target before the next target; negative means none, 0 means
	// the default, 1.
	Retries int
	// Wait waits before a retry of the same target (backoff: 2 s, then
	// twice as long each time); nil sleeps, ending early with ctx.
	Wait func(ctx context.Context, d time.Duration) error
	// OnCall is given every attempt as it ends; an error it returns ends
	// the call with that error.
	OnCall func(Call) error
}

// Client calls models for roles. It is safe for concurrent use.
type Client struct {
	cfg Config
}

// New returns a client. Routes are checked when they are used, so that a
// configuration with a role that is never called is not refused.
func New(cfg Config) *Client {
	if cfg.Env == nil {
		cfg.Env = os.Environ()
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Minute
	}
	switch {
	case cfg.Retries == 0:
		cfg.Retries = 1
	case cfg.Retries < 0:
		cfg.Retries = 0
	}
	if cfg.Wait == nil {
		cfg.Wait = sleep
	}
	return &Client{cfg: cfg}
}

// Ask asks the model of req.Role. It tries the role's targets in order on
// transient failures (see the package's invariants) and returns the first
// answer, or the last failure. A ConfigError is returned at once.
func (c *Client) Ask(ctx context.Context, req Request) (Answer, error) {
	route := c.cfg.Routes[req.Role]
	if len(route) == 0 {
		if c.cfg.Unrouted != nil {
			return Answer{}, c.cfg.Unrouted(req.Role)
		}
		return Answer{}, &ConfigError{Reason: fmt.Sprintf("no model is configured for the %s role", req.Role)}
	}
	if req.MaxTokens == 0 {
		req.MaxTokens = 16000
	}
	var last error
	for i, target := range route {
		tr, err := c.transport(target)
		if err != nil {
			return Answer{}, err
		}
		backoff := 2 * time.Second
		for attempt := 0; attempt <= c.cfg.Retries; attempt++ {
			if attempt > 0 {
				if err := c.cfg.Wait(ctx, backoff); err != nil {
					return Answer{}, err
				}
				backoff *= 2
			}
			ans, err := c.attempt(ctx, tr, target, req)
			if err == nil {
				return ans, nil
			}
			var ce *ConfigError
			switch {
			case errors.As(err, &ce):
				if ce.Field == "" && ce.Model != "" {
					ce.Field = target.Field
				}
				return Answer{}, err
			case ctx.Err() != nil:
				return Answer{}, err
			case !IsTransient(err):
				return Answer{}, err
			}
			last = err
		}
		if i < len(route)-1 {
			last = fmt.Errorf("%s: %w", target, last)
		}
	}
	return Answer{}, fmt.Errorf("%s call failed on every model of its route: %w", req.Role, last)
}

// attempt makes one call on target, bounded by the timeout, and reports it.
func (c *Client) attempt(ctx context.Context, tr transport, target Target, req Request) (Answer, error) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	start := time.Now()
	res, err := tr.call(actx, target.Model, req)
	if err != nil && ctx.Err() == nil && actx.Err() != nil {
		err = &transientError{fmt.Errorf("no answer within %s: %w", c.cfg.Timeout, err)}
	}
	call := Call{
		Role: req.Role, Transport: target.Transport, Model: res.model, Tokens: res.tokens,
		CostUSD: res.costUSD, Duration: time.Since(start), Err: err,
	}
	if call.Model == "" {
		call.Model = target.Model
	}
	if c.cfg.OnCall != nil {
		if oerr := c.cfg.OnCall(call); oerr != nil {
			return Answer{}, oerr
		}
	}
	if err != nil {
		return Answer{}, err
	}
	return Answer{Text: res.text, Call: call}, nil
}

// transport is one way of reaching models.
type transport interface {
	// call asks model once. A failure the endpoint reports is classified:
	// *ConfigError, transient (IsTransient) or other.
	call(ctx context.Context, model string, req Request) (result, error)
}

// result is what one call returned. Tokens and cost are filled as far as
// the endpoint reported them, also when the call failed.
type result struct {
	text    string
	model   string
	tokens  usage.Tokens
	costUSD float64
}

// transport returns the transport of target.
func (c *Client) transport(t Target) (transport, error) {
	switch t.Transport {
	case TransportAnthropic:
		return newAnthropic(c.cfg.Env)
	case TransportOpenAI:
		return newOpenAI(c.cfg.Env)
	case TransportClaude:
		return &claudeCLI{command: orDefault(c.cfg.ClaudeCommand, "claude"), env: c.cfg.Env, dir: c.cfg.Dir}, nil
	case TransportCodex:
		return &codexCLI{command: orDefault(c.cfg.CodexCommand, "codex"), env: c.cfg.Env, dir: c.cfg.Dir}, nil
	}
	return nil, &ConfigError{Reason: fmt.Sprintf("unknown transport %q (want claude, codex, anthropic or openai)", t.Transport)}
}

func orDefault(command []string, def string) []string {
	if len(command) == 0 {
		return []string{def}
	}
	return command
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

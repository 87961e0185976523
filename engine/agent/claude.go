package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm"
	"github.com/set-engine/set/engine/proc"
)

// Claude runs Claude Code headless:
//
//	<Prefix> -p <prompt> --output-format stream-json --verbose [--model M]
//	         [--resume SESSION] <permission flag>
//
// with stdin from /dev/null. The permission flag is
// --dangerously-skip-permissions, except as root without IS_SANDBOX=1 in
// the child's environment, where Claude Code refuses it and
// --permission-mode acceptEdits is used instead.
//
// The stream is read line by line: system/init gives the session and the
// model, assistant events only their text (their usage is unreliable), and
// the final result event the outcome, the token totals and the cost.
//
// With --resume, result.usage covers only the new run while total_cost_usd
// covers the whole session, so the Call's cost is the difference from the
// session's previous total (sessionStore); with no previous total, the
// session cost is scaled by this run's share of the session's tokens
// (modelUsage).
type Claude struct {
	// Prefix is the command the flags follow, e.g. ["claude"].
	Prefix []string
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

// argv is the command line of one iteration for the child environment
// envList.
func (c *Claude) argv(req Request, envList []string) ([]string, error) {
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
	euid := os.Geteuid
	if c.Euid != nil {
		euid = c.Euid
	}
	if ClaudeAcceptsEdits(euid(), envList) {
		a = append(a, "--permission-mode", "acceptEdits")
	} else {
		a = append(a, "--dangerously-skip-permissions")
	}
	return a, nil
}

// ClaudeAcceptsEdits reports whether claude runs with --permission-mode
// acceptEdits rather than --dangerously-skip-permissions, as effective
// user euid with the child environment env: as root, Claude Code refuses
// --dangerously-skip-permissions unless IS_SANDBOX=1. setctl doctor warns
// by the same rule.
func ClaudeAcceptsEdits(euid int, env []string) bool {
	return euid == 0 && proc.Getenv(env, "IS_SANDBOX") != "1"
}

// Run runs one iteration. See Claude for the stream it expects and
// Result for what Done means.
func (c *Claude) Run(ctx context.Context, req Request) (Result, error) {
	start := time.Now()
	envList := env(req.Env, llm.ClaudeQuietEnv()...)
	argv, err := c.argv(req, envList)
	if err != nil {
		return Result{}, err
	}
	var st claudeStream
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
	return res, nil
}

// claudeEvent is the part of a stream-json line the adapter reads.
type claudeEvent struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Model     string `json:"model"` // system/init
}

type claudeAssistant struct {
	Message struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"message"`
}

// claudeStream accumulates what the stream said.
type claudeStream struct {
	sessionID string
	model     string // from system/init
	lastText  string // last assistant text
	final     *llm.ClaudeResult
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
		// Only the text matters; a block of an unexpected shape is not
		// worth failing the iteration for.
		var a claudeAssistant
		if json.Unmarshal(line, &a) == nil {
			var parts []string
			for _, c := range a.Message.Content {
				if c.Type == "text" && strings.TrimSpace(c.Text) != "" {
					parts = append(parts, c.Text)
				}
			}
			if len(parts) > 0 {
				s.lastText = strings.Join(parts, "\n")
			}
		}
	case "result":
		var r llm.ClaudeResult
		if err := json.Unmarshal(line, &r); err != nil {
			return fmt.Errorf("claude stream line %d: result event: %v: %s", n, err, head(line, 200))
		}
		s.final = &r
		if r.SessionID != "" {
			s.sessionID = r.SessionID
		}
	}
	return nil
}

// result turns the stream into a Result (without exit code, stall and
// duration). Done needs a successful, error-free result event without
// permission denials. base is the session's previous totals when known.
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
	tokens := r.Tokens()
	res.Calls = []Call{{Model: s.resultModel(req), Tokens: tokens, CostUSD: s.runCost(req, base, tokens)}}
	return res
}

// runCost is the cost of this run: total_cost_usd for a new session; for
// a resumed one, the growth of the session's total since base, or without
// base, the session total scaled by this run's share of its tokens.
func (s *claudeStream) runCost(req Request, base *claudeTotals, run journal.Tokens) float64 {
	total := s.final.TotalCostUSD
	switch {
	case req.SessionID == "":
		return total
	case base != nil && total >= base.CostUSD:
		return total - base.CostUSD
	case base != nil:
		return total
	}
	var session int64
	for _, u := range s.final.ModelUsage {
		session += u.InputTokens + u.OutputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	}
	if session > 0 && run.Total() < session {
		return total * float64(run.Total()) / float64(session)
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

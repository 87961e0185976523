package gate

import (
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/llm"
	"github.com/set-engine/set/internal/modeltest"
)

// The real Claude Code and Codex, at the pinned versions, take the
// verdict's schema as their structured output and hand back the answer
// the review gate judges (skipped when they are not installed, failing
// under CI=true).
func TestRealCLIReview(t *testing.T) {
	answer := `{"findings": [` + criticalFinding + `]}`
	for _, tc := range []struct {
		transport string
		config    func(*testing.T, *modeltest.Server) llm.Config
	}{
		{llm.TransportClaude, func(t *testing.T, srv *modeltest.Server) llm.Config {
			return llm.Config{Env: srv.ClaudeEnv(t), ClaudeCommand: []string{modeltest.ClaudeCLI(t)}}
		}},
		{llm.TransportCodex, func(t *testing.T, srv *modeltest.Server) llm.Config {
			return llm.Config{Env: srv.CodexEnv(t), CodexCommand: append([]string{modeltest.CodexCLI(t)}, srv.CodexFlags()...)}
		}},
	} {
		t.Run(tc.transport, func(t *testing.T) {
			srv := modeltest.New(t, modeltest.Answer(answer, modeltest.Usage{}))
			cfg := tc.config(t, srv)
			cfg.Routes = map[llm.Role]llm.Route{llm.Review: {{Transport: tc.transport, Model: "m-review"}}}
			cfg.Retries = -1
			in := gradedInput(t, srv, config.KindReview, nil)
			cfg.Dir = in.Worktree
			in.Models = llm.New(cfg)
			res := runGate(t, in)
			if res.Status != StatusFail || !strings.Contains(res.RetryContext, "1. [critical] internal/auth/login.go:4 (REQ-AUTH-01)\n   Login accepts any user without a password.\n   Fix: Check the password against the store.") {
				t.Errorf("%s %q\n%s", res.Status, res.Reason, res.RetryContext)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `"enum":["critical","high","medium","low"]`) {
				t.Errorf("%d requests; the first:\n%.2000s", len(reqs), reqs[0].Body)
			}
		})
	}
}

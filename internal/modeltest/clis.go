package modeltest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/set-engine/set/internal/clitest"
)

// The agent CLIs the tests run, at the versions .ci/run installs into
// bin/tools (stdlib/models.cue copies their model tables; a test keeps
// the three in step).
const (
	ClaudeCodePackage = "@anthropic-ai/claude-code"
	ClaudeCodeVersion = "2.1.330"
	CodexPackage      = "@openai/codex"
	CodexVersion      = "0.169.0"
)

// Claude and Codex are the pinned agent CLIs, found as clitest finds
// every CLI .ci/run installs ($SET_CLAUDE_CLI or $SET_CODEX_CLI, else
// bin/tools/<name>-<version>): a test without them is skipped, or fails
// under CI=true.
var (
	Claude = clitest.Tool{
		Env:     "SET_CLAUDE_CLI",
		Path:    "bin/tools/claude-code-" + ClaudeCodeVersion + "/node_modules/.bin/claude",
		Install: ".ci/run (npm install of " + ClaudeCodePackage + "@" + ClaudeCodeVersion + ")",
	}
	Codex = clitest.Tool{
		Env:     "SET_CODEX_CLI",
		Path:    "bin/tools/codex-" + CodexVersion + "/node_modules/.bin/codex",
		Install: ".ci/run (npm install of " + CodexPackage + "@" + CodexVersion + ")",
	}
)

// ClaudeCLI is the path of the pinned Claude Code CLI (see Claude).
func ClaudeCLI(t testing.TB) string {
	t.Helper()
	return Claude.Require(t)
}

// CodexCLI is the path of the pinned Codex CLI (see Codex).
func CodexCLI(t testing.TB) string {
	t.Helper()
	return Codex.Require(t)
}

// ClaudeEnv is an environment for running the real Claude Code against
// the server: a HOME of the test's own, a dummy key, the server as
// ANTHROPIC_BASE_URL, telemetry and updates off, no retries, and PATH.
func (s *Server) ClaudeEnv(t testing.TB) []string {
	t.Helper()
	home := t.TempDir()
	return []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"ANTHROPIC_API_KEY=sk-ant-test-dummy",
		"ANTHROPIC_BASE_URL=" + s.URL,
		"DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_MAX_RETRIES=0",
	}
}

// CodexEnv is an environment for running the real Codex against the
// server: a CODEX_HOME and HOME of the test's own, a dummy key, and PATH.
// CodexFlags point Codex at the server.
func (s *Server) CodexEnv(t testing.TB) []string {
	t.Helper()
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Codex warns that it puts no helpers under a temporary CODEX_HOME,
	// and runs all the same.
	return []string{
		"HOME=" + home,
		"CODEX_HOME=" + filepath.Join(home, ".codex"),
		"PATH=" + os.Getenv("PATH"),
		"MODELTEST_OPENAI_KEY=test-dummy",
	}
}

// CodexFlags are the global flags that make Codex use the server as its
// model provider, with retries, plugins, analytics and update checks off.
func (s *Server) CodexFlags() []string {
	return []string{
		"--disable", "plugins",
		"-c", "analytics.enabled=false",
		"-c", "check_for_update_on_startup=false",
		"-c", "model_provider=modeltest",
		"-c", "model_providers.modeltest.name=modeltest",
		"-c", "model_providers.modeltest.base_url=" + s.URL + "/v1",
		"-c", "model_providers.modeltest.env_key=MODELTEST_OPENAI_KEY",
		"-c", "model_providers.modeltest.wire_api=responses",
		"-c", "model_providers.modeltest.request_max_retries=0",
		"-c", "model_providers.modeltest.stream_max_retries=0",
	}
}

package modeltest

import (
	"os"
	"path/filepath"
	"testing"
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

// ClaudeCLI is the path of the pinned Claude Code CLI: $SET_CLAUDE_CLI, or
// bin/tools/claude-code-VERSION/node_modules/.bin/claude in the
// repository. When neither exists the test is skipped, or fails under
// CI=true, where .ci/run installs it.
func ClaudeCLI(t testing.TB) string {
	t.Helper()
	return findCLI(t, "SET_CLAUDE_CLI", "claude-code-"+ClaudeCodeVersion, "claude", ClaudeCodePackage+"@"+ClaudeCodeVersion)
}

// CodexCLI is the path of the pinned Codex CLI: $SET_CODEX_CLI, or
// bin/tools/codex-VERSION/node_modules/.bin/codex; skipped or failing as
// ClaudeCLI.
func CodexCLI(t testing.TB) string {
	t.Helper()
	return findCLI(t, "SET_CODEX_CLI", "codex-"+CodexVersion, "codex", CodexPackage+"@"+CodexVersion)
}

// ToolsDir is where .ci/run installs the pinned CLI dir (e.g.
// "claude-code-2.1.330"): bin/tools/dir at the repository's root.
func ToolsDir(t testing.TB, dir string) string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "bin", "tools", dir)
}

func findCLI(t testing.TB, envVar, dir, bin, pkg string) string {
	t.Helper()
	if p := os.Getenv(envVar); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v", envVar, p, err)
		}
		return p
	}
	p := filepath.Join(ToolsDir(t, dir), "node_modules", ".bin", bin)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	msg := pkg + " is not installed: .ci/run installs it into bin/tools (or set " + envVar + ")"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// repoRoot is the nearest directory up from the working directory that
// holds go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
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

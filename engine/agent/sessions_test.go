package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/set-engine/set/engine/llm"
)

func TestSessionStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	s := &sessionStore{dir: dir}
	s.save("codex", "thread-1", llm.CodexUsage{InputTokens: 5}, os.Stderr)
	s.save("codex", "../escape", llm.CodexUsage{InputTokens: 7}, os.Stderr)

	fresh := &sessionStore{dir: dir}
	var u llm.CodexUsage
	if !fresh.load("codex", "thread-1", &u) || u.InputTokens != 5 {
		t.Errorf("persisted totals = %+v", u)
	}
	if fresh.load("codex", "../escape", &u) {
		t.Error("an unsafe session id reached the disk")
	}
	if !s.load("codex", "../escape", &u) || u.InputTokens != 7 {
		t.Errorf("in-memory totals = %+v", u)
	}
	if fresh.load("claude", "thread-1", &u) {
		t.Error("totals leaked across adapters")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "codex-thread-1.json" {
		t.Errorf("files = %v", entries)
	}
}

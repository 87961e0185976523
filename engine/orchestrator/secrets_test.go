package orchestrator

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/redact"
)

// TestSecretsLeaveNoTrace: a gate that prints its environment (the
// secrets passed to it on purpose) and fails once, and an agent that
// prints them too, on stdout and stderr and split across writes, leave
// no trace of them under .set/: events, state, logs, prompts all hold
// [REDACTED] instead.
func TestSecretsLeaveNoTrace(t *testing.T) {
	secrets := []string{
		"sk-ant-planted-secret-123456",             // a *_KEY variable
		"planted-token-abcdef",                     // a *_TOKEN variable
		"open-sesame-phrase",                       // named in the project's secrets
		"ghp_0123456789abcdefghijABCDEFGHIJ012345", // a token shape, in no variable
	}
	t.Setenv("ANTHROPIC_API_KEY", secrets[0])
	t.Setenv("MY_TOKEN", secrets[1])
	t.Setenv("DEPLOY_PHRASE", secrets[2])
	f := newFixture(t)
	f.project.Secrets = map[string]bool{"DEPLOY_PHRASE": true}
	f.project.PassEnv = map[string]bool{"ANTHROPIC_API_KEY": true, "MY_TOKEN": true, "DEPLOY_PHRASE": true}
	f.project.Gates["check"] = gateConfig{Kind: "exec", Mode: "run", Order: 10,
		Run: []string{"sh", "-c", "env; echo 'token " + secrets[3] + "'; ! grep -rl bad --include='*.txt' . || { echo \"found bad content near $MY_TOKEN\"; exit 1; }"}}
	f.change("alpha")
	a := f.agentScript(`
echo "agent sees $ANTHROPIC_API_KEY and $DEPLOY_PHRASE"
echo "on stderr: $MY_TOKEN" >&2
printf 'split planted-tok'; printf 'en-abcdef\n'
if [ "$iteration" = 1 ]; then echo bad > alpha.txt; else echo good > alpha.txt; fi
echo "test for REQ" > alpha_test.txt
`)
	f.applySucceeds(a)
	if n := count(f.events(), journal.RetryScheduled, "alpha"); n != 1 {
		t.Fatalf("alpha retries = %d, want 1: the gate's failing output must reach the journal and the next prompt", n)
	}

	setDir := filepath.Join(f.root, ".set")
	redacted := map[string]bool{}
	files := 0
	err := filepath.WalkDir(setDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(setDir, path)
		for _, s := range secrets {
			if strings.Contains(string(data), s) {
				t.Errorf(".set/%s holds the secret %q", rel, s)
			}
		}
		if strings.Contains(string(data), redact.Mask) {
			redacted[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"events.jsonl", "journals/alpha.jsonl", "state.json",
		"logs/alpha/agent-1.log", "logs/alpha/verify-check-1.log", "changes/alpha/prompt-2.md",
	} {
		if !redacted[want] {
			t.Errorf(".set/%s holds no %s (redacted: %v)", want, redact.Mask, redacted)
		}
	}
	if files < 6 {
		t.Errorf("walked only %d files under .set", files)
	}
}

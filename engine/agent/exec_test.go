package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
)

func TestExecPlaceholdersAndStdin(t *testing.T) {
	wt := t.TempDir()
	promptFile := filepath.Join(t.TempDir(), "prompt-2.md")
	writeFileT(t, promptFile, "the prompt")
	a, err := New(config.Agent{Adapter: "exec", Argv: []string{
		"sh", "-c", `printf '%s\n' "$@" > args; cat > stdin.txt; pwd > pwd; echo working; exit "$EXIT"`,
		"agent", "--prompt={prompt_file}", "{worktree}", "{change}/{iteration}", "{unknown}",
	}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		exit string
		done bool
		code int
	}{{"0", true, 0}, {"3", false, 3}} {
		log := &lockedBuffer{}
		res, err := a.Run(context.Background(), Request{
			Change: "add-links", Worktree: wt, Iteration: 2, Prompt: "the prompt\n",
			PromptFile: promptFile, Env: append(os.Environ(), "EXIT="+tt.exit), Log: log,
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Done != tt.done || res.ExitCode != tt.code {
			t.Errorf("exit %s: result = %+v", tt.exit, res)
		}
		if res.Summary != "working" || !strings.Contains(log.String(), "working") {
			t.Errorf("summary = %q, log = %q", res.Summary, log.String())
		}
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(wt, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	want := "--prompt=" + promptFile + "\n" + wt + "\nadd-links/2\n{unknown}\n"
	if got := read("args"); got != want {
		t.Errorf("args = %q, want %q", got, want)
	}
	if got := read("stdin.txt"); got != "the prompt\n" {
		t.Errorf("stdin = %q", got)
	}
	if got := strings.TrimSpace(read("pwd")); got != wt {
		t.Errorf("cwd = %q", got)
	}
}

func TestExecCancel(t *testing.T) {
	a := &Exec{Argv: []string{"sh", "-c", "echo start; sleep 30"}}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := a.Run(ctx, Request{Worktree: t.TempDir()})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancel: err = %v", err)
	}
}

func TestNew(t *testing.T) {
	root := t.TempDir()
	for _, tt := range []struct {
		cfg  config.Agent
		name string
		err  string
	}{
		{config.Agent{Adapter: "claude"}, "claude", ""},
		{config.Agent{Adapter: "codex"}, "codex", ""},
		{config.Agent{Adapter: "exec", Argv: []string{"true"}}, "exec", ""},
		{config.Agent{Adapter: "replay", Recordings: "rec"}, "replay", ""},
		{config.Agent{Adapter: "exec"}, "", "argv is empty"},
		{config.Agent{Adapter: "replay"}, "", "recordings is empty"},
		{config.Agent{Adapter: "gemini"}, "", `unknown adapter "gemini"`},
		{config.Agent{}, "", "no adapter"},
	} {
		a, err := New(tt.cfg, root)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%+v: err = %v, want %q", tt.cfg, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%+v: %v", tt.cfg, err)
		}
		if a.Name() != tt.name {
			t.Errorf("name = %q, want %q", a.Name(), tt.name)
		}
	}
	a, _ := New(config.Agent{Adapter: "claude"}, root)
	if p := a.(*Claude).Prefix; len(p) != 1 || p[0] != "claude" {
		t.Errorf("claude prefix = %q", p)
	}
	a, _ = New(config.Agent{Adapter: "replay", Recordings: "rec"}, root)
	if d := a.(*Replay).Dir; d != filepath.Join(root, "rec") {
		t.Errorf("replay dir = %q", d)
	}
}

func TestTruncate(t *testing.T) {
	s := strings.Repeat("é", 1500) // 3000 bytes
	got := truncate(s, maxSummary)
	if len(got) > maxSummary || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "éé") {
		t.Errorf("truncate: %d bytes, suffix %q", len(got), got[len(got)-6:])
	}
	if strings.ToValidUTF8(got, "?") != got {
		t.Error("truncate split a rune")
	}
}

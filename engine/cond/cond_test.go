package cond

import (
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
)

func TestCompileGate(t *testing.T) {
	tests := []struct {
		src     string
		runTime bool
		wantErr string
	}{
		{src: `change.type in ["feature", "fix"]`},
		{src: `len(change.requirements) > 0`},
		{src: `any(files, {# endsWith ".tsx"})`, runTime: true},
		{src: `change.size == "L" || any(files, {# matches "^web/"})`, runTime: true},
		{src: `chnage.type == "feature"`, wantErr: "unknown name chnage"},
		{src: `change.kind == "feature"`, wantErr: "kind"},
		{src: `len(change.requirements)`, wantErr: "bool"},
		{src: `change.type ==`, wantErr: "unexpected"},
	}
	for _, tt := range tests {
		c, err := CompileGate(tt.src)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("CompileGate(%q) error = %v, want it to contain %q", tt.src, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("CompileGate(%q): %v", tt.src, err)
			continue
		}
		if c.RunTime() != tt.runTime {
			t.Errorf("CompileGate(%q).RunTime() = %v, want %v", tt.src, c.RunTime(), tt.runTime)
		}
	}
}

func TestEvalGate(t *testing.T) {
	c, err := CompileGate(`change.type in ["feature", "fix"] && len(change.requirements) > 1`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		change config.Change
		want   bool
	}{
		{config.Change{Type: "feature", Requirements: []string{"A", "B"}}, true},
		{config.Change{Type: "feature", Requirements: []string{"A"}}, false},
		{config.Change{Type: "docs", Requirements: []string{"A", "B"}}, false},
	} {
		got, err := c.Eval(GateEnv{Change: tt.change})
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("Eval(%+v) = %v, want %v", tt.change, got, tt.want)
		}
	}
	files, err := CompileGate(`any(files, {# endsWith ".tsx"})`)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := files.Eval(GateEnv{Files: []string{"web/app.tsx"}}); !got {
		t.Error("files condition did not see a .tsx file")
	}
}

func TestCompileSentinel(t *testing.T) {
	tests := []struct {
		src     string
		wantErr string
	}{
		{src: `activity == "agent" && secondsSinceOutput > 120`},
		{src: `tokenBudget > 0 && tokensUsed >= tokenBudget * 0.8`},
		{src: `lastExit.signal != "" || lastExit.apiError || lastExit.code == 137`},
		{src: `retries.verify + retries.integration > 3 && restarts < 2`},
		{src: `command matches "npm (install|ci)" && iterations > 1 && iterationSeconds > 60`},
		{src: `secondsSinceOuput > 120`, wantErr: "unknown name secondsSinceOuput; names: activity, activitySeconds, command, iterationSeconds, iterations, lastExit, restarts, retries, secondsSinceOutput, status, tokenBudget, tokensUsed"},
		{src: `lastExit.sig == ""`, wantErr: "lastExit has no field sig; fields: apiError, code, signal"},
		{src: `retries.review > 0`, wantErr: "retries has no field review; fields: conflicts, integration, verify"},
		{src: `change.type == "fix"`, wantErr: "unknown name change"},
		{src: `tokensUsed`, wantErr: "expected bool, but got number"},
	}
	for _, tt := range tests {
		c, err := CompileSentinel(tt.src)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("CompileSentinel(%q) error = %v, want it to contain %q", tt.src, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("CompileSentinel(%q): %v", tt.src, err)
			continue
		}
		if !c.RunTime() {
			t.Errorf("CompileSentinel(%q).RunTime() = false; a sentinel condition reads live facts", tt.src)
		}
	}
}

func TestEvalSentinel(t *testing.T) {
	c, err := CompileSentinel(`activity == "agent" && secondsSinceOutput > 120 || lastExit.signal == "SIGKILL"`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		env  SentinelEnv
		want bool
	}{
		{SentinelEnv{Activity: "agent", SecondsSinceOutput: 121}, true},
		{SentinelEnv{Activity: "agent", SecondsSinceOutput: 120}, false},
		{SentinelEnv{Activity: "gate:test", SecondsSinceOutput: 500}, false},
		{SentinelEnv{LastExit: Exit{Code: -1, Signal: "SIGKILL"}}, true},
	} {
		got, err := c.Eval(tt.env)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("Eval(%+v) = %v, want %v", tt.env, got, tt.want)
		}
	}
}

package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/internal/gittest"
	"github.com/set-engine/set/internal/modeltest"
)

// realGreeting is what the change's gate wants in greeting.txt; the
// scripted agents write "hello" first and this on their second try.
const realGreeting = "hello, world"

// The real Claude Code runs a change under `setctl apply`: its first
// iteration writes the wrong greeting, the gate sends the change back, and
// the second iteration, in the resumed session, fixes it; the change
// merges.
func TestRealClaudeApply(t *testing.T) {
	cli := modeltest.ClaudeCLI(t)
	srv := modeltest.New(t,
		modeltest.Step{Tools: []modeltest.ToolCall{{Name: "Write", Input: `{"file_path":"greeting.txt","content":"hello\n"}`}}},
		modeltest.Step{Text: "Wrote greeting.txt."},
		modeltest.Step{Tools: []modeltest.ToolCall{{Name: "Write", Input: `{"file_path":"greeting.txt","content":"` + realGreeting + `\n"}`}}},
		modeltest.Step{Text: "Fixed greeting.txt."})
	env := append(srv.ClaudeEnv(t), "IS_SANDBOX=1")
	realApply(t, srv, "claude", []string{cli}, env, "claude-sonnet-5-5", "toolu_01_0")
}

// The real Codex runs a change under `setctl apply`: its first iteration
// adds the wrong greeting, the gate sends the change back, and the second
// iteration, in the resumed thread, fixes it; the change merges.
func TestRealCodexApply(t *testing.T) {
	cli := modeltest.CodexCLI(t)
	srv := modeltest.New(t,
		modeltest.Step{Tools: []modeltest.ToolCall{{Name: "apply_patch", Patch: "*** Begin Patch\n*** Add File: greeting.txt\n+hello\n*** End Patch\n"}}},
		modeltest.Step{Text: "Added greeting.txt."},
		modeltest.Step{Tools: []modeltest.ToolCall{{Name: "apply_patch", Patch: "*** Begin Patch\n*** Update File: greeting.txt\n@@\n-hello\n+" + realGreeting + "\n*** End Patch\n"}}},
		modeltest.Step{Text: "Fixed greeting.txt."})
	argv := append([]string{cli}, srv.CodexFlags()...)
	realApply(t, srv, "codex", argv, srv.CodexEnv(t), "gpt-6.1-sol", "call_01_0")
}

// realApply runs `setctl apply --yes` on a fresh one-change project whose
// agent is adapter with argv, agent.env env and model, against srv, whose
// script makes two iterations of two model requests each. firstCall is
// the ID of the first iteration's tool call, which the second iteration's
// first request carries in its history only when it resumed the session.
// It checks that the change merged after two iterations, the second
// resuming the first one's session.
func realApply(t *testing.T, srv *modeltest.Server, adapter string, argv, env []string, model, firstCall string) {
	t.Helper()
	setctl := setctlProcess(t)
	dir := t.TempDir()
	writeFiles(t, dir, realProject(t, adapter, argv, env, model))
	git := func(args ...string) string { t.Helper(); return gitIn(t, dir, args...) }
	initRepo(t, dir)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, setctl, "-C", dir, "apply", "--yes")
	// An agent process left behind must not keep the output pipe, and
	// the test, waiting.
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("setctl apply: %v\n%s\nserver: %v, %d steps left", err, out, srv.Err(), srv.Left())
	}
	t.Logf("setctl apply:\n%s", out)

	if got := git("show", "main:greeting.txt"); got != realGreeting {
		t.Errorf("main:greeting.txt = %q, want %q", got, realGreeting)
	}
	if commit := git("log", "--format=%s", "--grep=^Set-Change: greet$", "main"); commit == "" {
		t.Errorf("the change's commit is not on main:\n%s", git("log", "--format=%h %s", "main"))
	}
	if err := srv.Err(); err != nil || srv.Left() != 0 {
		t.Errorf("server: %v, %d steps left", err, srv.Left())
	}
	// The second iteration's first request holds the first iteration's
	// history (a resumed session) and the gate's failure (its prompt).
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("the server saw %d model requests, want 4", len(reqs))
	}
	if body := string(reqs[2].Body); !strings.Contains(body, firstCall) {
		t.Errorf("the second iteration's first request lacks the first iteration's call %s: the session was not resumed", firstCall)
	} else if !strings.Contains(body, `greeting.txt says \"hello\", want`) {
		t.Errorf("the second iteration's first request lacks the gate's failure")
	}

	events, err := journal.ReadFile(rundir.New(dir).Events())
	if err != nil {
		t.Fatal(err)
	}
	var decisions []journal.AgentSessionDecisionData
	var iterations []journal.AgentIterationData
	for _, e := range events {
		if e.Change != "greet" {
			continue
		}
		switch e.Type {
		case journal.AgentSessionDecision:
			d, err := journal.Decode[journal.AgentSessionDecisionData](e)
			if err != nil {
				t.Fatal(err)
			}
			decisions = append(decisions, d)
		case journal.AgentIteration:
			it, err := journal.Decode[journal.AgentIterationData](e)
			if err != nil {
				t.Fatal(err)
			}
			iterations = append(iterations, it)
		}
	}
	if len(iterations) != 2 || len(decisions) != 2 {
		t.Fatalf("%d iterations, %d session decisions; want 2 of each:\n%+v\n%+v", len(iterations), len(decisions), iterations, decisions)
	}
	session := iterations[0].SessionID
	for i, it := range iterations {
		if it.Result != "done" || it.SessionID == "" || it.SessionID != session {
			t.Errorf("iteration %d: %s in session %q; want done in the first iteration's session %q", i+1, it.Result, it.SessionID, session)
		}
	}
	if d := decisions[0]; d.Decision != "new" || d.Adapter != adapter || d.Model != model {
		t.Errorf("first iteration: %+v; want a new %s session with %s", d, adapter, model)
	}
	if d := decisions[1]; d.Decision != "resume" || d.SessionID != session {
		t.Errorf("second iteration: %+v; want a resume of %s", d, session)
	}
}

// realProject is the files of a project with one requirement, planned as
// the change greet, whose one gate wants realGreeting in greeting.txt
// once the file exists (main, without it, is green), and whose agent is
// the given one.
func realProject(t *testing.T, adapter string, argv, env []string, model string) map[string]string {
	t.Helper()
	agentEnv := envMap(env)
	jsonOf := func(v any) string { return cueOf(t, v) }
	return map[string]string{
		"set.cue": fmt.Sprintf(`package realcli

project: {
	profile: "shell"
	name:    "realcli"
	spec: ["docs/spec.md"]
	agent: {
		adapter: %s
		argv:    %s
		models: implement: %s
		env: %s
	}
	gates: check: run: ["sh", "check.sh"]
	_stack: check: {}
	stacks: {
		feature:        _stack
		fix:            _stack
		refactor:       _stack
		infrastructure: _stack
		schema:         _stack
		docs:           _stack
		test:           _stack
		cleanup:        _stack
	}
	integration: _stack
	plan: changes: greet: requirements: ["REQ-GREET-01"]
}
`, jsonOf(adapter), jsonOf(argv), jsonOf(model), jsonOf(agentEnv)),
		"cue.mod/module.cue": `module: "example.com/realcli@v0"
language: version: "v0.17.0"
`,
		"docs/spec.md": `# Greeting

### REQ-GREET-01: Greet the world
The system SHALL greet the world in greeting.txt.

#### Scenario: the greeting
- **WHEN** greeting.txt is read
- **THEN** it says "` + realGreeting + `"
`,
		"check.sh": `# check.sh: greeting.txt, once it exists, says "` + realGreeting + `".
test -e greeting.txt || exit 0
got=$(cat greeting.txt)
if test "$got" != "` + realGreeting + `"; then
	echo "greeting.txt says \"$got\", want \"` + realGreeting + `\""
	exit 1
fi
`,
		".gitignore": ".set/\n",
	}
}

// setctlProcess is the test binary as testscript.Main installs it on
// PATH, for a test that runs setctl as a process (a real CLI calls back
// into it). The process environment it gets, through t.Setenv: a home of
// its own, a CUE cache of its own, no CUE registry, no colours, and git's
// hermetic settings.
func setctlProcess(t *testing.T) string {
	t.Helper()
	setctl, err := exec.LookPath("setctl")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	t.Setenv("CUE_REGISTRY", "none")
	t.Setenv("NO_COLOR", "1")
	gittest.Hermetic(t, "")
	return setctl
}

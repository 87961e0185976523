package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/internal/modeltest"
)

// The real Claude Code and Codex, as the plan role's transport (the
// agent's own CLI, with its argv), plan with the single and the
// three-phase strategy under `setctl plan --out` against the scripted
// endpoint; the plan file holds the plan and its calls.
func TestRealCLIPlan(t *testing.T) {
	const (
		brief = `{"overview":"cmd/hello prints greetings.","decisions":["greeting owns cmd/hello"],"domains":[{"domain":"greeting","notes":"Owns cmd/hello."},{"domain":"farewell","notes":"Adds --bye."}]}`
		greet = `{"changes":[{"name":"greet","type":"feature","size":"S","description":"Greet by name.","requirements":["REQ-GREETING-01"],"dependsOn":[],"scope":["cmd/hello/**"]}]}`
		bye   = `{"changes":[{"name":"farewell","type":"feature","size":"S","description":"Say goodbye.","requirements":["REQ-FAREWELL-01"],"dependsOn":[],"scope":["cmd/hello/**"]}]}`
		whole = `{"changes":[{"name":"greet","type":"feature","size":"S","description":"Greet by name.","requirements":["REQ-GREETING-01"],"dependsOn":[],"scope":["cmd/hello/**"]},` +
			`{"name":"farewell","type":"feature","size":"S","description":"Say goodbye.","requirements":["REQ-FAREWELL-01"],"dependsOn":["greet"],"scope":["cmd/hello/**"]}]}`
	)
	u := modeltest.Usage{Input: 100, Output: 20}
	for _, cli := range []string{"claude", "codex"} {
		for _, strategy := range []string{"single", "three-phase"} {
			t.Run(cli+"/"+strategy, func(t *testing.T) {
				steps := []modeltest.Step{modeltest.Answer(whole, u)}
				if strategy == "three-phase" {
					steps = []modeltest.Step{modeltest.Answer(brief, u), modeltest.Answer(greet, u), modeltest.Answer(bye, u), modeltest.Answer(whole, u)}
				}
				srv := modeltest.New(t, steps...)
				argv, env, model := []string{modeltest.ClaudeCLI(t)}, srv.ClaudeEnv(t), "claude-opus-5-5"
				if cli == "codex" {
					argv, env, model = append([]string{modeltest.CodexCLI(t)}, srv.CodexFlags()...), srv.CodexEnv(t), "gpt-6.1-sol"
				}
				p := realPlan(t, cli, strategy, argv, env, model)
				if got := p.Changes; len(got) != 2 || got[0].Name != "greet" || got[1].Name != "farewell" || strings.Join(got[1].DependsOn, ",") != "greet" {
					t.Errorf("changes %+v", got)
				}
				if p.Strategy != strategy || len(p.Planning.Calls) != len(steps) || p.Planning.Models()[0] != model+" via "+cli {
					t.Errorf("strategy %s, calls %+v", p.Strategy, p.Planning.Calls)
				}
				for _, c := range p.Planning.Calls {
					if c.Transport != cli || c.Error != "" || c.Tokens.Output != 20 {
						t.Errorf("call %+v", c)
					}
				}
				if err := srv.Err(); err != nil || srv.Left() != 0 {
					t.Errorf("server: %v, %d steps left", err, srv.Left())
				}
			})
		}
	}
}

// realPlan runs `setctl plan --out` on a fresh two-domain golang project
// whose agent is adapter with argv and agent.env env, with the planner
// strategy and plan model, and returns the plan file.
func realPlan(t *testing.T, adapter, strategy string, argv, env []string, model string) *plan.Plan {
	t.Helper()
	setctl := setctlProcess(t)
	agentEnv := envMap(env)
	jsonOf := func(v any) string { return cueOf(t, v) }
	dir := t.TempDir()
	files := map[string]string{
		"set.cue": fmt.Sprintf(`package hello

import "github.com/set-engine/set/profiles/golang"

project: golang.#Project & {
	name: "hello"
	spec: ["docs/spec.md"]
	planner: {strategy: %s, parallel: 1}
	agent: {adapter: %s, argv: %s, env: %s, models: plan: %s}
}
`, jsonOf(strategy), jsonOf(adapter), jsonOf(argv), jsonOf(agentEnv), jsonOf(model)),
		"cue.mod/module.cue": "module: \"example.com/hello@v0\"\nlanguage: version: \"v0.17.0\"\ndeps: \"github.com/set-engine/set@v0\": v: \"v0.1.0\"\n",
		"docs/spec.md": `# Hello

### REQ-GREETING-01: Greet by name
The program SHALL greet the name it is given.

#### Scenario: a name
- **WHEN** the program runs with "Ada"
- **THEN** it prints "Hello, Ada!"

### REQ-FAREWELL-01: Say goodbye
The program SHALL say goodbye with --bye.
Depends on: REQ-GREETING-01

#### Scenario: bye
- **WHEN** the program runs with --bye "Ada"
- **THEN** it prints "Goodbye, Ada!"
`,
	}
	writeFiles(t, dir, files)
	initRepo(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, setctl, "-C", dir, "plan", "--out", "plan.json")
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("setctl plan: %v\n%s", err, out)
	}
	t.Logf("setctl plan:\n%s", out)
	p, err := plan.Read(filepath.Join(dir, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

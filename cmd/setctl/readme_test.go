package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/set-engine/set/engine/load"
	"github.com/set-engine/set/internal/modeltest"
)

// A fenced CUE block of the README, and a field path in backquotes that a
// set.cue could hold (`gates: fmt: mode: "warn"`).
var (
	readmeCUEBlock = regexp.MustCompile("(?s)```cue\n(.*?)```")
	readmeCUESpan  = regexp.MustCompile("`((?:gates|stacks|integration|budgets|agent|runner|sentinel|planner|mergeQueue): [^`]+)`")
)

// TestREADMESetCUE: every set.cue the README shows, whole or as a field to
// add, passes `setctl vet`, which loads it, checks that this build can run
// it (runnable) and makes its plan; so do the examples in the comment of
// the set.cue that `setctl init` writes and those of `setctl help
// sentinel`.
func TestREADMESetCUE(t *testing.T) {
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	t.Setenv("CUE_REGISTRY", "none")
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	prof, err := load.ResolveProfile(context.Background(), "golang", load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := setCUETemplate("myapp", prof, "")
	type snippet struct{ where, setCUE string }
	var snippets []snippet
	withField := func(field string) string {
		return strings.Replace(base, "\tspec: [\"docs/spec.md\"]\n", "\tspec: [\"docs/spec.md\"]\n\t"+field+"\n", 1)
	}
	line := func(offset int) int { return 1 + strings.Count(string(readme[:offset]), "\n") }
	for _, m := range readmeCUEBlock.FindAllSubmatchIndex(readme, -1) {
		block := string(readme[m[2]:m[3]])
		if !strings.Contains(block, "project:") {
			continue
		}
		where := fmt.Sprintf("README.md:%d", line(m[2]))
		if !strings.HasPrefix(block, "package ") {
			t.Errorf("%s: the block declares project but is not a whole set.cue (it lacks its package clause)", where)
			continue
		}
		snippets = append(snippets, snippet{where, block})
	}
	for _, m := range readmeCUESpan.FindAllSubmatchIndex(readme, -1) {
		snippets = append(snippets, snippet{fmt.Sprintf("README.md:%d: `%s`", line(m[2]), readme[m[2]:m[3]]), withField(string(readme[m[2]:m[3]]))})
	}
	for _, l := range strings.Split(base, "\n") {
		if field, ok := strings.CutPrefix(l, "//\t"); ok {
			snippets = append(snippets, snippet{"set.cue of setctl init: " + field, withField(field)})
		}
	}
	for _, l := range strings.Split(sentinelText, "\n") {
		if field, ok := strings.CutPrefix(l, "  sentinel: "); ok {
			snippets = append(snippets, snippet{"setctl help sentinel: " + field, withField("sentinel: " + field)})
		}
	}
	if len(snippets) < 4 {
		t.Fatalf("found %d set.cue snippets; the patterns no longer match the README", len(snippets))
	}
	for _, s := range snippets {
		dir := t.TempDir()
		writeFiles(t, dir, readmeProject(s.setCUE))
		var stdout, stderr strings.Builder
		if code := Main([]string{"-C", dir, "vet"}, testProcess(&stdout, &stderr)); code != exitOK {
			t.Errorf("%s: setctl vet exited %d:\n%s\nset.cue:\n%s", s.where, code, stderr.String(), s.setCUE)
		}
	}
}

// TestREADMEExecAgent: the README's exec agent example (its set.cue and
// scripts/agent.sh) is the one testdata/script/agent_exec.txtar runs.
func TestREADMEExecAgent(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## An `exec` agent\n")
	if !ok {
		t.Fatal("README.md has no section \"An `exec` agent\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	block := func(lang string) string {
		_, rest, ok := strings.Cut(section, "```"+lang+"\n")
		if !ok {
			t.Fatalf("the section has no %s block", lang)
		}
		text, _, _ := strings.Cut(rest, "```")
		return text
	}
	ar, err := txtar.ParseFile(filepath.Join("..", "..", "testdata", "script", "agent_exec.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range ar.Files {
		files[f.Name] = string(f.Data)
	}
	for name, want := range map[string]string{"set.cue": block("cue"), "scripts/agent.sh": block("sh")} {
		if files[name] != want {
			t.Errorf("agent_exec.txtar's %s differs from the README's:\n%s\nREADME:\n%s", name, files[name], want)
		}
	}
}

// TestREADMEPlanner: the set.cue of the README's section on planner
// strategies plans with `setctl plan` (its model answering from a scripted
// endpoint), as `setctl vet` accepts it (TestREADMESetCUE).
func TestREADMEPlanner(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Planner strategies\n")
	if !ok {
		t.Fatal("README.md has no section \"Planner strategies\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	m := readmeCUEBlock.FindStringSubmatch(section)
	if m == nil {
		t.Fatal("the section has no cue block")
	}
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	t.Setenv("CUE_REGISTRY", "none")
	srv := modeltest.New(t, modeltest.Answer(`{"changes":[{"name":"greet","type":"feature","size":"S","description":"Greet.","requirements":["REQ-GREET-01","REQ-GREET-02"],"dependsOn":[],"scope":["main.go","main_test.go"]}]}`, modeltest.Usage{}))
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test-dummy")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	dir := t.TempDir()
	writeFiles(t, dir, readmeProject(m[1]))
	var stdout, stderr strings.Builder
	if code := Main([]string{"-C", dir, "plan"}, testProcess(&stdout, &stderr)); code != exitOK {
		t.Fatalf("setctl plan exited %d:\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "\nPlanner: single, 1 model call answered by claude-opus-5-5 via anthropic\n") {
		t.Errorf("setctl plan:\n%s", stdout.String())
	}
	if text := string(srv.Requests()[0].Body); !strings.Contains(text, "Keep each change small enough for one agent session.") {
		t.Errorf("the project's planning rule is not in the request")
	}
}

// TestREADMEReview: the README's set.cue of model-graded gates is the one
// testdata/script/review_gate.txtar runs against a scripted endpoint.
func TestREADMEReview(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Gates a model grades: `review` and `spec_verify`\n")
	if !ok {
		t.Fatal("README.md has no section \"Gates a model grades\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, rest, ok := strings.Cut(section, "```cue\n")
	if !ok {
		t.Fatal("the section has no cue block")
	}
	block, _, _ := strings.Cut(rest, "```")
	ar, err := txtar.ParseFile(filepath.Join("..", "..", "testdata", "script", "review_gate.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name == "set.cue" {
			if string(f.Data) != block {
				t.Errorf("review_gate.txtar's set.cue differs from the README's:\n%s\nREADME:\n%s", f.Data, block)
			}
			return
		}
	}
	t.Error("review_gate.txtar has no set.cue")
}

// readmeProject is a project whose set.cue is a README example, with the
// spec template of setctl init.
func readmeProject(setCUE string) map[string]string {
	return map[string]string{
		"set.cue":            setCUE,
		"cue.mod/module.cue": "module: \"example.com/myapp@v0\"\nlanguage: version: \"v0.17.0\"\ndeps: \"github.com/set-engine/set@v0\": v: \"v0.1.0\"\n",
		"docs/spec.md":       specTemplate,
	}
}

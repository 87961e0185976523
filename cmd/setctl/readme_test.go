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

// A fenced CUE block of the README or a docs page, and a field path in
// backquotes that a set.cue could hold (`gates: fmt: mode: "warn"`).
var (
	docCUEBlock = regexp.MustCompile("(?s)```cue\n(.*?)```")
	docCUESpan  = regexp.MustCompile("`((?:gates|stacks|integration|budgets|agent|runner|sentinel|planner|mergeQueue): [^`]+)`")
)

// docPage is a markdown file of the repository's documentation: its path
// relative to the repository's root, in forward slashes, and its text.
type docPage struct{ path, text string }

// docPages are README.md and every docs/*.md, in that order, docs by
// name: the pages whose claims the tests check. docs/spec.md is left out:
// it is the spec this repository's own set.cue plans, whose scenarios
// quote wrong set.cue fields on purpose.
func docPages(t *testing.T) []docPage {
	t.Helper()
	root := filepath.Join("..", "..")
	names, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"README.md"}
	for _, n := range names {
		if filepath.Base(n) != "spec.md" {
			paths = append(paths, "docs/"+filepath.Base(n))
		}
	}
	var pages []docPage
	for _, p := range paths {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, docPage{p, string(data)})
	}
	return pages
}

// docFile is the text of one page of docs/, by name ("agents.md").
func docFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// docSection is the part of a page after the line heading, up to the
// next heading of the same level or above outside a code block; the test
// fails without it.
func docSection(t *testing.T, name, page, heading string) string {
	t.Helper()
	level := strings.Index(heading, " ")
	var b strings.Builder
	in, fenced := false, false
	for line := range strings.Lines(page) {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if !fenced && !in && strings.TrimSuffix(line, "\n") == heading {
			in = true
			continue
		}
		if in && !fenced {
			if n := len(line) - len(strings.TrimLeft(line, "#")); n > 0 && n <= level && strings.HasPrefix(line[n:], " ") {
				break
			}
		}
		if in {
			b.WriteString(line)
		}
	}
	if !in {
		t.Fatalf("%s has no section %q", name, heading)
	}
	return b.String()
}

// TestDocsSetCUE: every set.cue the README and the docs pages show, whole
// or as a field to add, passes `setctl vet`, which loads it, checks that
// this build can run it (runnable) and makes its plan; so do the examples
// in the comment of the set.cue that `setctl init` writes for each
// built-in profile and those of `setctl help sentinel`.
func TestDocsSetCUE(t *testing.T) {
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	t.Setenv("CUE_REGISTRY", "none")
	// base is the set.cue init writes for a project on profile.
	base := func(profile string) string {
		prof, err := load.ResolveProfile(context.Background(), profile, load.Options{})
		if err != nil {
			t.Fatal(err)
		}
		files, err := initFiles(t.TempDir(), "myapp", defaultSpec, prof, "main")
		if err != nil {
			t.Fatal(err)
		}
		return string(files[0].data)
	}
	type snippet struct{ where, setCUE string }
	var snippets []snippet
	// A field is added beside init's spec, but for the openspec planner
	// strategy, which plans from the change folders instead of a spec
	// (and refuses one beside it): that field takes the spec's place.
	withFieldIn := func(setCUE, field string) string {
		const spec = "\tspec: [\"docs/spec.md\"]\n"
		if strings.Contains(field, `strategy: "openspec"`) {
			return strings.Replace(setCUE, spec, "\t"+field+"\n", 1)
		}
		return strings.Replace(setCUE, spec, spec+"\t"+field+"\n", 1)
	}
	golang := base("golang")
	withField := func(field string) string { return withFieldIn(golang, field) }
	for _, page := range docPages(t) {
		text := page.text
		line := func(offset int) int { return 1 + strings.Count(text[:offset], "\n") }
		for _, m := range docCUEBlock.FindAllStringSubmatchIndex(text, -1) {
			block := text[m[2]:m[3]]
			if !strings.Contains(block, "project:") {
				continue
			}
			where := fmt.Sprintf("%s:%d", page.path, line(m[2]))
			if !strings.HasPrefix(block, "package ") {
				t.Errorf("%s: the block declares project but is not a whole set.cue (it lacks its package clause)", where)
				continue
			}
			snippets = append(snippets, snippet{where, block})
		}
		for _, m := range docCUESpan.FindAllStringSubmatchIndex(text, -1) {
			snippets = append(snippets, snippet{fmt.Sprintf("%s:%d: `%s`", page.path, line(m[2]), text[m[2]:m[3]]), withField(text[m[2]:m[3]])})
		}
	}
	for _, profile := range load.BuiltinProfiles() {
		setCUE := base(profile)
		for _, l := range strings.Split(setCUE, "\n") {
			if field, ok := strings.CutPrefix(l, "//\t"); ok {
				snippets = append(snippets, snippet{"set.cue of setctl init --profile " + profile + ": " + field, withFieldIn(setCUE, field)})
			}
		}
	}
	for _, l := range strings.Split(sentinelText, "\n") {
		if field, ok := strings.CutPrefix(l, "  sentinel: "); ok {
			snippets = append(snippets, snippet{"setctl help sentinel: " + field, withField("sentinel: " + field)})
		}
	}
	if len(snippets) < 4 {
		t.Fatalf("found %d set.cue snippets; the patterns no longer match the README and docs/", len(snippets))
	}
	for _, s := range snippets {
		dir := t.TempDir()
		writeFiles(t, dir, docProject(s.setCUE))
		var stdout, stderr strings.Builder
		if code := Main([]string{"-C", dir, "vet"}, testProcess(&stdout, &stderr)); code != exitOK {
			t.Errorf("%s: setctl vet exited %d:\n%s\nset.cue:\n%s", s.where, code, stderr.String(), s.setCUE)
		}
	}
}

// TestDocsExecAgent: the exec agent example of docs/agents.md (its
// set.cue and scripts/agent.sh) is the one testdata/script/agent_exec.txtar
// runs.
func TestDocsExecAgent(t *testing.T) {
	section := docSection(t, "docs/agents.md", docFile(t, "agents.md"), "## An `exec` agent")
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
			t.Errorf("agent_exec.txtar's %s differs from docs/agents.md's:\n%s\ndocs/agents.md:\n%s", name, files[name], want)
		}
	}
}

// TestDocsPlanner: the set.cue of docs/planner.md plans with `setctl
// plan` (its model answering from a scripted endpoint), as `setctl vet`
// accepts it (TestDocsSetCUE).
func TestDocsPlanner(t *testing.T) {
	section := docSection(t, "docs/planner.md", docFile(t, "planner.md"), "# Planner strategies")
	m := docCUEBlock.FindStringSubmatch(section)
	if m == nil {
		t.Fatal("the section has no cue block")
	}
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	t.Setenv("CUE_REGISTRY", "none")
	srv := modeltest.New(t, modeltest.Answer(`{"changes":[{"name":"greet","type":"feature","size":"S","description":"Greet.","requirements":["REQ-GREET-01","REQ-GREET-02"],"dependsOn":[],"scope":["main.go","main_test.go"]}]}`, modeltest.Usage{}))
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test-dummy")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	dir := t.TempDir()
	writeFiles(t, dir, docProject(m[1]))
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

// TestDocsReview: the set.cue of model-graded gates in docs/model-gates.md
// is the one testdata/script/review_gate.txtar runs against a scripted
// endpoint.
func TestDocsReview(t *testing.T) {
	section := docSection(t, "docs/model-gates.md", docFile(t, "model-gates.md"), "# Gates a model grades: `review` and `spec_verify`")
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
				t.Errorf("review_gate.txtar's set.cue differs from docs/model-gates.md's:\n%s\ndocs/model-gates.md:\n%s", f.Data, block)
			}
			return
		}
	}
	t.Error("review_gate.txtar has no set.cue")
}

// docProject is a project whose set.cue is an example of the README or
// of docs/, with the spec template of setctl init.
func docProject(setCUE string) map[string]string {
	return map[string]string{
		"set.cue":            setCUE,
		"cue.mod/module.cue": "module: \"example.com/myapp@v0\"\nlanguage: version: \"v0.17.0\"\ndeps: \"github.com/set-engine/set@v0\": v: \"v0.1.0\"\n",
		"docs/spec.md":       specTemplate,
	}
}

// TestREADMEShape: the README stays a front page, under 12 KB, whose first
// lines after the title are the two commands for a fresh machine (make
// demo, make test); the manual is docs/.
func TestREADMEShape(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(readme) >= 12<<10 {
		t.Errorf("README.md has %d bytes, want under %d: move the detail to a page of docs/", len(readme), 12<<10)
	}
	title, rest, _ := strings.Cut(string(readme), "\n\n")
	if !strings.HasPrefix(title, "# ") || !strings.HasPrefix(rest, "```sh\nmake demo ") {
		t.Fatalf("README.md does not open with its title and the block of make demo and make test:\n%.200s", readme)
	}
	block, _, _ := strings.Cut(strings.TrimPrefix(rest, "```sh\n"), "```")
	var first []string
	for line := range strings.Lines(block) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "make" {
			first = append(first, f[1])
		}
	}
	if strings.Join(first, " ") != "demo test" {
		t.Errorf("the first block of README.md runs make %v, want make demo then make test", first)
	}
}

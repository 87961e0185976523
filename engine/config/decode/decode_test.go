package decode

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/load"
)

const moduleCUE = `module: "example.com/demo@v0"
language: version: "v0.17.0"
deps: "github.com/set-engine/set@v0": v: "v0.1.0"
`

// writeProject writes a project with the given set.cue into a temp dir and
// points CUE_CACHE_DIR at a fresh cache.
func writeProject(t *testing.T, setCUE string) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("CUE_CACHE_DIR", filepath.Join(t.TempDir(), "cue-cache"))
	t.Setenv("CUE_REGISTRY", "none")
	must(t, os.MkdirAll(filepath.Join(dir, "cue.mod"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "cue.mod", "module.cue"), []byte(moduleCUE), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "set.cue"), []byte(setCUE), 0o644))
	return dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

const golangProject = `package demo

import "github.com/set-engine/set/profiles/golang"

project: golang.#Project & {
	name: "demo"
	spec: ["docs/spec.md"]
}
`

func TestLoadGolangProfile(t *testing.T) {
	dir := writeProject(t, golangProject)
	p, _, err := Load(dir, load.Options{})
	if err != nil {
		t.Fatal(load.Details(err, dir))
	}
	if p.Profile != "golang" || p.MaxParallel != 3 || p.Budgets.Retries.Verify != 3 {
		t.Errorf("defaults not applied: %+v", p)
	}
	if got := p.Gates["test"].Run; !strings.HasSuffix(strings.Join(got, " "), "go test ./...") {
		t.Errorf("test gate run = %q", got)
	}
}

// The main branch's position is where set.cue sets it, or the project
// when the schema's default applies.
func TestMainBranchPos(t *testing.T) {
	dir := writeProject(t, golangProject)
	p, _, err := Load(dir, load.Options{})
	if err != nil {
		t.Fatal(load.Details(err, dir))
	}
	if p.MainBranch != "main" || p.Pos("mainBranch") != "set.cue:5:10" {
		t.Errorf("default mainBranch = %q at %q, want main at set.cue:5:10", p.MainBranch, p.Pos("mainBranch"))
	}
	dir = writeProject(t, strings.Replace(golangProject, "\tname: \"demo\"\n", "\tname: \"demo\"\n\tmainBranch: \"master\"\n", 1))
	if p, _, err = Load(dir, load.Options{}); err != nil {
		t.Fatal(load.Details(err, dir))
	}
	if p.MainBranch != "master" || p.Pos("mainBranch") != "set.cue:7:14" {
		t.Errorf("mainBranch = %q at %q, want master at set.cue:7:14", p.MainBranch, p.Pos("mainBranch"))
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		extra   string
		path    string
		wantPos string
	}{
		{"bogus mode", "gates: test: mode: \"bogus\"", "project.gates.test.mode", "set.cue:8:"},
		{"misspelled when", "gates: test: when: \"chnage.type == \\\"fix\\\"\"", "project.gates.test.when", "set.cue:8:"},
		{"unknown gate in stack", "stacks: feature: lint: {}", "project.stacks.feature.lint", "set.cue:8:"},
		{"bad regexp", "forbidden: x: {pattern: \"(\", message: \"m\"}", "project.forbidden.x.pattern", "set.cue:8:"},
		// The rules gate matches a forbidden pattern's paths as a rule
		// learning's (pathglob): an absolute glob would match no file.
		{"absolute forbidden glob", "forbidden: x: {pattern: \"a\", message: \"m\", paths: [\"/cmd/**\"]}", "project.forbidden.x.paths", "set.cue:8:"},
		{"forbidden glob leaving the root", "forbidden: x: {pattern: \"a\", message: \"m\", paths: [\"../**\"]}", "project.forbidden.x.paths", "set.cue:8:"},
		{"bad inline tests pattern", "inlineTests: x: {files: \"**/*.rs\", from: \"(\"}", "project.inlineTests.x.from", "set.cue:8:"},
		{"bad inline tests glob", "inlineTests: x: {files: \"src/[a.rs\", from: \"x\"}", "project.inlineTests.x.files", "set.cue:8:"},
		{"bad failures pattern", "gates: fmt: failures: \"^(.+\\\\.go$\"", "project.gates.fmt.failures", "set.cue:8:"},
		{"failures on a built-in", "gates: rules: failures: \"x\"", "project.gates.rules.failures", "set.cue:8:"},
		{"misspelled sentinel when", "sentinel: rules: stall: when: \"secondsSinceOuput > 60\"", "project.sentinel.rules.stall.when", "set.cue:8:"},
		{"sentinel rule without steps", "sentinel: rules: slow: when: \"activitySeconds > 60\"", "project.sentinel.rules.slow", "set.cue:8:"},
		{"sentinel rule with both", "sentinel: rules: slow: {when: \"true\", action: \"warn\", ladder: [\"fail\"]}", "project.sentinel.rules.slow.ladder", "set.cue:8:"},
		{"action over a profile's ladder", "sentinel: rules: stall: action: \"warn\"", "project.sentinel.rules.stall.action", "set.cue:8:"},
		{"sentinel rule name", "sentinel: rules: \"Slow-Gate\": {when: \"true\", action: \"warn\"}", "project.sentinel.rules.\"Slow-Gate\"", "set.cue:8:"},
		{"sentinel fails", "sentinel: rules: stall: fails: \"crashed\"", "project.sentinel.rules.stall.fails", "set.cue:8:"},
		{"bad mergeUnion glob", "mergeUnion: \"docs/[a.md\": true", "project.mergeUnion.\"docs/[a.md\"", "set.cue:8:"},
		{"absolute crossCutting glob", "crossCutting: \"/etc/routes.go\": true", "project.crossCutting.\"/etc/routes.go\"", "set.cue:8:"},
		{"climbing scope glob", "planner: scopes: links: \"../x/**\": true", "project.planner.scopes.links.\"../x/**\"", "set.cue:8:"},
		{"dagger host without a scheme", "runner: {kind: \"dagger\", dagger: {from: \"golang\", hosts: \"engine-a\": {}}}", "project.runner.dagger.hosts.\"engine-a\"", "set.cue:8:"},
		{"dagger host of an unknown scheme", "runner: {kind: \"dagger\", dagger: {from: \"golang\", hosts: \"http://engine-a:80\": {}}}", "project.runner.dagger.hosts.\"http://engine-a:80\"", "set.cue:8:"},
		{"dagger host while no gate runs on dagger", "runner: dagger: hosts: \"engine-a\": {}", "project.runner.dagger.hosts.\"engine-a\"", "set.cue:8:"},
		{"dagger host naming no engine", "runner: {kind: \"dagger\", dagger: {from: \"golang\", hosts: \"tcp://\": {}}}", "project.runner.dagger.hosts.\"tcp://\"", "set.cue:8:"},
		{"learning of an unknown kind", "learnings: doc: {kind: \"habit\", text: \"t\"}", "project.learnings.doc.kind", "set.cue:8:"},
		{"learning without text", "learnings: doc: {kind: \"convention\", text: \"\"}", "project.learnings.doc.text", "set.cue:8:"},
		{"pattern on a convention", "learnings: doc: {kind: \"convention\", text: \"t\", pattern: \"x\"}", "project.learnings.doc.pattern", "set.cue:8:"},
		{"rule without a pattern", "learnings: doc: {kind: \"rule\", text: \"t\"}", "project.learnings.doc.pattern", "set.cue:8:"},
		{"bad rule pattern", "learnings: doc: {kind: \"rule\", text: \"t\", pattern: \"(\"}", "project.learnings.doc.pattern", "set.cue:8:"},
		{"bad convention glob", "learnings: doc: {kind: \"convention\", text: \"t\", paths: [\"ok/**\", \"/abs\"]}", "project.learnings.doc.paths", "set.cue:8:"},
		{"bad serialise glob", "learnings: doc: {kind: \"planning\", text: \"t\", serialise: [\"x/[a\"]}", "project.learnings.doc.serialise", "set.cue:8:"},
		{"bad rule glob", "learnings: doc: {kind: \"rule\", text: \"t\", pattern: \"x\", paths: [\"../x\"]}", "project.learnings.doc.paths", "set.cue:8:"},
		{"learning name", "learnings: \"Doc Comment\": {kind: \"convention\", text: \"t\"}", "project.learnings.\"Doc Comment\"", "set.cue:8:"},
		{"dagger host without parallelism", "runner: {kind: \"dagger\", dagger: {from: \"golang\", hosts: \"tcp://a:1234\": parallelism: 0}}", "project.runner.dagger.hosts.\"tcp://a:1234\".parallelism", "set.cue:8:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(golangProject, "\tspec: [\"docs/spec.md\"]\n", "\tspec: [\"docs/spec.md\"]\n\t"+tt.extra+"\n", 1)
			dir := writeProject(t, src)
			_, _, err := Load(dir, load.Options{})
			if err == nil {
				t.Fatal("Load succeeded")
			}
			msg := load.Details(err, dir)
			t.Log(msg)
			if !strings.Contains(msg, tt.path+":") || !strings.Contains(msg, tt.wantPos) {
				t.Errorf("error does not name %s at %s:\n%s", tt.path, tt.wantPos, msg)
			}
		})
	}
}

// FieldError is positioned where set.cue declares the field, for every
// gate and stack entry, and at the profile's declaration otherwise; it
// prints as the evaluator's errors do, the position last.
func TestFieldError(t *testing.T) {
	dir := writeProject(t, strings.Replace(golangProject, "\tspec: [\"docs/spec.md\"]\n",
		"\tspec: [\"docs/spec.md\"]\n\tgates: lint: run: [\"golangci-lint\", \"run\"]\n\tstacks: feature: lint: mode: \"warn\"\n", 1))
	p, _, err := Load(dir, load.Options{})
	if err != nil {
		t.Fatal(load.Details(err, dir))
	}
	for _, tt := range []struct {
		path []string
		want string
	}{
		{[]string{"gates", "lint"}, "project.gates.lint: no: set.cue:8:15\n"},
		{[]string{"stacks", "feature", "lint"}, "project.stacks.feature.lint: no: set.cue:9:25\n"},
		{[]string{"integration", "test"}, "project.integration.test: no: github.com/set-engine/set@v0.1.0/"},
		{[]string{"stacks", "nope"}, "project.stacks.nope: no\n"},
	} {
		if got := load.Details(p.FieldError(tt.path, "no"), dir); !strings.HasPrefix(got, tt.want) {
			t.Errorf("FieldError(%v) prints %q, want it to start with %q", tt.path, got, tt.want)
		}
	}
	if !p.Declares("gates", "lint") || !p.Declares("stacks", "feature", "lint") {
		t.Error("Declares misses a field set.cue declares")
	}
	if p.Declares("gates", "test") || p.Declares("integration", "test") {
		t.Error("Declares claims a field of the profile")
	}
}

// agent.permissions is "auto" unless set; setting it for an exec or
// replay agent alone is an error, and a bad value is named.
func TestAgentPermissions(t *testing.T) {
	for _, tt := range []struct{ agent, want string }{
		{"", "auto"}, // the golang profile's agent is claude
		{`agent: permissions: "acceptEdits"`, "acceptEdits"},
		{`agent: {adapter: "codex", permissions: "bypass"}`, "bypass"},
		{`agent: {adapter: "exec", argv: ["a"]}`, "auto"},
	} {
		src := strings.Replace(golangProject, "\tspec: [\"docs/spec.md\"]\n", "\tspec: [\"docs/spec.md\"]\n\t"+tt.agent+"\n", 1)
		dir := writeProject(t, src)
		p, _, err := Load(dir, load.Options{})
		if err != nil {
			t.Fatalf("%s: %s", tt.agent, load.Details(err, dir))
		}
		if p.Agent.Permissions != tt.want {
			t.Errorf("%s: permissions = %q, want %q", tt.agent, p.Agent.Permissions, tt.want)
		}
	}
	for _, bad := range []string{
		`agent: permissions: "default"`,
		`agent: {adapter: "exec", argv: ["a"], permissions: "bypass"}`,
	} {
		src := strings.Replace(golangProject, "\tspec: [\"docs/spec.md\"]\n", "\tspec: [\"docs/spec.md\"]\n\t"+bad+"\n", 1)
		dir := writeProject(t, src)
		if _, _, err := Load(dir, load.Options{}); err == nil || !strings.Contains(load.Details(err, dir), "project.agent.permissions") {
			t.Errorf("%s: error = %v, want one about project.agent.permissions", bad, load.Details(err, dir))
		}
	}
}

// The planner's prompt templates are checked at load time: a template
// that does not parse, or names a field its data lacks, is an error at its
// field, with the template's own line.
func TestPlannerPrompts(t *testing.T) {
	dir := writeProject(t, golangProject)
	p, _, err := Load(dir, load.Options{})
	if err != nil {
		t.Fatal(load.Details(err, dir))
	}
	pr := p.Planner.Prompts
	if pr.System == "" || pr.Single == "" || pr.Brief == "" || pr.Domain == "" || pr.Merge == "" || pr.Repair == "" {
		t.Errorf("the golang profile leaves a prompt empty: %+v", pr)
	}
	if p.Planner.Strategy != "static" || p.Planner.Repairs != 2 || p.Planner.Parallel != 4 || p.Planner.SingleCallMaxInputTokens != 60000 {
		t.Errorf("planner defaults: %+v", p.Planner)
	}
	if p.Planner.Rules["tests-with-code"] == "" || p.Planner.Rules["go-packages"] == "" {
		t.Errorf("planner rules: %v", p.Planner.Rules)
	}
	for _, tt := range []struct{ extra, want string }{
		{`planner: prompts: single: "Plan {{.Project"`,
			`project.planner.prompts.single: invalid template: template: single:1: unclosed action: set.cue:8:`},
		{`planner: prompts: merge: "Plan {{.Projet}}"`,
			`project.planner.prompts.merge: invalid template: template: merge:1:7: executing "merge" at <.Projet>: can't evaluate field Projet in type prompt.Data: set.cue:8:`},
		{`planner: prompts: repair: "{{range .Errors}}{{.Message}}{{end}}"`,
			`project.planner.prompts.repair: invalid template: template: repair:1:19: executing "repair" at <.Message>: can't evaluate field Message in type string: set.cue:8:`},
	} {
		src := strings.Replace(golangProject, "\tspec: [\"docs/spec.md\"]\n", "\tspec: [\"docs/spec.md\"]\n\t"+tt.extra+"\n", 1)
		dir := writeProject(t, src)
		_, _, err := Load(dir, load.Options{})
		if got := load.Details(err, dir); !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s:\n got %s\nwant %s…", tt.extra, got, tt.want)
		}
	}
}

// A strategy that asks a model needs the prompts: a profile without them
// is refused at planner.strategy.
func TestModelStrategyNeedsPrompts(t *testing.T) {
	src := `package demo

import "github.com/set-engine/set/schema"

project: schema.#Project & {
	name: "demo"
	profile: "bare"
	spec: ["docs/spec.md"]
	stacks: {feature: {}, fix: {}, refactor: {}, infrastructure: {}, schema: {}, docs: {}, test: {}, cleanup: {}}
	agent: adapter: "claude"
	planner: strategy: "single"
}
`
	dir := writeProject(t, src)
	_, _, err := Load(dir, load.Options{})
	if got := load.Details(err, dir); !strings.HasPrefix(got, `project.planner.strategy: the single strategy asks a model, with the prompts of planner.prompts, which the profile does not set; set them, e.g. planner: prompts: stdlib.prompts.planner (import "github.com/set-engine/set/stdlib"): set.cue:11:21`) {
		t.Errorf("error:\n%s", got)
	}
	if _, _, err := Load(writeProject(t, strings.Replace(src, `"single"`, `"static"`, 1)), load.Options{}); err != nil {
		t.Errorf("a static planner without prompts: %v", err)
	}
}

// runner.dagger.hosts: each engine by its runner-host URL, with its
// parallelism (4 unless set); every scheme the dagger CLI knows is taken.
func TestDaggerHosts(t *testing.T) {
	extra := `runner: kind: "dagger"
	runner: dagger: from: "golang:1.26"
	runner: dagger: hosts: "tcp://engine-a:1234": parallelism: 8
	runner: dagger: hosts: "kube-pod://dagger-engine-x7k2p?namespace=dagger": {}
	runner: dagger: hosts: "unix:///run/dagger/engine.sock": {}
	runner: dagger: hosts: "docker-container://dagger-engine": {}`
	dir := writeProject(t, strings.Replace(golangProject, "\tspec: [\"docs/spec.md\"]\n", "\tspec: [\"docs/spec.md\"]\n\t"+extra+"\n", 1))
	p, _, err := Load(dir, load.Options{})
	if err != nil {
		t.Fatal(load.Details(err, dir))
	}
	got := map[string]int{}
	for _, h := range p.Runner.Dagger.HostURLs() {
		got[h] = p.Runner.Dagger.Hosts[h].Parallelism
	}
	want := map[string]int{"tcp://engine-a:1234": 8, "kube-pod://dagger-engine-x7k2p?namespace=dagger": 4,
		"unix:///run/dagger/engine.sock": 4, "docker-container://dagger-engine": 4}
	if !maps.Equal(got, want) {
		t.Errorf("hosts %v, want %v", got, want)
	}
}

// spec is required unless the planner strategy is openspec, which takes
// none (the mixed-project rule); replan asks a model, which the openspec
// strategy never does. Each error is at its field.
func TestSpecAndOpenSpecStrategy(t *testing.T) {
	const head = "package demo\n\nimport \"github.com/set-engine/set/profiles/golang\"\n\nproject: golang.#Project & {\n\tname: \"demo\"\n"
	tests := []struct {
		name, body, want string
	}{
		{"markdown strategy without spec", "\tspec: []\n",
			`project.spec: list at least one spec file, or choose planner.strategy: "openspec" to plan from openspec/changes/: set.cue:7:8`},
		{"markdown strategy, spec left out", "",
			`project.spec: list at least one spec file, or choose planner.strategy: "openspec" to plan from openspec/changes/: set.cue:5:10`},
		{"openspec strategy with a spec", "\tspec: [\"docs/spec.md\"]\n\tplanner: strategy: \"openspec\"\n",
			`project.spec: planner.strategy "openspec" plans from the change folders under openspec/changes/ only, never from a markdown spec; remove spec, or choose a markdown planner strategy and archive the change folders first (setctl archive NAME): set.cue:7:8`},
		{"openspec strategy with replan", "\tplanner: {strategy: \"openspec\", replan: \"auto\"}\n",
			`project.planner.replan: replan asks a model to plan the requirements no change covers, and the "openspec" strategy plans only the change folders under openspec/changes/, which no model may add to; remove replan, or write the missing change folder: set.cue:7:42`},
		{"openspec strategy", "\tplanner: strategy: \"openspec\"\n", ""},
		{"openspec strategy, spec empty", "\tspec: []\n\tplanner: strategy: \"openspec\"\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeProject(t, head+tt.body+"}\n")
			p, _, err := Load(dir, load.Options{})
			if tt.want == "" {
				if err != nil {
					t.Fatal(load.Details(err, dir))
				}
				if len(p.Spec) != 0 || !p.Planner.FromFolders() || p.Planner.NeedsModel() {
					t.Errorf("spec %q, strategy %q", p.Spec, p.Planner.Strategy)
				}
				return
			}
			if err == nil {
				t.Fatal("Load succeeded")
			}
			if got := strings.TrimSpace(load.Details(err, dir)); got != tt.want {
				t.Errorf("error:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

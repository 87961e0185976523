package decode

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/load"
)

// fullProject sets every field the schema allows, so that the coverage test
// sees each one.
const fullProject = `package demo

import "github.com/set-engine/set/profiles/golang"

project: golang.#Project & {
	name: "demo"
	spec: ["docs/spec.md"]
	strict: true
	mainBranch: "trunk"
	maxParallel: 4
	delivery: {mode: "push", remote: "upstream"}
	secrets: DEPLOY_PHRASE: true
	history: keep: 5
	passEnv: {GOCACHE: true, SSH_AUTH_SOCK: true}
	conventions: extra: "one more rule"
	testPatterns: scripts: "scripts/**/*_test.sh"
	forbidden: "no-sleep": {pattern: "time\\.Sleep", message: "no sleeping", paths: ["**/*.go"]}
	learnings: {
		"doc-comment": {kind: "convention", text: "Every Go file starts with a package comment.", signature: "verify gate doc: missing package comment", types: ["feature"], paths: ["internal/**"]}
		"routes-apart": {kind: "planning", text: "Changes that add routes touch internal/routes.go: keep them apart.", serialise: ["internal/routes.go"]}
		"no-println": {kind: "rule", text: "no debug printing", pattern: "fmt\\.Println", paths: ["**/*.go"]}
	}
	learn: {threshold: 3, expireAfter: 4}
	gates: {
		test: {when: "len(change.requirements) > 0", describe: ["echo", "go test ./..."], env: {GOFLAGS: "-count=1"}, timeout: "20m", runner: "dagger", export: ["coverage.out"]}
		review: {prompt: "Review {{.Change.Name}}", blockOn: "high", maxDiffBytes: 50_000, repairs: 1}
		spec_verify: grader: "llm"
	}
	stacks: feature: spec_verify: {mode: "warn", order: 95}
	integration: rules: mode: "skip"
	budgets: {retries: {verify: 4, integration: 1, conflicts: 5}, tokens: {S: 1, M: 2, L: 3}, iterations: 7, wallTime: "1h", gateTimeout: "3m"}
	sentinel: {
		heartbeat: "15s"
		rules: {
			stall: {when: "activity == \"agent\" && secondsSinceOutput > 300", every: "2m"}
			slow_gate: {when: "activity == \"gate:test\" && activitySeconds > 900", action: "warn", graced: false}
			api_error: backoff: "5s"
		}
		grace: "gate:test": "20m"
	}
	planner: {
		strategy: "auto"
		maxRequirementsPerChange: 4
		singleCallMaxInputTokens: 30000
		repairs: 1
		parallel: 2
		rules: "small-changes": "Keep changes small."
		prompts: single: "Plan {{.Project}}."
	}
	agent: {
		adapter: "replay"
		argv: ["replay"]
		recordings: "recordings"
		models: {implement: "m1", plan: "m2", review: "m3", verify: "m4"}
		transport: "anthropic"
		fallbacks: plan: ["m5", "openai:m6"]
		env: FOO: "bar"
		permissions: "acceptEdits" // for change core's codex
	}
	runner: {
		kind: "dagger"
		dagger: {
			from: "golang:1.26"
			workdir: "/work"
			exclude: "bin/": true
			caches: "/root/.cache/go-build": "go-build"
			mounts: "/opt/go": {source: "/usr/local/go", readOnly: true}
			env: GOFLAGS: "-buildvcs=false"
			hosts: "tcp://engine-a:1234": parallelism: 8
		}
	}
	generated: "go.sum": runner: "host"
	plan: {
		changes: core: {
			type: "fix"
			size: "L"
			description: "the core"
			requirements: ["REQ-CORE-01"]
			dependsOn: []
			scope: ["internal/core/**"]
			agent: "codex"
			model: "gpt-5.5"
		}
		// description and scope are set: config.Change, the plan file's
		// change type too, omits them from JSON when empty.
		changes: api: {requirements: ["REQ-API-01"], dependsOn: ["core"], description: "the api", scope: ["api/**"]}
		deferred: "REQ-LATER-01": "needs a product decision"
	}
}
`

// TestEveryFieldReachesGo decodes a project that sets every schema field
// and checks that each leaf of the CUE value has a counterpart in the Go
// struct: a schema field without a home in config would vanish here.
func TestEveryFieldReachesGo(t *testing.T) {
	dir := writeProject(t, fullProject)
	lp, err := load.Load(dir, load.Options{})
	if err != nil {
		t.Fatal(load.Details(err, dir))
	}
	p, err := Project(lp)
	if err != nil {
		t.Fatal(load.Details(err, dir))
	}
	cueJSON, err := lp.Value.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	goJSON, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	cuePaths, goPaths := leafPaths(t, cueJSON), leafPaths(t, goJSON)
	var missing []string
	for path := range cuePaths {
		if !goPaths[path] {
			missing = append(missing, path)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("schema fields that do not reach config.Project:\n  %s", strings.Join(missing, "\n  "))
	}
	// The fixture must really be full: spot-check fields that are easy to
	// forget.
	for _, path := range []string{
		"agent.recordings", "agent.models.implement", "agent.permissions", "runner.dagger.from", "runner.dagger.caches./root/.cache/go-build",
		"runner.dagger.mounts./opt/go.readOnly", "runner.dagger.exclude.bin/", "runner.dagger.hosts.tcp://engine-a:1234.parallelism", "secrets.DEPLOY_PHRASE", "conventions.extra", "testPatterns.scripts", "gates.test.export", "generated.go.sum.runner",
		"gates.test.when", "gates.test.runner", "gates.test.failures",
		"gates.review.prompt", "gates.review.blockOn", "gates.review.maxDiffBytes", "gates.review.repairs", "gates.spec_verify.grader",
		"stacks.feature.spec_verify.order", "integration.rules.mode",
		"sentinel.heartbeat", "sentinel.rules.stall.when", "sentinel.rules.stall.ladder", "sentinel.rules.stall.every",
		"sentinel.rules.slow_gate.action", "sentinel.rules.slow_gate.graced", "sentinel.rules.api_error.fails",
		"sentinel.rules.api_error.backoff", "sentinel.grace.gate:test",
		"plan.changes.core.scope", "plan.changes.core.agent", "plan.deferred.REQ-LATER-01",
		"forbidden.no-sleep.paths", "learnings.doc-comment.types", "learnings.doc-comment.paths", "learnings.doc-comment.signature",
		"learnings.routes-apart.serialise", "learnings.no-println.pattern", "learnings.no-println.paths", "learnings.no-println.enabled", "learn.threshold", "learn.expireAfter",
		"budgets.gateTimeout", "planner.maxRequirementsPerChange",
		"planner.singleCallMaxInputTokens", "planner.repairs", "planner.parallel", "planner.rules.small-changes",
		"planner.prompts.system", "planner.prompts.single", "planner.prompts.repair",
	} {
		if !cuePaths[path] {
			t.Errorf("fixture does not set %s", path)
		}
	}
}

// TestUnknownFieldsAreRejected: a field the schema does not define is an
// error, never silently ignored.
func TestUnknownFieldsAreRejected(t *testing.T) {
	for _, extra := range []string{
		"colour: \"blue\"",
		"gates: test: retries: 3",
		"budgets: retries: review: 1",
		"agent: temperature: 0.2",
	} {
		src := strings.Replace(golangProject, "\tspec: [\"docs/spec.md\"]\n", "\tspec: [\"docs/spec.md\"]\n\t"+extra+"\n", 1)
		dir := writeProject(t, src)
		_, _, err := Load(dir, load.Options{})
		if err == nil || !strings.Contains(load.Details(err, dir), "field not allowed") {
			t.Errorf("%s: error = %v, want field not allowed", extra, err)
		}
	}
}

// leafPaths flattens a JSON document into dotted paths of its leaves; an
// empty object or list counts as a leaf. List elements share their list's
// path.
func leafPaths(t *testing.T, data []byte) map[string]bool {
	t.Helper()
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 {
				out[prefix] = true
			}
			for k, e := range x {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, e)
			}
		case []any:
			if len(x) == 0 {
				out[prefix] = true
			}
			for _, e := range x {
				walk(prefix, e)
			}
		default:
			out[prefix] = true
		}
	}
	walk("", doc)
	return out
}

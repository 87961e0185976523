package graph

import (
	"fmt"
	"strings"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/spec"
)

func intp(i int) *int { return &i }

func minutes(m int) config.Duration { return config.Duration(time.Duration(m) * time.Minute) }

// fixtureConfig is a Go project in the shape of profiles/golang, with one
// gate of each special kind: review is warn in the feature stack, lint is
// decided at plan time (only for changes bigger than S), e2e is decided at
// run time (only when .tsx files are touched) and runs in dagger, and
// test_files is skipped for infrastructure changes.
func fixtureConfig() *config.Project {
	gate := func(name, kind string, order int) config.Gate {
		return config.Gate{Kind: kind, Mode: config.ModeRun, Order: order}
	}
	exec := func(name string, order int, timeout config.Duration, argv ...string) config.Gate {
		g := gate(name, config.KindExec, order)
		g.Run = argv
		g.Timeout = timeout
		return g
	}
	gates := map[string]config.Gate{
		"scope_check": gate("scope_check", config.KindScopeCheck, 0),
		"rules":       gate("rules", config.KindRules, 5),
		"test_files":  gate("test_files", config.KindTestFiles, 8),
		"build":       exec("build", 10, minutes(5), "go", "build", "./..."),
		"fmt":         exec("fmt", 15, minutes(2), "gofmt", "-l", "."),
		"vet":         exec("vet", 20, minutes(5), "go", "vet", "./..."),
		"test":        exec("test", 30, minutes(15), "go", "test", "./..."),
		"spec_verify": gate("spec_verify", config.KindSpecVerify, 40),
		"review":      exec("review", 60, 0, "reviewdog"),
	}
	lint := exec("lint", 12, 0, "golangci-lint", "run")
	lint.When = `change.size != "S"`
	gates["lint"] = lint
	e2e := exec("e2e", 35, minutes(20), "npx", "playwright", "test")
	e2e.When = `any(files, {# matches "\\.tsx$"})`
	e2e.Runner = "dagger"
	gates["e2e"] = e2e

	code := func() config.Stack {
		return config.Stack{
			"scope_check": {}, "rules": {}, "test_files": {}, "build": {}, "fmt": {},
			"lint": {}, "vet": {}, "test": {}, "e2e": {}, "spec_verify": {},
		}
	}
	feature := code()
	feature["review"] = config.StackEntry{Mode: config.ModeWarn}
	infra := code()
	infra["test_files"] = config.StackEntry{Mode: config.ModeSkip}
	docs := config.Stack{"scope_check": {}, "rules": {Order: intp(1)}, "build": {}}

	cfg := &config.Project{
		Name:       "linkshort",
		Profile:    "golang",
		MainBranch: "main",
		Gates:      gates,
		Stacks: map[string]config.Stack{
			"feature":        feature,
			"fix":            code(),
			"infrastructure": infra,
			"docs":           docs,
		},
		Integration: config.Stack{"build": {}, "vet": {}, "test": {}},
		MaxParallel: 3,
		Agent: config.Agent{
			Adapter: "claude",
			Models:  config.Models{Implement: "claude-sonnet-4-5"},
		},
		Runner:  config.Runner{Kind: "host"},
		Planner: config.Planner{Strategy: config.StrategyStatic},
	}
	cfg.Budgets.GateTimeout = minutes(10)
	return cfg
}

// fixturePlan has a diamond (links → stats, admin → dashboard), a second
// root (auth, which admin also needs) and an independent docs change;
// stats says why it waits for links, admin why it waits for auth (not
// for links).
func fixturePlan() *plan.Plan {
	reqs := func(domain string, n int) []spec.Requirement {
		var out []spec.Requirement
		for i := 1; i <= n; i++ {
			out = append(out, spec.Requirement{
				ID:     fmt.Sprintf("REQ-%s-%02d", strings.ToUpper(domain), i),
				Title:  domain + " requirement",
				Domain: domain,
			})
		}
		return out
	}
	ids := func(rs []spec.Requirement) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	links, auth, stats, admin, ui, docs := reqs("links", 4), reqs("auth", 2), reqs("stats", 3), reqs("admin", 3), reqs("ui", 2), reqs("docs", 1)
	var all []spec.Requirement
	for _, rs := range [][]spec.Requirement{links, auth, stats, admin, ui, docs} {
		all = append(all, rs...)
	}
	return &plan.Plan{
		Version:  plan.FormatVersion,
		Project:  "linkshort",
		Strategy: config.StrategyStatic,
		Fingerprint: plan.Fingerprint{
			Sum: "sha256:3f9a1c0b7d2e4f6a8b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a",
		},
		Changes: []plan.Change{
			{Name: "auth", Type: "infrastructure", Size: plan.SizeS, Domain: "auth",
				Requirements: ids(auth), DependsOn: []string{}, Scope: []string{"internal/auth/**"}},
			{Name: "links", Type: "feature", Size: plan.SizeM, Domain: "links",
				Requirements: ids(links), DependsOn: []string{}, Scope: []string{"internal/links/**", "cmd/linkshort/**"}},
			{Name: "readme", Type: "docs", Size: plan.SizeS, Domain: "docs",
				Requirements: ids(docs), DependsOn: []string{}, Scope: []string{"README.md", "docs/**"}},
			{Name: "stats", Type: "feature", Size: plan.SizeS, Domain: "stats",
				Requirements: ids(stats), DependsOn: []string{"links"},
				Because: map[string]string{"links": `MODIFIED "Create a short link" (links), which links ADDs`}},
			{Name: "admin", Type: "feature", Size: plan.SizeL, Domain: "admin",
				Requirements: ids(admin), DependsOn: []string{"links", "auth"},
				Because: map[string]string{"auth": "depends_on in openspec/changes/admin/.openspec.yaml:3"},
				Agent:   "codex", Model: "gpt-5-codex"},
			{Name: "dashboard", Type: "feature", Size: plan.SizeM, Domain: "ui",
				Requirements: ids(ui), DependsOn: []string{"stats", "admin"}, Scope: []string{"web/**"}},
		},
		Deferred:     []plan.Deferred{{Requirement: "REQ-UI-03", Reason: "needs design"}},
		Requirements: append(all, spec.Requirement{ID: "REQ-UI-03", Title: "dark mode", Domain: "ui"}),
	}
}

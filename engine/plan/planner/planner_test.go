package planner

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm"
	"github.com/set-engine/set/engine/llm/usage"
	"github.com/set-engine/set/engine/load"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/spec"
	"github.com/set-engine/set/internal/modeltest"
	"github.com/set-engine/set/internal/profiletest"
)

// golangPlanner is the golang profile's planner configuration (its
// prompts and rules), with strategy and the project's defaults.
func golangPlanner(t *testing.T, strategy string) *config.Project {
	t.Helper()
	return profiletest.Load(t, "golang", "\tplanner: strategy: \""+strategy+"\"\n")
}

func requirement(id, title string, deps ...string) spec.Requirement {
	domain := strings.ToLower(strings.Split(id, "-")[1])
	return spec.Requirement{
		ID: id, Title: title, Domain: domain, Text: "The service SHALL " + strings.ToLower(title) + ".",
		Scenarios: []spec.Scenario{{Name: title, When: []string{"it is asked"}, Then: []string{"it does it"}}},
		DependsOn: deps, File: "docs/spec.md", Line: 1,
	}
}

// theSpec has two domains; REQ-STATS-01 depends on REQ-LINKS-01.
var theSpec = &spec.Spec{Requirements: []spec.Requirement{
	requirement("REQ-LINKS-01", "Create a link"),
	requirement("REQ-LINKS-02", "Resolve a link", "REQ-LINKS-01"),
	requirement("REQ-STATS-01", "Count visits", "REQ-LINKS-01"),
}}

const (
	linksAnswer = `{"changes":[{"name":"links","type":"feature","size":"M","description":"Create and resolve links.","requirements":["REQ-LINKS-01","REQ-LINKS-02"],"dependsOn":[],"scope":["internal/links/**"]}]}`
	statsAnswer = `{"changes":[{"name":"stats","type":"feature","size":"S","description":"Count visits.","requirements":["REQ-STATS-01"],"dependsOn":[],"scope":["internal/stats/**"]}]}`
	wholeAnswer = `{"changes":[` +
		`{"name":"links","type":"feature","size":"M","description":"Create and resolve links.","requirements":["REQ-LINKS-01","REQ-LINKS-02"],"dependsOn":[],"scope":["internal/links/**"]},` +
		`{"name":"stats","type":"feature","size":"S","description":"Count visits.","requirements":["REQ-STATS-01"],"dependsOn":["links"],"scope":["internal/stats/**"]}]}`
	briefAnswer = `{"overview":"A link shortener: internal/links stores and resolves links, internal/stats counts visits.","decisions":["links owns the store; stats reads it"],"domains":[{"domain":"links","notes":"Owns the store."},{"domain":"stats","notes":"Reads the store of links."}]}`
)

func apiEnv(srv *modeltest.Server) []string {
	return []string{
		"ANTHROPIC_API_KEY=sk-ant-test-dummy", "ANTHROPIC_BASE_URL=" + srv.URL,
		"OPENAI_API_KEY=sk-test-dummy", "OPENAI_BASE_URL=" + srv.URL + "/v1",
	}
}

// newPlanner is a planner for cfg whose plan role is route, against srv.
func newPlanner(t *testing.T, cfg *config.Project, env []string, route ...llm.Target) *Planner {
	t.Helper()
	chk, err := load.NewChecker(load.PlannedChangesDef)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := New(Options{
		Project: cfg.Name, Conventions: cfg.ConventionList(), Learnings: cfg.PlannerLearnings(), Planner: cfg.Planner,
		LLM: llm.Config{
			Routes: map[llm.Role]llm.Route{llm.Plan: route}, Env: env, Retries: -1,
			Wait: func(context.Context, time.Duration) error { return nil },
		},
		Files: FilesOf([]string{"go.mod", "cmd/app/main.go"}),
		Check: chk.Check,
	})
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

func makePlan(cfg *config.Project, rec plan.Record, pl *Planner) (*plan.Plan, error) {
	return plan.MakeWith(context.Background(), cfg, theSpec, rec, plan.Fingerprint{}, pl)
}

func names(p *plan.Plan) string {
	var out []string
	for _, c := range p.Changes {
		out = append(out, c.Name+"("+strings.Join(c.Requirements, ",")+"→"+strings.Join(c.DependsOn, ",")+")")
	}
	return strings.Join(out, " ")
}

// promptOf is the user prompt of an Anthropic request.
func promptOf(t *testing.T, r modeltest.Request) string {
	t.Helper()
	var body struct {
		Messages []struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil || len(body.Messages) != 1 || len(body.Messages[0].Content) != 1 {
		t.Fatalf("request body %s: %v", r.Body, err)
	}
	return body.Messages[0].Content[0].Text
}

func TestSingle(t *testing.T) {
	for _, transport := range []string{llm.TransportAnthropic, llm.TransportOpenAI} {
		t.Run(transport, func(t *testing.T) {
			cfg := golangPlanner(t, "single")
			srv := modeltest.New(t, modeltest.Answer(wholeAnswer, modeltest.Usage{Input: 1200, Output: 300, CacheRead: 40}))
			pl := newPlanner(t, cfg, apiEnv(srv), llm.Target{Transport: transport, Model: "m-plan"})
			p, err := makePlan(cfg, plan.Record{}, pl)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(p); got != "links(REQ-LINKS-01,REQ-LINKS-02→) stats(REQ-STATS-01→links)" {
				t.Errorf("changes: %s", got)
			}
			if p.Strategy != "single" || p.Changes[0].Domain != "links" || p.Changes[1].Scope[0] != "internal/stats/**" {
				t.Errorf("plan: %+v", p)
			}
			tokens := usage.Tokens{Input: 1200, Output: 300, CacheRead: 40}
			want := []plan.PlannerCall{{Step: "single", LLMCallData: journal.LLMCallData{Role: "plan", Model: "m-plan", Transport: transport, Tokens: tokens}}}
			if got := withoutDurations(p.Planning.Calls); !reflect.DeepEqual(got, want) {
				t.Errorf("calls:\n got %+v\nwant %+v", got, want)
			}
			if err := srv.Err(); err != nil {
				t.Error(err)
			}
			if transport != llm.TransportAnthropic {
				return
			}
			// The prompt holds the requirements with their scenarios, the
			// conventions, the planning rules and the files; the
			// instructions the limits and the types.
			req := srv.Requests()[0]
			text := promptOf(t, req)
			for _, s := range []string{"### REQ-STATS-01: Count visits", "Status: new; depends on REQ-LINKS-01", "- WHEN it is asked",
				"Format code with gofmt", "carries its tests", "cmd/app/main.go\ngo.mod\n"} {
				if !strings.Contains(text, s) {
					t.Errorf("prompt lacks %q:\n%s", s, text)
				}
			}
			for _, s := range []string{"at most 6 requirements", "feature, fix, refactor, infrastructure, schema, docs, test, cleanup", `"enum":["REQ-LINKS-01","REQ-LINKS-02","REQ-STATS-01"]`} {
				if !strings.Contains(string(req.Body), s) {
					t.Errorf("request lacks %q", s)
				}
			}
		})
	}
}

// TestLearningsInPrompts: the planner's prompts carry the adopted
// conventions among the conventions and the planning learnings among the
// planning rules, in the single call and in each call of three-phase
// (brief, domains); a rule learning is the rules gate's, not the
// planner's. The plan names the learnings it used.
func TestLearningsInPrompts(t *testing.T) {
	learnings := map[string]config.Learning{
		"doc-comment":  {Kind: config.LearningConvention, Text: "Every Go file starts with a package comment.", Enabled: true, Paths: []string{"internal/**"}},
		"say-why":      {Kind: config.LearningConvention, Text: "Every commit says why.", Enabled: true},
		"routes-apart": {Kind: config.LearningPlanning, Text: "Changes that add routes depend on one another.", Enabled: true},
		"no-printf":    {Kind: config.LearningRule, Text: "log through slog", Pattern: "log.Printf", Enabled: true},
	}
	for _, tt := range []struct {
		strategy string
		answers  []string
	}{
		{"single", []string{wholeAnswer}},
		{"three-phase", []string{briefAnswer, linksAnswer, statsAnswer, wholeAnswer}},
	} {
		t.Run(tt.strategy, func(t *testing.T) {
			cfg := golangPlanner(t, tt.strategy)
			cfg.Planner.Parallel = 1
			cfg.Learnings = learnings
			var answers []modeltest.Step
			for _, a := range tt.answers {
				answers = append(answers, modeltest.Answer(a, modeltest.Usage{}))
			}
			srv := modeltest.New(t, answers...)
			p, err := makePlan(cfg, plan.Record{}, newPlanner(t, cfg, apiEnv(srv), llm.Target{Transport: llm.TransportAnthropic, Model: "m"}))
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"doc-comment", "routes-apart", "say-why"}; !reflect.DeepEqual(p.Learnings, want) {
				t.Errorf("plan learnings = %v, want %v", p.Learnings, want)
			}
			reqs := srv.Requests()
			// Every call but three-phase's merge, which plans from the drafts.
			for _, r := range reqs[:max(1, len(reqs)-1)] {
				text := promptOf(t, r)
				// A convention narrowed to some changes says which.
				for _, s := range []string{"- Every Go file starts with a package comment. (only for changes that may touch internal/**)\n", "- Every commit says why.\n", "- Changes that add routes depend on one another.\n"} {
					if !strings.Contains(text, s) {
						t.Errorf("prompt lacks %q:\n%s", s, text)
					}
				}
				if strings.Contains(text, "log through slog") {
					t.Errorf("prompt holds a rule learning:\n%s", text)
				}
			}
		})
	}
}

func withoutDurations(calls []plan.PlannerCall) []plan.PlannerCall {
	out := make([]plan.PlannerCall, len(calls))
	for i, c := range calls {
		c.DurationMS = 0
		out[i] = c
	}
	return out
}

// Only what main does not implement is planned: an implemented
// requirement is not in the prompt, and nothing to plan asks no model.
func TestPlansOnlyPending(t *testing.T) {
	cfg := golangPlanner(t, "single")
	srv := modeltest.New(t, modeltest.Answer(`{"changes":[{"name":"resolve","type":"feature","size":"S","description":"Resolve.","requirements":["REQ-LINKS-02"],"dependsOn":[],"scope":[]},{"name":"stats","type":"feature","size":"S","description":"Count.","requirements":["REQ-STATS-01"],"dependsOn":[],"scope":[]}]}`, modeltest.Usage{}))
	pl := newPlanner(t, cfg, apiEnv(srv), llm.Target{Transport: llm.TransportAnthropic, Model: "m"})
	living := []spec.LivingRequirement{{Requirement: theSpec.Requirements[0], Capability: "links"}}
	p, err := makePlan(cfg, plan.Record{Living: living, Landed: map[string]bool{"resolve": true}}, pl)
	if err != nil {
		t.Fatal(err)
	}
	// A name a landed change had is new work: it is renamed.
	if got := names(p); got != "resolve-2(REQ-LINKS-02→) stats(REQ-STATS-01→)" {
		t.Errorf("changes: %s", got)
	}
	if text := promptOf(t, srv.Requests()[0]); strings.Contains(text, "REQ-LINKS-01: Create a link") {
		t.Errorf("the prompt asks for an implemented requirement:\n%s", text)
	}
	all := make([]spec.LivingRequirement, len(theSpec.Requirements))
	for i, r := range theSpec.Requirements {
		all[i] = spec.LivingRequirement{Requirement: r, Capability: r.Domain}
	}
	p, err = makePlan(cfg, plan.Record{Living: all}, pl)
	if err != nil || len(p.Changes) != 0 || p.Planning != nil || len(srv.Requests()) != 1 {
		t.Errorf("nothing to plan: %v, %+v, %d requests", err, p, len(srv.Requests()))
	}
}

// An invalid answer goes back with its errors, and the repaired one is
// the plan.
func TestRepair(t *testing.T) {
	cfg := golangPlanner(t, "single")
	bad := `{"changes":[{"name":"links","type":"bugfix","size":"M","description":"Links.","requirements":["REQ-LINKS-01","REQ-LINKS-02"],"dependsOn":[],"scope":[]}]}`
	uncovered := `{"changes":[{"name":"links","type":"feature","size":"M","description":"Links.","requirements":["REQ-LINKS-01","REQ-LINKS-02"],"dependsOn":["stat"],"scope":[]}]}`
	srv := modeltest.New(t, modeltest.Answer(bad, modeltest.Usage{}), modeltest.Answer(uncovered, modeltest.Usage{}), modeltest.Answer(wholeAnswer, modeltest.Usage{}))
	pl := newPlanner(t, cfg, apiEnv(srv), llm.Target{Transport: llm.TransportAnthropic, Model: "m"})
	p, err := makePlan(cfg, plan.Record{}, pl)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(p); got != "links(REQ-LINKS-01,REQ-LINKS-02→) stats(REQ-STATS-01→links)" {
		t.Errorf("changes: %s", got)
	}
	reqs := srv.Requests()
	first, second, third := promptOf(t, reqs[0]), promptOf(t, reqs[1]), promptOf(t, reqs[2])
	// The schema's errors first; the plan's rules once the schema holds.
	for _, s := range []string{first, bad, `- changes.0.type: "bugfix" is not one of "feature", "fix", "refactor", "infrastructure", "schema", "docs", "test", "cleanup"`} {
		if !strings.Contains(second, s) {
			t.Errorf("the repair request lacks %q:\n%s", s, second)
		}
	}
	for _, s := range []string{uncovered, `- change "links" depends on unknown change "stat"`, "- REQ-STATS-01 is not covered by any change"} {
		if !strings.Contains(third, s) {
			t.Errorf("the second repair request lacks %q:\n%s", s, third)
		}
	}
	if strings.Contains(third, "bugfix") {
		t.Error("the second repair carries the first answer")
	}
	var steps []string
	for _, c := range p.Planning.Calls {
		steps = append(steps, c.Step+"/"+string(rune('0'+c.Repair)))
	}
	if got := strings.Join(steps, " "); got != "single/0 single/1 single/2" {
		t.Errorf("calls: %s", got)
	}
}

// An answer still invalid after planner.repairs repairs fails planning,
// showing its errors; every call is recorded.
func TestHopeless(t *testing.T) {
	cfg := golangPlanner(t, "single")
	cfg.Planner.Repairs = 1
	bad := `{"changes":[{"name":"Links","type":"feature","size":"XL","description":"","requirements":["REQ-LINKS-01"],"dependsOn":[],"scope":[]}]}`
	srv := modeltest.New(t, modeltest.Answer(bad, modeltest.Usage{}), modeltest.Answer(bad, modeltest.Usage{}))
	pl := newPlanner(t, cfg, apiEnv(srv), llm.Target{Transport: llm.TransportAnthropic, Model: "m"})
	p := &plan.Plan{Requirements: theSpec.Requirements}
	_, planning, err := pl.Changes(context.Background(), p, p.Pending(), nil)
	want := `planning failed: the plan role's answer to the single call was still invalid after 1 repair (planner.repairs); its errors:
  changes.0.size: "XL" is not one of "S", "M", "L"
  changes.0.name: invalid value "Links" (out of bound =~"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")`
	var rej *RejectedError
	if !errors.As(err, &rej) || err.Error() != want {
		t.Fatalf("err:\n%v\nwant\n%s", err, want)
	}
	if len(planning.Calls) != 2 || len(srv.Requests()) != 2 {
		t.Errorf("%d calls, %d requests", len(planning.Calls), len(srv.Requests()))
	}
}

func TestThreePhase(t *testing.T) {
	for _, transport := range []string{llm.TransportOpenAI, llm.TransportAnthropic} {
		t.Run(transport, func(t *testing.T) { testThreePhase(t, transport) })
	}
}

func testThreePhase(t *testing.T, transport string) {
	cfg := golangPlanner(t, "three-phase")
	cfg.Planner.Parallel = 1 // the script answers in order
	srv := modeltest.New(t,
		modeltest.Answer(briefAnswer, modeltest.Usage{Input: 100, Output: 10}),
		modeltest.Answer(linksAnswer, modeltest.Usage{Input: 200, Output: 20}),
		modeltest.Answer(statsAnswer, modeltest.Usage{Input: 300, Output: 30}),
		modeltest.Answer(wholeAnswer, modeltest.Usage{Input: 400, Output: 40}))
	pl := newPlanner(t, cfg, apiEnv(srv), llm.Target{Transport: transport, Model: "m"})
	p, err := makePlan(cfg, plan.Record{}, pl)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(p); got != "links(REQ-LINKS-01,REQ-LINKS-02→) stats(REQ-STATS-01→links)" {
		t.Errorf("changes: %s", got)
	}
	var steps []string
	for _, c := range p.Planning.Calls {
		steps = append(steps, c.Step)
	}
	if got := strings.Join(steps, ", "); got != "brief, domain links, domain stats, merge" {
		t.Errorf("steps: %s", got)
	}
	if got := p.Planning.Tokens(); got != (usage.Tokens{Input: 1000, Output: 100}) {
		t.Errorf("tokens %+v", got)
	}
	if transport != llm.TransportAnthropic {
		return
	}
	reqs := srv.Requests()
	brief, links, stats, merge := promptOf(t, reqs[0]), promptOf(t, reqs[1]), promptOf(t, reqs[2]), promptOf(t, reqs[3])
	checks := []struct{ name, text, want string }{
		{"brief", brief, "stats:\n- REQ-STATS-01 (new): Count visits (depends on REQ-LINKS-01)"},
		{"links", links, "Plan the changes of the domain links"},
		{"links", links, "Notes on links: Owns the store."},
		{"links", links, "- links owns the store; stats reads it"},
		{"stats", stats, "### REQ-STATS-01: Count visits"},
		{"merge", merge, "- stats (feature, S): Count visits.\n  requirements: REQ-STATS-01; dependsOn: ; scope: internal/stats/**"},
		{"merge", merge, "- REQ-STATS-01 (stats): Count visits (depends on REQ-LINKS-01)"},
	}
	for _, c := range checks {
		if !strings.Contains(c.text, c.want) {
			t.Errorf("%s prompt lacks %q:\n%s", c.name, c.want, c.text)
		}
	}
	if strings.Contains(links, "REQ-STATS-01: Count visits") {
		t.Errorf("the links call is asked for stats' requirement:\n%s", links)
	}
	// The domain call's answer schema lists only its requirements.
	if !strings.Contains(string(reqs[2].Body), `"enum":["REQ-STATS-01"]`) {
		t.Errorf("stats' schema: %s", reqs[2].Body)
	}
}

// A domain answer that covers another domain's requirement is repaired
// in its own call.
func TestThreePhaseDomainRepair(t *testing.T) {
	cfg := golangPlanner(t, "three-phase")
	cfg.Planner.Parallel = 1
	srv := modeltest.New(t,
		modeltest.Answer(briefAnswer, modeltest.Usage{}),
		modeltest.Answer(wholeAnswer, modeltest.Usage{}),
		modeltest.Answer(linksAnswer, modeltest.Usage{}),
		modeltest.Answer(statsAnswer, modeltest.Usage{}),
		modeltest.Answer(wholeAnswer, modeltest.Usage{}))
	pl := newPlanner(t, cfg, apiEnv(srv), llm.Target{Transport: llm.TransportAnthropic, Model: "m"})
	if _, err := makePlan(cfg, plan.Record{}, pl); err != nil {
		t.Fatal(err)
	}
	if text := promptOf(t, srv.Requests()[2]); !strings.Contains(text, `- change "stats" covers REQ-STATS-01, which is not one of the requirements to plan here`) {
		t.Errorf("repair prompt:\n%s", text)
	}
}

// The domain calls run at once, up to planner.parallel.
func TestThreePhaseParallel(t *testing.T) {
	cfg := golangPlanner(t, "three-phase")
	cfg.Planner.Parallel = 2
	srv := modeltest.New(t, modeltest.Answer(briefAnswer, modeltest.Usage{}), modeltest.Step{Hang: true}, modeltest.Step{Hang: true})
	pl := newPlanner(t, cfg, apiEnv(srv), llm.Target{Transport: llm.TransportAnthropic, Model: "m"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	p := &plan.Plan{Requirements: theSpec.Requirements}
	go func() {
		_, _, err := pl.Changes(ctx, p, p.Pending(), nil)
		done <- err
	}()
	for len(srv.Requests()) < 3 {
		select {
		case err := <-done:
			t.Fatalf("planning ended with %d requests: %v", len(srv.Requests()), err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

// auto plans in one call when the single call's input is estimated
// within planner.singleCallMaxInputTokens, else in three phases; the plan
// says which and why.
func TestAuto(t *testing.T) {
	cfg := golangPlanner(t, "auto")
	cfg.Planner.Parallel = 1
	p := &plan.Plan{Requirements: theSpec.Requirements}
	probe := newPlanner(t, cfg, nil)
	tokens, err := probe.newRun(p, p.Pending(), nil).estimate()
	if err != nil || tokens < 500 {
		t.Fatalf("estimate %d, %v", tokens, err)
	}
	t.Run("within", func(t *testing.T) {
		cfg.Planner.SingleCallMaxInputTokens = tokens
		srv := modeltest.New(t, modeltest.Answer(wholeAnswer, modeltest.Usage{}))
		pl := newPlanner(t, cfg, apiEnv(srv), llm.Target{Transport: llm.TransportAnthropic, Model: "m"})
		got, err := makePlan(cfg, plan.Record{}, pl)
		if err != nil {
			t.Fatal(err)
		}
		want := "auto: the single call's input is about " + strconv.Itoa(tokens) + " tokens, within planner.singleCallMaxInputTokens (" + strconv.Itoa(tokens) + ")"
		if got.Strategy != "single" || got.Planning.Reason != want || len(srv.Requests()) != 1 {
			t.Errorf("strategy %s, reason %q, %d requests", got.Strategy, got.Planning.Reason, len(srv.Requests()))
		}
	})
	t.Run("beyond", func(t *testing.T) {
		cfg.Planner.SingleCallMaxInputTokens = tokens - 1
		srv := modeltest.New(t, modeltest.Answer(briefAnswer, modeltest.Usage{}), modeltest.Answer(linksAnswer, modeltest.Usage{}),
			modeltest.Answer(statsAnswer, modeltest.Usage{}), modeltest.Answer(wholeAnswer, modeltest.Usage{}))
		pl := newPlanner(t, cfg, apiEnv(srv), llm.Target{Transport: llm.TransportAnthropic, Model: "m"})
		got, err := makePlan(cfg, plan.Record{}, pl)
		if err != nil {
			t.Fatal(err)
		}
		want := "auto: the single call's input is about " + strconv.Itoa(tokens) + " tokens, more than planner.singleCallMaxInputTokens (" + strconv.Itoa(tokens-1) + ")"
		if got.Strategy != "three-phase" || got.Planning.Reason != want || len(srv.Requests()) != 4 {
			t.Errorf("strategy %s, reason %q, %d requests", got.Strategy, got.Planning.Reason, len(srv.Requests()))
		}
	})
}

// A 529 on the primary model sends the call to the fallback; the plan
// records both calls.
func TestFallback(t *testing.T) {
	cfg := golangPlanner(t, "single")
	srv := modeltest.New(t, modeltest.Overloaded(), modeltest.Answer(wholeAnswer, modeltest.Usage{}))
	pl := newPlanner(t, cfg, apiEnv(srv), llm.Target{Transport: llm.TransportAnthropic, Model: "m-primary"}, llm.Target{Transport: llm.TransportAnthropic, Model: "m-fallback"})
	p, err := makePlan(cfg, plan.Record{}, pl)
	if err != nil {
		t.Fatal(err)
	}
	calls := p.Planning.Calls
	if len(calls) != 2 || calls[0].Model != "m-primary" || !strings.Contains(calls[0].Error, "529") || calls[1].Model != "m-fallback" || calls[1].Error != "" {
		t.Errorf("calls %+v", calls)
	}
	if got := p.Planning.Models(); !reflect.DeepEqual(got, []string{"m-fallback via anthropic"}) {
		t.Errorf("models %v", got)
	}
}

// A missing key is a configuration error: the fallback is not asked.
func TestMissingKey(t *testing.T) {
	cfg := golangPlanner(t, "single")
	srv := modeltest.New(t, modeltest.Answer(wholeAnswer, modeltest.Usage{}))
	pl := newPlanner(t, cfg, []string{"ANTHROPIC_BASE_URL=" + srv.URL, "OPENAI_API_KEY=sk-test-dummy", "OPENAI_BASE_URL=" + srv.URL + "/v1"},
		llm.Target{Transport: llm.TransportAnthropic, Model: "m"}, llm.Target{Transport: llm.TransportOpenAI, Model: "b"})
	_, err := makePlan(cfg, plan.Record{}, pl)
	var ce *llm.ConfigError
	if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "planning (single call): the anthropic transport needs ANTHROPIC_API_KEY") {
		t.Fatalf("err = %v", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests", n)
	}
}

// Existing changes (a replan's) keep their names, and new changes may
// depend on them.
func TestExisting(t *testing.T) {
	cfg := golangPlanner(t, "single")
	taken := `{"changes":[{"name":"links","type":"feature","size":"S","description":"Count.","requirements":["REQ-STATS-01"],"dependsOn":["links"],"scope":[]}]}`
	fixed := `{"changes":[{"name":"stats","type":"feature","size":"S","description":"Count.","requirements":["REQ-STATS-01"],"dependsOn":["links"],"scope":[]}]}`
	srv := modeltest.New(t, modeltest.Answer(taken, modeltest.Usage{}), modeltest.Answer(fixed, modeltest.Usage{}))
	pl := newPlanner(t, cfg, apiEnv(srv), llm.Target{Transport: llm.TransportAnthropic, Model: "m"})
	p := &plan.Plan{Requirements: theSpec.Requirements}
	existing := []plan.Change{{Name: "links", Type: "feature", Size: "M", Description: "Links.", Requirements: []string{"REQ-LINKS-01", "REQ-LINKS-02"}, DependsOn: []string{}}}
	changes, _, err := pl.Changes(context.Background(), p, []string{"REQ-STATS-01"}, existing)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].Name != "stats" || strings.Join(changes[0].DependsOn, ",") != "links" {
		t.Errorf("changes %+v", changes)
	}
	reqs := srv.Requests()
	if text := promptOf(t, reqs[0]); !strings.Contains(text, "- links (feature; REQ-LINKS-01, REQ-LINKS-02): Links.") || strings.Contains(text, "### REQ-LINKS-01") {
		t.Errorf("prompt:\n%s", text)
	}
	if text := promptOf(t, reqs[1]); !strings.Contains(text, `- change name "links" is taken by a change planned or merged already`) {
		t.Errorf("repair prompt:\n%s", text)
	}
}

// A convention narrowed by types or paths tells the planner which changes
// it is for; an unnarrowed one is its text.
func TestPlannerConvention(t *testing.T) {
	for _, tt := range []struct {
		types, paths []string
		want         string
	}{
		{nil, nil, "Say why."},
		{[]string{"feature", "fix"}, nil, "Say why. (only for feature and fix changes)"},
		{nil, []string{"api/**", "cmd/**"}, "Say why. (only for changes that may touch api/** or cmd/**)"},
		{[]string{"feature"}, []string{"api/**"}, "Say why. (only for feature changes that may touch api/**)"},
	} {
		l := config.NamedLearning{Name: "why", Learning: config.Learning{Kind: config.LearningConvention, Text: "Say why.", Types: tt.types, Paths: tt.paths}}
		if got := plannerConvention(l); got != tt.want {
			t.Errorf("plannerConvention(%v, %v) = %q, want %q", tt.types, tt.paths, got, tt.want)
		}
	}
}

package gate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm"
	"github.com/set-engine/set/engine/spec"
	"github.com/set-engine/set/internal/modeltest"
)

// testPrompt is a small prompt template that shows what a gate gives it.
const testPrompt = "Review {{.Change.Name}} (block on {{.BlockOn}})\n{{range .Requirements}}{{.ID}}: {{.Title}}\n{{end}}{{range .Omitted}}left out: {{.}}\n{{end}}{{.Diff}}"

// modelConfig reaches srv through the anthropic transport for the review
// and verify roles, retrying once without waiting.
func modelConfig(srv *modeltest.Server) *llm.Config {
	return &llm.Config{
		Routes: map[llm.Role]llm.Route{
			llm.Review: {{Transport: llm.TransportAnthropic, Model: "m-review"}},
			llm.Verify: {{Transport: llm.TransportAnthropic, Model: "m-verify"}},
		},
		Env:  []string{"ANTHROPIC_API_KEY=sk-ant-test-dummy", "ANTHROPIC_BASE_URL=" + srv.URL},
		Wait: func(context.Context, time.Duration) error { return nil },
	}
}

// gradedInput is the input of the model-graded gate name (kind review, or
// spec_verify graded by "llm") on a change that adds internal/auth/login.go
// and its test, asking srv.
func gradedInput(t *testing.T, srv *modeltest.Server, kind string, edit func(*config.Gate)) Input {
	t.Helper()
	r := newRepo(t, baseFiles)
	r.write("internal/auth/login.go", "package auth\n\n// Login logs in.\nfunc Login(user string) bool { return user != \"\" }\n")
	r.write("internal/auth/login_test.go", "package auth\n\n// REQ-AUTH-01\nfunc TestLogin(t *testing.T) {}\n")
	r.commit()
	in := r.input(kind, featureChange)
	g := config.Gate{Kind: kind, Prompt: testPrompt, BlockOn: "critical", MaxDiffBytes: 100_000, Repairs: 2}
	if kind == config.KindSpecVerify {
		g.Grader = config.GraderLLM
	}
	if edit != nil {
		edit(&g)
	}
	in.Project.Gates[kind] = g
	in.Reqs = []spec.Requirement{{ID: "REQ-AUTH-01", Title: "Log in"}, {ID: "REQ-AUTH-02", Title: "Log out"}}
	in.Models = llm.New(*modelConfig(srv))
	return in
}

const (
	criticalFinding = `{"severity": "critical", "file": "internal/auth/login.go", "line": 4, "requirements": ["REQ-AUTH-01"], "message": "Login accepts any user without a password.", "fix": "Check the password against the store."}`
	highFinding     = `{"severity": "high", "file": "internal/auth/login_test.go", "line": 0, "requirements": [], "message": "The test asserts nothing.", "fix": "Assert Login's result."}`
	lowFinding      = `{"severity": "low", "file": "", "line": 0, "requirements": [], "message": "Nit.", "fix": "Tidy."}`
)

func TestReviewCriticalFindingBlocks(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t, modeltest.Answer(`{"findings": [`+lowFinding+`, `+criticalFinding+`]}`, modeltest.Usage{}))
	res := runGate(t, gradedInput(t, srv, config.KindReview, nil))
	want(t, res, StatusFail,
		"1 finding of severity critical or worse (first: [critical] internal/auth/login.go:4: Login accepts any user without a password.)",
		`Gate review failed: the review model (m-review via anthropic) reported 1 finding of severity critical or worse, which block the change:

1. [critical] internal/auth/login.go:4 (REQ-AUTH-01)
   Login accepts any user without a password.
   Fix: Check the password against the store.

It also reported 1 finding below the blocking severity critical:

2. [low] the change as a whole
   Nit.
   Fix: Tidy.

Fix the blocking findings.`)
	if res.Kind != config.KindReview || res.Runner != BuiltinRunner {
		t.Errorf("result %+v", res)
	}
	// The model got the change's requirements and its diff, the files
	// that name a requirement or lie in the scope first.
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	body := string(reqs[0].Body)
	for _, s := range []string{`Review auth-login (block on critical)`, `REQ-AUTH-01: Log in`, `+func Login(user string) bool`, `"tool_choice":{"name":"answer","type":"tool"}`} {
		if !strings.Contains(body, s) {
			t.Errorf("request lacks %s:\n%s", s, body)
		}
	}
	// The log holds the prompt and the answer, then the verdict, where a
	// reader of its end (setctl explain) looks.
	log := readLog(t, res)
	for _, s := range []string{"result: fail\n", ".)\n\n--- diff shown: 2 files\n", "--- prompt (review role) ---\nReview auth-login", "--- answer of m-review via anthropic ---\n{\"findings\""} {
		if !strings.Contains(log, s) {
			t.Errorf("log lacks %q:\n%s", s, log)
		}
	}
	if !strings.HasSuffix(log, "\n--- verdict ---\n"+res.RetryContext+"\n") {
		t.Errorf("log does not end with the verdict:\n%s", log)
	}
	if err := srv.Err(); err != nil {
		t.Error(err)
	}
}

// A high finding blocks only when blockOn says so; below it, the gate
// passes with a warning that lists the findings.
func TestReviewBlockOn(t *testing.T) {
	t.Parallel()
	answer := `{"findings": [` + highFinding + `]}`
	srv := modeltest.New(t, modeltest.Answer(answer, modeltest.Usage{}), modeltest.Answer(answer, modeltest.Usage{}))
	res := runGate(t, gradedInput(t, srv, config.KindReview, nil))
	want(t, res, StatusWarn,
		"1 finding below the blocking severity critical (first: [high] internal/auth/login_test.go: The test asserts nothing.)",
		`Gate review passed with findings: the review model (m-review via anthropic) reported 1 finding below the blocking severity critical:

1. [high] internal/auth/login_test.go
   The test asserts nothing.
   Fix: Assert Login's result.`)

	res = runGate(t, gradedInput(t, srv, config.KindReview, func(g *config.Gate) { g.BlockOn = "high" }))
	if res.Status != StatusFail || !strings.HasPrefix(res.RetryContext, "Gate review failed: the review model (m-review via anthropic) reported 1 finding of severity high or worse") {
		t.Errorf("blockOn high: %s %q\n%s", res.Status, res.Reason, res.RetryContext)
	}
}

func TestReviewNoFindingPasses(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t, modeltest.Answer(`{"findings": []}`, modeltest.Usage{}))
	res := runGate(t, gradedInput(t, srv, config.KindReview, nil))
	want(t, res, StatusPass, "", "")
	if log := readLog(t, res); !strings.Contains(log, "the review model (m-review via anthropic) found nothing to report") {
		t.Errorf("log:\n%s", log)
	}
}

// In mode warn, a blocking finding is reported and does not block.
func TestReviewWarnMode(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t, modeltest.Answer(`{"findings": [`+criticalFinding+`]}`, modeltest.Usage{}))
	in := gradedInput(t, srv, config.KindReview, nil)
	in.Step.Mode = config.ModeWarn
	res := runGate(t, in)
	if res.Status != StatusWarn || !strings.HasPrefix(res.RetryContext, "Gate review failed:") {
		t.Errorf("%s %q\n%s", res.Status, res.Reason, res.RetryContext)
	}
}

func TestSpecVerifyLLMUnimplementedBlocks(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t, modeltest.Answer(`{"requirements": [
		{"id": "REQ-AUTH-02", "implemented": false, "reason": "Nothing logs a user out."},
		{"id": "REQ-AUTH-01", "implemented": true, "reason": "Login is there, with a test."}], "findings": []}`, modeltest.Usage{}))
	res := runGate(t, gradedInput(t, srv, config.KindSpecVerify, nil))
	want(t, res, StatusFail, "not implemented: REQ-AUTH-02",
		`Gate spec_verify failed: the verify model (m-verify via anthropic) judged 1 of the change's 2 requirements not implemented:
  - REQ-AUTH-02: Log out — Nothing logs a user out.

Implement each requirement as its text and every one of its scenarios say.`)
	if res.Kind != config.KindSpecVerify {
		t.Errorf("kind %s", res.Kind)
	}
	if m := srv.Models(); len(m) != 1 || m[0] != "m-verify" {
		t.Errorf("models asked: %v", m)
	}
}

func TestSpecVerifyLLMPasses(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t, modeltest.Answer(`{"requirements": [
		{"id": "REQ-AUTH-01", "implemented": true, "reason": "Login."},
		{"id": "REQ-AUTH-02", "implemented": true, "reason": "Logout."}], "findings": []}`, modeltest.Usage{}))
	res := runGate(t, gradedInput(t, srv, config.KindSpecVerify, nil))
	want(t, res, StatusPass, "", "")
	if log := readLog(t, res); !strings.Contains(log, "judged every requirement implemented:\n  - REQ-AUTH-01: Log in — Login.\n  - REQ-AUTH-02: Log out — Logout.\n") {
		t.Errorf("log:\n%s", log)
	}
}

// The deterministic check of the delta specs comes first: a change that
// rewrote its requirements fails without a model call.
func TestSpecVerifyLLMChecksDeltaFirst(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t)
	in := gradedInput(t, srv, config.KindSpecVerify, nil)
	in.Delta = map[string][]byte{"specs/auth/spec.md": []byte("## ADDED Requirements\n")}
	res := runGate(t, in)
	if res.Status != StatusFail || !strings.HasPrefix(res.Reason, "the delta specs are not the ones set wrote") {
		t.Errorf("%s %q", res.Status, res.Reason)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model requests", n)
	}
}

// An answer that does not fit the verdict is sent back with its problems,
// and the repaired answer decides.
func TestGradedRepairsAnInvalidAnswer(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t,
		modeltest.Answer(`{"findings": [{"severity": "blocker", "file": "", "line": 0, "requirements": [], "message": "m", "fix": "f"}]}`, modeltest.Usage{}),
		modeltest.Answer(`{"findings": []}`, modeltest.Usage{}))
	res := runGate(t, gradedInput(t, srv, config.KindReview, nil))
	want(t, res, StatusPass, "", "")
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, s := range []string{"## Your last answer was invalid", `findings[0].severity: \"blocker\" is not one of critical, high, medium, low`, "Review auth-login"} {
		if !strings.Contains(string(reqs[1].Body), s) {
			t.Errorf("repair request lacks %s:\n%s", s, reqs[1].Body)
		}
	}
	if log := readLog(t, res); !strings.Contains(log, "--- problems of the answer ---\n  - findings[0].severity") {
		t.Errorf("log:\n%s", log)
	}
}

// An answer still invalid after the repairs is an error of the gate,
// never a pass.
func TestGradedInvalidAfterRepairsErrors(t *testing.T) {
	t.Parallel()
	bad := modeltest.Answer(`{"findings": "none"}`, modeltest.Usage{})
	srv := modeltest.New(t, bad, bad)
	res := runGate(t, gradedInput(t, srv, config.KindReview, func(g *config.Gate) { g.Repairs = 1 }))
	want(t, res, StatusError, `the review model's answer does not fit the verdict's schema after 1 repair: findings: want a list, got "none"`, "")
	if log := readLog(t, res); !strings.Contains(log, "result: error\n") || !strings.Contains(log, "--- answer of m-review via anthropic ---\n{\"findings\": \"none\"}") {
		t.Errorf("log:\n%s", log)
	}
}

// A call that fails on every model of the route, a missing key, a model
// the endpoint does not serve and a model that does not answer within the
// gate's timeout are errors of the gate that say why.
func TestGradedCallFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		steps   []modeltest.Step
		edit    func(*Input)
		timeout time.Duration
		reason  string
	}{
		{
			name:   "server errors",
			steps:  []modeltest.Step{{Status: 500, ErrorType: "api_error", ErrorMessage: "boom"}, {Status: 500, ErrorType: "api_error", ErrorMessage: "boom"}},
			reason: "the review model could not be asked: review call failed on every model of its route: anthropic API: 500 api_error: boom",
		},
		{
			name: "no key",
			edit: func(in *Input) {
				// An environment of its own, without the keys.
				in.Models = llm.New(llm.Config{Routes: map[llm.Role]llm.Route{llm.Review: {{Transport: llm.TransportAnthropic, Model: "m-review"}}}, Env: []string{}})
			},
			reason: "the review model could not be asked: the anthropic transport needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in setctl's environment; or use the claude transport, which uses Claude Code's own login",
		},
		{
			name:   "model not served",
			steps:  []modeltest.Step{modeltest.ModelNotFound()},
			reason: "the review model could not be asked: the endpoint does not serve model m-review (unknown or retired): model: m-review",
		},
		{
			name:    "hang",
			steps:   []modeltest.Step{{Hang: true}},
			timeout: 300 * time.Millisecond,
			reason:  "the review model could not be asked: no verdict within the gate's timeout of 300ms: ",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := modeltest.New(t, tc.steps...)
			in := gradedInput(t, srv, config.KindReview, nil)
			in.Step.Timeout = config.Duration(tc.timeout)
			if tc.edit != nil {
				tc.edit(&in)
			}
			res := runGate(t, in)
			if res.Status != StatusError || !strings.HasPrefix(res.Reason, tc.reason) || res.RetryContext != "" {
				t.Errorf("status %s, reason %q\nwant reason %q…", res.Status, res.Reason, tc.reason)
			}
		})
	}
}

func TestGradedWithoutModels(t *testing.T) {
	t.Parallel()
	in := gradedInput(t, modeltest.New(t), config.KindReview, nil)
	in.Models = nil
	want(t, runGate(t, in), StatusError, "gate review needs the review model, and this run has no model client", "")
}

// RunStack journals each model call as an LLM_CALL of the change, between
// the gate's GATE_STARTED and VERIFY_GATE.
func TestRunStackJournalsModelCalls(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t,
		modeltest.Step{Status: 529, ErrorType: "overloaded_error", ErrorMessage: "Overloaded"},
		modeltest.Answer(`{"findings": [`+criticalFinding+`]}`, modeltest.Usage{Input: 100, Output: 20}))
	in, _ := stackFixture(t)
	in.Project.Gates["review"] = config.Gate{Kind: config.KindReview, Prompt: testPrompt, BlockOn: "critical", MaxDiffBytes: 100_000, Repairs: 2}
	in.Steps = []graph.GateStep{{Gate: "review", Kind: config.KindReview, Mode: config.ModeRun}}
	in.Models = modelConfig(srv)
	res, events, err := recorded(t, context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Blocking == nil || !strings.HasPrefix(res.RetryContext(), "Gate review failed:") {
		t.Fatalf("stack result %+v", res)
	}
	var got []string
	for _, e := range events {
		switch d := e.(type) {
		case journal.GateStartedData:
			got = append(got, "start "+d.Gate)
		case journal.LLMCallData:
			got = append(got, strings.Join([]string{"call", d.Role, d.Model, d.Transport, d.Error}, " "))
			if d.Error == "" && (d.Tokens.Input != 100 || d.Tokens.Output != 20) {
				t.Errorf("tokens %+v", d.Tokens)
			}
		case journal.VerifyGateData:
			got = append(got, d.Gate+" "+d.Result)
		}
	}
	want := []string{
		"start review",
		"call review m-review anthropic anthropic API: 529 overloaded_error: Overloaded",
		"call review m-review anthropic ",
		"review fail",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}

// A model-graded gate is given the conventions the change's agent was
// given, the adopted ones that match the change among them, and the rule
// learnings among the forbidden patterns.
func TestPromptDataCarriesLearnings(t *testing.T) {
	project := testProject()
	project.Conventions = map[string]string{"gofmt": "Format Go code with gofmt."}
	project.Learnings = map[string]config.Learning{
		"doc-comment": {Kind: config.LearningConvention, Text: "Every Go file starts with a package comment.", Enabled: true, Paths: []string{"internal/**"}},
		"ui-only":     {Kind: config.LearningConvention, Text: "Components are tested in the browser.", Enabled: true, Paths: []string{"web/**"}},
		"no-printf":   {Kind: config.LearningRule, Text: "log through slog", Pattern: `log\.Printf`, Enabled: true},
	}
	data := promptData(Input{Project: project, Change: featureChange, Step: graph.GateStep{Gate: "review"}}, config.Gate{BlockOn: "high"}, shownDiff{})
	if want := []string{"Format Go code with gofmt.", "Every Go file starts with a package comment."}; !cmp.Equal(data.Conventions, want) {
		t.Errorf("conventions = %q, want %q", data.Conventions, want)
	}
	var rules []string
	for _, r := range data.Rules {
		rules = append(rules, r.Name+": "+r.Message)
	}
	if want := []string{"debug-print: debug printing left in the code", "skipped-test: a test must not be skipped to make a gate pass", "learning no-printf: log through slog"}; !cmp.Equal(rules, want) {
		t.Errorf("rules = %q, want %q", rules, want)
	}
}

// A model-graded spec_verify on a change without requirements (a folder
// the project's people wrote with skip_specs: true) has nothing to ask
// the model: it passes once the folder's checks hold, without a call.
func TestSpecVerifyGradedNoRequirements(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t)
	in := gradedInput(t, srv, config.KindSpecVerify, nil)
	in.Change.Requirements, in.Reqs = nil, nil
	res := runGate(t, in)
	if res.Status != StatusPass || len(srv.Requests()) != 0 {
		t.Errorf("status %s (%s), %d model calls; want a pass without a call", res.Status, res.Reason, len(srv.Requests()))
	}
}

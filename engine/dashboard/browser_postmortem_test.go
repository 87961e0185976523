package dashboard

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/state"
	"github.com/set-engine/set/internal/browsertest"
)

// spanLabel is a span of the timeline as the page draws it: its kind, its
// tooltip, the label on it ("" when none fits) and whether that label
// lies inside the span.
type spanLabel struct {
	Kind   string `json:"kind"`
	Title  string `json:"title"`
	Label  string `json:"label"`
	Inside bool   `json:"inside"`
}

// spanLabels are the spans of the timeline svg sel.
func spanLabels(t *testing.T, b *browsertest.Browser, sel string) []spanLabel {
	t.Helper()
	js := fmt.Sprintf(`JSON.stringify([...document.querySelectorAll(%q)].map((r) => {
		const t = r.parentNode.querySelector("text.span-label"), rb = r.getBBox(), tb = t ? t.getBBox() : null;
		return { kind: r.dataset.kind, title: r.querySelector("title").textContent, label: t ? t.textContent : "",
			inside: !!tb && tb.x >= rb.x && tb.x + tb.width <= rb.x + rb.width + 0.5 };
	}))`, sel+" rect.span")
	var spans []spanLabel
	if err := json.Unmarshal([]byte(b.Eval(js)), &spans); err != nil {
		t.Fatal(err)
	}
	return spans
}

// TestBrowserPostMortem reads a finished run as a post-mortem: the
// timeline labels the spans that have room and gives every span a
// tooltip, groups each change's spans by round and zooms to a change
// and back; the change's page groups its gates by verify round and
// integration attempt, each with its verdict and what went back to the
// agent, and shows a round's diff from the repository; a merged change
// links its commit, on the forge when the project has one; the graph's
// pills hold their whole labels.
func TestBrowserPostMortem(t *testing.T) {
	f := newFixture(t)
	f.withRepo()
	f.start()
	f.toMerged()
	f.finish()
	cfg := &config.Project{
		Name: "demo", MainBranch: "master", Runner: config.Runner{Kind: "host"},
		Gates: map[string]config.Gate{
			"test": {Kind: config.KindExec, Mode: config.ModeRun, Run: []string{"go", "test", "./..."}},
			"vet":  {Kind: config.KindExec, Mode: config.ModeRun, Run: []string{"go", "vet", "./..."}},
			"lint": {Kind: config.KindExec, Mode: config.ModeRun, Run: []string{"golangci-lint", "run"}},
		},
		Stacks:      map[string]config.Stack{"feature": {"test": {}}},
		Integration: config.Stack{"test": {}, "vet": {}, "lint": {}},
	}
	_, ts := serveProject(t, f, Project{
		Graph: func(p *plan.Plan) (*graph.Graph, error) { return graph.Build(p, cfg) },
	})
	base := ts.URL + "/"
	b := newBrowser(t)

	b.Do("the timeline of the whole run",
		chromedp.Navigate(base+"#/p/0/timeline"),
		chromedp.WaitVisible(`svg#timeline[data-zoom=""] rect.span.k-gate`),
		chromedp.WaitVisible(`svg#timeline g.band[data-change="greet"][data-stage="verify"][data-attempt="1"]`),
	)
	whole := spanLabels(t, b, `svg#timeline`)
	var labelled, narrow int
	for _, s := range whole {
		if s.Title == "" {
			t.Errorf("a %s span without a tooltip", s.Kind)
		}
		if s.Label != "" {
			labelled++
			if !s.Inside {
				t.Errorf("the label %q sticks out of its span", s.Label)
			}
		}
		if s.Kind == "gate" && s.Label == "" && strings.HasPrefix(s.Title, "verify test #1 · fail") {
			narrow++
		}
	}
	if labelled == 0 || narrow != 1 {
		t.Errorf("the whole run: %d spans labelled, %d narrow failing gate with only its tooltip; want some and 1:\n%+v", labelled, narrow, whole)
	}
	if got := b.Eval(`document.querySelector('svg#timeline g.band[data-change="greet"][data-stage="verify"][data-attempt="1"] title').textContent`); !strings.HasPrefix(got, "round 1 · iteration 1 · fail") {
		t.Errorf("greet's first round's band says %q", got)
	}
	b.Shot("timeline.png")

	b.Do("zoom to greet",
		chromedp.Click(`svg#timeline text.row-name[data-change="greet"]`),
		chromedp.WaitVisible(`svg#timeline[data-zoom="greet"]`),
		chromedp.WaitVisible(`#zoom-bar`),
	)
	zoomed := spanLabels(t, b, `svg#timeline`)
	found := false
	for _, s := range zoomed {
		// Its short label: the gate and its verdict.
		if s.Kind == "gate" && s.Label == "test fail" && s.Title == "verify test #1 · fail (1s)" && s.Inside {
			found = true
		}
	}
	if !found {
		t.Errorf("zoomed to greet, its failing gate is not labelled on its span:\n%+v", zoomed)
	}
	b.Shot("timeline-zoomed.png")
	b.Do("back to the whole run",
		chromedp.Click(`#zoom-out`),
		chromedp.WaitVisible(`svg#timeline[data-zoom=""]`),
	)
	b.Do("greet's page zooms the timeline to it",
		chromedp.Navigate(base+"#/p/0/change/greet"),
		chromedp.Click(`#on-timeline`),
		chromedp.WaitVisible(`svg#timeline[data-zoom="greet"]`),
	)

	b.Do("greet's rounds",
		chromedp.Navigate(base+"#/p/0/change/greet"),
		chromedp.WaitVisible(`section.round[data-stage="verify"][data-attempt="1"][data-verdict="fail"]`),
		chromedp.WaitVisible(`section.round[data-stage="verify"][data-attempt="2"][data-verdict="pass"]`),
		chromedp.WaitVisible(`section.round[data-stage="integration"][data-attempt="1"][data-verdict="merged"]`),
	)
	b.WaitFor(`document.querySelector('section.round[data-attempt="1"][data-stage="verify"] tr[data-gate-out] pre').textContent.includes("FAIL")`)
	first := `section.round[data-stage="verify"][data-attempt="1"]`
	if got := b.Text(first + ` .handback`); !strings.Contains(got, "Handed back to the agent") || !strings.Contains(got, `TestGreet failed: got "hi", want "hello"`) {
		t.Errorf("round 1's handback: %q", got)
	}
	if got := b.Text(first + ` h3`); !strings.Contains(got, "after iteration 1") {
		t.Errorf("round 1's title: %q", got)
	}
	if n := b.Eval(`String(document.querySelectorAll("section.round").length)`); n != "3" {
		t.Errorf("%s rounds, want 3", n)
	}
	if href := b.Eval(`document.querySelector(".grid a.commit-link").getAttribute("href")`); href != "#/p/0/change/greet" {
		t.Errorf("greet's commit links %q without a forge", href)
	}
	if title := b.Eval(`document.querySelector(".grid a.commit-link").title`); title != f.sha.greetMain {
		t.Errorf("greet's commit link's title %q, want its commit", title)
	}
	b.Shot("change-rounds.png")

	second := `section.round[data-stage="verify"][data-attempt="2"]`
	b.Do("round 2's diff",
		chromedp.Click(second+` button.diff-link`),
		chromedp.WaitVisible(second+` .diff-view pre.diff span.add`),
	)
	if add, del := b.Text(second+` pre.diff span.add`), b.Text(second+` pre.diff span.del`); !strings.Contains(add, `+func Greet() string { return "hello" }`) || !strings.Contains(del, `-func Greet() string { return "hi" }`) {
		t.Errorf("round 2's diff: first added line %q, first removed %q", add, del)
	}
	if colour := b.Eval(`getComputedStyle(document.querySelector('` + second + ` pre.diff span.add')).backgroundColor`); colour != "rgb(230, 255, 236)" {
		t.Errorf("an added line's background is %s", colour)
	}
	b.Do("scroll to the diff", chromedp.ScrollIntoView(second))
	b.Shot("change-diff.png")

	b.Do("the graph",
		chromedp.Navigate(base+"#/p/0/graph"),
		chromedp.WaitVisible(`svg#graph g.node[data-change="greet"]`),
	)
	pills := b.Eval(`JSON.stringify([...document.querySelectorAll("svg#graph rect.pill")].map((r) => {
		const t = r.nextElementSibling, rb = r.getBBox(), tb = t.getBBox();
		return [t.textContent, tb.x >= rb.x && tb.x + tb.width <= rb.x + rb.width];
	}))`)
	if !strings.Contains(pills, `["→ master (3)",true]`) || strings.Contains(pills, "false") {
		t.Errorf("the graph's pills (label, inside its box): %s", pills)
	}
	b.Shot("graph.png")
}

// TestBrowserForgeLinks: with a forge, a merged change's commit links
// its page on the forge, from the overview and from the change's page.
func TestBrowserForgeLinks(t *testing.T) {
	f := newFixture(t)
	f.start()
	f.toMerged()
	// Its pull request, as pull-request delivery records it (without the
	// URL a forge gives: the link is then the forge's pull request page).
	f.add("greet", journal.PullRequestOpenedData{Number: 12, Branch: "set/greet", Head: f.sha.greet2, Base: "main", Attempt: 1})
	_, ts := serveProject(t, f, Project{
		Forge: &Forge{Repository: "https://github.com/acme/demo"},
	})
	base := ts.URL + "/"
	b := newBrowser(t)
	want := "https://github.com/acme/demo/commit/" + f.sha.greetMain
	b.Do("the overview",
		chromedp.Navigate(base),
		chromedp.WaitVisible(`#changes tr[data-change="greet"] a.commit-link`),
	)
	if href := b.Eval(`document.querySelector('#changes tr[data-change="greet"] a.commit-link').href`); href != want {
		t.Errorf("the overview links greet's commit to %q, want %q", href, want)
	}
	if text := b.Text(`#changes tr[data-change="greet"] a.commit-link`); text != "abcdef0" {
		t.Errorf("the commit link says %q", text)
	}
	if href := b.Eval(`document.querySelector('#changes tr[data-change="greet"] a.pr-link').href`); href != "https://github.com/acme/demo/pull/12" {
		t.Errorf("the overview links greet's pull request to %q", href)
	}
	if n := b.Eval(`String(document.querySelectorAll('#changes tr[data-change="farewell"] a.commit-link').length)`); n != "0" {
		t.Errorf("farewell, not merged, links %s commits", n)
	}
	b.Shot("overview-links.png")
	b.Do("greet's page",
		chromedp.Navigate(base+"#/p/0/change/greet"),
		chromedp.WaitVisible(`.grid a.commit-link`),
	)
	if href := b.Eval(`document.querySelector(".grid a.commit-link").href`); href != want {
		t.Errorf("greet's page links its commit to %q, want %q", href, want)
	}
	if href := b.Eval(`document.querySelector('section.round[data-stage="integration"] a.pr-link').href`); href != "https://github.com/acme/demo/pull/12" {
		t.Errorf("greet's integration attempt links its pull request to %q", href)
	}
	b.Shot("change-links.png")
}

// TestBrowserExecTokens: a run whose agents report no tokens (an exec
// agent; a replay agent without recorded usage) says so on the tokens
// page and in the token columns, instead of empty bars against a budget.
func TestBrowserExecTokens(t *testing.T) {
	f := newFixture(t)
	f.add("", journal.PlanCreatedData{Strategy: "static", Changes: []string{"greet", "farewell"}, Requirements: 2, Plan: json.RawMessage(testPlan)})
	f.add("", journal.RunStartedData{Changes: []string{"greet", "farewell"}, MaxParallel: 2, MainBranch: "main",
		Budgets: &journal.Budgets{RetriesVerify: 2, RetriesIntegration: 2, Iterations: 5, Tokens: map[string]int64{"S": 2000000}}})
	for _, c := range []string{"greet", "farewell"} {
		f.to(c, state.Pending, state.Dispatched)
		f.add(c, journal.AgentSessionDecisionData{Decision: "new", Reason: "first iteration", Iteration: 1, Adapter: map[string]string{"greet": "exec", "farewell": "replay"}[c]})
		f.to(c, state.Dispatched, state.Implementing)
		f.add(c, journal.AgentIterationData{Iteration: 1, Result: "done", DurationMS: 1000, Commits: 1})
		f.to(c, state.Implementing, state.Verifying)
		f.add(c, journal.VerifyGateData{Stage: "verify", Gate: "test", Kind: "exec", Mode: "run", Runner: "host", Result: "pass", DurationMS: 1000, Attempt: 1})
		f.to(c, state.Verifying, state.Queued)
		f.to(c, state.Queued, state.Integrating)
		f.add(c, journal.MergedData{Commit: strings.Repeat(map[string]string{"greet": "a", "farewell": "b"}[c], 40), Previous: f.sha.base})
		f.to(c, state.Integrating, state.Merged)
	}
	// The run ends an hour later: the changes merged long before.
	f.mu.Lock()
	f.now = f.now.Add(time.Hour)
	f.mu.Unlock()
	f.add("", journal.RunFinishedData{Result: "success", Statuses: map[string]int{"merged": 2}, DurationMS: 30000})
	_, ts := serveProject(t, f, Project{})
	base := ts.URL + "/"
	b := newBrowser(t)
	b.Do("the overview",
		chromedp.Navigate(base),
		chromedp.WaitVisible(`#changes tr[data-change="greet"] .no-tokens`),
	)
	if got := b.Text(`#changes tr[data-change="greet"] .no-tokens`); got != "exec agents report no tokens" {
		t.Errorf("greet's tokens column says %q", got)
	}
	// farewell's replay agent had no recorded usage: it reported none
	// either (no LLM_CALL), whatever its adapter.
	if got := b.Eval(`String(document.querySelector('#changes tr[data-change="farewell"] .no-tokens')?.textContent)`); got != "exec agents report no tokens" {
		t.Errorf("farewell's tokens column says %q", got)
	}
	// Nor does an iteration's line say it used 0 tokens; one that reported
	// them says how many.
	for js, want := range map[string]string{
		`describe({type: "AGENT_ITERATION", data: {iteration: 1, result: "done", durationMs: 1000, commits: 1}})`:                        "iteration 1: done (1s, 1 commits)",
		`describe({type: "AGENT_ITERATION", data: {iteration: 2, result: "done", durationMs: 1000, commits: 2, tokens: {input: 1500}}})`: "iteration 2: done (1s, 1.5k tokens, 2 commits)",
	} {
		if got := b.Eval(js); got != want {
			t.Errorf("%s = %q, want %q", js, got, want)
		}
	}
	if n := b.Eval(`String(document.querySelectorAll("#changes progress").length)`); n != "0" {
		t.Errorf("%s token bars against the budget for exec agents", n)
	}
	// AGE is the time each took to reach main, not the time since.
	if age := b.Text(`#changes tr[data-change="greet"] td:nth-child(10)`); age != "10s" {
		t.Errorf("greet's age %q, want the 10s it took", age)
	}
	b.Shot("overview-exec.png")
	b.Do("the tokens page",
		chromedp.Click(`#nav a[data-page="tokens"]`),
		chromedp.WaitVisible(`#no-tokens`),
		chromedp.WaitVisible(`#chart-tokens svg text.note`),
	)
	if got := b.Text(`#no-tokens`); !strings.Contains(got, "exec agents report no tokens") {
		t.Errorf("the tokens page says %q", got)
	}
	if got := b.Text(`#roles tbody`); !strings.Contains(got, "No model calls in this run: exec agents report no tokens") {
		t.Errorf("the roles table says %q", got)
	}
	if n := b.Eval(`String(document.querySelectorAll("#chart-tokens line.budget").length)`); n != "0" {
		t.Errorf("%s budget lines over no tokens", n)
	}
	b.Shot("tokens-exec.png")
}

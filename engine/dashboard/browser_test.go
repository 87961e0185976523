package dashboard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/plan"
)

// TestBrowser drives the dashboard in a real headless Chromium over a run
// whose journal the test writes as it goes: the overview says the run
// waits for its baseline and which gate runs, then shows greet
// implementing, then merged without a reload; the change's detail shows
// its gate verdicts, retry context and agent log; the timeline, graph,
// token and sentinel pages draw; the run ends and the page says so; and
// the browser reports no console error or exception. A screenshot of each
// page goes to the test's artifact directory (see newBrowser).
func TestBrowser(t *testing.T) {
	f := newFixture(t)
	release := f.lock()
	f.begin()
	f.add("", journal.BaselineGateStartedData{Gate: "test", Tree: "t", Command: []string{"go", "test", "./..."}, Runner: "host", Log: ".set/logs/_baseline/test.log"})

	cfg := &config.Project{
		Name: "demo", MainBranch: "main", Runner: config.Runner{Kind: "host"},
		Gates:       map[string]config.Gate{"test": {Kind: config.KindExec, Mode: config.ModeRun, Run: []string{"go", "test", "./..."}}},
		Stacks:      map[string]config.Stack{"feature": {"test": {}}},
		Integration: config.Stack{"test": {}},
	}
	_, ts := serveProject(t, f, Project{
		Graph: func(p *plan.Plan) (*graph.Graph, error) { return graph.Build(p, cfg) },
	})
	base := ts.URL + "/"
	b := newBrowser(t)
	do, shot, waitFor, text := b.Do, b.Shot, b.WaitFor, b.Text
	row := func(change, status string) string {
		return fmt.Sprintf(`#changes tr[data-change=%q] td.status[data-status=%q]`, change, status)
	}

	start := time.Now()
	do("the overview during the baseline",
		chromedp.Navigate(base),
		chromedp.WaitVisible(row("greet", "pending")),
		chromedp.WaitVisible(`#run-state[data-state="running"]`),
	)
	const baseline = "waits for the baseline: gate test runs on main before any change is dispatched"
	if line := text("#runline"); !strings.Contains(line, "; "+baseline) {
		t.Errorf("the run line during the baseline: %q", line)
	}
	if why := text(`#changes tr[data-change="greet"]`); !strings.Contains(why, strings.TrimPrefix(baseline, "waits for ")) || strings.Contains(why, "free slot") {
		t.Errorf("greet's row during the baseline: %q", why)
	}
	shot("overview-baseline.png")
	// The tab is named after the project, as set.cue names it.
	if title := b.Eval(`document.title`); title != "demo · setctl dashboard" {
		t.Errorf("title %q", title)
	}

	f.add("", journal.BaselineGateData{Gate: "test", Tree: "t", Mode: "run", Result: "pass", Log: ".set/logs/_baseline/test.log"})
	f.dispatch()
	do("the overview of the live run",
		chromedp.WaitVisible(row("greet", "implementing")),
		chromedp.WaitVisible(`#run-state[data-state="running"]`),
	)
	if line := text("#runline"); strings.Contains(line, "baseline") {
		t.Errorf("the run line once the baseline passed: %q", line)
	}
	// A reload would forget this.
	b.Eval(`window.testMarker = "still the same page"`)
	shot("overview-implementing.png")

	f.toMerged()
	do("greet merged on the same page", chromedp.WaitVisible(row("greet", "merged")))
	if marker := b.Eval(`window.testMarker`); marker != "still the same page" {
		t.Fatalf("the page was reloaded to show greet merged (marker %q)", marker)
	}
	shot("overview.png")

	do("greet's detail",
		chromedp.Click(`#changes tr[data-change="greet"]`),
		chromedp.WaitVisible(`#change-title[data-change="greet"]`),
		chromedp.WaitVisible(`#gates tr[data-gate-out="0"] pre`),
	)
	waitFor(`document.querySelector("#agent-log").textContent.includes("fixing the greeting")`)
	waitFor(`document.querySelector('#gates tr[data-gate-out="0"] pre').textContent.includes("FAIL")`)
	if out, ctxt := text(`#gates tr[data-gate-out="0"] pre`), text(`pre.context`); !strings.Contains(out, `--- FAIL: TestGreet`) || !strings.Contains(ctxt, `TestGreet failed: got "hi", want "hello"`) {
		t.Errorf("greet's detail: gate output %q, retry context %q", out, ctxt)
	}
	shot("change.png")

	do("the activity timeline",
		chromedp.Click(`#nav a[data-page="timeline"]`),
		chromedp.WaitVisible(`svg#timeline rect.span.k-gate.r-fail`),
		chromedp.Click(`svg#timeline rect.span.k-gate.r-fail`),
		chromedp.WaitVisible(`#span-detail`),
	)
	waitFor(`document.querySelector("#span-log").textContent.includes("FAIL")`)
	if title := text(`#span-detail h2`); title != "greet: verify test #1" {
		t.Errorf("the clicked span's detail is titled %q", title)
	}
	shot("timeline.png")

	do("the execution graph",
		chromedp.Click(`#nav a[data-page="graph"]`),
		chromedp.WaitVisible(`svg#graph g.node[data-change="greet"][data-status="merged"]`),
		chromedp.WaitVisible(`svg#graph g.node[data-change="farewell"][data-status="pending"]`),
	)
	shot("graph.png")

	do("tokens and cost",
		chromedp.Click(`#nav a[data-page="tokens"]`),
		chromedp.WaitVisible(`#chart-tokens svg rect.bar-agent`),
		chromedp.WaitVisible(`#roles`),
	)
	shot("tokens.png")

	do("sentinel actions",
		chromedp.Click(`#nav a[data-page="sentinel"]`),
		chromedp.WaitVisible(`#sentinel`),
	)
	if r := text(`#sentinel tbody tr`); !strings.Contains(r, "slow_verify") || !strings.Contains(r, "warn") {
		t.Errorf("sentinel row = %q", r)
	}
	shot("sentinel.png")

	f.finish()
	release()
	do("the finished run",
		chromedp.Click(`#nav a[data-page="overview"]`),
		chromedp.WaitVisible(row("farewell", "archived")),
		chromedp.WaitVisible(`#run-state[data-state="finished"]`),
	)
	shot("overview-finished.png")
	t.Logf("the browser's part took %s", time.Since(start).Round(time.Millisecond))
}

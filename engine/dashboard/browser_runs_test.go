package dashboard

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/set-engine/set/engine/coverage"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/spec"
	"github.com/set-engine/set/engine/state"
)

// shoutPlan is the plan of the fixture's second run: one change, shout.
const shoutPlan = `{"version": 1, "project": "demo", "strategy": "static", "fingerprint": {},
	"changes": [{"name": "shout", "type": "feature", "size": "S", "requirements": ["REQ-SHOUT-01"], "dependsOn": []}],
	"requirements": []}`

// twoRuns journals two runs: run-1, which merged greet and farewell and
// finished, then run-2, an apply of shoutPlan whose exec agent reports no
// tokens, still running (the project's lock is held) with shout
// implementing.
func (f *fixture) twoRuns() {
	f.t.Helper()
	f.start()
	f.toMerged()
	f.finish()
	if err := f.w.Close(); err != nil {
		f.t.Fatal(err)
	}
	w, err := journal.Open(f.layout.Dir(), "run-2", journal.WithClock(f.tick))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { w.Close() })
	f.w = w
	f.add("", journal.PlanCreatedData{Strategy: "static", Changes: []string{"shout"}, Requirements: 1, Plan: json.RawMessage(shoutPlan)})
	f.add("", journal.RunStartedData{PID: os.Getpid(), Changes: []string{"shout"}, MaxParallel: 2, MainBranch: "main"})
	f.to("shout", state.Pending, state.Dispatched)
	f.add("shout", journal.AgentSessionDecisionData{Decision: "new", Reason: "first iteration", Iteration: 1, Adapter: "exec", Log: ".set/logs/shout/agent-1.log"})
	f.to("shout", state.Dispatched, state.Implementing)
	f.lock()
}

// TestBrowserRuns: with two runs in one project the Runs page lists both,
// the latest first, and says the second run's exec agent reported no
// tokens; clicking the first shows it on every page (its overview, its
// timeline: run-1's changes, not run-2's), read once, not live, under a
// banner that leads back to the latest; the run is in the location, so
// a link to it works.
func TestBrowserRuns(t *testing.T) {
	f := newFixture(t)
	f.twoRuns()
	_, ts := serveProject(t, f, Project{})
	base := ts.URL + "/"
	b := newBrowser(t)

	b.Do("the Runs page",
		chromedp.Navigate(base),
		chromedp.WaitVisible(`#changes tr[data-change="shout"]`),
		chromedp.Click(`#nav a[data-page="runs"]`),
		chromedp.WaitVisible(`#runs tr[data-run="run-1"]`),
	)
	ids := b.Eval(`[...document.querySelectorAll("#runs tr[data-run]")].map((r) => r.dataset.run).join(" ")`)
	if ids != "run-2 run-1" {
		t.Errorf("the Runs page lists %q, want the latest first: run-2 run-1", ids)
	}
	if r1, r2 := b.Text(`#runs tr[data-run="run-1"]`), b.Text(`#runs tr[data-run="run-2"]`); !strings.Contains(r1, "success") || !strings.Contains(r1, "2 of 2") || !strings.Contains(r1, "$0.470") ||
		!strings.Contains(r2, "running") || !strings.Contains(r2, "0 of 1") || !strings.Contains(r2, "not reported") {
		t.Errorf("the Runs page's rows:\nrun-1: %q\nrun-2: %q", r1, r2)
	}
	// A number's header stands over it, at its right, as GitHub's
	// tables have it, not a column's width away.
	if bad := b.Eval(misalignedHeaders("#runs")); bad != "" {
		t.Errorf("the Runs page's headers not over their numbers: %s", bad)
	}
	b.Do("the latest run's overview", chromedp.Click(`#nav a[data-page="overview"]`), chromedp.WaitVisible(`#changes tr[data-change="shout"]`))
	if bad := b.Eval(misalignedHeaders("#changes")); bad != "" {
		t.Errorf("the overview's headers not over their numbers: %s", bad)
	}
	b.Do("the Runs page again", chromedp.Click(`#nav a[data-page="runs"]`), chromedp.WaitVisible(`#runs tr[data-run="run-1"]`))
	// The run that goes lasts longer as time passes, events or none, as
	// its age does on the overview.
	before := b.Text(`#runs tr[data-run="run-2"] td:nth-child(3)`)
	for range 60 {
		f.tick()
	}
	b.WaitFor(`document.querySelector('#runs tr[data-run="run-2"] td:nth-child(3)').textContent !== ` + strconv.Quote(before))
	b.Shot("runs.png")

	b.Do("run-1's overview",
		chromedp.Click(`#runs tr[data-run="run-1"]`),
		chromedp.WaitVisible(`#changes tr[data-change="farewell"] td.status[data-status="archived"]`),
		chromedp.WaitVisible(`#banner[data-kind="earlier"]`),
	)
	if b.Eval(`String(!!document.querySelector('#changes tr[data-change="shout"]'))`) != "false" {
		t.Error("run-1's overview shows run-2's change shout")
	}
	if banner := b.Text("#banner"); !strings.Contains(banner, "run-1") || !strings.Contains(banner, "finished") || !strings.Contains(banner, "back to the latest run") {
		t.Errorf("the banner over run-1: %q", banner)
	}
	if live := b.Text("#live"); strings.Contains(live, "live ·") || strings.Contains(live, "reconnecting") {
		t.Errorf("run-1 is shown as live: %q", live)
	}
	if hash := b.Eval(`location.hash`); hash != "#/p/0/run/run-1/overview" {
		t.Errorf("run-1's overview is at %q", hash)
	}
	// Pause, Resume and Stop act on the run that goes, run-2: the page of
	// run-1 offers none of them, and says where they are.
	b.WaitFor(`!document.querySelector("#control").hidden`)
	if buttons := b.Eval(`[...document.querySelectorAll("button.control")].map((b) => b.dataset.action).join(" ")`); buttons != "" {
		t.Errorf("run-1's overview offers %q, which would act on run-2", buttons)
	}
	if bar := b.Text("#control"); !strings.Contains(bar, "the latest run") {
		t.Errorf("run-1's control bar says %q, want where the controls are", bar)
	}
	// greet's commit leads to run-1's greet, where its diff is.
	if href := b.Eval(`document.querySelector('#changes tr[data-change="greet"] a.commit-link').getAttribute("href")`); href != "#/p/0/run/run-1/change/greet" {
		t.Errorf("run-1's greet's commit links %q, not run-1's greet", href)
	}
	b.Shot("run-1-overview.png")

	b.Do("run-1's timeline",
		chromedp.Click(`#nav a[data-page="timeline"]`),
		chromedp.WaitVisible(`svg#timeline rect.span[data-change="farewell"]`),
	)
	if n := b.Eval(`String(document.querySelectorAll('svg#timeline rect.span[data-change="shout"]').length)`); n != "0" {
		t.Errorf("run-1's timeline draws %s spans of run-2's shout", n)
	}
	if hash := b.Eval(`location.hash`); hash != "#/p/0/run/run-1/timeline" {
		t.Errorf("run-1's timeline is at %q", hash)
	}
	b.Shot("run-1-timeline.png")

	// A link to run-1's greet, opened afresh, shows run-1's greet.
	b.Do("a link to run-1's greet",
		chromedp.Navigate(base+"#/p/0/run/run-1/change/greet"),
		chromedp.Reload(),
		chromedp.WaitVisible(`#change-title[data-change="greet"] .status[data-status="archived"]`),
		chromedp.WaitVisible(`#banner[data-kind="earlier"]`),
	)

	b.WaitFor(`document.querySelector("#agent-log").textContent.includes("fixing the greeting")`)
	// Its events are called so: the Timeline is the page of spans its
	// Activity leads to.
	if heads := b.Eval(`[...document.querySelectorAll("#page h2")].map((h) => h.firstChild.textContent.trim()).join(", ")`); !strings.Contains(heads, "Events") || strings.Contains(heads, "Timeline") {
		t.Errorf("greet's page's headings: %s; want its events under Events, and no second Timeline", heads)
	}
	// Its way to the timeline is run-1's timeline, zoomed to greet.
	b.Do("run-1's timeline of greet", chromedp.Click(`#on-timeline`), chromedp.WaitVisible(`svg#timeline[data-zoom="greet"]`))
	if hash := b.Eval(`location.hash`); hash != "#/p/0/run/run-1/timeline/greet" {
		t.Errorf("greet's link to the timeline leads to %q, not run-1's", hash)
	}
	b.Do("back to run-1's greet", chromedp.NavigateBack(), chromedp.WaitVisible(`#change-title[data-change="greet"]`))
	if streams := b.Eval(`String(app.stream) + " " + String(app.logStream)`); streams != "null null" {
		t.Errorf("an earlier run's page has streams open: %s", streams)
	}

	b.Do("back to the latest run", chromedp.Click(`#back-to-latest`))
	b.WaitFor(`document.querySelector("#banner").hidden`)
	b.WaitFor(`location.hash === "#/p/0/change/greet"`)
	b.Do("the latest run's overview, live",
		chromedp.Click(`#nav a[data-page="overview"]`),
		chromedp.WaitVisible(`#changes tr[data-change="shout"] td.status[data-status="implementing"]`),
	)
	b.WaitFor(`document.querySelector("#live").textContent.startsWith("live")`)

	// A link to run-2, the latest, shows it live.
	b.Do("a link to the latest run", chromedp.Navigate(base+"#/p/0/run/run-2/timeline"), chromedp.Reload())
	b.WaitFor(`location.hash === "#/p/0/timeline"`)
	b.Do("the latest run's timeline", chromedp.WaitVisible(`svg#timeline rect.span[data-change="shout"]`))
	b.WaitFor(`document.querySelector("#live").textContent.startsWith("live") && document.querySelector("#banner").hidden`)
}

// TestBrowserStopped: when the server stops (apply --dashboard's run
// ended), the open page gets the stream's last event: it keeps what it
// shows, says the run ended and how to reopen the dashboard, and does not
// try to reconnect (no "reconnecting…", no console error).
func TestBrowserStopped(t *testing.T) {
	f := newFixture(t)
	release := f.lock()
	f.start()
	s, ts := serveProject(t, f, Project{})
	b := newBrowser(t)
	b.Do("the live run",
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(`#changes tr[data-change="greet"] td.status[data-status="implementing"]`),
	)
	b.WaitFor(`document.querySelector("#live").textContent.startsWith("live")`)

	f.toMerged()
	f.finish()
	release()
	b.Do("the run finished", chromedp.WaitVisible(`#run-state[data-state="finished"]`))
	const reason = "The run ended; this dashboard stopped with its `setctl apply`. `setctl dashboard` reopens it, with every run the journal keeps."
	// The streams let the shutdown finish at once.
	if err := stopDashboard(s, ts, reason); err != nil {
		t.Errorf("the shutdown after Stop: %v", err)
	}
	b.Do("the page of the stopped dashboard", chromedp.WaitVisible(`#banner[data-kind="stopped"]`))
	if banner := b.Text("#banner"); banner != reason {
		t.Errorf("the banner says %q, want %q", banner, reason)
	}
	// It keeps what it showed, and stays quiet.
	time.Sleep(2 * RefreshInterval)
	if live := b.Text("#live"); live != "stopped" {
		t.Errorf("the live mark says %q, want stopped", live)
	}
	if row := b.Text(`#changes tr[data-change="farewell"]`); !strings.Contains(row, "archived") {
		t.Errorf("the page no longer shows the run: farewell's row %q", row)
	}
	if page := b.Text("#page"); strings.Contains(page, "Failed to fetch") {
		t.Errorf("the page shows %q", page)
	}
	b.Shot("stopped.png")

	// Another page, which the dashboard can no longer serve, says why,
	// asks nothing of the stopped server and comes back to what it showed.
	b.Do("the timeline of the stopped dashboard", chromedp.Click(`#nav a[data-page="timeline"]`))
	b.WaitFor(`document.querySelector("#page").dataset.page === "timeline"`)
	if page := b.Text("#page"); !strings.Contains(page, "setctl dashboard") || strings.Contains(page, "Failed to fetch") {
		t.Errorf("the timeline of the stopped dashboard says %q, want why it cannot be shown and how to reopen it", page)
	}
	b.Do("the overview again", chromedp.Click(`#nav a[data-page="overview"]`), chromedp.WaitVisible(`#changes tr[data-change="farewell"]`))
}

// TestBrowserRequirements: the requirements page follows the run: a
// requirement is new while its change is at work, and implemented, with
// its change, commit and test, once the journal says the change reached
// main; the page is not reloaded for it.
func TestBrowserRequirements(t *testing.T) {
	f := newFixture(t)
	f.lock()
	f.start()
	// A stand-in for setctl's: REQ-GREET-01 is implemented once greet is
	// archived; REQ-BYE-01 stays new, planned in farewell.
	rows := func(st *state.State) ([]coverage.Row, error) {
		greet := coverage.Row{ID: "REQ-GREET-01", Title: "Greet by name", Status: spec.New, Capability: "greet", Change: "greet", Why: "greet is " + string(st.Changes["greet"].Status)}
		if st.Changes["greet"].Status == state.Archived {
			greet = coverage.Row{ID: "REQ-GREET-01", Title: "Greet by name", Status: spec.Implemented, Capability: "greet", Change: "greet", Commit: "abcdef0123456789", Tests: []string{"greet_test.go:5"}}
		}
		return []coverage.Row{greet, {ID: "REQ-BYE-01", Title: "Say goodbye", Status: spec.New, Capability: "bye", Change: "farewell", Why: "planned in farewell"}}, nil
	}
	_, ts := serveProject(t, f, Project{Requirements: rows})
	base := ts.URL + "/"
	b := newBrowser(t)
	b.Do("the requirements during the run",
		chromedp.Navigate(base+"#/p/0/requirements"),
		chromedp.WaitVisible(`#requirements tr[data-req="REQ-GREET-01"][data-status="new"]`),
	)
	if row := b.Text(`#requirements tr[data-req="REQ-GREET-01"]`); !strings.Contains(row, "greet is implementing") {
		t.Errorf("REQ-GREET-01's row: %q", row)
	}
	b.Eval(`window.testMarker = "still the same page"`)
	b.Shot("requirements-new.png")

	f.toMerged()
	f.add("greet", journal.ArchivedData{Commit: "abcdef0123456789", Capabilities: []string{"greet"}, ArchiveDir: "openspec/changes/archive/2026-03-04-greet"})
	f.to("greet", state.Merged, state.Archived)
	b.Do("REQ-GREET-01 implemented", chromedp.WaitVisible(`#requirements tr[data-req="REQ-GREET-01"][data-status="implemented"]`))
	if marker := b.Eval(`window.testMarker`); marker != "still the same page" {
		t.Fatalf("the page was reloaded (marker %q)", marker)
	}
	row := b.Text(`#requirements tr[data-req="REQ-GREET-01"]`)
	for _, want := range []string{"greet", "abcdef012345", "greet_test.go:5", "by greet in abcdef012345; tested in greet_test.go:5"} {
		if !strings.Contains(row, want) {
			t.Errorf("REQ-GREET-01's row %q lacks %q", row, want)
		}
	}
	if counts := b.Text("#requirement-counts"); counts != "Requirements: 1 implemented, 1 new" {
		t.Errorf("the counts say %q", counts)
	}
	b.Shot("requirements.png")
}

// misalignedHeaders is JavaScript that names the headers of the table sel
// whose column holds numbers (td.num) but whose text does not end where
// the numbers do; "" when every one does.
func misalignedHeaders(sel string) string {
	return `(() => {
		const right = (e) => { const r = document.createRange(); r.selectNodeContents(e); return r.getBoundingClientRect().right; };
		const ths = [...document.querySelectorAll("` + sel + ` thead th")];
		const tds = [...document.querySelector("` + sel + ` tbody tr").children];
		return ths.filter((th, i) => tds[i] && tds[i].classList.contains("num") && Math.abs(right(th) - right(tds[i])) > 12)
			.map((th) => th.textContent).join(", ");
	})()`
}

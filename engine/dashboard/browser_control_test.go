package dashboard

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/set-engine/set/engine/control"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
)

// TestBrowserControl drives the page's controls in Chromium against a
// run the test plays as an apply would: it takes the requests of
// .set/control.jsonl only when the test lets it, so that the page is seen
// while a request is pending. Start shows the plan first, and Apply runs
// the project's apply, whose output the page shows; Pause on greet's row
// is disabled ("Pausing…") until the apply answered, then greet is paused
// and offers Resume; Resume takes it back, as Pause all and Resume all
// do for every change; Stop asks first, then stops
// the run. (cmd/setctl's TestDashboardControlBrowser runs the same with
// the real setctl, and the refusal of a request without the access
// token's header.)
func TestBrowserControl(t *testing.T) {
	f := newFixture(t)
	_, ts := serveProject(t, f, Project{
		Plan: func(context.Context) (string, error) {
			return "Plan for demo: 2 changes, 2 requirements\n  greet\n  farewell\n", nil
		},
		Apply: &Command{Path: "/bin/sh", Args: []string{"sh", "-c", "echo planning; echo applied"}},
	})
	base := ts.URL + "/"
	b := newBrowser(t)
	button := func(action string) string {
		return `#changes tr[data-change="greet"] button[data-action="` + action + `"]`
	}

	b.Do("the plan, then the apply",
		chromedp.Navigate(base),
		chromedp.Click(`#control button[data-action="preview"]`),
		chromedp.WaitVisible(`#plan-preview`),
	)
	if plan := b.Text(`#plan-preview`); !strings.Contains(plan, "Plan for demo: 2 changes") {
		t.Errorf("the plan preview: %q", plan)
	}
	b.Do("the apply started", chromedp.Click(`#control button[data-action="apply"]`), chromedp.WaitVisible(`#apply-output-card`))
	b.WaitFor(`document.querySelector("#apply-output-card summary").textContent.includes("ended (exit status 0)")`)
	b.WaitFor(`document.querySelector("#apply-output").textContent.includes("applied")`)
	b.Shot("control-started.png")

	// The run: greet at work, and an apply that takes one request each
	// time the test says so.
	release := f.lock()
	f.start()
	take := make(chan func(control.Request))
	r := control.NewReader(f.layout.Control())
	go func() {
		for act := range take {
			for {
				reqs, _ := r.Next()
				if len(reqs) > 0 {
					act(reqs[0])
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}()
	defer close(take)
	answer := func(req control.Request, moved ...string) {
		f.add("", journal.ControlData{Action: req.Action, Change: req.Change, By: req.By, ID: req.ID, Changes: moved})
	}

	b.Do("the live run", chromedp.WaitVisible(button("pause")), chromedp.WaitVisible(`#control button[data-action="stop"]`))
	b.Do("pause asked", chromedp.Click(button("pause")))
	if state := b.Eval(`(() => { const bt = document.querySelector('#changes tr[data-change="greet"] button.control'); return bt.disabled + " " + bt.textContent; })()`); state != "true Pausing…" {
		t.Errorf("greet's button while the pause is pending: %q", state)
	}
	b.Shot("control-pending.png")
	take <- func(req control.Request) {
		if req.Action != control.Pause || req.Change != "greet" || !strings.HasPrefix(req.By, "dashboard (user ") {
			t.Errorf("the page asked %+v", req)
		}
		f.add("greet", journal.AgentIterationData{Iteration: 1, Result: "stopped"})
		f.to("greet", state.Implementing, state.Paused)
		answer(req, "greet")
	}
	b.Do("greet paused", chromedp.WaitVisible(`#changes td.status[data-status="paused"]`), chromedp.WaitVisible(button("resume")+`:not([disabled])`))
	if msg := b.Text(`#control-msg`); msg != "paused: greet" {
		t.Errorf("the page says %q", msg)
	}

	b.Do("resume asked", chromedp.Click(button("resume")))
	take <- func(req control.Request) {
		f.to("greet", state.Paused, state.Implementing)
		answer(req, "greet")
	}
	b.Do("greet resumed", chromedp.WaitVisible(`#changes td.status[data-status="implementing"]`), chromedp.WaitVisible(button("pause")+`:not([disabled])`))

	// The overview is drawn again at every event (greet's age grows), but
	// the Pause button under the pointer stays the same button: a click
	// never lands on one being swapped out.
	b.Eval(`document.querySelector('` + button("pause") + `').testMark = "kept"; ""`)
	seq := b.Eval(`document.querySelector("#live").textContent`)
	f.add("", journal.MonitorHeartbeatData{Active: []string{"greet"}})
	b.WaitFor(`document.querySelector("#live").textContent !== ` + strconv.Quote(seq))
	if mark := b.Eval(`document.querySelector('` + button("pause") + `').testMark || "swapped"`); mark != "kept" {
		t.Errorf("the overview replaced greet's Pause button when it drew the next event")
	}

	// Pause all and Resume all are the requests for every change.
	b.Do("pause all asked", chromedp.Click(`#control button[data-action="pause-all"]`))
	take <- func(req control.Request) {
		if req.Action != control.Pause || req.Change != "" {
			t.Errorf("Pause all asked %+v", req)
		}
		f.to("greet", state.Implementing, state.Paused)
		answer(req, "greet")
	}
	b.Do("all paused", chromedp.WaitVisible(`#changes td.status[data-status="paused"]`), chromedp.WaitVisible(button("resume")+`:not([disabled])`),
		chromedp.WaitVisible(`#control button[data-action="resume-all"]:not([disabled])`))
	b.Do("resume all asked", chromedp.Click(`#control button[data-action="resume-all"]`))
	take <- func(req control.Request) {
		if req.Action != control.Resume || req.Change != "" {
			t.Errorf("Resume all asked %+v", req)
		}
		f.to("greet", state.Paused, state.Implementing)
		answer(req, "greet")
	}
	b.Do("all resumed", chromedp.WaitVisible(`#changes td.status[data-status="implementing"]`), chromedp.WaitVisible(button("pause")+`:not([disabled])`))
	if msg := b.Text(`#control-msg`); msg != "resumed: greet" {
		t.Errorf("the page says %q after Resume all", msg)
	}

	b.Do("stop asked", chromedp.Click(`#control button[data-action="stop"]`), chromedp.WaitVisible(`#control button[data-action="stop-now"]`))
	b.Do("stop confirmed", chromedp.Click(`#control button[data-action="stop-now"]`))
	b.WaitFor(`document.querySelector('#control button[data-action="pause-all"]').disabled`)
	take <- func(req control.Request) {
		if req.Action != control.Stop {
			t.Errorf("the page asked %+v", req)
		}
		answer(req)
		f.add("", journal.RunFinishedData{Result: "interrupted", Statuses: map[string]int{"implementing": 1, "pending": 1}})
		release()
	}
	b.Do("the run stopped", chromedp.WaitVisible(`#run-state[data-state="finished"]`), chromedp.WaitVisible(`#control button[data-action="preview"]`))
	if msg := b.Text(`#control-msg`); !strings.HasPrefix(msg, "the run stops as on Ctrl-C (asked by dashboard (user ") {
		t.Errorf("the page says %q after the stop", msg)
	}
	b.Shot("control-stopped.png")

	b.Do("leaving the page", chromedp.Navigate("about:blank"))
}

// TestBrowserControlStopped: once the dashboard stopped (setctl dashboard
// ended by Ctrl-C while an apply runs), its page offers no control: a
// click could only fail, for nothing answers it any more. The banner says
// why, and the page keeps the run it showed.
func TestBrowserControlStopped(t *testing.T) {
	f := newFixture(t)
	f.lock()
	f.start()
	s, ts := serveProject(t, f, Project{
		Plan:  func(context.Context) (string, error) { return "Plan for demo\n", nil },
		Apply: &Command{Path: "/bin/sh", Args: []string{"sh", "-c", "true"}},
	})
	b := newBrowser(t)
	b.Do("the live run",
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(`#control button[data-action="stop"]`),
		chromedp.WaitVisible(`#changes tr[data-change="greet"] button[data-action="pause"]`),
	)
	stopDashboard(s, ts, "This dashboard stopped: its `setctl dashboard` ended. Run `setctl dashboard` again to reopen it.")
	b.Do("the page of the stopped dashboard", chromedp.WaitVisible(`#banner[data-kind="stopped"]`))
	if buttons := b.Eval(`[...document.querySelectorAll("button.control")].filter((b) => b.offsetParent).map((b) => b.dataset.action).join(" ")`); buttons != "" {
		t.Errorf("the stopped dashboard's page offers %q", buttons)
	}
	if row := b.Text(`#changes tr[data-change="greet"]`); !strings.Contains(row, "implementing") {
		t.Errorf("the page no longer shows the run: greet's row %q", row)
	}
	b.Shot("control-dashboard-stopped.png")
}

// TestBrowserControlStoppedWhileItsApplyRuns: a dashboard stopped while
// the apply its page started still runs: the page stops following the
// apply's output (its server no longer answers), and asks nothing more.
func TestBrowserControlStoppedWhileItsApplyRuns(t *testing.T) {
	f := newFixture(t)
	s, ts := serveProject(t, f, Project{
		Plan:  func(context.Context) (string, error) { return "Plan for demo\n", nil },
		Apply: &Command{Path: "/bin/sh", Args: []string{"sh", "-c", "echo applying; sleep 4"}},
	})
	b := newBrowser(t)
	b.Do("the apply started",
		chromedp.Navigate(ts.URL+"/"),
		chromedp.Click(`#control button[data-action="preview"]`),
		chromedp.WaitVisible(`#plan-preview`),
		chromedp.Click(`#control button[data-action="apply"]`),
		chromedp.WaitVisible(`#apply-output-card`),
	)
	b.WaitFor(`document.querySelector("#apply-output").textContent.includes("applying")`)
	stopDashboard(s, ts, "This dashboard stopped: its `setctl dashboard` ended. Run `setctl dashboard` again to reopen it.")
	b.Do("the page of the stopped dashboard", chromedp.WaitVisible(`#banner[data-kind="stopped"]`))
	// The page followed the output every second: it no longer does (the
	// browser would report each refused request).
	time.Sleep(2500 * time.Millisecond)
}

package dashboard

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserControlFailedApplyStaysOpen: an apply the page started that
// failed (main fails a gate of the baseline, set.cue does not load) shows
// its output open to a page opened after it ended, as it is where the
// page says why.
func TestBrowserControlFailedApplyStaysOpen(t *testing.T) {
	f := newFixture(t)
	_, ts := serveProject(t, f, Project{
		Plan:  func(context.Context) (string, error) { return "Plan for demo: 1 change\n", nil },
		Apply: &Command{Path: "/bin/sh", Args: []string{"sh", "-c", "echo 'setctl apply: main fails gate fmt before any change'; exit 1"}},
	})
	base := ts.URL + "/"
	b := newBrowser(t)
	b.Do("the plan, then the apply",
		chromedp.Navigate(base),
		chromedp.Click(`#control button[data-action="preview"]`),
		chromedp.WaitVisible(`#plan-preview`),
		chromedp.Click(`#control button[data-action="apply"]`),
		chromedp.WaitVisible(`#apply-output-card`),
	)
	b.WaitFor(`document.querySelector("#apply-output-card summary").textContent.includes("ended (exit status 1)")`)
	// Opened afresh, after the apply ended, as by a user who comes back
	// to see how it went.
	b.Do("the page opened again", chromedp.Navigate(base+"#/p/0/overview"), chromedp.Reload(),
		chromedp.WaitVisible(`#apply-output-card`))
	if open := b.Eval(`String(document.querySelector("#apply-output-card").open)`); open != "true" {
		t.Errorf("the failed apply's output is folded away")
	}
	if out := b.Text(`#apply-output`); !strings.Contains(out, "main fails gate fmt") {
		t.Errorf("the failed apply's output: %q", out)
	}
	b.Shot("control-apply-failed.png")
}

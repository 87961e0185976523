package dashboard

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/learn"
	"github.com/set-engine/set/engine/state"
)

// TestBrowserLearnings: the Learnings page, a link of the nav beside
// Runs, shows each adopted learning's standing (where it was adopted,
// its failure's recurrences before and after, removal proposals with
// their reason) and setctl learn's proposals with their evidence; it
// follows the journal: a learning proposed for removal once the
// LearningsFunc says so after new events, without a reload.
func TestBrowserLearnings(t *testing.T) {
	f := newFixture(t)
	f.lock()
	f.start()
	// A stand-in for setctl's: once greet merged, doc-package-comment has
	// been quiet long enough to be proposed for removal.
	var merged atomic.Bool
	learnings := func(events []journal.Event) (Learnings, error) {
		l := testLearnings()
		if merged.Load() {
			l.Report[0].Remove = "its failure has not recurred in 5 runs since its adoption in run-2"
		}
		return l, nil
	}
	_, ts := serveProject(t, f, Project{Learnings: learnings})
	b := newBrowser(t)
	b.Do("the learnings page from the nav",
		chromedp.Navigate(ts.URL+"/#/p/0/runs"),
		chromedp.WaitVisible(`#nav a[data-page="learnings"]`),
		chromedp.Click(`#nav a[data-page="learnings"]`),
		chromedp.WaitVisible(`#adopted tr[data-learning="doc-package-comment"][data-standing="kept"]`),
	)
	if nav := b.Text("#nav"); !strings.Contains(nav, "Runs Learnings") {
		t.Errorf("the nav %q has no Learnings beside Runs", nav)
	}
	row := b.Text(`#adopted tr[data-learning="doc-package-comment"]`)
	for _, want := range []string{"verify gate doc: missing package comment in <file>", "run-2", "kept"} {
		if !strings.Contains(row, want) {
			t.Errorf("doc-package-comment's row %q lacks %q", row, want)
		}
	}
	if before := b.Text(`#adopted tr[data-learning="doc-package-comment"] td.before`); before != "3 changes in 1 run, 3 retries, 12k tokens" {
		t.Errorf("before: %q", before)
	}
	if after := b.Text(`#adopted tr[data-learning="doc-package-comment"] td.after`); after != "none" {
		t.Errorf("after: %q, want none", after)
	}
	if row := b.Text(`#adopted tr[data-learning="plain"]`); !strings.Contains(row, "not measured") {
		t.Errorf("plain's row %q does not say it is not measured", row)
	}
	if removals := b.Text("#removals"); !strings.Contains(removals, "old-rule: its signature matched no failure of the kept runs") || strings.Contains(removals, "doc-package-comment") ||
		!strings.Contains(removals, "a commit deletes each from learnings.cue or set.cue, or turns off one a profile gives with enabled: false") {
		t.Errorf("the removals say %q", removals)
	}
	proposal := b.Text(`#proposals tr[data-proposal="lint-unused-import"]`)
	for _, want := range []string{"convention", "Remove unused imports", "2 changes, 1 run", `run-1 greet round 1: unused import "os"`, `run-1 farewell round 1: unused import "fmt"`} {
		if !strings.Contains(proposal, want) {
			t.Errorf("the proposal's row %q lacks %q", proposal, want)
		}
	}
	b.Eval(`window.testMarker = "still the same page"`)
	b.Shot("learnings.png")

	merged.Store(true)
	f.toMerged()
	f.to("greet", state.Merged, state.Archived)
	b.Do("doc-package-comment proposed for removal", chromedp.WaitVisible(`#adopted tr[data-learning="doc-package-comment"][data-standing="remove?"]`))
	if marker := b.Eval(`window.testMarker`); marker != "still the same page" {
		t.Fatalf("the page was reloaded (marker %q)", marker)
	}
	if removals := b.Text("#removals"); !strings.Contains(removals, "doc-package-comment: its failure has not recurred in 5 runs since its adoption in run-2") {
		t.Errorf("the removals say %q", removals)
	}
}

// TestBrowserLearningsNone: without learnings the page says there is
// nothing adopted and nothing to propose.
func TestBrowserLearningsNone(t *testing.T) {
	f := newFixture(t)
	f.start()
	_, ts := serveProject(t, f, Project{Learnings: func([]journal.Event) (Learnings, error) {
		return Learnings{Proposals: []learn.Proposal{}, Threshold: 2, ExpireAfter: 5}, nil
	}})
	b := newBrowser(t)
	b.Do("the learnings page", chromedp.Navigate(ts.URL+"/#/p/0/learnings"), chromedp.WaitVisible("#no-proposals"))
	if none := b.Text("#no-adopted"); none != "set.cue adopts no learning yet." {
		t.Errorf("no adopted learning: %q", none)
	}
}

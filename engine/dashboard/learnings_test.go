package dashboard

import (
	"errors"
	"reflect"
	"testing"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/learn"
)

// testLearnings is what a stand-in for setctl's LearningsFunc reads: a
// proposal and the standing of two adopted learnings, one proposed for
// removal.
func testLearnings() Learnings {
	return Learnings{
		Proposals: []learn.Proposal{{
			ID: "c0ffee", Name: "lint-unused-import", Kind: "convention", Text: "Remove unused imports: the verify gate lint fails on: unused import <name>",
			Signature: "verify gate lint: unused import <name>", Changes: 2, Runs: 1,
			Evidence: []learn.Evidence{{Run: "run-1", Change: "greet", Round: 1, Line: `unused import "os"`}, {Run: "run-1", Change: "farewell", Round: 1, Line: `unused import "fmt"`}},
		}},
		Report: []learn.Standing{
			{
				Name: "doc-package-comment", Kind: "convention", Signature: "verify gate doc: missing package comment in <file>", Measured: true, Adopted: "run-2",
				Before: learn.Recurrence{Episodes: 3, Runs: 1, Changes: 3, Retries: 3, Tokens: 12000}, After: learn.Recurrence{},
				RunsSince: 1, Quiet: 1, LastSeen: "run-1",
			},
			{
				Name: "old-rule", Kind: "rule", Signature: "verify gate rules: never", Measured: true,
				Remove: "its signature matched no failure of the kept runs",
			},
			{Name: "plain", Kind: "convention"},
		},
		Threshold: 2, ExpireAfter: 5,
	}
}

// TestLearningsEndpoint: the learnings endpoint gives the project's
// LearningsFunc the whole journal and answers what it read; without a
// LearningsFunc, or when it fails, it says why, with empty lists.
func TestLearningsEndpoint(t *testing.T) {
	f := newFixture(t)
	f.start()
	var seen []journal.Event
	learnings := func(events []journal.Event) (Learnings, error) {
		seen = events
		return testLearnings(), nil
	}
	_, ts := serveProject(t, f, Project{Learnings: learnings})
	v := getOK[LearningsView](t, ts, "/api/p/0/learnings?run=run-1")
	if len(seen) == 0 || seen[0].Type != journal.PlanCreated {
		t.Errorf("the LearningsFunc was not given the journal: %d events", len(seen))
	}
	if want := (LearningsView{Learnings: testLearnings()}); !reflect.DeepEqual(v, want) {
		t.Errorf("learnings =\n%+v\nwant\n%+v", v, want)
	}

	for name, p := range map[string]Project{
		"without a LearningsFunc": {},
		"a failing LearningsFunc": {Learnings: func([]journal.Event) (Learnings, error) { return Learnings{}, errors.New("set.cue does not load") }},
	} {
		_, ts := serveProject(t, f, p)
		v := getOK[LearningsView](t, ts, "/api/p/0/learnings")
		if v.Error == "" || v.Proposals == nil || len(v.Proposals) != 0 || v.Report == nil || len(v.Report) != 0 {
			t.Errorf("%s: %+v", name, v)
		}
	}
}

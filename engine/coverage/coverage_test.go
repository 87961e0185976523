package coverage

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/merge"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/spec"
	"github.com/set-engine/set/engine/state"
)

func testPlan() *plan.Plan {
	return &plan.Plan{
		Requirements: []spec.Requirement{
			{ID: "REQ-A-01", Title: "One"}, {ID: "REQ-A-02", Title: "Two"}, {ID: "REQ-A-03", Title: "Three"},
			{ID: "REQ-B-01", Title: "Later"}, {ID: "REQ-B-02", Title: "Gone"}, {ID: "REQ-C-01", Title: "Hand-made"},
		},
		Standings: []spec.Standing{
			{ID: "REQ-A-01", Status: spec.Implemented, Capability: "a"},
			{ID: "REQ-A-02", Status: spec.New, Capability: "a"},
			{ID: "REQ-A-03", Status: spec.Changed, Capability: "a", Differs: []string{"text", "scenarios"}},
			{ID: "REQ-B-01", Status: spec.New, Capability: "b"},
			{ID: "REQ-B-02", Status: spec.Removed, Capability: "b"},
			{ID: "REQ-C-01", Status: spec.Implemented, Capability: "c"},
		},
		Changes:  []plan.Change{{Name: "a", Requirements: []string{"REQ-A-02", "REQ-A-03"}}, {Name: "b", Requirements: []string{"REQ-B-02"}}},
		Deferred: []plan.Deferred{{Requirement: "REQ-B-01", Reason: "next quarter"}},
	}
}

func TestRows(t *testing.T) {
	in := Input{
		Plan: testPlan(),
		Landed: []merge.Landed{
			{Change: "a-again", Commit: "2222222222222222222222222222222222222222", Requirements: []string{"REQ-A-01"}},
			{Change: "a", Commit: "1111111111111111111111111111111111111111", Requirements: []string{"REQ-A-01"}},
		},
		Tests:    map[string][]string{"REQ-A-01": {"a_test.go:3", "a_test.go:9", "b_test.go:1", "c_test.go:2"}},
		Statuses: map[string]state.Status{"a": state.FailedRetryBudget},
	}
	rows := Rows(in)
	want := []Row{
		{ID: "REQ-A-01", Title: "One", Status: spec.Implemented, Capability: "a", Change: "a-again", Commit: "2222222222222222222222222222222222222222", Tests: in.Tests["REQ-A-01"]},
		{ID: "REQ-A-02", Title: "Two", Status: spec.New, Capability: "a", Change: "a", Why: "a is failed:retry_budget_exhausted", Uncovered: true},
		{ID: "REQ-A-03", Title: "Three", Status: spec.Changed, Capability: "a", Change: "a", Why: "its text and scenarios changed; a is failed:retry_budget_exhausted", Uncovered: true},
		{ID: "REQ-B-01", Title: "Later", Status: spec.New, Capability: "b", Why: "deferred: next quarter"},
		{ID: "REQ-B-02", Title: "Gone", Status: spec.Removed, Capability: "b", Change: "b", Why: "planned in b"},
		{ID: "REQ-C-01", Title: "Hand-made", Status: spec.Implemented, Capability: "c"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("Rows (-want +got):\n%s", diff)
	}

	var b strings.Builder
	if err := Text(&b, rows); err != nil {
		t.Fatal(err)
	}
	wantText := `Requirements: 2 implemented, 2 new, 1 changed, 1 removed
  REQ-A-01  implemented  by a-again in 222222222222; tested in a_test.go:3, a_test.go:9, b_test.go:1 and 1 more
  REQ-A-02  new          a is failed:retry_budget_exhausted
  REQ-A-03  changed      its text and scenarios changed; a is failed:retry_budget_exhausted
  REQ-B-01  new          deferred: next quarter
  REQ-B-02  removed      planned in b
  REQ-C-01  implemented  not credited to a change on main; no test names it
Uncovered: REQ-A-02 and REQ-A-03, whose change failed for good. A new ` + "`setctl apply`" + ` retries them; with planner.replan: "auto" a run asks the planner for new changes.
`
	if diff := cmp.Diff(wantText, b.String()); diff != "" {
		t.Errorf("Text (-want +got):\n%s", diff)
	}

	b.Reset()
	if err := Markdown(&b, rows); err != nil {
		t.Fatal(err)
	}
	wantMarkdown := `#### Requirements: 2 implemented, 2 new, 1 changed, 1 removed

| Requirement | Title | Status | |
|---|---|---|---|
| REQ-A-01 | One | implemented | by a-again in 222222222222; tested in a\_test.go:3, a\_test.go:9, b\_test.go:1 and 1 more |
| REQ-A-02 | Two | new | a is failed:retry\_budget\_exhausted |
| REQ-A-03 | Three | changed | its text and scenarios changed; a is failed:retry\_budget\_exhausted |
| REQ-B-01 | Later | new | deferred: next quarter |
| REQ-B-02 | Gone | removed | planned in b |
| REQ-C-01 | Hand-made | implemented | not credited to a change on main; no test names it |

Uncovered: REQ-A-02 and REQ-A-03, whose change failed for good. A new \` + "`setctl apply\\`" + ` retries them; with planner.replan: "auto" a run asks the planner for new changes.
`
	if diff := cmp.Diff(wantMarkdown, b.String()); diff != "" {
		t.Errorf("Markdown (-want +got):\n%s", diff)
	}
}

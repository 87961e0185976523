package orchestrator

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/state"
)

// replanned is the REPLANNED events of the fixture's journal.
func (f *fixture) replanned() []journal.ReplannedData {
	var out []journal.ReplannedData
	for _, e := range f.events() {
		if e.Type == journal.Replanned {
			d, err := journal.Decode[journal.ReplannedData](e)
			if err != nil {
				f.t.Fatal(err)
			}
			out = append(out, d)
		}
	}
	return out
}

// A change that fails for good, and its dependent blocked by it, leave
// their requirements uncovered; the replan asks for them, its new changes
// (one renamed, as the run used its name) replace the dropped ones, run,
// and merge.
func TestReplanCoversFailedRequirements(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.project.Budgets.Retries.Verify = 0
	f.project.Planner.MaxReplanCycles = 2
	f.change("ok")
	f.change("flaky")
	f.change("after", "flaky")
	var asked []ReplanRequest
	f.replan = func(_ context.Context, req ReplanRequest) ([]plan.Change, error) {
		asked = append(asked, req)
		return []plan.Change{
			{Name: "flaky", Type: "feature", Size: "S", Requirements: []string{"REQ-FLAKY-01"}, Description: "again"},
			{Name: "after-again", Type: "feature", Size: "S", Requirements: []string{"REQ-AFTER-01"}, DependsOn: []string{"flaky", "ok"}},
		}, nil
	}
	a := f.agentScript(`if [ "$change" = flaky ]; then echo "bad $change" > "$change.txt"; else echo "good $change" > "$change.txt"; fi` + "\n")
	f.applySucceeds(a)
	if len(asked) != 1 || asked[0].Cycle != 1 || !slices.Equal(asked[0].Dropped, []string{"flaky", "after"}) ||
		len(asked[0].Uncovered) != 2 || asked[0].Uncovered[0].ID != "REQ-FLAKY-01" || asked[0].Uncovered[1].ID != "REQ-AFTER-01" {
		t.Fatalf("asked %+v", asked)
	}
	want := journal.ReplannedData{Cycle: 1, Uncovered: []string{"REQ-FLAKY-01", "REQ-AFTER-01"},
		Dropped: []string{"flaky", "after"}, Added: []string{"flaky-2", "after-again"}}
	if got := f.replanned(); len(got) != 1 || !equalReplanned(got[0], want) {
		t.Fatalf("REPLANNED %+v\nwant %+v", got, want)
	}
	st := f.state()
	for name, s := range map[string]state.Status{"ok": state.Archived, "flaky-2": state.Archived, "after-again": state.Archived,
		"flaky": state.FailedRetryBudget, "after": state.DepBlocked} {
		if c := st.Changes[name]; c == nil || c.Status != s {
			t.Errorf("%s: %+v, want %s", name, c, s)
		}
	}
	if got := f.git("show", "main:flaky-2.txt"); got != "good flaky-2" {
		t.Errorf("main:flaky-2.txt = %q", got)
	}
	if st.Replans != 1 {
		t.Errorf("state counts %d replans", st.Replans)
	}
}

// Replans stop after maxReplanCycles; a planner that fails ends them with
// its reason journaled; the run ends failed either way.
func TestReplanBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: replans until maxReplanCycles is spent, and a failing planner; TestReplanCoversFailedRequirements covers replanning")
	}
	t.Parallel()
	for _, tc := range []struct {
		name   string
		replan ReplanFunc
		want   []string // each REPLANNED's error, "" for one that added changes
	}{
		{"cycles", func(_ context.Context, req ReplanRequest) ([]plan.Change, error) {
			return []plan.Change{{Name: "flaky", Type: "feature", Size: "S", Requirements: []string{"REQ-FLAKY-01"}}}, nil
		}, []string{""}},
		{"planner error", func(context.Context, ReplanRequest) ([]plan.Change, error) {
			return nil, errors.New("plan call failed on every model of its route")
		}, []string{"plan call failed on every model of its route"}},
		{"invalid plan", func(context.Context, ReplanRequest) ([]plan.Change, error) {
			return []plan.Change{{Name: "other", Type: "feature", Size: "S", Requirements: []string{"REQ-OK-01"}}}, nil
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.project.Budgets.Retries.Verify = 0
			f.project.Planner.MaxReplanCycles = 1
			f.change("ok")
			f.change("flaky")
			f.replan = tc.replan
			sum, err := f.apply(context.Background(), f.agentScript(`test "$change" = ok && echo "good $change" > "$change.txt" || echo "bad $change" > "$change.txt"`+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if sum.Result != "failed" {
				t.Fatalf("result %s: %v", sum.Result, sum.Statuses)
			}
			got := f.replanned()
			if len(got) != 1 {
				t.Fatalf("REPLANNED %+v", got)
			}
			if tc.want != nil && got[0].Error != tc.want[0] {
				t.Errorf("error %q, want %q", got[0].Error, tc.want[0])
			}
			if tc.want == nil && got[0].Error == "" {
				t.Errorf("an invalid plan was taken: %+v", got[0])
			}
		})
	}
}

func equalReplanned(a, b journal.ReplannedData) bool {
	return a.Cycle == b.Cycle && slices.Equal(a.Uncovered, b.Uncovered) && slices.Equal(a.Dropped, b.Dropped) &&
		slices.Equal(a.Added, b.Added) && a.Error == b.Error
}

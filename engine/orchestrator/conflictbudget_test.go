package orchestrator

import (
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
	"github.com/set-engine/set/internal/profiletest"
)

// defaultBudgets are the budgets of a project that sets none: the
// schema's defaults (schema/run.cue #Budgets).
func defaultBudgets(t *testing.T) config.Budgets {
	t.Helper()
	return profiletest.Load(t, "golang", "").Budgets
}

// TestFourAppendersAllMerge: four changes, dispatched together from the
// same main, each append one line to the same file. Each one that
// integrates after another conflicts with it (the last three times), its
// agent resolves the markers, and all four reach main, with the default
// budgets, main linear, one commit each; a conflict spends neither the
// verify nor the integration budget.
func TestFourAppendersAllMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: four changes conflicting in turn; TestConflictResolvedByAgent and TestAppendOnlyFileMergesWithoutTheAgent cover conflicts")
	}
	t.Parallel()
	f := newFixture(t)
	f.project.MaxParallel = 4 // all four start from the same main
	f.project.Budgets.Retries = defaultBudgets(t).Retries
	names := []string{"alpha", "bravo", "charlie", "delta"}
	for _, n := range names {
		f.change(n)
	}
	a := f.agentScript(`
if git rev-parse -q --verify MERGE_HEAD >/dev/null; then
	# A conflict: keep both sides.
	sed -i -e '/^<<<<<<< /d' -e '/^=======$/d' -e '/^>>>>>>> /d' notes.txt
	exit 0
fi
echo "appended by $change" >> notes.txt
`)
	sum, err := f.apply(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	ev := f.events()
	merged := 0
	for _, n := range names {
		if sum.Statuses[n] == state.Archived {
			merged++
		}
	}
	if merged != len(names) {
		for _, e := range ev {
			if e.Type == journal.RetryScheduled || e.Type == journal.BudgetExceeded || e.Type == journal.ChangeIntegrationFailed {
				t.Logf("%s %s %s", e.Type, e.Change, e.Data)
			}
		}
		t.Fatalf("%d of %d changes reached main: %v", merged, len(names), sum.Statuses)
	}
	notes := f.git("show", "main:notes.txt")
	for _, n := range names {
		if !strings.Contains(notes, "appended by "+n) {
			t.Errorf("main:notes.txt lacks %s's line:\n%s", n, notes)
		}
	}
	if merges := f.git("rev-list", "--merges", "--count", "main"); merges != "0" {
		t.Errorf("main has %s merge commits; want a linear history", merges)
	}
	if n := f.git("rev-list", "--count", "main"); n != "5" {
		t.Errorf("main has %s commits, want 5 (the initial one and one per change)", n)
	}
	// The conflicts went back to the agents as conflicts: each one that
	// integrated after another conflicted at least once, none spent a
	// verify or an integration retry.
	st := f.state()
	conflicts := 0
	for _, n := range names {
		c := st.Changes[n]
		if c.VerifyAttempts != 0 || c.IntegrationAttempts != 0 {
			t.Errorf("%s spent %d verify and %d integration retries on conflicts", n, c.VerifyAttempts, c.IntegrationAttempts)
		}
		conflicts += c.ConflictAttempts
		t.Logf("%s: %d conflicts", n, c.ConflictAttempts)
	}
	if conflicts < len(names)-1 {
		t.Errorf("%d conflicts in all, want at least %d", conflicts, len(names)-1)
	}
	// Each conflict's retry context names the change that reached main
	// last, with its requirement, as the work it conflicts with.
	last := ""
	for _, e := range ev {
		switch e.Type {
		case journal.Merged:
			last = e.Change
		case journal.ChangeIntegrationFailed:
			d, _ := journal.Decode[journal.ChangeIntegrationFailedData](e)
			id := "REQ-" + strings.ToUpper(last) + "-01"
			if want := "\n- " + last + " (" + id + " " + last + ") changed notes.txt\n"; !strings.Contains(d.RetryContext, want) {
				t.Errorf("%s's conflict does not name %s (%q):\n%s", e.Change, last, want, d.RetryContext)
			}
		}
	}
	for _, e := range ev {
		if e.Type == journal.RetryScheduled {
			if d, _ := journal.Decode[journal.RetryScheduledData](e); d.Stage != state.StageConflict || d.Budget != f.project.Budgets.Retries.Conflicts {
				t.Errorf("%s: RETRY_SCHEDULED %+v, want stage conflict, budget %d", e.Change, d, f.project.Budgets.Retries.Conflicts)
			}
		}
	}
}

// TestConflictBudgetSpent: a change whose conflicts bound is spent fails
// with the conflicts budget named, and its integration budget untouched.
func TestConflictBudgetSpent(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a change conflicting until its bound is spent; TestConflictResolvedByAgent covers conflicts")
	}
	t.Parallel()
	f := newFixture(t)
	f.project.MaxParallel = 2 // both start from the same main
	f.project.Budgets.Retries.Conflicts = 0
	f.change("left")
	f.change("right")
	a := f.agentScript(`sed -i "s/^line 2$/line 2 ($change)/" notes.txt` + "\n")
	sum := f.applyEnds(t.Context(), a, "failed")
	var second string
	var exceeded journal.BudgetExceededData
	for _, e := range f.events() {
		if e.Type == journal.BudgetExceeded {
			second = e.Change
			exceeded, _ = journal.Decode[journal.BudgetExceededData](e)
		}
	}
	want := journal.BudgetExceededData{Budget: "conflicts", Used: 0, Limit: 0, Field: "budgets.retries.conflicts"}
	if second == "" || exceeded != want {
		t.Fatalf("BUDGET_EXCEEDED of %q = %+v, want %+v", second, exceeded, want)
	}
	c := f.state().Changes[second]
	if sum.Statuses[second] != state.FailedRetryBudget || c.Error != "merging main conflicted with its retry budget spent (budgets.retries.conflicts: 0)" {
		t.Errorf("%s: %s, %q", second, sum.Statuses[second], c.Error)
	}
	if c.IntegrationAttempts != 0 || count(f.events(), journal.RetryScheduled, second) != 0 {
		t.Errorf("%s spent %d integration retries", second, c.IntegrationAttempts)
	}
}

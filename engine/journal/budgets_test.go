package journal

import "testing"

// Retries maps each retry stage to its own budget, and an unknown stage,
// or no budgets recorded, to 0.
func TestBudgetsRetries(t *testing.T) {
	b := &Budgets{RetriesVerify: 3, RetriesIntegration: 2, RetriesConflicts: 6}
	for stage, want := range map[string]int{StageVerify: 3, StageIntegration: 2, StageConflict: 6, "deploy": 0, "": 0} {
		if got := b.Retries(stage); got != want {
			t.Errorf("Retries(%q) = %d, want %d", stage, got, want)
		}
	}
	if got := (*Budgets)(nil).Retries(StageVerify); got != 0 {
		t.Errorf("nil budgets: Retries = %d, want 0", got)
	}
}

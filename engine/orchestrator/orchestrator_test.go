package orchestrator

import (
	"context"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
)

// TestRetryThenPass: the first iteration writes content the gate rejects;
// the retry fixes it; every change merges, main moves linearly.
func TestRetryThenPass(t *testing.T) {
	f := newFixture(t)
	f.change("alpha")
	f.change("beta", "alpha")
	a := f.agentScript(`
if [ "$change" = alpha ] && [ "$iteration" = 1 ]; then echo bad > alpha.txt; else echo "good $iteration" > "$change.txt"; fi
echo "test for REQ" > "${change}_test.txt"
`)
	sum, err := f.apply(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Result != "success" {
		t.Fatalf("result = %s, statuses %v", sum.Result, sum.Statuses)
	}
	ev := f.events()
	if n := count(ev, journal.RetryScheduled, "alpha"); n != 1 {
		t.Errorf("alpha retries = %d, want 1", n)
	}
	if n := count(ev, journal.Merged, "alpha") + count(ev, journal.Merged, "beta"); n != 2 {
		t.Errorf("merges = %d, want 2", n)
	}
	// History of main is linear: no merge commit has two parents on main's
	// first-parent line that is not a fast-forward... simply: main contains both files.
	for _, file := range []string{"alpha.txt", "beta.txt"} {
		if out := f.git("show", "main:"+file); !strings.HasPrefix(out, "good") {
			t.Errorf("main:%s = %q", file, out)
		}
	}
	if st := f.state(); st.Changes["alpha"].Status != state.Archived {
		t.Errorf("alpha = %s", st.Changes["alpha"].Status)
	}
}

// TestBudgetExhaustedBlocksDependents: a change that never passes fails
// with its budget spent; its dependent is dep-blocked; an independent
// sibling still merges.
func TestBudgetExhaustedBlocksDependents(t *testing.T) {
	f := newFixture(t)
	f.change("broken")
	f.change("after-broken", "broken")
	f.change("sibling")
	a := f.agentScript(`
if [ "$change" = broken ]; then echo "bad $iteration" > broken.txt; else echo good > "$change.txt"; fi
`)
	sum, err := f.apply(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]state.Status{
		"broken":       state.FailedRetryBudget,
		"after-broken": state.DepBlocked,
		"sibling":      state.Archived,
	}
	for name, s := range want {
		if sum.Statuses[name] != s {
			t.Errorf("%s = %s, want %s", name, sum.Statuses[name], s)
		}
	}
	if sum.Result != "failed" {
		t.Errorf("result = %s", sum.Result)
	}
	if n := count(f.events(), journal.RetryScheduled, "broken"); n != 2 {
		t.Errorf("broken retries = %d, want the budget of 2", n)
	}
}

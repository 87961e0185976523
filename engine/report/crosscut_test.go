package report

import (
	"slices"
	"testing"
	"time"

	"github.com/set-engine/set/engine/state"
)

// A pending change that a change at work holds back, because both may
// touch a crossCutting file, waits for that change, not for a slot;
// whichever of the two is at work holds the other.
func TestWaitingForACrossCuttingChange(t *testing.T) {
	s := state.New()
	s.Run, s.MaxParallel = "r", 4
	s.CrossCutting = []string{"internal/routes.go"}
	add := func(name string, st state.Status, scope ...string) {
		s.Changes[name] = &state.Change{Name: name, Status: st, Since: time.Now(), Scope: scope}
		s.Order = append(s.Order, name)
	}
	add("alpha", state.Pending, "internal/alpha/**", "internal/routes.go")
	add("bravo", state.Verifying, "internal/**")
	add("charlie", state.Pending, "web/**")
	add("delta", state.Pending) // no scope: any file
	for name, want := range map[string]string{
		"alpha":   "bravo to merge or fail: both touch internal/routes.go",
		"charlie": "a free slot: 1 change at work, at most 4 at once",
		"delta":   "bravo to merge or fail: both touch internal/routes.go",
	} {
		if got := Waiting(s, s.Changes[name], Running); got != want {
			t.Errorf("%s waits for %q, want %q", name, got, want)
		}
	}
	s.Changes["bravo"].Status = state.Archived
	if got, want := Waiting(s, s.Changes["alpha"], Running), "a free slot: 0 changes at work, at most 4 at once"; got != want {
		t.Errorf("alpha, once bravo is on main: %q, want %q", got, want)
	}
}

// A change held by two changes at work is said to wait for the one
// dispatch names: its own waits first, in the graph's dispatch order
// (priority, then name), not in the order the state lists the changes.
func TestWaitingNamesTheHolderDispatchNames(t *testing.T) {
	s := state.New()
	s.Run, s.MaxParallel = "r", 4
	s.CrossCutting = []string{"routes.go"}
	for _, c := range []struct {
		name string
		st   state.Status
	}{{"zulu", state.Verifying}, {"yankee", state.Pending}, {"xray", state.Implementing}} {
		s.Changes[c.name] = &state.Change{Name: c.name, Status: c.st, Since: time.Now(), Scope: []string{"routes.go"}}
		s.Order = append(s.Order, c.name)
	}
	s.Plan.Changes = slices.Clone(s.Order)
	// Dispatch order: xray, yankee, zulu; yankee waits for xray.
	if got, want := Waiting(s, s.Changes["yankee"], Running), "xray to merge or fail: both touch routes.go"; got != want {
		t.Errorf("yankee waits for %q, want %q", got, want)
	}
}

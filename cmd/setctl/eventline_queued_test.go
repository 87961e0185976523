package main

import (
	"testing"
	"time"

	"github.com/set-engine/set/engine/journal"
)

// TestEventLineQueuedAgainSaysWhy: a change taken back into the merge
// queue says why, whether its push was refused (integrating) or its pull
// request came to conflict with a main that moved (in review); a change
// queued once verified is routine.
func TestEventLineQueuedAgainSaysWhy(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		d    journal.StateChangeData
		want string
	}{
		{journal.StateChangeData{From: "verifying", To: "queued"}, "queued"},
		{journal.StateChangeData{From: "integrating", To: "queued", Reason: "origin's main moved to abc (someone else pushed); integrated again onto it"},
			"queued again: origin's main moved to abc (someone else pushed); integrated again onto it"},
		{journal.StateChangeData{From: "in-review", To: "queued", Reason: "pull request #2 conflicts with main, which moved; integrated again onto it"},
			"queued again: pull request #2 conflicts with main, which moved; integrated again onto it"},
	} {
		l := describeEvent(testEvent(t, 1, t0, "alpha", tc.d), "main", newPalette(false))
		if l.text != tc.want || !l.shown {
			t.Errorf("%s → %s: %q (shown %v), want %q shown", tc.d.From, tc.d.To, l.text, l.shown, tc.want)
		}
	}
}

package orchestrator

import (
	"testing"
	"time"
)

// A run that starts within the second the run before it started in takes
// the next second as its ID: two runs never share one, or the journal
// would read them as one run.
func TestNewRunID(t *testing.T) {
	at := time.Date(2026, 11, 27, 8, 6, 13, 400_000_000, time.UTC)
	for _, c := range []struct {
		now  time.Time
		last string
		want string
	}{
		{at, "", "20261127T080613Z"},
		{at, "20261127T080559Z", "20261127T080613Z"},
		{at, "20261127T080613Z", "20261127T080614Z"},
		{at, "20261127T080620Z", "20261127T080621Z"}, // a clock set back
		{at.In(time.FixedZone("CET", 3600)), "", "20261127T080613Z"},
		{at, "not-a-time", "20261127T080613Z"},
	} {
		if got := newRunID(c.now, c.last); got != c.want {
			t.Errorf("newRunID(%s, %q) = %s, want %s", c.now, c.last, got, c.want)
		}
	}
}

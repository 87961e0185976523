package state

import (
	"fmt"
	"strings"
)

// Save writes s to path (state.json) atomically, as indented JSON: a reader
// sees the previous snapshot or this one, never a mix. The snapshot is a
// cache of the journal; deleting it loses nothing (Read).
func Save(path string, s *State) error {
	data, err := Encode(s)
	if err != nil {
		return err
	}
	return WriteEncoded(path, data)
}

// Lifecycle renders the lifecycle, one line per status in Statuses order:
// "<status> → <status>, <status>"; a status that goes nowhere is
// "<status> (final)", or "<status> (unreachable)" when nothing goes to it
// either.
func Lifecycle() string {
	reachable := map[Status]bool{Pending: true} // where a change starts
	for _, next := range transitions {
		for _, n := range next {
			reachable[n] = true
		}
	}
	var b strings.Builder
	for _, s := range Statuses() {
		next := transitions[s]
		if len(next) == 0 {
			end := "final"
			if !reachable[s] {
				end = "unreachable"
			}
			fmt.Fprintf(&b, "%s (%s)\n", s, end)
			continue
		}
		names := make([]string, len(next))
		for i, n := range next {
			names[i] = string(n)
		}
		fmt.Fprintf(&b, "%s → %s\n", s, strings.Join(names, ", "))
	}
	return b.String()
}

package learn

import (
	"cmp"
	"slices"
)

// Scattered is a gate that failed enough changes or runs to be proposed,
// but on lines of their own, so that none of its signatures recurred (a
// line that names a function, a type or a test): setctl learn proposes
// nothing for it, and says so beside its proposals. Changes and Runs
// count the distinct ones its episodes are in; Example is its first
// episode (by run, change and event).
type Scattered struct {
	Stage, Gate   string
	Changes, Runs int
	Example       Episode
}

// ScatteredGates is the scattered gates of eps, ordered by stage and
// gate. A gate with a signature that recurred in threshold changes or
// runs is none, whether it is proposed or a learning answers it.
func ScatteredGates(eps []Episode, threshold int) []Scattered {
	threshold = max(threshold, 1)
	recurred := map[string]bool{}
	for _, p := range Propose(eps, threshold, nil) {
		recurred[p.Signature] = true
	}
	byGate := map[[2]string][]Episode{}
	for _, ep := range eps {
		if ep.Kind == EpisodeGate {
			k := [2]string{ep.Stage, ep.Gate}
			byGate[k] = append(byGate[k], ep)
		}
	}
	var out []Scattered
	for k, g := range byGate {
		if slices.ContainsFunc(g, func(ep Episode) bool { return recurred[ep.Signature] }) {
			continue
		}
		changes, runs := map[string]bool{}, map[string]bool{}
		for _, ep := range g {
			changes[ep.Change], runs[ep.Run] = true, true
		}
		if len(changes) < threshold && len(runs) < threshold {
			continue
		}
		first := slices.MinFunc(g, func(a, b Episode) int {
			return cmp.Or(cmp.Compare(a.Run, b.Run), cmp.Compare(a.Change, b.Change), cmp.Compare(a.Seq, b.Seq))
		})
		out = append(out, Scattered{Stage: k[0], Gate: k[1], Changes: len(changes), Runs: len(runs), Example: first})
	}
	slices.SortFunc(out, func(a, b Scattered) int {
		return cmp.Or(cmp.Compare(a.Stage, b.Stage), cmp.Compare(a.Gate, b.Gate))
	})
	return out
}

// CutLine is line at most max bytes long: a longer one is cut at a rune's
// start and ends in "…" (which the max includes).
func CutLine(line string, max int) string {
	if len(line) <= max {
		return line
	}
	cut := max - len("…")
	for cut > 0 && !utf8Start(line[cut]) {
		cut--
	}
	return line[:cut] + "…"
}

// utf8Start reports whether b starts a UTF-8 encoded rune.
func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/learn"
	"github.com/set-engine/set/engine/markdown"
)

// scatteredGate is a gate that failed enough changes or runs to be
// proposed, but on lines of their own, so that none of its signatures
// recurred (a line that names a function, a type or a test): setctl
// learn proposes nothing for it, and says so beside its proposals.
// Changes and Runs count the distinct ones its episodes are in; Example
// is its first episode.
type scatteredGate struct {
	Stage, Gate   string
	Changes, Runs int
	Example       learn.Episode
}

// scatteredGates is the scattered gates of the episodes, by stage and
// gate. A gate with a signature that recurred in threshold changes or
// runs is none, whether it is proposed or a learning answers it.
func scatteredGates(eps []learn.Episode, threshold int) []scatteredGate {
	threshold = max(threshold, 1)
	recurred := map[string]bool{}
	for _, p := range learn.Propose(eps, threshold, nil) {
		recurred[p.Signature] = true
	}
	byGate := map[[2]string][]learn.Episode{}
	for _, ep := range eps {
		if ep.Kind == learn.EpisodeGate {
			k := [2]string{ep.Stage, ep.Gate}
			byGate[k] = append(byGate[k], ep)
		}
	}
	var out []scatteredGate
	for k, g := range byGate {
		if slices.ContainsFunc(g, func(ep learn.Episode) bool { return recurred[ep.Signature] }) {
			continue
		}
		changes, runs := map[string]bool{}, map[string]bool{}
		for _, ep := range g {
			changes[ep.Change], runs[ep.Run] = true, true
		}
		if len(changes) < threshold && len(runs) < threshold {
			continue
		}
		first := slices.MinFunc(g, func(a, b learn.Episode) int {
			return cmp.Or(cmp.Compare(a.Run, b.Run), cmp.Compare(a.Change, b.Change), cmp.Compare(a.Seq, b.Seq))
		})
		out = append(out, scatteredGate{Stage: k[0], Gate: k[1], Changes: len(changes), Runs: len(runs), Example: first})
	}
	slices.SortFunc(out, func(a, b scatteredGate) int {
		return cmp.Or(cmp.Compare(a.Stage, b.Stage), cmp.Compare(a.Gate, b.Gate))
	})
	return out
}

// writeScattered says, for each scattered gate, why its failures were
// not proposed and how to make them one failure.
func writeScattered(w io.Writer, gates []scatteredGate) {
	for _, g := range gates {
		fmt.Fprintf(w, "The %s gate %s failed %s in %s, each on a line of its own (%s round %d: %s): lines that differ, in a name or a message, are different failures to setctl learn. If they are one failure, give the gate a failures pattern that captures only what they share: setctl learn groups them by it, those of the kept runs too (docs/learnings.md#proposals).\n",
			g.Stage, g.Gate, english.Plural(g.Changes, "change"), english.Plural(g.Runs, "run"), g.Example.Change, g.Example.Round, quoteLine(g.Example.Line))
	}
}

// quoteLine is line as one code span, cut at 160 bytes.
func quoteLine(line string) string {
	if len(line) > 160 {
		line = strings.ToValidUTF8(line[:160], "") + "…"
	}
	return markdown.Code(line)
}

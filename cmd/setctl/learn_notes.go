package main

import (
	"fmt"
	"io"

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/learn"
	"github.com/set-engine/set/engine/markdown"
)

// writeScattered says, for each scattered gate, why its failures were
// not proposed and how to make them one failure.
func writeScattered(w io.Writer, gates []learn.Scattered) {
	for _, g := range gates {
		fmt.Fprintf(w, "The %s gate %s failed %s in %s, each on a line of its own (%s round %d: %s): lines that differ, in a name or a message, are different failures to setctl learn. If they are one failure, give the gate a failures pattern that captures only what they share: setctl learn groups them by it, those of the kept runs too (docs/learnings.md#proposals).\n",
			g.Stage, g.Gate, english.Plural(g.Changes, "change"), english.Plural(g.Runs, "run"), g.Example.Change, g.Example.Round, quoteLine(g.Example.Line))
	}
}

// quoteLine is line as one code span, cut at 160 bytes.
func quoteLine(line string) string {
	return markdown.Code(learn.CutLine(line, 160))
}

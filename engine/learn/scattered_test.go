package learn

import (
	"strings"
	"testing"
)

// TestScatteredGates: a gate that failed two changes, each on a line of
// its own, is scattered, with its first episode as the example; one
// whose line recurred is not, nor is one that failed a single change.
func TestScatteredGates(t *testing.T) {
	ep := func(run, change, gate, line string, seq int64) Episode {
		return Episode{Kind: EpisodeGate, Stage: "verify", Gate: gate, Run: run, Change: change, Seq: seq, Line: line,
			Signature: GateSignature("verify", gate, Normalise(line))}
	}
	eps := []Episode{
		ep("run-1", "percent", "doc", "exported func Percent has no doc comment", 4),
		ep("run-1", "bits", "doc", "exported func Bits has no doc comment", 2),
		ep("run-1", "bits", "header", "every file needs a header comment", 3),
		ep("run-1", "percent", "header", "every file needs a header comment", 5),
		ep("run-1", "bits", "lint", "line too long", 6),
	}
	got := ScatteredGates(eps, 2)
	if len(got) != 1 || got[0].Gate != "doc" || got[0].Changes != 2 || got[0].Runs != 1 || got[0].Example.Change != "bits" {
		t.Errorf("ScatteredGates = %+v, want the doc gate of 2 changes, bits its example", got)
	}
}

// TestCutLine: a line longer than max is cut at a rune's start, "…"
// included in max.
func TestCutLine(t *testing.T) {
	if got := CutLine("short", 10); got != "short" {
		t.Errorf("CutLine(short) = %q", got)
	}
	long := strings.Repeat("é", 10) // 20 bytes
	got := CutLine(long, 10)
	if len(got) > 10 || got != "ééé…" {
		t.Errorf("CutLine = %q (%d bytes), want ééé… within 10 bytes (… is 3)", got, len(got))
	}
}

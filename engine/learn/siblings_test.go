package learn

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/journal"
)

func passed(gate string, attempt int) journal.VerifyGateData {
	return journal.VerifyGateData{Stage: "verify", Gate: gate, Kind: "exec", Result: "pass", Attempt: attempt}
}

func lintFailed(line string, attempt int) journal.VerifyGateData {
	return journal.VerifyGateData{Stage: "verify", Gate: "lint", Kind: "exec", Result: "fail", Attempt: attempt, Failures: []string{line}}
}

// siblingsJournal: in run-1, greet and part each fail the doc gate on
// the same line and fix it (part later), shout fails lint and fixes it,
// open fails lint and has not fixed it, and me (the change asking) fixed
// a doc failure of its own; run-0 had an episode of its own.
func siblingsJournal(t *testing.T) []journal.Event {
	return journalOf(t, []step{
		{"run-0", "old", journal.DispatchData{Base: "b0"}},
		{"run-0", "old", lintFailed("old.go: exported Old should have comment", 1)},
		{"run-0", "old", passed("lint", 2)},
		{"run-1", "", journal.RunStartedData{Changes: []string{"greet", "part", "shout", "open", "me"}}},
		{"run-1", "greet", journal.DispatchData{Base: "b1"}},
		{"run-1", "part", journal.DispatchData{Base: "b1"}},
		{"run-1", "me", journal.DispatchData{Base: "b1"}},
		{"run-1", "greet", iteration(1, "g1", 10)},
		{"run-1", "greet", docFailed("greet", 1)},
		{"run-1", "greet", journal.RetryScheduledData{Stage: "verify", Attempt: 1}},
		{"run-1", "me", docFailed("me", 1)},
		{"run-1", "part", docFailed("part", 1)},
		{"run-1", "greet", iteration(2, "g2", 10)},
		{"run-1", "greet", passed("doc", 2)},
		{"run-1", "shout", lintFailed("shout.go:3:1: exported function Shout should have comment", 1)},
		{"run-1", "open", lintFailed("open.go:9:1: exported function Open should have comment", 1)},
		{"run-1", "shout", passed("lint", 2)},
		{"run-1", "part", journal.RetryScheduledData{Stage: "verify", Attempt: 1}},
		{"run-1", "part", journal.MergeQueuedData{Head: "p2"}},
		{"run-1", "me", passed("doc", 2)},
		{"run-1", "greet", journal.MergedData{Commit: "m1", Attempt: 1}},
	})
}

func TestSiblings(t *testing.T) {
	events := siblingsJournal(t)
	names := func(eps []Episode) []string {
		var out []string
		for _, ep := range eps {
			out = append(out, ep.Change+" "+ep.Signature)
		}
		return out
	}
	doc := "verify gate doc: every file needs a header comment: <file>"
	lint := "verify gate lint: <file>: exported function Shout should have comment"
	for _, tc := range []struct {
		name   string
		change string
		gates  []string
		max    int
		want   []string
	}{
		// greet fixed the doc failure before part (MERGE_QUEUED): its
		// episode stands for both, and shout's fix came later; open's
		// lint failure is not fixed; me's own is not a sibling's;
		// run-0's is another run's.
		{"all", "me", []string{"doc", "lint"}, 0, []string{"shout " + lint, "greet " + doc}},
		{"max", "me", []string{"doc", "lint"}, 1, []string{"shout " + lint}},
		{"stack", "me", []string{"doc"}, 5, []string{"greet " + doc}},
		{"no gate of the stack", "me", []string{"test"}, 5, nil},
		{"own failure", "greet", []string{"doc"}, 5, []string{"part " + doc}},
		{"unknown change", "other", []string{"doc", "lint"}, 5, []string{"shout " + lint, "greet " + doc}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Siblings(events, "run-1", tc.change, tc.gates, tc.max)
			if diff := cmp.Diff(tc.want, names(got)); diff != "" {
				t.Errorf("Siblings (-want +got):\n%s", diff)
			}
		})
	}
	if got := Siblings(events, "run-0", "me", []string{"lint"}, 5); len(got) != 1 || got[0].Change != "old" {
		t.Errorf("Siblings of run-0 = %+v, want old's", got)
	}
}

// Once Siblings gives an episode for a signature, it gives the same one
// for every longer journal of the run: the journal up to each event
// agrees with the whole one on every signature both hold.
func TestSiblingsStable(t *testing.T) {
	events := siblingsJournal(t)
	final := map[string]Episode{}
	for _, ep := range Siblings(events, "run-1", "other", []string{"doc", "lint"}, 0) {
		final[ep.Signature] = ep
	}
	for i := range events {
		for _, ep := range Siblings(events[:i], "run-1", "other", []string{"doc", "lint"}, 0) {
			if diff := cmp.Diff(final[ep.Signature], ep); diff != "" {
				t.Errorf("after %d events, the episode of %q (-whole journal +prefix):\n%s", i, ep.Signature, diff)
			}
		}
	}
}

// A caller may keep only the events SiblingEvent names and get the same
// siblings.
func TestSiblingEvent(t *testing.T) {
	events := siblingsJournal(t)
	kept := slices.DeleteFunc(slices.Clone(events), func(e journal.Event) bool { return !SiblingEvent(e.Type) })
	if len(kept) == len(events) {
		t.Fatal("the journal holds no event SiblingEvent leaves out")
	}
	for _, change := range []string{"me", "part", "other"} {
		all := Siblings(events, "run-1", change, []string{"doc", "lint"}, 0)
		if diff := cmp.Diff(all, Siblings(kept, "run-1", change, []string{"doc", "lint"}, 0)); diff != "" {
			t.Errorf("Siblings of %s from the events SiblingEvent keeps (-all +kept):\n%s", change, diff)
		}
	}
}

func TestSiblingNote(t *testing.T) {
	ep := Episode{Kind: EpisodeGate, Change: "greet", Stage: "verify", Gate: "doc", Round: 1, Fixed: 2,
		Line: "every file needs a header comment: greet.go"}
	if got, want := SiblingNote(ep), "greet: the verify gate doc failed in round 1 with `every file needs a header comment: greet.go`, and passed in round 2."; got != want {
		t.Errorf("SiblingNote = %q\nwant %q", got, want)
	}
	ep.Fixed = 0
	if got := SiblingNote(ep); !strings.HasSuffix(got, ", and passed later.") {
		t.Errorf("SiblingNote without a round = %q", got)
	}
	// A line with backticks is quoted as one code span, not broken into
	// several by its own backticks.
	ep.Line = "error[E0425]: cannot find value `x` in this scope"
	if got, want := SiblingNote(ep), "greet: the verify gate doc failed in round 1 with ``error[E0425]: cannot find value `x` in this scope``, and passed later."; got != want {
		t.Errorf("SiblingNote = %q\nwant %q", got, want)
	}
	ep.Line = strings.Repeat("é", 400)
	got := SiblingNote(ep)
	quoted := got[strings.Index(got, "`")+1 : strings.LastIndex(got, "`")]
	if len(quoted) > maxNoteLine || !strings.HasSuffix(quoted, "é…") {
		t.Errorf("SiblingNote of a long line quotes %d bytes: %q", len(quoted), quoted)
	}
}

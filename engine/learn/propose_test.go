package learn

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/config"
)

func gateEp(run, change string, seq int64, line string) Episode {
	return Episode{Kind: EpisodeGate, Signature: GateSignature("verify", "doc", line), Run: run, Change: change, Seq: seq,
		Gate: "doc", Stage: "verify", Round: 1, Line: line}
}

func TestPropose(t *testing.T) {
	eps := []Episode{
		gateEp("run-1", "greet", 3, "every file needs a header comment: greet.go"),
		gateEp("run-1", "part", 9, "every file needs a header comment: part.go"),
		{Kind: EpisodeConflict, Signature: "conflict: go.mod", Run: "run-1", Change: "part", Seq: 12, Round: 1, Paths: []string{"go.mod"}},
		{Kind: EpisodeSentinel, Signature: "sentinel stuck: warn", Run: "run-1", Change: "part", Seq: 10},
		{Kind: EpisodeSentinel, Signature: "sentinel stuck: warn", Run: "run-2", Change: "shout", Seq: 20},
		{Kind: EpisodeConflict, Signature: "conflict: go.mod", Run: "run-2", Change: "shout", Seq: 21, Round: 2, Paths: []string{"go.mod"}},
		gateEp("run-2", "shout", 22, "only once"),
		{Kind: EpisodeGate, Signature: GateSignature("integration", "test", "--- FAIL: TestShout (0.00s)"), Run: "run-2", Change: "shout", Seq: 23,
			Gate: "test", Stage: "integration", Round: 1, Line: "--- FAIL: TestShout (0.00s)"},
		{Kind: EpisodeGate, Signature: GateSignature("integration", "test", "--- FAIL: TestShout (0.01s)"), Run: "run-3", Change: "shout", Seq: 30,
			Gate: "test", Stage: "integration", Round: 1, Line: "--- FAIL: TestShout (0.01s)"},
	}
	adopted := []config.NamedLearning{{Name: "doc-every-file-needs-header", Learning: config.Learning{Kind: "convention", Text: "x"}}}
	got := Propose(eps, 2, adopted)
	want := []Proposal{
		{ID: ID("conflict: go.mod"), Name: "serialise-go-mod", Kind: "planning",
			Text:      "Changes that touched `go.mod` conflicted when they were merged: plan the changes that may touch it one after another, not side by side.",
			Signature: "conflict: go.mod", Serialise: []string{"go.mod"}, Changes: 2, Runs: 2,
			Evidence: []Evidence{{"run-1", "part", 1, "go.mod"}, {"run-2", "shout", 2, "go.mod"}}},
		{ID: ID("verify gate doc: every file needs a header comment: <file>"), Name: "doc-every-file-needs-header-2", Kind: "convention",
			Text:      "The `doc` gate failed 2 earlier changes with `every file needs a header comment: <file>`. Before you finish, check that your change does not make it fail with that.",
			Signature: "verify gate doc: every file needs a header comment: <file>", Changes: 2, Runs: 1,
			Evidence: []Evidence{{"run-1", "greet", 1, "every file needs a header comment: greet.go"}, {"run-1", "part", 1, "every file needs a header comment: part.go"}}},
		{ID: ID("integration gate test: --- FAIL: TestShout (<n>s)"), Name: "test-fail-testshout", Kind: "convention",
			Text:      "The `test` gate of the integration stack failed changes in 2 earlier runs with `--- FAIL: TestShout (<n>s)`. Before you finish, check that your change does not make it fail with that.",
			Signature: "integration gate test: --- FAIL: TestShout (<n>s)", Changes: 1, Runs: 2,
			Evidence: []Evidence{{"run-2", "shout", 1, "--- FAIL: TestShout (0.00s)"}, {"run-3", "shout", 1, "--- FAIL: TestShout (0.01s)"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Propose (-want +got):\n%s", diff)
	}

	// A learning that names the signature, even one turned off, keeps it
	// from being proposed again; a threshold of 3 leaves none.
	adopted = append(adopted, config.NamedLearning{Name: "x", Learning: config.Learning{Signature: "conflict: go.mod"}})
	if got := Propose(eps, 2, adopted); len(got) != 2 || got[0].Signature == "conflict: go.mod" {
		t.Errorf("Propose with the conflict adopted = %+v", got)
	}
	if got := Propose(eps, 3, nil); len(got) != 0 {
		t.Errorf("Propose(threshold 3) = %+v, want none", got)
	}
}

func TestProposeSameLine(t *testing.T) {
	eps := []Episode{gateEp("run-1", "a", 1, "use `gofmt`"), gateEp("run-1", "b", 2, "use `gofmt`")}
	got := Propose(eps, 2, nil)
	if len(got) != 1 || got[0].Text != "The `doc` gate failed 2 earlier changes with `` use `gofmt` ``. Before you finish, check that your change does not make it fail with that." || got[0].Name != "doc-use-gofmt" {
		t.Errorf("Propose = %+v", got)
	}
}

// TestProposeNameSaysTheGateOnce: a line that starts with its gate's name
// ("doc: …" of the doc gate) names the learning with the gate once.
func TestProposeNameSaysTheGateOnce(t *testing.T) {
	var eps []Episode
	for _, change := range []string{"lower", "upper"} {
		line := "doc: " + change + ".go: the first line must be a comment"
		eps = append(eps, Episode{Kind: EpisodeGate, Signature: GateSignature("verify", "doc", Normalise(line)),
			Run: "r1", Change: change, Gate: "doc", Stage: "verify", Round: 1, Line: line})
	}
	got := Propose(eps, 2, nil)
	if len(got) != 1 || got[0].Name != "doc-the-first-line-must" {
		t.Fatalf("Propose = %+v, want one proposal named doc-the-first-line-must", got)
	}
}

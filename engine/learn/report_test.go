package learn

import (
	"reflect"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/journal"
)

// runsAdopting writes one run per element of learnings, each a RUN_STARTED
// naming those learnings and a RUN_FINISHED, and reads the journal back.
func runsAdopting(t *testing.T, learnings ...[]string) []journal.Event {
	t.Helper()
	dir := t.TempDir()
	at := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	clock := func() time.Time { at = at.Add(time.Second); return at }
	for i, names := range learnings {
		w, err := journal.Open(dir, "run-"+string(rune('1'+i)), journal.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []journal.Payload{
			journal.RunStartedData{Changes: []string{"a"}, Learnings: names},
			journal.RunFinishedData{Result: "success"},
		} {
			if _, err := w.Append("", p); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	events, err := journal.ReadFile(dir + "/" + journal.EventsFile)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

const docSig = "verify gate doc: missing package comment in <file>"

func TestReport(t *testing.T) {
	// Four runs: doc adopted in run-2, where its failure recurred once,
	// then none in run-3 and run-4.
	events := runsAdopting(t, nil, []string{"doc", "plain"}, []string{"doc", "plain"}, []string{"doc", "plain"})
	ep := func(run, change string, retries int, tokens int64) Episode {
		return Episode{Kind: EpisodeGate, Signature: docSig, Run: run, Change: change, Gate: "doc", Stage: "verify", Round: 1, Retries: retries, Tokens: tokens}
	}
	eps := []Episode{
		ep("run-1", "a", 1, 100), ep("run-1", "a", 1, 50), ep("run-1", "b", 2, 300),
		ep("run-2", "c", 1, 40),
		ep("run-9", "z", 5, 999), // a run the journal no longer holds
		{Kind: EpisodeConflict, Signature: "conflict: go.mod", Run: "run-3", Change: "d"},
	}
	adopted := []config.NamedLearning{
		{Name: "doc", Learning: config.Learning{Kind: config.LearningConvention, Text: "t", Enabled: true, Signature: docSig}},
		{Name: "gomod", Learning: config.Learning{Kind: config.LearningPlanning, Text: "t", Enabled: true, Signature: "conflict: go.mod"}},
		{Name: "never", Learning: config.Learning{Kind: config.LearningRule, Text: "t", Enabled: true, Signature: "verify gate lint: nope"}},
		{Name: "plain", Learning: config.Learning{Kind: config.LearningConvention, Text: "t", Enabled: true}},
	}
	got, err := Report(events, eps, adopted, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []Standing{
		{
			Name: "doc", Kind: "convention", Signature: docSig, Measured: true, Adopted: "run-2",
			Before:    Recurrence{Episodes: 3, Runs: 1, Changes: 2, Retries: 4, Tokens: 450},
			After:     Recurrence{Episodes: 1, Runs: 1, Changes: 1, Retries: 1, Tokens: 40},
			RunsSince: 3, Quiet: 2, LastSeen: "run-2",
			Remove: "its failure has not recurred in 2 runs since it last did, in run-2",
		},
		{
			// Committed, but no run has enforced it yet: every episode
			// came before it, and it is not proposed for removal.
			Name: "gomod", Kind: "planning", Signature: "conflict: go.mod", Measured: true,
			Before:   Recurrence{Episodes: 1, Runs: 1, Changes: 1},
			LastSeen: "run-3",
		},
		{
			Name: "never", Kind: "rule", Signature: "verify gate lint: nope", Measured: true,
			Remove: "its signature matched no failure of the kept runs",
		},
		{Name: "plain", Kind: "convention"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Report =\n%+v\nwant\n%+v", got, want)
	}

	// A journal without runs measures nothing, and proposes no removal.
	got, err = Report(nil, nil, adopted, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range got {
		if s.Remove != "" || s.Adopted != "" || s.Before != (Recurrence{}) {
			t.Errorf("without runs: %+v", s)
		}
	}

	// With a longer expiry doc is kept: two quiet runs are not enough.
	got, err = Report(events, eps, adopted[:1], 3)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Remove != "" {
		t.Errorf("expireAfter 3: Remove = %q, want none", got[0].Remove)
	}
}

// A learning whose failure never recurred after its adoption is
// proposed for removal once expireAfter runs enforced it, counting the
// adopting run.
func TestReportQuietSinceAdoption(t *testing.T) {
	events := runsAdopting(t, nil, []string{"doc"}, []string{"doc"})
	eps := []Episode{
		{Kind: EpisodeGate, Signature: docSig, Run: "run-1", Change: "a", Retries: 1, Tokens: 10},
		{Kind: EpisodeGate, Signature: docSig, Run: "run-1", Change: "b", Retries: 1, Tokens: 20},
	}
	adopted := []config.NamedLearning{{Name: "doc", Learning: config.Learning{Kind: "convention", Text: "t", Enabled: true, Signature: docSig}}}
	for _, c := range []struct {
		expireAfter int
		remove      string
	}{
		{2, "its failure has not recurred in 2 runs since its adoption in run-2"},
		{3, ""},
	} {
		got, err := Report(events, eps, adopted, c.expireAfter)
		if err != nil {
			t.Fatal(err)
		}
		s := got[0]
		if s.Adopted != "run-2" || s.RunsSince != 2 || s.Quiet != 2 || s.After != (Recurrence{}) ||
			s.Before != (Recurrence{Episodes: 2, Runs: 1, Changes: 2, Retries: 2, Tokens: 30}) || s.Remove != c.remove {
			t.Errorf("expireAfter %d: %+v", c.expireAfter, s)
		}
	}
}

// TestReportOfEpisodes measures a learning against the episodes Episodes
// reads from a journal: the doc gate fails the first round of greet and
// part in run-1 on one line; run-2 adopts the learning that answers it,
// and its failure recurs once, in shout; run-3 enforces it and the gate
// passes at once.
func TestReportOfEpisodes(t *testing.T) {
	adopts := []string{"doc-header"}
	events := journalOf(t, []step{
		{"run-1", "", journal.RunStartedData{Changes: []string{"greet", "part"}}},
		{"run-1", "greet", iteration(1, "g1", 100)},
		{"run-1", "greet", docFailed("greet", 1)},
		{"run-1", "greet", journal.RetryScheduledData{Stage: "verify", Attempt: 1}},
		{"run-1", "greet", iteration(2, "g2", 50)},
		{"run-1", "greet", journal.VerifyGateData{Stage: "verify", Gate: "doc", Result: "pass", Attempt: 2}},
		{"run-1", "part", iteration(1, "p1", 10)},
		{"run-1", "part", docFailed("part", 1)},
		{"run-1", "part", journal.RetryScheduledData{Stage: "verify", Attempt: 1}},
		{"run-1", "part", iteration(2, "p2", 20)},
		{"run-1", "part", journal.VerifyGateData{Stage: "verify", Gate: "doc", Result: "pass", Attempt: 2}},
		{"run-1", "", journal.RunFinishedData{Result: "success"}},
		{"run-2", "", journal.RunStartedData{Changes: []string{"shout"}, Learnings: adopts}},
		{"run-2", "shout", iteration(1, "s1", 7)},
		{"run-2", "shout", docFailed("shout", 1)},
		{"run-2", "shout", journal.RetryScheduledData{Stage: "verify", Attempt: 1}},
		{"run-2", "shout", iteration(2, "s2", 5)},
		{"run-2", "shout", journal.VerifyGateData{Stage: "verify", Gate: "doc", Result: "pass", Attempt: 2}},
		{"run-2", "", journal.RunFinishedData{Result: "success"}},
		{"run-3", "", journal.RunStartedData{Changes: []string{"wave"}, Learnings: adopts}},
		{"run-3", "wave", iteration(1, "w1", 3)},
		{"run-3", "wave", journal.VerifyGateData{Stage: "verify", Gate: "doc", Result: "pass", Attempt: 1}},
		{"run-3", "", journal.RunFinishedData{Result: "success"}},
	})
	sig := GateSignature("verify", "doc", Normalise("every file needs a header comment: greet.go"))
	adopted := []config.NamedLearning{{Name: "doc-header", Learning: config.Learning{Kind: "convention", Text: "t", Enabled: true, Signature: sig}}}
	got, err := Report(events, Episodes(events, nil), adopted, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := got[0]
	if s.Adopted != "run-2" || s.RunsSince != 2 || s.Quiet != 1 || s.LastSeen != "run-2" ||
		s.Before.Episodes != 2 || s.Before.Changes != 2 || s.Before.Runs != 1 || s.Before.Retries != 2 ||
		s.After.Episodes != 1 || s.After.Changes != 1 || s.After.Runs != 1 || s.After.Retries != 1 ||
		s.Remove != "its failure has not recurred in 1 run since it last did, in run-2" {
		t.Errorf("standing = %+v", s)
	}
	if s.Before.Tokens <= s.After.Tokens || s.After.Tokens == 0 {
		t.Errorf("tokens before %d, after %d: want the iterations that fixed each failure", s.Before.Tokens, s.After.Tokens)
	}
}

package learn

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/journal"
)

// benchJournal is a journal of runs runs of changes changes each, in which
// every change fails the doc gate once on a line of its own file and
// passes it in its next round: what setctl learn and --report read of a
// project kept for a long time.
func benchJournal(b *testing.B, runs, changes int) []journal.Event {
	b.Helper()
	var events []journal.Event
	at := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	add := func(run, change string, p journal.Payload) {
		data, err := json.Marshal(p)
		if err != nil {
			b.Fatal(err)
		}
		at = at.Add(time.Second)
		events = append(events, journal.Event{Seq: int64(len(events) + 1), Time: at, Type: p.EventType(), Run: run, Change: change, Data: data})
	}
	for r := range runs {
		run := fmt.Sprintf("2026112%dT%06dZ", r/100, r%100)
		add(run, "", journal.RunStartedData{Learnings: []string{"doc-header"}})
		for c := range changes {
			change := fmt.Sprintf("c%d-%d", r, c)
			add(run, change, iteration(1, fmt.Sprintf("%040d", 2*c), 1000))
			add(run, change, docFailed(change, 1))
			add(run, change, journal.RetryScheduledData{Stage: "verify", Attempt: 1, Budget: 3})
			add(run, change, iteration(2, fmt.Sprintf("%040d", 2*c+1), 500))
			add(run, change, journal.VerifyGateData{Stage: "verify", Gate: "doc", Kind: "exec", Result: "pass", Attempt: 2})
			add(run, change, journal.MergeQueuedData{Head: fmt.Sprintf("%040d", 2*c+1)})
			add(run, change, journal.MergedData{Commit: fmt.Sprintf("%040d", 2*c+1)})
		}
	}
	return events
}

// BenchmarkLearn is setctl learn and learn --report over 100 kept runs of
// 20 changes (14,100 events): episodes, proposals and the report.
func BenchmarkLearn(b *testing.B) {
	events := benchJournal(b, 100, 20)
	adopted := []config.NamedLearning{{Name: "doc-header", Learning: config.Learning{Kind: config.LearningConvention, Text: "x", Enabled: true,
		Signature: GateSignature("verify", "doc", "every file needs a header comment: <file>")}}}
	b.ReportAllocs()
	for b.Loop() {
		eps := Episodes(events, nil)
		if len(eps) != 2000 {
			b.Fatalf("%d episodes, want 2000", len(eps))
		}
		Propose(eps, 2, nil)
		if _, err := Report(events, eps, adopted, 5); err != nil {
			b.Fatal(err)
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/learn"
)

// learningsProject is requirementsProject with a learning adopted in
// learnings.cue, whose signature is the doc gate's failure.
func learningsProject() map[string]string {
	files := map[string]string{}
	for name, data := range requirementsProject {
		files[name] = data
	}
	files["learnings.cue"] = `package hello

project: learnings: "doc-header": {
	kind:      "convention"
	text:      "Every file starts with a header comment."
	signature: "verify gate doc: every file needs a header comment: <file>"
}
`
	return files
}

// docJournal is a journal of two runs: in run-1 the doc gate fails on
// greet and part, in run-2, which enforces doc-header, it passes.
func docJournal(t *testing.T) []journal.Event {
	t.Helper()
	dir := t.TempDir()
	at := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	clock := func() time.Time { at = at.Add(time.Second); return at }
	fail := func(change string) journal.VerifyGateData {
		return journal.VerifyGateData{Stage: "verify", Gate: "doc", Kind: "exec", Result: "fail", ExitCode: 1, Attempt: 1,
			RetryContext: "Gate doc (`sh doc.sh`) failed with exit code 1. Last lines of its output:\n```\nevery file needs a header comment: " + change + ".go\n```\n"}
	}
	pass := func(attempt int) journal.VerifyGateData {
		return journal.VerifyGateData{Stage: "verify", Gate: "doc", Kind: "exec", Result: "pass", Attempt: attempt}
	}
	for _, r := range []struct {
		id    string
		steps []struct {
			change string
			p      journal.Payload
		}
	}{
		{"run-1", []struct {
			change string
			p      journal.Payload
		}{
			{"", journal.RunStartedData{Changes: []string{"greet", "part"}}},
			{"greet", fail("greet")}, {"greet", journal.RetryScheduledData{Stage: "verify", Attempt: 1}}, {"greet", pass(2)},
			{"part", fail("part")}, {"part", journal.RetryScheduledData{Stage: "verify", Attempt: 1}}, {"part", pass(2)},
			{"", journal.RunFinishedData{Result: "success"}},
		}},
		{"run-2", []struct {
			change string
			p      journal.Payload
		}{
			{"", journal.RunStartedData{Changes: []string{"wave"}, Learnings: []string{"doc-header"}}},
			{"wave", pass(1)},
			{"", journal.RunFinishedData{Result: "success"}},
		}},
	} {
		w, err := journal.Open(dir, r.id, journal.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range r.steps {
			if _, err := w.Append(s.change, s.p); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
	}
	events, err := journal.ReadFile(filepath.Join(dir, journal.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// TestDashboardLearnings: the dashboard's learnings are setctl learn
// --report's of set.cue as it is now and the journal it is given; the
// project is loaded again only when one of its CUE files changed, and a
// project that does not load says so.
func TestDashboardLearnings(t *testing.T) {
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	t.Setenv("CUE_REGISTRY", "none")
	dir := t.TempDir()
	writeFiles(t, dir, learningsProject())
	events := docJournal(t)
	c := &learningsCache{inputs: projectInputs{root: dir}}

	l, err := c.learnings(events)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Report) != 1 || l.ExpireAfter != 5 || l.Threshold != 2 {
		t.Fatalf("learnings = %+v", l)
	}
	s := l.Report[0]
	if s.Name != "doc-header" || s.Adopted != "run-2" || s.Before != (learn.Recurrence{Episodes: 2, Runs: 1, Changes: 2, Retries: 2}) || s.After != (learn.Recurrence{}) || s.Remove != "" {
		t.Errorf("doc-header stands %+v", s)
	}
	if len(l.Proposals) != 0 {
		t.Errorf("proposed %+v, though doc-header answers the one failure", l.Proposals)
	}
	cfg := c.cfg
	if _, err := c.learnings(events); err != nil || c.cfg != cfg {
		t.Errorf("the project was loaded again though no input changed (%v)", err)
	}

	// An edit of learnings.cue shows at once.
	learnings := filepath.Join(dir, "learnings.cue")
	data, _ := os.ReadFile(learnings)
	edited := strings.Replace(string(data), `kind:`, "enabled: false\n\tkind:", 1)
	if err := os.WriteFile(learnings, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if l, err := c.learnings(events); err != nil || len(l.Report) != 0 {
		t.Errorf("with doc-header turned off: %+v, %v", l, err)
	}

	if err := os.WriteFile(learnings, []byte("package hello\n\nproject: learnings: \"doc-header\": kind: \"bogus\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.learnings(events); err == nil || !strings.Contains(err.Error(), "the project does not load (`setctl vet` says why)") {
		t.Errorf("a project that does not load: %v", err)
	}
}

// TestDashboardLearningsNewFile: learnings.cue written after the page
// was first read (setctl learn --write creates it) is a new input of the
// package: the proposals it answers are no longer shown, without an edit
// of set.cue.
func TestDashboardLearningsNewFile(t *testing.T) {
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	t.Setenv("CUE_REGISTRY", "none")
	dir := t.TempDir()
	files := learningsProject()
	adopted := files["learnings.cue"]
	delete(files, "learnings.cue")
	writeFiles(t, dir, files)
	events := docJournal(t)
	c := &learningsCache{inputs: projectInputs{root: dir}}
	if l, err := c.learnings(events); err != nil || len(l.Proposals) != 1 || len(l.Report) != 0 {
		t.Fatalf("without learnings.cue: %+v, %v", l, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "learnings.cue"), []byte(adopted), 0o644); err != nil {
		t.Fatal(err)
	}
	if l, err := c.learnings(events); err != nil || len(l.Proposals) != 0 || len(l.Report) != 1 {
		t.Errorf("with learnings.cue written: %d proposals, %d learnings reported (%v), want 0 and 1", len(l.Proposals), len(l.Report), err)
	}
}

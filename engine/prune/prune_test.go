package prune

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/history"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/state"
)

// project is a run directory whose journal fn writes, run by run, and
// whose files the events name exist.
type project struct {
	t      *testing.T
	layout rundir.Layout
}

func newProject(t *testing.T) *project {
	return &project{t: t, layout: rundir.New(t.TempDir())}
}

// run journals one run of events (change, payload) and writes the files
// they name, and the run's report.
func (p *project) run(id string, events ...any) {
	p.t.Helper()
	w, err := journal.Open(p.layout.Dir(), id)
	if err != nil {
		p.t.Fatal(err)
	}
	defer w.Close()
	for i := 0; i < len(events); i += 2 {
		change, payload := events[i].(string), events[i+1].(journal.Payload)
		if _, err := w.Append(change, payload); err != nil {
			p.t.Fatal(err)
		}
		if d, ok := payload.(journal.AgentIterationData); ok {
			p.write(d.Log, "log of "+id)
			p.write(d.Prompt, "prompt of "+id)
		}
	}
	p.write(".set/runs/"+id+"/report.md", "# Run "+id)
}

func (p *project) write(rel, data string) {
	p.t.Helper()
	abs := filepath.Join(p.layout.Root(), filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(abs, []byte(data), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

func (p *project) exists(rel string) bool {
	_, err := os.Stat(filepath.Join(p.layout.Root(), filepath.FromSlash(rel)))
	return err == nil
}

// iterate is the events of a change's agent iteration n, which go from
// pending to implementing when first is set.
func iterate(change string, n int, first bool) []any {
	var ev []any
	if first {
		ev = append(ev,
			change, journal.StateChangeData{From: "pending", To: "dispatched"},
			change, journal.StateChangeData{From: "dispatched", To: "implementing"})
	}
	log := ".set/logs/" + change + "/agent-" + string(rune('0'+n)) + ".log"
	prompt := ".set/changes/" + change + "/prompt-" + string(rune('0'+n)) + ".md"
	return append(ev, change, journal.AgentIterationData{Iteration: n, Log: log, Prompt: prompt})
}

func plan(changes ...string) []any {
	return []any{"", journal.RunStartedData{Changes: changes}, "", journal.PlanCreatedData{Changes: changes}}
}

func concat(parts ...[]any) []any {
	var out []any
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func finished() []any { return []any{"", journal.RunFinishedData{Result: "failed"}} }

// merge is the events that take change from implementing to main.
func merge(change string) []any {
	var ev []any
	for _, to := range []string{"verifying", "queued", "merged"} {
		from := map[string]string{"verifying": "implementing", "queued": "verifying", "merged": "queued"}[to]
		ev = append(ev, change, journal.StateChangeData{From: from, To: to})
	}
	return ev
}

// threeRuns: run-1 works on a (agent-1), which fails; run-2 plans b
// (agent-1) and merges it; run-3 plans b again (other work), which goes
// on from agent-2 and merges it.
func threeRuns(t *testing.T) *project {
	p := newProject(t)
	p.run("run-1", concat(plan("a"), iterate("a", 1, true),
		[]any{"a", journal.StateChangeData{From: "implementing", To: "failed:agent_error"}}, finished())...)
	p.run("run-2", concat(plan("b"), iterate("b", 1, true), merge("b"), finished())...)
	p.run("run-3", concat(plan("b"), iterate("b", 2, true), merge("b"), finished())...)
	return p
}

func TestPruneKeep(t *testing.T) {
	p := threeRuns(t)
	before, err := journal.ReadFile(p.layout.Events())
	if err != nil {
		t.Fatal(err)
	}
	// A dry run says what would go, and removes nothing.
	dry, err := Prune(p.layout, Options{Keep: 1, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := journal.ReadFile(p.layout.Events()); len(after) != len(before) || !p.exists(".set/logs/a/agent-1.log") {
		t.Fatal("a dry run removed something")
	}
	res, err := Prune(p.layout, Options{Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2 || res.Runs[0].ID != "run-1" || res.Runs[1].ID != "run-2" || len(res.Held) != 0 {
		t.Fatalf("removed %+v, held %+v", res.Runs, res.Held)
	}
	if res.Bytes != dry.Bytes || res.JournalBytes != dry.JournalBytes || res.JournalBytes == 0 {
		t.Errorf("freed %d (%d of journal), the dry run said %d (%d)", res.Bytes, res.JournalBytes, dry.Bytes, dry.JournalBytes)
	}
	var paths []string
	for _, r := range res.Runs {
		for _, f := range r.Files {
			paths = append(paths, f.Path)
		}
	}
	want := []string{
		".set/changes/a/prompt-1.md", ".set/logs/a/agent-1.log", ".set/runs/run-1/report.md",
		".set/changes/b/prompt-1.md", ".set/logs/b/agent-1.log", ".set/runs/run-2/report.md",
	}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("removed files %v, want %v", paths, want)
	}
	for _, rel := range want {
		if p.exists(rel) {
			t.Errorf("%s is still there", rel)
		}
	}
	for _, rel := range []string{".set/logs/b/agent-2.log", ".set/runs/run-3/report.md", ".set/logs", ".set/runs"} {
		if !p.exists(rel) {
			t.Errorf("%s, of the kept run, is gone", rel)
		}
	}
	for _, rel := range []string{".set/logs/a", ".set/changes/a", ".set/runs/run-1", ".set/journals/a.jsonl"} {
		if p.exists(rel) {
			t.Errorf("%s, emptied, is still there", rel)
		}
	}
	// The kept run is what it was, Seqs included, and the snapshot
	// follows the journal.
	after, err := journal.ReadFile(p.layout.Events())
	if err != nil {
		t.Fatal(err)
	}
	runs := history.Runs(after)
	if len(runs) != 1 || runs[0].ID != "run-3" || after[0].Seq != before[len(before)-len(after)].Seq {
		t.Errorf("runs kept %+v, first seq %d", runs, after[0].Seq)
	}
	saved, err := state.Load(p.layout.State())
	if err != nil || saved.Changes["a"] != nil || saved.Changes["b"] == nil || saved.Changes["b"].Iteration != 2 {
		t.Errorf("state.json after the prune: %+v, %v", saved, err)
	}
	// Nothing more to remove.
	if res, err := Prune(p.layout, Options{Keep: 1}); err != nil || len(res.Runs) != 0 {
		t.Errorf("a second prune: %+v, %v", res, err)
	}
}

// TestPruneKeepsACarriedRun: a run whose change the latest run carries on
// with its progress (a retry of a failed change) stays.
func TestPruneKeepsACarriedRun(t *testing.T) {
	p := newProject(t)
	p.run("run-1", concat(plan("x"), finished())...)
	p.run("run-2", concat(plan("a"), iterate("a", 1, true),
		[]any{"a", journal.StateChangeData{From: "implementing", To: "failed:agent_error"}}, finished())...)
	p.run("run-3", concat(plan("a"), []any{"a", journal.StateChangeData{From: "failed:agent_error", To: "pending"}}, finished())...)

	res, err := Prune(p.layout, Options{Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 1 || res.Runs[0].ID != "run-1" || len(res.Held) != 1 || res.Held[0].ID != "run-2" {
		t.Fatalf("removed %+v, held %+v", res.Runs, res.Held)
	}
	if !strings.Contains(res.Held[0].Reason, "the latest run, run-3, carries on a from it") &&
		!strings.Contains(res.Held[0].Reason, "the runs kept need its events") {
		t.Errorf("held for %q", res.Held[0].Reason)
	}
	if !strings.Contains(res.Held[0].Reason, "run-3") || !strings.Contains(res.Held[0].Reason, "carries on a from it") {
		t.Errorf("held for %q: it names neither the run that carries on nor its change", res.Held[0].Reason)
	}
	if !p.exists(".set/logs/a/agent-1.log") {
		t.Error("the log of the held run is gone")
	}
	if _, err := Prune(p.layout, Options{Runs: []string{"run-2"}}); err == nil || !strings.Contains(err.Error(), "cannot remove run-2: ") {
		t.Errorf("removing the carried run by name: %v", err)
	}
	if _, err := Prune(p.layout, Options{Runs: []string{"run-3"}}); err == nil || !strings.Contains(err.Error(), "run run-3 is the latest run") {
		t.Errorf("removing the latest run: %v", err)
	}
	if _, err := Prune(p.layout, Options{Runs: []string{"run-9"}}); err == nil || !strings.Contains(err.Error(), "no run run-9") {
		t.Errorf("removing a run the journal lacks: %v", err)
	}
}

// TestPruneKeepsNamedFiles: a file an event of a kept run names (a
// baseline verdict from the cache names the log of the run that judged
// main) stays, and nothing outside .set/logs, .set/changes and .set/runs
// goes; the baseline cache forgets the verdicts whose logs went.
func TestPruneKeepsNamedFiles(t *testing.T) {
	p := newProject(t)
	log := ".set/runs/run-1/baseline/test.log"
	p.write(log, "ok")
	p.write(".set/runs/run-1/baseline/vet.log", "ok")
	p.write(".set/baseline.json", `{"version":1,"verdicts":[{"tree":"t","gate":"vet","log":".set/runs/run-1/baseline/vet.log"},{"tree":"t","gate":"test","log":"`+log+`"}]}`)
	p.write("go.mod", "module x")
	p.run("run-1", "", journal.RunStartedData{}, "", journal.BaselineGateData{Gate: "test", Log: log},
		"", journal.BaselineGateData{Gate: "odd", Log: ".set/../go.mod"}, "", journal.BaselineGateData{Gate: "wt", Log: ".set/worktrees/a/x.go"})
	p.write(".set/worktrees/a/x.go", "package a")
	p.run("run-2", "", journal.RunStartedData{}, "", journal.BaselineGateData{Gate: "test", Log: log, Cached: true})
	res, err := Prune(p.layout, Options{Runs: []string{"run-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 1 || len(res.Runs[0].Files) != 2 || res.Runs[0].Files[0].Path != ".set/runs/run-1/baseline/vet.log" ||
		res.Runs[0].Files[1].Path != ".set/runs/run-1/report.md" {
		t.Errorf("removed %+v", res.Runs)
	}
	for _, rel := range []string{log, "go.mod", ".set/worktrees/a/x.go"} {
		if !p.exists(rel) {
			t.Errorf("%s is gone", rel)
		}
	}
	if cache, _ := os.ReadFile(filepath.Join(p.layout.Dir(), "baseline.json")); strings.Contains(string(cache), "vet.log") || !strings.Contains(string(cache), log) {
		t.Errorf("the baseline cache after the prune:\n%s", cache)
	}
}

// TestPruneAgainForgetsCachedLogs: a prune killed once it removed a run's
// files, before the baseline cache forgot the verdicts that name them,
// leaves the cache naming logs that are gone; the next prune, which
// removes the run's events, makes the cache forget them too, so no
// verdict the cache gives again names a log that is no more.
func TestPruneAgainForgetsCachedLogs(t *testing.T) {
	p := newProject(t)
	vet, test := ".set/runs/run-1/baseline/vet.log", ".set/logs/_old/test.log"
	p.write(".set/baseline.json", `{"version":1,"verdicts":[{"tree":"t","gate":"vet","log":"`+vet+`"},{"tree":"t","gate":"test","log":"`+test+`"}]}`)
	p.run("run-1", "", journal.RunStartedData{}, "", journal.BaselineGateData{Gate: "test", Log: test})
	p.run("run-2", "", journal.RunStartedData{})
	// What the killed prune removed: the run's folder, and the log its
	// event names.
	for _, rel := range []string{".set/runs/run-1", test} {
		if err := os.RemoveAll(filepath.Join(p.layout.Root(), filepath.FromSlash(rel))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Prune(p.layout, Options{Runs: []string{"run-1"}}); err != nil {
		t.Fatal(err)
	}
	if cache, _ := os.ReadFile(filepath.Join(p.layout.Dir(), "baseline.json")); strings.Contains(string(cache), "vet.log") || strings.Contains(string(cache), "test.log") {
		t.Errorf("the baseline cache after the prune names logs that are gone:\n%s", cache)
	}
}

// TestPruneNeverTheLatestID: a journal from before run IDs were unique
// may hold a run ID twice, apart (a clock set back); a run that has the
// latest run's ID is never removed, nor any event of the latest run.
func TestPruneNeverTheLatestID(t *testing.T) {
	p := newProject(t)
	p.run("run-1", concat(plan("a"), finished())...)
	p.run("run-2", concat(plan("b"), finished())...)
	p.run("run-1", concat(plan(), finished())...)
	all := readEvents(t, p)
	if _, err := Prune(p.layout, Options{Keep: 1}); err != nil {
		t.Fatal(err)
	}
	events := readEvents(t, p)
	if len(events) < 3 || events[len(events)-1].Seq != all[len(all)-1].Seq || events[len(events)-3].Seq != all[len(all)-3].Seq {
		t.Errorf("after the prune, the latest run's events are gone: %d events left of %d", len(events), len(all))
	}
}

func readEvents(t *testing.T, p *project) []journal.Event {
	t.Helper()
	events, err := journal.ReadFile(p.layout.Events())
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// A run named in a project that has none is an error (history.ErrNoRun),
// whether the journal is missing or holds no run; without a name there
// is nothing to remove.
func TestPruneNamedRunWithoutRuns(t *testing.T) {
	p := newProject(t)
	if err := os.MkdirAll(p.layout.Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, journalBytes := range []string{"none", ""} {
		if journalBytes != "none" {
			if err := os.WriteFile(p.layout.Events(), []byte(journalBytes), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Prune(p.layout, Options{Runs: []string{"run-1"}}); !errors.Is(err, history.ErrNoRun) {
			t.Errorf("journal %q: prune --run run-1: %v, want history.ErrNoRun", journalBytes, err)
		}
		if res, err := Prune(p.layout, Options{Keep: 1}); err != nil || len(res.Runs) != 0 {
			t.Errorf("journal %q: prune --keep 1 = %+v, %v; want nothing removed", journalBytes, res, err)
		}
	}
}

// TestPruneUnnamedFiles: the files no event names go with the run they
// belong to, a regeneration log (by its integration attempt), a session's
// totals (by the events that name the session) and a dashboard's apply
// log (by the run after its stamp), and stay while a kept run uses them.
func TestPruneUnnamedFiles(t *testing.T) {
	p := newProject(t)
	session := func(change string, n int, id string) []any {
		return []any{change, journal.AgentIterationData{Iteration: n, SessionID: id,
			Log: ".set/logs/" + change + "/agent-1.log", Prompt: ".set/changes/" + change + "/prompt-1.md"}}
	}
	attempt := func(change string) []any {
		return []any{change, journal.IntegrationAttemptData{Attempt: 1, Onto: "abc"}}
	}
	p.write(".set/logs/_dashboard/apply-20000101T000000.000Z.log", "apply of run-1")
	p.run("run-1", concat(plan("a"), iterate("a", 1, true), session("a", 1, "s-old"), session("a", 1, "s-shared"),
		attempt("a"), merge("a"), finished())...)
	p.run("run-2", concat(plan("c"), iterate("c", 1, true), session("c", 1, "s-shared"), attempt("c"), merge("c"), finished())...)
	later := time.Now().UTC().Add(time.Hour).Format(rundir.DashboardApplyStamp)
	for _, rel := range []string{
		".set/logs/a/regenerate-1.log", ".set/logs/c/regenerate-1.log",
		".set/sessions/codex-s-old.json", ".set/sessions/claude-s-shared.json",
		".set/logs/_dashboard/apply-" + later + ".log",
	} {
		p.write(rel, "{}")
	}
	res, err := Prune(p.layout, Options{Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 1 || res.Runs[0].ID != "run-1" {
		t.Fatalf("removed %+v, want run-1", res.Runs)
	}
	var removed []string
	for _, f := range res.Runs[0].Files {
		removed = append(removed, f.Path)
	}
	for _, rel := range []string{
		".set/logs/a/regenerate-1.log", ".set/sessions/codex-s-old.json",
		".set/logs/_dashboard/apply-20000101T000000.000Z.log",
	} {
		if p.exists(rel) || !slices.Contains(removed, rel) {
			t.Errorf("%s: still there or not listed (removed %v)", rel, removed)
		}
	}
	for _, rel := range []string{
		".set/logs/c/regenerate-1.log", ".set/sessions/claude-s-shared.json",
		".set/logs/_dashboard/apply-" + later + ".log",
	} {
		if !p.exists(rel) {
			t.Errorf("%s of a kept run removed", rel)
		}
	}
}

package rundir

import (
	"path/filepath"
	"testing"
)

// TestLayout pins every path of the run directory: journals, messages and
// users' habits rely on them.
func TestLayout(t *testing.T) {
	root := filepath.FromSlash("/p")
	l := New(root)
	abs := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	for _, tc := range []struct{ got, want string }{
		{l.Root(), root},
		{l.Dir(), abs(".set")},
		{l.Events(), abs(".set/events.jsonl")},
		{l.State(), abs(".set/state.json")},
		{l.Report(), abs(".set/report.md")},
		{l.Plan(), abs(".set/plan.json")},
		{l.Runs(), abs(".set/runs")},
		{l.Run("20261127T080000Z"), abs(".set/runs/20261127T080000Z")},
		{l.RunReport("20261127T080000Z"), abs(".set/runs/20261127T080000Z/report.md")},
		{l.RunPlan("20261127T080000Z"), abs(".set/runs/20261127T080000Z/plan.json")},
		{l.Procs(), abs(".set/procs")},
		{l.FastForward(), abs(".set/fast-forward.json")},
		{l.Worktrees(), abs(".set/worktrees")},
		{l.Worktree("greet"), abs(".set/worktrees/greet")},
		{l.Sessions(), abs(".set/sessions")},
		{l.Logs("greet"), abs(".set/logs/greet")},
		{l.DaggerLog(), abs(".set/logs/dagger.log")},
		{l.Baseline(), abs(".set/baseline")},
		{l.BaselineCache(), abs(".set/baseline.json")},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
	for want, paths := range map[string]func() (string, string){
		".set/logs/greet/verify-test-1.log":  func() (string, string) { return l.GateLog("greet", "verify", "test", 1) },
		".set/logs/greet/agent-3.log":        func() (string, string) { return l.AgentLog("greet", 3) },
		".set/logs/greet/regenerate-2.log":   func() (string, string) { return l.RegenerateLog("greet", 2) },
		".set/changes/greet/prompt-3.md":     func() (string, string) { return l.Prompt("greet", 3) },
		".set/runs/R1/baseline/vet.log":      func() (string, string) { return l.BaselineLog("R1", "vet") },
		".set/runs/R1/baseline/vet.host.log": func() (string, string) { return l.BaselineHostLog("R1", "vet") },
	} {
		if a, r := paths(); r != want || a != abs(want) {
			t.Errorf("got %s and %s, want %s", a, r, want)
		}
	}
}

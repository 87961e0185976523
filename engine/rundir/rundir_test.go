package rundir

import (
	"path/filepath"
	"testing"

	"github.com/set-engine/set/engine/plan"
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
		{l.Procs(), abs(".set/procs")},
		{l.FastForward(), abs(".set/fast-forward.json")},
		{l.Worktrees(), abs(".set/worktrees")},
		{l.Worktree("greet"), abs(".set/worktrees/greet")},
		{l.Sessions(), abs(".set/sessions")},
		{l.Logs("greet"), abs(".set/logs/greet")},
		{l.RegenerateLog("greet", 2), abs(".set/logs/greet/regenerate-2.log")},
		{l.DaggerLog(), abs(".set/logs/dagger.log")},
		{l.Baseline(), abs(".set/baseline")},
		{l.BaselineCache(), abs(".set/baseline.json")},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
	for want, paths := range map[string]func() (string, string){
		".set/logs/greet/verify-test-1.log": func() (string, string) { return l.GateLog("greet", "verify", "test", 1) },
		".set/logs/greet/agent-3.log":       func() (string, string) { return l.AgentLog("greet", 3) },
		".set/changes/greet/prompt-3.md":    func() (string, string) { return l.Prompt("greet", 3) },
		".set/logs/_baseline/vet.log":       func() (string, string) { return l.BaselineLog("vet") },
	} {
		if a, r := paths(); r != want || a != abs(want) {
			t.Errorf("got %s and %s, want %s", a, r, want)
		}
	}
}

// TestBaselineLogsIsNoChangeName: the baseline's logs cannot share a
// folder with a change's, whatever the plan names its changes.
func TestBaselineLogsIsNoChangeName(t *testing.T) {
	if plan.ValidName(BaselineLogs) {
		t.Errorf("%q is a valid change name", BaselineLogs)
	}
}

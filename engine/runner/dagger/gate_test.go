package dagger

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/gate"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/runner"
)

// TestEngineFaultIsNoVerdict: through the gate layer, an engine that
// stops answering under a gate, or goes away, makes the gate's result an
// error (a run error, see gate.RunStack) naming the engine, with no retry
// context for an agent, and its log says so without a terminal escape;
// the engine's own error stays an error too, and a gate that times out
// on an engine that still answers is the gate's failure, sent to the
// agent.
func TestEngineFaultIsNoVerdict(t *testing.T) {
	cmd := "gate \"build\" (`go build ./...`): "
	for _, tc := range []struct {
		name   string
		engine func(*fakeEngine)
		status string
		reason string
	}{
		{"stops answering", func(f *fakeEngine) { f.block["sync"], f.block["version"] = true, true }, gate.StatusError,
			cmd + "the Dagger engine fake stopped answering during the gate: it did not answer a version query within 100ms"},
		{"goes away", func(f *fakeEngine) { f.die["sync"] = "502" }, gate.StatusError,
			cmd + "the Dagger engine fake went away during the gate: its session answered 502 Bad Gateway (unexpected EOF)"},
		{"pull denied", func(f *fakeEngine) { f.fail["sync"] = "\x1b[31mpull access denied\x1b[0m for golang" }, gate.StatusError,
			cmd + "dagger runner: go: pull access denied for golang"},
		{"times out", func(f *fakeEngine) { f.block["sync"] = true }, gate.StatusFail, "timed out after 100ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, goCfg(), "/p")
			fx.runner.(*daggerRunner).healthTimeout = 100 * time.Millisecond
			tc.engine(fx.engine)
			project := &config.Project{Gates: map[string]config.Gate{
				"build": {Kind: config.KindExec, Mode: config.ModeRun, Run: []string{"go", "build", "./..."}, Runner: Name},
			}}
			logPath := filepath.Join(t.TempDir(), "build.log")
			res := gate.Run(context.Background(), gate.Input{
				Project: project, Stage: graph.StageVerify, Attempt: 1, Worktree: t.TempDir(), LogPath: logPath,
				Step: graph.GateStep{Gate: "build", Kind: config.KindExec, Mode: config.ModeRun, Runner: Name, Timeout: config.Duration(100 * time.Millisecond)},
			}, map[string]runner.Runner{Name: fx.runner})
			if res.Status != tc.status || res.Reason != tc.reason {
				t.Errorf("result %s: %q\nwant    %s: %q", res.Status, res.Reason, tc.status, tc.reason)
			}
			if fault := tc.name == "stops answering" || tc.name == "goes away"; IsEngineFault(res.Err) != fault {
				t.Errorf("error %v: an engine fault is %v, want %v", res.Err, !fault, fault)
			}
			if tc.status == gate.StatusError && res.RetryContext != "" {
				t.Errorf("a gate that could not run has a retry context for the agent:\n%s", res.RetryContext)
			}
			log, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			if strings.ContainsRune(string(log), 0x1b) {
				t.Errorf("a terminal escape in the gate's log:\n%q", log)
			}
		})
	}
}

package gate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/runner"
	"github.com/set-engine/set/engine/runner/host"
)

// stackFixture is a change on a repo and a stack of exec gates, each
// running argv, in the order given.
func stackFixture(t *testing.T, gates ...[]string) (StackInput, *repo) {
	t.Helper()
	r := newRepo(t, baseFiles)
	r.write("internal/auth/login.go", "package auth\n")
	r.commit()
	p := testProject()
	in := StackInput{
		Project: p, Change: featureChange, Stage: graph.StageVerify, Attempt: 2,
		Layout: rundir.New(t.TempDir()), Worktree: r.dir, Base: r.base,
		Runners: map[string]runner.Runner{"host": host.New()},
	}
	for i, argv := range gates {
		name := string(rune('a' + i))
		p.Gates[name] = config.Gate{Kind: config.KindExec, Run: argv}
		in.Steps = append(in.Steps, graph.GateStep{Gate: name, Kind: config.KindExec, Mode: config.ModeRun,
			Runner: "host", Timeout: config.Duration(time.Minute)})
	}
	return in, r
}

// recorded runs the stack and returns its result and what it emitted.
func recorded(t *testing.T, ctx context.Context, in StackInput) (StackResult, []journal.Payload, error) {
	t.Helper()
	var got []journal.Payload
	res, err := RunStack(ctx, in, func(p journal.Payload) error {
		got = append(got, p)
		return nil
	})
	return res, got, err
}

// results are the gate and result of each VERIFY_GATE, the gate of each
// GATE_STARTED prefixed with "start ", and of each GATE_SET_EXPANDED with
// "expanded ".
func results(events []journal.Payload) []string {
	var out []string
	for _, p := range events {
		switch d := p.(type) {
		case journal.GateStartedData:
			out = append(out, "start "+d.Gate)
		case journal.VerifyGateData:
			out = append(out, d.Gate+" "+d.Result)
		case journal.GateSetExpandedData:
			out = append(out, "expanded "+d.Gate)
		}
	}
	return out
}

func TestRunStackStopsAtFirstBlockingGate(t *testing.T) {
	t.Parallel()
	in, r := stackFixture(t, []string{"true"}, []string{"sh", "-c", "echo broken; exit 3"}, []string{"touch", "ran-c"})
	in.Skipped = []graph.SkippedGate{{Gate: "lint", Reason: "when: false", Stage: graph.StageVerify}}
	res, events, err := recorded(t, context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := results(events), []string{"lint skip", "start a", "a pass", "start b", "b fail"}; !cmp.Equal(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
	if res.Passed || res.Interrupted || res.Blocking == nil || res.Blocking.Gate != "b" {
		t.Fatalf("result = %+v", res)
	}
	if rc := res.RetryContext(); !strings.Contains(rc, "broken") || rc != res.Blocking.RetryContext {
		t.Errorf("retry context = %q", rc)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "ran-c")); err == nil {
		t.Error("the gate after the blocking one ran")
	}
	// The logs are where the layout puts them, and the events name them so.
	vg := events[4].(journal.VerifyGateData)
	if vg.Log != ".set/logs/auth-login/verify-b-2.log" || vg.Attempt != 2 || vg.ExitCode != 3 {
		t.Errorf("b's event = %+v", vg)
	}
	if _, err := os.Stat(filepath.Join(in.Layout.Root(), ".set", "logs", "auth-login", "verify-b-2.log")); err != nil {
		t.Error(err)
	}
	// The start names the command and the log the verdict names.
	want := journal.GateStartedData{Stage: "verify", Gate: "b", Kind: "exec", Runner: "host", Attempt: 2,
		Command: []string{"sh", "-c", "echo broken; exit 3"}, Log: ".set/logs/auth-login/verify-b-2.log"}
	if diff := cmp.Diff(want, events[3]); diff != "" {
		t.Errorf("b's start (-want +got):\n%s", diff)
	}
}

func TestRunStackPassesAndRecordsExpansions(t *testing.T) {
	t.Parallel()
	in, _ := stackFixture(t, []string{"true"}, []string{"true"})
	in.Steps[1].Condition = `any(files, {# endsWith ".go"})`
	res, events, err := recorded(t, context.Background(), in)
	if err != nil || !res.Passed || res.Blocking != nil || res.RetryContext() != "" {
		t.Fatalf("RunStack = %+v, %v", res, err)
	}
	if got, want := results(events), []string{"start a", "a pass", "start b", "expanded b", "b pass"}; !cmp.Equal(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
	exp := events[3].(journal.GateSetExpandedData)
	if exp.Stage != graph.StageVerify || !cmp.Equal(exp.Files, []string{"internal/auth/login.go"}) {
		t.Errorf("expansion = %+v", exp)
	}
}

func TestRunStackAfterGateRejects(t *testing.T) {
	t.Parallel()
	in, _ := stackFixture(t, []string{"true"}, []string{"true"})
	var seen []string
	in.AfterGate = func(_ context.Context, r Result) (string, error) {
		seen = append(seen, r.Gate)
		if r.Gate == "a" {
			return "a changed the tree", nil
		}
		return "", nil
	}
	res, events, err := recorded(t, context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed || res.Blocking == nil || res.Blocking.Gate != "a" || res.RetryContext() != "a changed the tree" {
		t.Errorf("result = %+v", res)
	}
	if got := results(events); !cmp.Equal(got, []string{"start a", "a pass"}) || !cmp.Equal(seen, []string{"a"}) {
		t.Errorf("events = %v, AfterGate saw %v", got, seen)
	}
}

func TestRunStackGateThatCannotRunIsARunError(t *testing.T) {
	t.Parallel()
	in, _ := stackFixture(t, []string{"true"})
	in.Steps[0].Runner = "nowhere"
	res, events, err := recorded(t, context.Background(), in)
	if err == nil || !strings.Contains(err.Error(), "verify gate a of auth-login could not run") {
		t.Fatalf("RunStack = %+v, %v", res, err)
	}
	if got := results(events); !cmp.Equal(got, []string{"start a", "a error"}) {
		t.Errorf("events = %v", got)
	}
}

func TestRunStackInterrupted(t *testing.T) {
	t.Parallel()
	in, _ := stackFixture(t, []string{"true"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, events, err := recorded(t, ctx, in)
	if err != nil || !res.Interrupted || res.Passed || res.Blocking != nil {
		t.Fatalf("RunStack = %+v, %v", res, err)
	}
	if got := results(events); !cmp.Equal(got, []string{"start a"}) {
		t.Errorf("a gate cut short has more than its start: %v", got)
	}
}

func TestEvent(t *testing.T) {
	t.Parallel()
	r := Result{
		Gate: "test", Kind: "exec", Mode: "run", Runner: "host", Base: "host", Status: StatusFail,
		ExitCode: 2, Duration: 1500 * time.Millisecond, Log: "/l.log", Reason: "exit code 2",
		RetryContext: "fix it",
	}
	want := journal.VerifyGateData{
		Stage: "integration", Gate: "test", Kind: "exec", Mode: "run", Runner: "host", Base: "host",
		Result: "fail", ExitCode: 2, DurationMS: 1500, Log: "/l.log", Reason: "exit code 2",
		RetryContext: "fix it", Attempt: 3,
	}
	if diff := cmp.Diff(want, Event("integration", 3, r)); diff != "" {
		t.Errorf("Event (-want +got):\n%s", diff)
	}
	r.LogRel = ".set/logs/c/integration-test-3.log"
	if got := Event("integration", 3, r).Log; got != r.LogRel {
		t.Errorf("Log = %q, want the relative path", got)
	}
	// The named failures, the first EventFailures of them.
	r.Failures = []string{"a.go", "b.go"}
	if got := Event("integration", 3, r).Failures; !cmp.Equal(got, r.Failures) {
		t.Errorf("Failures = %q, want %q", got, r.Failures)
	}
	r.Failures = nil
	for i := range EventFailures + 5 {
		r.Failures = append(r.Failures, fmt.Sprintf("f%02d.go", i))
	}
	if got := Event("integration", 3, r).Failures; !cmp.Equal(got, r.Failures[:EventFailures]) {
		t.Errorf("Failures = %q, want the first %d", got, EventFailures)
	}
}

// A gate that cannot find its program after an earlier gate of the stack
// failed without blocking (mode "warn") names that gate as the likely
// reason it could not run.
func TestRunStackNamesEarlierFailure(t *testing.T) {
	t.Parallel()
	in, _ := stackFixture(t,
		[]string{"sh", "-c", "echo '[set] $ npm install'; echo 'npm error code ECONNREFUSED'; exit 1"},
		[]string{"sh", "-c", "echo '[set] $ xo'; echo 'sh: 1: xo: not found' >&2; exit 127"})
	in.Steps[0].Mode = config.ModeWarn
	res, _, err := recorded(t, context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Blocking == nil || res.Blocking.Gate != "b" {
		t.Fatalf("stack result %+v", res)
	}
	b := res.Blocking
	if want := "could not run: xo: not found — the a gate failed before it (exit code 127)"; b.Reason != want || !cmp.Equal(b.After, []string{"a"}) || b.Command != "xo" {
		t.Errorf("blocking %+v, want reason %q", b, want)
	}
	if !strings.HasPrefix(res.RetryContext(), "Gate b (`xo`) could not run: xo: not found — the a gate failed before it (exit code 127).") {
		t.Errorf("retry context:\n%s", res.RetryContext())
	}
}

package orchestrator

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/agent"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/forge"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/prune"
	"github.com/set-engine/set/engine/runner"
	"github.com/set-engine/set/engine/runner/host"
	"github.com/set-engine/set/engine/spec"
	"github.com/set-engine/set/engine/state"
)

// fixture is a project in a real git repository in a temp dir, with a
// plan built in Go and exec agents written as shell scripts.
type fixture struct {
	t          tb
	root       string
	project    *config.Project
	plan       *plan.Plan
	checkpoint func(point, change string)
	// acceptBaseline is Options.AcceptBaseline of the next apply.
	acceptBaseline bool
	// keepBranches is Options.KeepBranches.
	keepBranches bool
	// wallBudget is Options.wallBudget.
	wallBudget func(ctx context.Context, change string) (context.Context, context.CancelFunc)
	// replan is Options.Replan.
	replan ReplanFunc
	// sentinelTick is Options.sentinelTick; zero means 20ms.
	sentinelTick time.Duration
	// runners are Options.Runners; nil means the host runner alone.
	runners map[string]runner.Runner
	// forge is Options.Forge (pull-request mode); after is Options.after,
	// nil for one that fires at once.
	forge forge.Forge
	after func(time.Duration) <-chan time.Time
	// now is Options.Now (nil: time.Now); onPrune is Options.OnPrune.
	now     func() time.Time
	onPrune func(prune.Result)
}

// tb is the part of testing.TB the fixture uses, so that a crash test's
// child process (which has no *testing.T) can build the same fixture.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	TempDir() string
}

// gateConfig is a gate of the fixture's project.
type gateConfig = config.Gate

// newFixture makes a repository with one commit on main. Its git is
// hermetic (TestMain makes the process's so, with an empty global
// configuration, for the tests that run in parallel).
func newFixture(t testing.TB) *fixture {
	t.Helper()
	root := t.TempDir()
	f := fixtureAt(t, root)
	f.git("init", "-q", "-b", "main")
	f.write("README.md", "# fixture\n")
	f.write("notes.txt", "line 1\nline 2\nline 3\n")
	f.git("add", "-A")
	f.git("commit", "-q", "-m", "initial")
	return f
}

// fixtureAt is the fixture's project and empty plan for the repository at
// root (which newFixture creates).
func fixtureAt(t tb, root string) *fixture {
	f := &fixture{t: t, root: root}
	f.project = &config.Project{
		Name:         "fixture",
		MainBranch:   "main",
		MaxParallel:  2,
		TestPatterns: map[string]string{"txt": "**/*_test.txt"},
		Generated:    map[string]config.Generated{},
		Gates: map[string]config.Gate{
			// check fails while a change's file says "bad".
			"check": {Kind: "exec", Mode: "run", Order: 10,
				Run: []string{"sh", "-c", "! grep -rl bad --include='*.txt' . || { echo 'found bad content'; exit 1; }"}},
		},
		Stacks:      map[string]config.Stack{"feature": {"check": {}}},
		Integration: config.Stack{"check": {}},
		Runner:      config.Runner{Kind: "host"},
	}
	f.project.Budgets.Retries.Verify = 2
	f.project.Budgets.Retries.Integration = 2
	f.project.Budgets.Retries.Conflicts = 2
	f.project.Budgets.Iterations = 6
	f.project.Budgets.Tokens = map[string]int{"S": 1000, "M": 1000, "L": 1000}
	f.project.Budgets.GateTimeout = config.Duration(time.Minute)
	f.plan = &plan.Plan{Version: plan.FormatVersion, Project: "fixture", Strategy: "explicit",
		Fingerprint: plan.Fingerprint{Config: "c", Specs: map[string]string{}}}
	return f
}

func (f *fixture) git(args ...string) string {
	f.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", f.root}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (f *fixture) write(name, content string) {
	f.t.Helper()
	p := filepath.Join(f.root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// change adds a change to the plan with one requirement of its own.
func (f *fixture) change(name string, deps ...string) {
	id := "REQ-" + strings.ToUpper(strings.ReplaceAll(name, "-", "")) + "-01"
	// A scenario, as OpenSpec folds no requirement without one.
	f.plan.Requirements = append(f.plan.Requirements, spec.Requirement{ID: id, Title: name, Domain: name,
		Scenarios: []spec.Scenario{{Name: "it works", When: []string{name + " is asked"}, Then: []string{"it answers"}}}})
	f.plan.Changes = append(f.plan.Changes, plan.Change{Name: name, Type: "feature", Size: "S",
		Requirements: []string{id}, DependsOn: append([]string{}, deps...)})
}

// agentScript writes an exec agent: a shell script run in the worktree
// with the change and iteration as $1 and $2.
func (f *fixture) agentScript(body string) agent.Adapter {
	f.t.Helper()
	path := filepath.Join(f.t.TempDir(), "agent.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\nset -e\nchange=$1\niteration=$2\n"+body), 0o755); err != nil {
		f.t.Fatal(err)
	}
	return &agent.Exec{Argv: []string{"sh", path, "{change}", "{iteration}"}}
}

// applySucceeds runs the plan with a, failing the test unless the run
// succeeds, and returns the summary.
func (f *fixture) applySucceeds(a agent.Adapter) *Summary {
	f.t.Helper()
	return f.applyEnds(context.Background(), a, "success")
}

// applyEnds runs the plan on ctx and requires that the run ended with
// result, without a run error.
func (f *fixture) applyEnds(ctx context.Context, a agent.Adapter, result string) *Summary {
	f.t.Helper()
	sum, err := f.apply(ctx, a)
	if err != nil {
		f.t.Fatal(err)
	}
	if sum.Result != result {
		f.t.Fatalf("result = %s, want %s; statuses %v", sum.Result, result, sum.Statuses)
	}
	return sum
}

// applyInBackground starts the plan's apply in a goroutine, for a test
// that acts on the run while it runs; ended waits for the apply, failing
// the test with what when it has not ended within the wait or ended with
// an error, and returns its summary.
func (f *fixture) applyInBackground(a agent.Adapter) (ended func(wait time.Duration, what string) *Summary) {
	done := make(chan error, 1)
	var sum *Summary
	go func() {
		var err error
		sum, err = f.apply(context.Background(), a)
		done <- err
	}()
	return func(wait time.Duration, what string) *Summary {
		f.t.Helper()
		select {
		case err := <-done:
			if err != nil {
				f.t.Fatal(err)
			}
		case <-time.After(wait):
			f.t.Fatal(what)
		}
		return sum
	}
}

// controls are the CONTROL events of the run directory's journal: the
// apply's answers to the requests it took, in journal order.
func (f *fixture) controls() []journal.ControlData {
	f.t.Helper()
	var out []journal.ControlData
	for _, e := range f.events() {
		if e.Type == journal.Control {
			d, err := journal.Decode[journal.ControlData](e)
			if err != nil {
				f.t.Fatal(err)
			}
			out = append(out, d)
		}
	}
	return out
}

// apply runs the plan and returns the summary.
func (f *fixture) apply(ctx context.Context, a agent.Adapter) (*Summary, error) {
	f.t.Helper()
	changes, err := plan.TopoSort(f.plan.Changes)
	if err != nil {
		f.t.Fatal(err)
	}
	f.plan.Changes = changes
	if err := plan.Validate(f.plan, plan.Limits{}); err != nil {
		f.t.Fatal(err)
	}
	g, err := graph.Build(f.plan, f.project)
	if err != nil {
		f.t.Fatal(err)
	}
	if f.after == nil {
		f.after = lookAtOnce
	}
	runners := f.runners
	if runners == nil {
		runners = map[string]runner.Runner{"host": host.New()}
	}
	return Apply(ctx, Options{
		Root: f.root, Project: f.project, Plan: f.plan, Graph: g, Adapter: a,
		Runners:        runners,
		Checkpoint:     f.checkpoint,
		AcceptBaseline: f.acceptBaseline,
		KeepBranches:   f.keepBranches,
		wallBudget:     f.wallBudget,
		Replan:         f.replan,
		sentinelTick:   cmp.Or(f.sentinelTick, 20*time.Millisecond),
		Forge:          f.forge,
		after:          f.after,
		Now:            f.now,
		OnPrune:        f.onPrune,
	})
}

// branches lists the repository's set/* branches.
func (f *fixture) branches() []string {
	f.t.Helper()
	return strings.Fields(f.git("branch", "--list", "--format=%(refname:short)", "set/*"))
}

// childT is the tb of a crash test's child process: failures end it.
type childT struct{}

func (childT) Helper() {}
func (childT) Fatal(args ...any) {
	fmt.Fprintln(os.Stderr, args...)
	os.Exit(4)
}
func (c childT) Fatalf(format string, args ...any) { c.Fatal(fmt.Sprintf(format, args...)) }
func (childT) TempDir() string {
	d, err := os.MkdirTemp("", "set-crash-child-")
	if err != nil {
		panic(err)
	}
	return d
}

// events reads the run's journal.
func (f *fixture) events() []journal.Event {
	f.t.Helper()
	ev, err := journal.ReadFile(filepath.Join(f.root, ".set", "events.jsonl"))
	if err != nil {
		f.t.Fatal(err)
	}
	return ev
}

func (f *fixture) state() *state.State {
	f.t.Helper()
	st, err := state.Load(filepath.Join(f.root, ".set", "state.json"))
	if err != nil {
		f.t.Fatal(err)
	}
	return st
}

// count counts events of type typ for change.
func count(events []journal.Event, typ journal.Type, change string) int {
	n := 0
	for _, e := range events {
		if e.Type == typ && e.Change == change {
			n++
		}
	}
	return n
}

// lookAtOnce is the fixture's wait between two looks at pull requests:
// none.
func lookAtOnce(time.Duration) <-chan time.Time { return time.After(time.Millisecond) }

package baseline

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/runner"
	"github.com/set-engine/set/engine/runner/host"
	"github.com/set-engine/set/internal/gittest"
)

func step(gate, kind, mode string, order int) graph.GateStep {
	return graph.GateStep{Gate: gate, Kind: kind, Mode: mode, Order: order, Runner: "host"}
}

func TestChecks(t *testing.T) {
	feature := &graph.ChangeGraph{
		Verify: []graph.GateStep{
			step("scope_check", config.KindScopeCheck, config.ModeRun, 0),
			step("lint", config.KindExec, config.ModeWarn, 20),
			step("test", config.KindExec, config.ModeRun, 30),
			// A model-graded gate judges a change's diff: main has none,
			// and judging main would call a model.
			step("review", config.KindReview, config.ModeRun, 70),
		},
		Integration: []graph.GateStep{step("test", config.KindExec, config.ModeRun, 30), step("review", config.KindReview, config.ModeRun, 70)},
	}
	docs := &graph.ChangeGraph{
		Verify: []graph.GateStep{
			step("build", config.KindExec, config.ModeWarn, 10),
			step("lint", config.KindExec, config.ModeRun, 20),
		},
		Integration: []graph.GateStep{step("test", config.KindExec, config.ModeRun, 30)},
	}
	got := Checks([]*graph.ChangeGraph{feature, docs})
	type check struct {
		gate     string
		blocking bool
	}
	var have []check
	for _, c := range got {
		have = append(have, check{c.Step.Gate, c.Blocking})
	}
	want := []check{{"build", false}, {"lint", true}, {"test", true}}
	if !slices.Equal(have, want) {
		t.Errorf("checks %v, want %v", have, want)
	}
	if Checks(nil) != nil {
		t.Error("no changes, yet checks")
	}
}

func TestDefinition(t *testing.T) {
	cfg := &config.Project{
		Gates: map[string]config.Gate{"test": {Kind: config.KindExec, Mode: config.ModeRun,
			Run: []string{"go", "test", "./..."}, Env: map[string]string{"A": "1"}, Failures: "^--- FAIL: (\\S+)"}},
		Runner: config.Runner{Kind: "host", Dagger: &config.DaggerRunner{From: "golang:1.26"}},
	}
	s := step("test", config.KindExec, config.ModeRun, 30)
	base := definition(cfg, s)
	same := func(what string, edit func(*config.Project, *graph.GateStep), want bool) {
		t.Helper()
		c := *cfg
		c.Gates = map[string]config.Gate{"test": cfg.Gates["test"]}
		c.Runner.Dagger = &config.DaggerRunner{From: "golang:1.26"}
		st := s
		edit(&c, &st)
		if got := definition(&c, st) == base; got != want {
			t.Errorf("%s: same definition = %v, want %v", what, got, want)
		}
	}
	gateEdit := func(f func(*config.Gate)) func(*config.Project, *graph.GateStep) {
		return func(c *config.Project, _ *graph.GateStep) {
			g := c.Gates["test"]
			f(&g)
			c.Gates["test"] = g
		}
	}
	same("nothing", func(*config.Project, *graph.GateStep) {}, true)
	same("mode", func(_ *config.Project, s *graph.GateStep) { s.Mode = config.ModeWarn }, true)
	same("timeout", func(_ *config.Project, s *graph.GateStep) { s.Timeout = config.Duration(time.Hour) }, true)
	same("dagger base on a host gate", func(c *config.Project, _ *graph.GateStep) { c.Runner.Dagger.From = "golang:1.27" }, true)
	same("argv", gateEdit(func(g *config.Gate) { g.Run = []string{"go", "test", "-race", "./..."} }), false)
	same("env", gateEdit(func(g *config.Gate) { g.Env = map[string]string{"A": "2"} }), false)
	same("failures", gateEdit(func(g *config.Gate) { g.Failures = "FAIL" }), false)
	same("runner", func(_ *config.Project, s *graph.GateStep) { s.Runner = "dagger" }, false)
	s.Runner = "dagger"
	base = definition(cfg, s)
	same("dagger base on a dagger gate", func(c *config.Project, s *graph.GateStep) {
		s.Runner = "dagger"
		c.Runner.Dagger.From = "golang:1.27"
	}, false)
}

func TestCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "baseline.json")
	c := loadCache(path) // no file: empty
	t0 := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	v := Verdict{Gate: "fmt", Result: "fail", ExitCode: 1, Reason: "exit code 1", Failures: []string{"a.go"}, Tail: "a.go", Log: ".set/runs/R1/baseline/fmt.log", Duration: 1500 * time.Millisecond}
	c.put("tree1", "def1", v, t0)
	if err := c.save(path); err != nil {
		t.Fatal(err)
	}
	c = loadCache(path)
	got, ok := c.lookup("tree1", "fmt", "def1")
	want := v
	want.Gate, want.Cached = "", true
	if !ok || got.Result != want.Result || !slices.Equal(got.Failures, want.Failures) || got.Tail != want.Tail || got.Log != want.Log || got.Duration != want.Duration || !got.Cached {
		t.Errorf("lookup = %+v, %v; want %+v", got, ok, want)
	}
	for _, miss := range [][3]string{{"tree2", "fmt", "def1"}, {"tree1", "vet", "def1"}, {"tree1", "fmt", "def2"}} {
		if _, ok := c.lookup(miss[0], miss[1], miss[2]); ok {
			t.Errorf("lookup %v hit", miss)
		}
	}
	// Judged again: replaced, not added.
	v.Result = "pass"
	c.put("tree1", "def1", v, t0.Add(time.Second))
	if got, _ := c.lookup("tree1", "fmt", "def1"); got.Result != "pass" || len(c.Verdicts) != 1 {
		t.Errorf("after a second put: %+v, %d verdicts", got, len(c.Verdicts))
	}

	// Only the most recently judged trees are kept.
	for i := range keepTrees + 3 {
		c.put(string(rune('a'+i)), "def1", v, t0.Add(time.Duration(i+2)*time.Minute))
	}
	if _, ok := c.lookup("tree1", "fmt", "def1"); ok {
		t.Error("the oldest tree is still cached")
	}
	if _, ok := c.lookup(string(rune('a'+keepTrees+2)), "fmt", "def1"); !ok {
		t.Error("the newest tree is not cached")
	}
	if n := len(c.Verdicts); n != keepTrees {
		t.Errorf("%d verdicts kept, want %d", n, keepTrees)
	}

	// A file that does not parse, or of another version, is no cache.
	for _, data := range []string{"{not json", `{"version": 99, "verdicts": [{"tree": "tree1", "gate": "fmt", "definition": "def1"}]}`} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if c := loadCache(path); len(c.Verdicts) != 0 || c.Version != cacheVersion {
			t.Errorf("%q read as %+v", data, c)
		}
	}
}

// repo is a git repository with one commit on main, in a temp dir.
func repo(t *testing.T, files map[string]string) string {
	t.Helper()
	gittest.Hermetic(t, "")
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runGit(t, root, "init", "-q", "-b", "main")
	runGit(t, root, "add", "-A")
	runGit(t, root, "commit", "-q", "-m", "main")
	return root
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// judgeInput judges root's main with the gates named in gates (argv by
// name), counting runs in runs.
func judgeInput(t *testing.T, root string, gates map[string]config.Gate, blocking ...string) Input {
	t.Helper()
	cfg := &config.Project{Gates: gates, Runner: config.Runner{Kind: "host"}}
	var checks []Check
	for name := range gates {
		checks = append(checks, Check{Step: step(name, config.KindExec, config.ModeRun, 10), Blocking: slices.Contains(blocking, name)})
	}
	slices.SortFunc(checks, func(a, b Check) int { return strings.Compare(a.Step.Gate, b.Step.Gate) })
	return Input{
		Layout: rundir.New(root), Run: "R1", MainBranch: "main", Project: cfg, Checks: checks,
		Runners: map[string]runner.Runner{"host": host.New()},
	}
}

func TestJudge(t *testing.T) {
	root := repo(t, map[string]string{"a.txt": "bad\n", "b.txt": "good\n"})
	runs := filepath.Join(t.TempDir(), "runs")
	gates := map[string]config.Gate{
		// check lists the files that say "bad", and where it runs.
		"check": {Kind: config.KindExec, Failures: `^(\S+\.txt)$`,
			Run: []string{"sh", "-c", "pwd >> " + runs + "; grep -l bad *.txt && exit 1; exit 0"}},
		"ok": {Kind: config.KindExec, Run: []string{"true"}},
	}
	// An untracked file in the user's checkout is not main's.
	if err := os.WriteFile(filepath.Join(root, "c.txt"), []byte("bad\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := judgeInput(t, root, gates, "check")
	var emitted []Verdict
	var started []journal.BaselineGateStartedData
	in.Emit = func(v Verdict) error { emitted = append(emitted, v); return nil }
	in.Start = func(d journal.BaselineGateStartedData) error { started = append(started, d); return nil }
	verdicts, err := Judge(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	tree := runGit(t, root, "rev-parse", "main^{tree}")
	if len(verdicts) != 2 || !slices.EqualFunc(verdicts, emitted, func(a, b Verdict) bool { return a.Gate == b.Gate }) {
		t.Fatalf("verdicts %+v, emitted %+v", verdicts, emitted)
	}
	check := verdicts[0]
	if check.Gate != "check" || !check.Red() || !check.Blocking || check.Cached || check.Tree != tree ||
		!slices.Equal(check.Failures, []string{"a.txt"}) || check.Tail != "a.txt" || check.ExitCode != 1 ||
		check.Log != ".set/runs/R1/baseline/check.log" || check.Command != "sh -c 'pwd >> "+runs+"; grep -l bad *.txt && exit 1; exit 0'" {
		t.Errorf("check verdict %+v", check)
	}
	if ok := verdicts[1]; ok.Red() || ok.Blocking || ok.Result != "pass" {
		t.Errorf("ok verdict %+v", ok)
	}
	// Each gate that runs is recorded as started before it runs.
	if len(started) != 2 || started[0].Gate != "check" || started[0].Tree != tree || started[0].Runner != "host" ||
		started[0].Log != ".set/runs/R1/baseline/check.log" || !slices.Equal(started[0].Command, gates["check"].Run) || started[1].Gate != "ok" {
		t.Errorf("started %+v", started)
	}
	data, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	if ran := strings.TrimSpace(string(data)); ran != filepath.Join(root, ".set", "baseline") {
		t.Errorf("the gate ran in %s, want the baseline checkout", ran)
	}
	if _, err := os.Stat(filepath.Join(root, ".set", "baseline")); !os.IsNotExist(err) {
		t.Errorf("the checkout is left: %v", err)
	}
	if log, _ := os.ReadFile(filepath.Join(root, ".set", "runs", "R1", "baseline", "check.log")); string(log) != "a.txt\n" {
		t.Errorf("log %q", log)
	}

	// The same tree again: from the cache, nothing runs, no checkout.
	verdicts, err = Judge(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if !verdicts[0].Cached || !verdicts[1].Cached || !slices.Equal(verdicts[0].Failures, []string{"a.txt"}) || verdicts[0].Command != check.Command {
		t.Errorf("second judgement %+v", verdicts)
	}
	if len(started) != 2 {
		t.Errorf("a verdict judged before is recorded as started: %+v", started[2:])
	}
	if data, _ := os.ReadFile(runs); strings.Count(string(data), "\n") != 1 {
		t.Errorf("the gate ran again on the same tree:\n%s", data)
	}

	// A changed definition, or a new tree, is judged anew.
	g := gates["check"]
	g.Env = map[string]string{"X": "1"}
	gates["check"] = g
	if verdicts, err = Judge(context.Background(), in); err != nil || verdicts[0].Cached || !verdicts[1].Cached {
		t.Errorf("after a definition change: %+v, %v", verdicts, err)
	}
	runGit(t, root, "rm", "-q", "a.txt")
	runGit(t, root, "commit", "-q", "-m", "fix")
	if verdicts, err = Judge(context.Background(), in); err != nil || verdicts[0].Cached || verdicts[0].Red() || verdicts[1].Cached {
		t.Errorf("on a new tree: %+v, %v", verdicts, err)
	}
}

// TestJudgeReplacesAStaleCheckout: a checkout an interrupted judgement
// left behind (a worktree, or a plain directory) does not stop the next,
// and is gone after it, even when the next ran nothing.
func TestJudgeReplacesAStaleCheckout(t *testing.T) {
	root := repo(t, map[string]string{"a.txt": "x\n"})
	in := judgeInput(t, root, map[string]config.Gate{"ok": {Kind: config.KindExec, Run: []string{"true"}}}, "ok")
	wt := filepath.Join(root, ".set", "baseline")
	runGit(t, root, "worktree", "add", "-q", "--detach", wt, "main")
	if err := os.WriteFile(filepath.Join(wt, "leftover"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Judge(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(wt, "junk"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Without the cache, the next judgement checks out again.
	if err := os.Remove(filepath.Join(root, ".set", "baseline.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := Judge(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if out := runGit(t, root, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", out)
	}

	// Left behind after the last verdict was cached (a crash before the
	// deferred removal): the next judgement, which runs nothing, removes
	// it all the same, a worktree or a plain folder.
	for _, leave := range []func(){
		func() { runGit(t, root, "worktree", "add", "-q", "--detach", wt, "main") },
		func() {
			if err := os.MkdirAll(filepath.Join(wt, "half"), 0o755); err != nil {
				t.Fatal(err)
			}
		},
	} {
		leave()
		verdicts, err := Judge(context.Background(), in)
		if err != nil || !verdicts[0].Cached {
			t.Fatalf("cached judgement: %+v, %v", verdicts, err)
		}
		if _, err := os.Stat(wt); !os.IsNotExist(err) {
			t.Errorf("the stale checkout is still there: %v", err)
		}
		if out := runGit(t, root, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
			t.Errorf("worktrees left:\n%s", out)
		}
	}
}

func TestJudgeTimeoutIsNotCached(t *testing.T) {
	root := repo(t, map[string]string{"a.txt": "x\n"})
	in := judgeInput(t, root, map[string]config.Gate{"slow": {Kind: config.KindExec, Failures: "x", Run: []string{"sh", "-c", "echo x; sleep 30"}}}, "slow")
	in.Checks[0].Step.Timeout = config.Duration(200 * time.Millisecond)
	for range 2 {
		verdicts, err := Judge(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if v := verdicts[0]; !v.TimedOut || v.Cached || !v.Red() || v.Comparable() || v.Failures != nil {
			t.Errorf("verdict %+v", v)
		}
	}
}

func TestJudgeGateThatCannotRun(t *testing.T) {
	root := repo(t, map[string]string{"a.txt": "x\n"})
	in := judgeInput(t, root, map[string]config.Gate{"tool": {Kind: config.KindExec, Run: []string{"set-no-such-tool-xyz"}}}, "tool")
	_, err := Judge(context.Background(), in)
	if err == nil || !strings.Contains(err.Error(), "gate tool could not run on main") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, ".set", "baseline.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a gate that could not run was cached: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, ".set", "baseline")); !os.IsNotExist(err) {
		t.Errorf("the checkout is left: %v", err)
	}
}

// container is a container runner that runs nothing: every command fails
// as a base without a C compiler fails go test -race, on base.
type container struct {
	base string
	runs int
}

func (c *container) Name() string { return config.RunnerDagger }

func (c *container) Exec(_ context.Context, e runner.Exec) (runner.ExecResult, error) {
	c.runs++
	out := "go: -race requires cgo; enable cgo by setting CGO_ENABLED=1\n"
	if e.Log != nil {
		if _, err := e.Log.Write([]byte(out)); err != nil {
			return runner.ExecResult{}, err
		}
	}
	return runner.ExecResult{ExitCode: 1, Output: []byte(out), Base: c.base}, nil
}

// TestJudgeRunsAContainerFailureOnTheHost: a gate red on main in a
// container runs again on the host, in the same checkout; its verdict
// says whether it passes there (the base lacks something: BaseLacks) or
// fails there too, and keeps saying so from the cache. A gate red on the
// host runs once.
func TestJudgeRunsAContainerFailureOnTheHost(t *testing.T) {
	root := repo(t, map[string]string{"a.txt": "bad\n"})
	hostRuns := filepath.Join(t.TempDir(), "runs")
	gates := map[string]config.Gate{
		// race passes on the host; check fails there as in the container.
		"race":  {Kind: config.KindExec, Failures: `^go: (.+)$`, Run: []string{"sh", "-c", "pwd >> " + hostRuns + "; echo ok"}},
		"check": {Kind: config.KindExec, Failures: `^(\S+\.txt)$`, Run: []string{"sh", "-c", "pwd >> " + hostRuns + "; grep -l bad *.txt && exit 1; exit 0"}},
		"local": {Kind: config.KindExec, Failures: `^(\S+\.txt)$`, Run: []string{"sh", "-c", "pwd >> " + hostRuns + "; grep -l bad *.txt && exit 1; exit 0"}},
	}
	in := judgeInput(t, root, gates, "race", "check", "local")
	ctr := &container{base: "rootfs ./rootfs"}
	in.Runners[config.RunnerDagger] = ctr
	in.Project.Runner.Dagger = &config.DaggerRunner{Rootfs: "./rootfs"}
	for i := range in.Checks {
		if in.Checks[i].Step.Gate != "local" {
			in.Checks[i].Step.Runner = config.RunnerDagger
		}
	}
	verdicts, err := Judge(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	check, local, race := verdicts[0], verdicts[1], verdicts[2]
	if !race.Red() || !race.BaseLacks() || race.OnHost != "pass" || race.Base != "rootfs ./rootfs" ||
		race.HostLog != ".set/runs/R1/baseline/race.host.log" || race.Log != ".set/runs/R1/baseline/race.log" ||
		!slices.Equal(race.Failures, []string{"-race requires cgo; enable cgo by setting CGO_ENABLED=1"}) {
		t.Errorf("race verdict %+v", race)
	}
	if ev := race.Event(); ev.Base != race.Base || ev.OnHost != "pass" || ev.HostLog != race.HostLog {
		t.Errorf("race event %+v", ev)
	}
	if log, _ := os.ReadFile(filepath.Join(root, ".set", "runs", "R1", "baseline", "race.host.log")); string(log) != "ok\n" {
		t.Errorf("host log %q", log)
	}
	if !check.Red() || check.BaseLacks() || check.OnHost != "fail" || check.HostLog != ".set/runs/R1/baseline/check.host.log" {
		t.Errorf("check verdict %+v", check)
	}
	if !local.Red() || local.OnHost != "" || local.HostLog != "" || local.Base != "host" {
		t.Errorf("local verdict %+v", local)
	}
	data, err := os.ReadFile(hostRuns)
	if err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(root, ".set", "baseline")
	if ran := strings.Fields(string(data)); len(ran) != 3 || slices.ContainsFunc(ran, func(d string) bool { return d != wt }) || ctr.runs != 2 {
		t.Errorf("on the host: %q (want 3 runs in the checkout); in the container: %d runs", ran, ctr.runs)
	}

	again, err := Judge(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if r := again[2]; !r.Cached || !r.BaseLacks() || r.Base != race.Base || r.HostLog != race.HostLog || again[0].OnHost != "fail" {
		t.Errorf("from the cache: %+v", again)
	}
}

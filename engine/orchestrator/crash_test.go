package orchestrator

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/internal/gittest"
	"github.com/set-engine/set/internal/testpar"
)

// The crash tests run `Apply` in a child process (this test binary,
// re-executed) that is SIGKILLed at a chosen point, then resume in-process
// and compare the result with an uninterrupted run.
const (
	envCrashRoot  = "SET_TEST_CRASH_ROOT"
	envCrashPoint = "SET_TEST_CRASH_POINT"
	envCrashAgent = "SET_TEST_CRASH_AGENT"
	// envCrashScript runs scriptCrashChild with the killingAgents
	// script it names instead of crashChild.
	envCrashScript = "SET_TEST_CRASH_SCRIPT"
	// envCrashPush runs the child in push mode (project.delivery), against
	// the remote origin the parent made (withPushRemote).
	envCrashPush = "SET_TEST_CRASH_PUSH"
)

// killingAgents are the agent scripts of the tests whose agent itself
// SIGKILLs the run at the moment the test is about, by the name
// envCrashScript gives them.
var killingAgents = map[string]string{"retry": retryAgent, "plant": plantAgent, "siblings": siblingsAgent}

// killingScenarios set up the fixture of the killingAgents scripts that
// need more than change alpha, by the script's name.
var killingScenarios = map[string]func(*fixture){"siblings": siblingsScenario}

func TestMain(m *testing.M) {
	if root := os.Getenv(envCrashRoot); root != "" {
		if script := os.Getenv(envCrashScript); script != "" {
			os.Exit(scriptCrashChild(root, script))
		}
		os.Exit(crashChild(root, os.Getenv(envCrashPoint), os.Getenv(envCrashAgent)))
	}
	// The runs of the tests mostly wait for git, gates and agents.
	flag.Parse()
	testpar.Double()
	gittest.Main(m, "")
}

// crashScenario sets up three changes, one depending on another, whose
// agent writes a file (set writes each change's OpenSpec delta). The agent and the gate take a
// "kill my parent" marker into account so that the crash can happen in the
// middle of an agent iteration or of a gate.
func crashScenario(t tb, f *fixture) string {
	f.change("alpha")
	f.change("beta", "alpha")
	f.change("gamma")
	markers := filepath.Join(filepath.Dir(f.root), filepath.Base(f.root)+"-markers")
	if err := os.MkdirAll(markers, 0o755); err != nil {
		t.Fatal(err)
	}
	f.project.Gates["check"] = gateCheck(markers)
	return markers
}

func gateCheck(markers string) (g gateConfig) {
	g = gateConfig{Kind: "exec", Mode: "run", Order: 10, Run: []string{"sh", "-c",
		// The first run of the gate in change beta kills set (its parent) and
		// keeps running as an orphan; later runs check for bad content.
		`if [ -f "` + markers + `/kill-in-gate" ] && [ "$(basename "$PWD")" = beta ] && mkdir "` + markers + `/gate-killed" 2>/dev/null; then echo $$ > "` + markers + `/orphan.pid"; kill -9 $PPID; sleep 30; fi
! grep -rl bad --include='*.txt' . || exit 1`}}
	return g
}

const crashAgent = `
markers=$MARKERS
if [ -f "$markers/kill-in-agent" ] && [ "$change" = beta ] && mkdir "$markers/agent-killed" 2>/dev/null; then
	echo half > beta.txt
	echo $$ > "$markers/orphan.pid"
	kill -9 $PPID
	sleep 30
fi
echo "good $change" > "$change.txt"
`

// crashChild is the child process: it runs the scenario and kills itself
// at the named checkpoint.
func crashChild(root, point, agentPoint string) int {
	t := childT{}
	f := fixtureAt(t, root)
	crashScenario(t, f)
	if os.Getenv(envCrashPush) != "" {
		f.project.Delivery = config.Delivery{Mode: config.DeliveryPush, Remote: "origin"}
	}
	a := f.agentScript(crashAgent)
	if point != "" {
		f.checkpoint = func(p, change string) {
			if p == point && (change == "beta" || change == "" && strings.HasPrefix(p, "baseline-")) {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
	}
	_, err := f.apply(context.Background(), a)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	return 0 // the crash point was never reached
}

func TestCrashAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("crash tests re-execute the test binary")
	}
	// The uninterrupted run gives the reference tree of main.
	ref := newFixture(t)
	crashScenario(t, ref)
	t.Setenv("MARKERS", filepath.Join(filepath.Dir(ref.root), filepath.Base(ref.root)+"-markers"))
	sum, err := ref.apply(context.Background(), ref.agentScript(crashAgent))
	if err != nil || sum.Result != "success" {
		t.Fatalf("reference run: %v, %+v", err, sum)
	}
	want := ref.git("rev-parse", "main^{tree}")
	checkOneCommitPerChange(t, ref, ref.events(), "alpha", "beta", "gamma")

	points := []struct{ name, checkpoint, marker string }{
		{"after main's baseline is saved, before its checkout is removed", "baseline-judged", ""},
		{"after dispatch", "dispatched", ""},
		{"mid-iteration", "", "kill-in-agent"},
		{"mid-gate", "", "kill-in-gate"},
		{"after the integration stack, before fast-forward", "before-fast-forward", ""},
		{"after fast-forward, before it is journaled", "fast-forwarded", ""},
		{"after fast-forward, merged but not archived", "merged", ""},
		{"after the archive, before the branch is deleted", "archived", ""},
	}
	for _, pt := range points {
		t.Run(pt.name, func(t *testing.T) {
			f := newFixture(t)
			markers := crashScenario(t, f)
			t.Setenv("MARKERS", markers)
			if pt.marker != "" {
				if err := os.WriteFile(filepath.Join(markers, pt.marker), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			killAndResume(t, f, envCrashPoint+"="+pt.checkpoint)
			if got := f.git("rev-parse", "main^{tree}"); got != want {
				t.Errorf("main's tree after the crash and resume differs from an uninterrupted run:\n%s", f.git("diff", "--stat", want, "main^{tree}"))
			}
			ev := f.events()
			for _, c := range []string{"alpha", "beta", "gamma"} {
				if n := count(ev, journal.Merged, c); n != 1 {
					t.Errorf("%s merged %d times", c, n)
				}
				if n := count(ev, journal.Archived, c); n != 1 {
					t.Errorf("%s archived %d times", c, n)
				}
			}
			checkOneCommitPerChange(t, f, ev, "alpha", "beta", "gamma")
			if got := f.branches(); len(got) > 0 {
				t.Errorf("branches left after the resumed run: %v", got)
			}
			if _, err := os.Stat(filepath.Join(f.root, ".set", "baseline")); !os.IsNotExist(err) {
				t.Errorf("the baseline checkout is left: %v", err)
			}
			if out := f.git("worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
				t.Errorf("worktrees left after the resumed run:\n%s", out)
			}
			if leftovers, _ := filepath.Glob(filepath.Join(f.root, ".set", "procs", "*")); len(leftovers) > 0 {
				t.Errorf("process files left: %v", leftovers)
			}
			if data, err := os.ReadFile(filepath.Join(markers, "orphan.pid")); err == nil {
				pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
				if !gone(pid) {
					t.Errorf("the orphaned child %d of the killed run is still alive", pid)
					_ = syscall.Kill(-pid, syscall.SIGKILL)
				}
			}
		})
	}
}

// checkOneCommitPerChange checks main's history after a run of the crash
// scenario: no merge commit, the initial commit and then exactly one
// commit per change, each found by its Set-Change trailer, holding the
// change's folded delta, and named by the change's MERGED and ARCHIVED
// events.
func checkOneCommitPerChange(t *testing.T, f *fixture, ev []journal.Event, changes ...string) {
	t.Helper()
	if n := f.git("rev-list", "--merges", "--count", "main"); n != "0" {
		t.Errorf("main has %s merge commits, want 0", n)
	}
	if n := f.git("rev-list", "--count", "main"); n != strconv.Itoa(1+len(changes)) {
		t.Errorf("main has %s commits, want the initial one and one per change:\n%s", n, f.git("log", "--oneline", "main"))
	}
	for _, c := range changes {
		commits := strings.Fields(f.git("log", "--format=%H", "--grep=^Set-Change: "+c+"$", "main"))
		if len(commits) != 1 {
			t.Errorf("%s has %d commits on main, want 1", c, len(commits))
			continue
		}
		commit := commits[0]
		if got := f.git("show", commit+":openspec/specs/"+c+"/spec.md"); !strings.Contains(got, "### Requirement: REQ-"+strings.ToUpper(c)+"-01: "+c+"\n") {
			t.Errorf("%s's commit does not fold its delta into openspec/specs:\n%s", c, got)
		}
		archived := f.git("ls-tree", "-r", "--name-only", commit, "openspec/changes/")
		m := regexp.MustCompile(`(?m)^(openspec/changes/archive/\d{4}-\d\d-\d\d-` + c + `)/specs/` + c + `/spec\.md$`).FindStringSubmatch(archived)
		if m == nil || strings.Contains(archived, "openspec/changes/"+c+"/") {
			t.Errorf("%s's commit does not hold its change folder archived:\n%s", c, archived)
			continue
		}
		wantDir := m[1]
		for _, e := range ev {
			if e.Change != c {
				continue
			}
			switch e.Type {
			case journal.Merged:
				if d, _ := journal.Decode[journal.MergedData](e); d.Commit != commit {
					t.Errorf("%s's MERGED names %s, main has it as %s", c, d.Commit, commit)
				}
			case journal.Archived:
				want := journal.ArchivedData{Commit: commit, Capabilities: []string{c}, ArchiveDir: wantDir}
				if d, _ := journal.Decode[journal.ArchivedData](e); !reflect.DeepEqual(d, want) {
					t.Errorf("%s's ARCHIVED = %+v, want %+v", c, d, want)
				}
			}
		}
	}
}

// gone reports whether process pid has ended (waiting up to 2 s for it to
// be reaped).
func gone(pid int) bool {
	for range 40 {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// retryAgent fails the check in its first iteration; in the next, the
// first time, it kills set (its parent) and keeps running as an orphan.
const retryAgent = `
echo "test for REQ" > alpha_test.txt
if [ "$iteration" = 1 ]; then echo bad > alpha.txt; exit 0; fi
if mkdir "$MARKERS/agent-killed" 2>/dev/null; then
	echo $$ > "$MARKERS/orphan.pid"
	kill -9 $PPID
	sleep 30
fi
echo good > alpha.txt
`

// scriptCrashChild is the child process of a test whose agent script
// kills the run: it applies change alpha with that agent.
func scriptCrashChild(root, name string) int {
	f := fixtureAt(childT{}, root)
	if scenario, ok := killingScenarios[name]; ok {
		scenario(f)
	} else {
		f.change("alpha")
	}
	if _, err := f.apply(context.Background(), f.agentScript(killingAgents[name])); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	return 0 // the agent never killed it
}

// applyKilled runs the apply of change alpha, in a new fixture, in a
// child process whose agent, the killingAgents script named script,
// SIGKILLs it; it fails the test unless the child died of that signal,
// and returns the fixture to resume.
func applyKilled(t *testing.T, script string) *fixture {
	t.Helper()
	f := newFixture(t)
	f.change("alpha")
	t.Setenv("MARKERS", t.TempDir())
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envCrashRoot+"="+f.root, envCrashScript+"="+script)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed: %v\n%s", err, out)
	}
	return f
}

// TestCrashDuringARetry: set is SIGKILLed while the agent works on a
// verify retry; the resumed run gives the agent the prompt the killed
// iteration had, retry context included, and the change merges with one
// verify retry in all.
func TestCrashDuringARetry(t *testing.T) {
	if testing.Short() {
		t.Skip("crash tests re-execute the test binary")
	}
	f := applyKilled(t, "retry")
	prompt := filepath.Join(f.root, ".set", "changes", "alpha", "prompt-2.md")
	killed, err := os.ReadFile(prompt)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(killed), "\n## The last attempt failed: retry 1 of 2 (verify)\n") {
		t.Fatalf("the killed iteration's prompt lacks the retry context:\n%s", killed)
	}

	sum, err := f.apply(context.Background(), f.agentScript(retryAgent))
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Resumed || sum.Statuses["alpha"] != "archived" {
		t.Fatalf("resumed run: %+v", sum)
	}
	if resumed := readFile(t, f.root, ".set/changes/alpha/prompt-2.md"); resumed != string(killed) {
		t.Errorf("the resumed iteration's prompt differs from the killed one's:\n%s\nwant:\n%s", resumed, killed)
	}
	ev := f.events()
	if n := count(ev, journal.RetryScheduled, "alpha"); n != 1 {
		t.Errorf("verify retries = %d, want 1", n)
	}
	if n := verifyRounds(t, ev, "alpha"); n != 2 {
		t.Errorf("alpha had %d verify rounds, want 2", n)
	}
	data, _ := os.ReadFile(filepath.Join(os.Getenv("MARKERS"), "orphan.pid"))
	if pid, _ := strconv.Atoi(strings.TrimSpace(string(data))); pid == 0 || !gone(pid) {
		t.Errorf("the agent (pid %q) outlived the killed run", data)
	}
}

// plantAgent plants a hook and a core.hooksPath in the shared git
// directory the first time, and kills set (its parent) before any check
// of the guard sees them, keeping running as an orphan.
const plantAgent = `
if mkdir "$MARKERS/agent-killed" 2>/dev/null; then` + plantHooks + `	echo $$ > "$MARKERS/orphan.pid"
	kill -9 $PPID
	sleep 30
fi
echo "alpha works" > alpha.txt
echo "test for REQ" > alpha_test.txt
`

// TestCrashAfterAnAgentPlantedAHook: set is SIGKILLed right after an
// agent planted a hook and a core.hooksPath, before any check saw them;
// the resumed run compares the repository with the snapshot the killed
// run took, not with one of its own, and names both in GIT_DIR_CHANGED,
// left in place (set cannot tell them from the user's own) and charged
// to no change; alpha then merges.
func TestCrashAfterAnAgentPlantedAHook(t *testing.T) {
	if testing.Short() {
		t.Skip("crash tests re-execute the test binary")
	}
	f := applyKilled(t, "plant")
	if _, err := os.Stat(filepath.Join(f.root, ".set", "gitdir.json")); err != nil {
		t.Fatalf("the killed run left no snapshot of the git directory: %v", err)
	}

	sum, err := f.apply(context.Background(), f.agentScript(plantAgent))
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Resumed || sum.Statuses["alpha"] != "archived" {
		t.Fatalf("resumed run: %+v", sum)
	}
	var named []string
	for _, e := range f.events() {
		if e.Type != journal.GitDirChanged {
			continue
		}
		d, err := journal.Decode[journal.GitDirChangedData](e)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range d.Changes {
			named = append(named, c.What+" ("+c.Path+"): "+c.Do)
		}
	}
	want := []string{
		"hook post-commit added (.git/hooks/post-commit): if you did not add it, remove it: rm .git/hooks/post-commit",
		`core.hooksPath set to "/tmp/set-test-evil-hooks" (.git/config): if you did not set it, remove it: git config --file .git/config --unset-all core.hooksPath`,
	}
	if !reflect.DeepEqual(named, want) {
		t.Errorf("GIT_DIR_CHANGED named\n%s\nwant\n%s", strings.Join(named, "\n"), strings.Join(want, "\n"))
	}
	if n := count(f.events(), journal.SentinelAction, "alpha"); n != 0 {
		t.Errorf("alpha had %d SENTINEL_ACTION events, want none", n)
	}
	if _, err := os.Stat(filepath.Join(f.root, ".git", "hooks", "post-commit")); err != nil {
		t.Errorf("the planted hook: %v, want it left in place", err)
	}
	if _, err := os.Stat(filepath.Join(f.root, ".set", "gitdir.json")); !os.IsNotExist(err) {
		t.Errorf("the finished run left its snapshot of the git directory (%v)", err)
	}
}

// withPushRemote puts f in push mode against a bare remote origin holding
// its main, and returns the remote's directory.
func withPushRemote(t *testing.T, f *fixture) string {
	t.Helper()
	bare := f.root + "-remote.git"
	f.git("init", "-q", "--bare", "-b", "main", bare)
	f.git("remote", "add", "origin", bare)
	f.git("push", "-q", "origin", "main")
	f.project.Delivery = config.Delivery{Mode: config.DeliveryPush, Remote: "origin"}
	return bare
}

// TestCrashAndResumePushMode: in push mode, a run killed around the push
// of a change (its intent journaled, the remote's main moved, the local
// main moved) is resumed from what the remote says: every change ends on
// the remote's main once, with the tree of an uninterrupted run, and a
// change the remote took is never pushed again.
func TestCrashAndResumePushMode(t *testing.T) {
	if testing.Short() {
		t.Skip("crash tests re-execute the test binary")
	}
	ref := newFixture(t)
	crashScenario(t, ref)
	withPushRemote(t, ref)
	t.Setenv("MARKERS", filepath.Join(filepath.Dir(ref.root), filepath.Base(ref.root)+"-markers"))
	sum, err := ref.apply(context.Background(), ref.agentScript(crashAgent))
	if err != nil || sum.Result != "success" {
		t.Fatalf("reference run: %v, %+v", err, sum)
	}
	want := ref.git("rev-parse", "main^{tree}")

	for _, pt := range []struct {
		checkpoint string
		pushes     int // of beta, PUSHING events
	}{
		{"before-push", 2}, // the intent journaled, the push not made: pushed by the resumed run
		{"pushed", 1},      // the remote took it: the resumed run finds it there
		{"fast-forwarded", 1},
	} {
		t.Run(pt.checkpoint, func(t *testing.T) {
			f := newFixture(t)
			markers := crashScenario(t, f)
			bare := withPushRemote(t, f)
			t.Setenv("MARKERS", markers)
			killAndResume(t, f, envCrashPoint+"="+pt.checkpoint, envCrashPush+"=1")
			remoteMain := f.git("--git-dir="+bare, "rev-parse", "main")
			if local := f.git("rev-parse", "main"); local != remoteMain {
				t.Errorf("the local main is at %s, the remote's at %s", local, remoteMain)
			}
			if got := f.git("rev-parse", remoteMain+"^{tree}"); got != want {
				t.Errorf("the remote's main after the crash and resume differs from an uninterrupted run:\n%s", f.git("diff", "--stat", want, remoteMain+"^{tree}"))
			}
			ev := f.events()
			checkOneCommitPerChange(t, f, ev, "alpha", "beta", "gamma")
			if n := count(ev, journal.Pushing, "beta"); n != pt.pushes {
				t.Errorf("beta: %d PUSHING, want %d", n, pt.pushes)
			}
		})
	}
}

// killAndResume runs the crash child (this test binary) on f with env
// added, which must die by SIGKILL at its checkpoint, then resumes the run
// in this process: it must resume and succeed.
func killAndResume(t *testing.T, f *fixture, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), envCrashRoot+"="+f.root), env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed: %v\n%s", err, out)
	}
	sum, err := f.apply(context.Background(), f.agentScript(crashAgent))
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Resumed || sum.Result != "success" {
		t.Fatalf("resumed run: %+v", sum)
	}
}

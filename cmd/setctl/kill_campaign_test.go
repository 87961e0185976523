package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/state"
	"github.com/set-engine/set/internal/gittest"
)

// The kill campaign: real `setctl apply` processes on the project of
// testdata/kill-campaign.txtar, SIGKILLed at random moments and resumed
// until the run is done. Each trial kills 1 to 3 times, each time one of
// three ways: the setctl process alone (its agents and gates live on as
// orphans), its process group (setctl and the git commands it is running)
// or every process of the run (its session: agents and gates too).
const (
	// envKillTrials sets the number of trials; a short form runs by
	// default.
	envKillTrials = "SET_KILL_TRIALS"
	// envKillSeed replays the trials from a seed a failure printed.
	envKillSeed = "SET_KILL_SEED"
	// defaultKillTrials is the short form that `make test` runs, for
	// each merge queue.
	defaultKillTrials = 5
)

// killKind is how a trial kills a running setctl apply.
type killKind int

const (
	killPID     killKind = iota // setctl alone
	killGroup                   // setctl's process group
	killSession                 // every process of the run
)

func (k killKind) String() string {
	return [...]string{"pid", "group", "session"}[k]
}

// TestKillCampaign kills `setctl apply` at random and checks that
// resuming always ends the run as an uninterrupted run ends it, with the
// merge queue integrating one change at a time (speculative-1), four
// stacked (speculative-4), and one at a time in push mode (push): `SET_KILL_TRIALS=100 go test ./cmd/setctl -run
// TestKillCampaign` runs a hundred trials of each; SET_KILL_SEED replays
// the ones a failure names.
func TestKillCampaign(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds the processes of a run through /proc")
	}
	if testing.Short() && os.Getenv(envKillTrials) == "" {
		t.Skip("-short: the campaign runs real applies for a minute; make test runs it")
	}
	trials := defaultKillTrials
	if v := os.Getenv(envKillTrials); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number of trials", envKillTrials, v)
		}
		trials = n
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(envKillSeed); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want the seed a failed trial printed", envKillSeed, v)
		}
		seed = n
	}
	setctl, err := exec.LookPath("setctl") // the test binary, as testscript.Main installs it
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	t.Setenv("CUE_REGISTRY", "none")
	t.Setenv("NO_COLOR", "1")
	gittest.Hermetic(t, "")
	project, err := txtar.ParseFile(filepath.Join("testdata", "kill-campaign.txtar"))
	if err != nil {
		t.Fatal(err)
	}

	// The three campaigns run at once: each apply runs in a repository
	// and a session of its own, and each campaign draws its kill times
	// from its own uninterrupted run, timed under the same load. The
	// environment set above is the whole process's and stays as it is
	// until they all end (this test's cleanup runs after its parallel
	// subtests).
	for _, speculative := range []int{1, 4} {
		t.Run(fmt.Sprintf("speculative-%d", speculative), func(t *testing.T) {
			t.Parallel()
			campaign(t, setctl, withSpeculative(t, project, speculative), trials, seed)
		})
	}
	// Push mode (project.delivery): each change lands on a local bare
	// remote's main by a push; a resumed run asks the remote what landed,
	// so no change is pushed twice.
	t.Run("push", func(t *testing.T) {
		t.Parallel()
		campaign(t, setctl, withPush(t, withSpeculative(t, project, 1)), trials, seed)
	})
}

// withPush is the campaign's project in push mode; newCampaignRepo gives
// each repository a bare remote origin.
func withPush(t *testing.T, project *txtar.Archive) *txtar.Archive {
	out := &txtar.Archive{Comment: project.Comment}
	for _, f := range project.Files {
		if f.Name == "set.cue" {
			data := strings.Replace(string(f.Data), "\tmaxParallel: 4\n", "\tmaxParallel: 4\n\tdelivery: mode: \"push\"\n", 1)
			if data == string(f.Data) {
				t.Fatal("the campaign's set.cue has no `maxParallel: 4` line to put delivery under")
			}
			f.Data = []byte(data)
		}
		out.Files = append(out.Files, f)
	}
	return out
}

// withSpeculative is the campaign's project with mergeQueue.speculative n.
func withSpeculative(t *testing.T, project *txtar.Archive, n int) *txtar.Archive {
	out := &txtar.Archive{Comment: project.Comment}
	for _, f := range project.Files {
		if f.Name == "set.cue" {
			data := strings.Replace(string(f.Data), "\tmaxParallel: 4\n", fmt.Sprintf("\tmaxParallel: 4\n\tmergeQueue: speculative: %d\n", n), 1)
			if data == string(f.Data) {
				t.Fatal("the campaign's set.cue has no `maxParallel: 4` line to put the merge queue's setting under")
			}
			f.Data = []byte(data)
		}
		out.Files = append(out.Files, f)
	}
	return out
}

// campaign runs the trials on project, from seed.
func campaign(t *testing.T, setctl string, project *txtar.Archive, trials int, seed uint64) {
	// The uninterrupted run: what every trial must end with.
	ref := newCampaignRepo(t, project)
	start := time.Now()
	if res := ref.apply(setctl, nil); res.err != nil {
		t.Fatalf("the uninterrupted run failed: %v\n%s", res.err, res.output)
	}
	took := time.Since(start)
	// Blob IDs are content hashes: the listing compares across repositories.
	want := ref.git("ls-tree", "-r", "main")
	ref.check(t, want, nil)
	t.Logf("uninterrupted run: %s; %d trials from seed %d", took.Round(time.Millisecond), trials, seed)

	for i := range trials {
		trialSeed := seed + uint64(i)
		t.Run(fmt.Sprintf("seed-%d", trialSeed), func(t *testing.T) {
			repo := newCampaignRepo(t, project)
			rng := rand.New(rand.NewPCG(trialSeed, trialSeed))
			var log []string
			defer func() {
				if t.Failed() {
					t.Logf("replay: %s=%d %s=1 go test ./cmd/setctl -run 'TestKillCampaign/%s'\nkills: %s",
						envKillSeed, trialSeed, envKillTrials, strings.Split(t.Name(), "/")[1], strings.Join(log, "; "))
				}
			}()
			var sessions []int
			for range 1 + rng.IntN(3) {
				k := &kill{kind: killKind(rng.IntN(3)), after: time.Duration(rng.Int64N(int64(took)))}
				res := repo.apply(setctl, k)
				sessions = append(sessions, res.session)
				log = append(log, fmt.Sprintf("%s after %s (%s)", k.kind, k.after.Round(time.Millisecond), res.describe()))
			}
			res := repo.apply(setctl, nil)
			sessions = append(sessions, res.session)
			log = append(log, "resumed: "+res.describe())
			if res.err != nil {
				t.Fatalf("the resumed run failed: %v\n%s", res.err, res.output)
			}
			repo.check(t, want, sessions)
		})
	}
}

// campaignRepo is a git repository holding the campaign's project, with
// main at its one commit.
type campaignRepo struct {
	t   *testing.T
	dir string
	// remote is the bare remote of a push-mode project, or "".
	remote string
}

func newCampaignRepo(t *testing.T, project *txtar.Archive) *campaignRepo {
	dir := t.TempDir()
	for _, f := range project.Files {
		path := filepath.Join(dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := &campaignRepo{t: t, dir: dir}
	r.git("init", "-q", "-b", "main")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "skeleton")
	for _, f := range project.Files {
		if f.Name == "set.cue" && strings.Contains(string(f.Data), `delivery: mode: "push"`) {
			r.remote = filepath.Join(t.TempDir(), "remote.git")
			r.git("init", "-q", "--bare", "-b", "main", r.remote)
			r.git("remote", "add", "origin", r.remote)
			r.git("push", "-q", "origin", "main")
		}
	}
	return r
}

func (r *campaignRepo) git(args ...string) string {
	r.t.Helper()
	out, err := exec.Command("git", append([]string{"-C", r.dir}, args...)...).CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// kill says how and when to kill a setctl apply.
type kill struct {
	kind  killKind
	after time.Duration
}

// applyResult is how one setctl apply ended.
type applyResult struct {
	session int // the session it ran in (its PID)
	killed  bool
	err     error // nil when it exited 0
	output  []byte
}

func (a applyResult) describe() string {
	switch {
	case a.killed:
		return "killed"
	case a.err != nil:
		lines := strings.Split(strings.TrimSpace(string(a.output)), "\n")
		return fmt.Sprintf("%v: %s", a.err, lines[len(lines)-1])
	}
	return "exit 0"
}

// apply runs `setctl apply --yes` in the repository, in a session of its
// own, and, if k is not nil, kills it k.after its start unless it ended
// by then.
func (r *campaignRepo) apply(setctl string, k *kill) applyResult {
	if r.remote != "" {
		// A killed git push takes the local remote's receive-pack with
		// it, which can leave the remote's ref locked; a real remote's
		// receive-pack outlives its client and lets go of the lock.
		locks, _ := filepath.Glob(filepath.Join(r.remote, "refs", "heads", "*.lock"))
		for _, l := range locks {
			_ = os.Remove(l)
		}
	}
	cmd := exec.Command(setctl, "-C", r.dir, "apply", "--yes")
	// A file, not a pipe: Wait returns when setctl ends, even if an
	// orphan it leaves holds its output open.
	out, err := os.CreateTemp(r.t.TempDir(), "apply-*.out")
	if err != nil {
		r.t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	output := func() []byte {
		data, _ := os.ReadFile(out.Name())
		return data
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	res := applyResult{session: cmd.Process.Pid}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var timer <-chan time.Time
	if k != nil {
		timer = time.After(k.after)
	}
	deadline := time.After(3 * time.Minute)
	for {
		select {
		case err := <-done:
			res.err, res.output = err, output()
			return res
		case <-timer:
			timer = nil
			res.killed = true
			switch k.kind {
			case killPID:
				_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			case killGroup:
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			case killSession:
				for _, pid := range sessionProcesses(res.session) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		case <-deadline:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			r.t.Fatalf("setctl apply still running after 3 minutes:\n%s", output())
		}
	}
}

// check asserts that the run in the repository ended as the
// uninterrupted run did, with main's tree at want, and that no process of
// the given sessions is left.
func (r *campaignRepo) check(t *testing.T, want string, sessions []int) {
	t.Helper()
	if got := r.git("ls-tree", "-r", "main"); got != want {
		t.Errorf("main's tree differs from the uninterrupted run's:\n%s", lineDiff(want, got))
	}
	if merges := r.git("rev-list", "--merges", "main"); merges != "" {
		t.Errorf("main is not linear: merge commits %s", merges)
	}
	if r.remote != "" {
		// The remote's main is the main: the local one ends there, so
		// every check of main below is one of the remote's.
		if theirs, mine := r.git("--git-dir="+r.remote, "rev-parse", "main"), r.git("rev-parse", "main"); theirs != mine {
			t.Errorf("the remote's main is at %s, the local main at %s", theirs, mine)
		}
	}
	layout := rundir.New(r.dir)
	events, err := journal.ReadFile(layout.Events())
	if err != nil {
		t.Fatal(err)
	}
	trailers := strings.Fields(r.git("log", "--format=%(trailers:key=Set-Change,valueonly)", "main"))
	for i := 1; i <= 10; i++ {
		c := fmt.Sprintf("c%02d", i)
		if n := count(trailers, c); n != 1 {
			t.Errorf("%s: %d commits on main with its Set-Change trailer, want 1", c, n)
		}
		for _, typ := range []journal.Type{journal.Merged, journal.Archived} {
			n := 0
			for _, e := range events {
				if e.Type == typ && e.Change == c {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%s: %d %s events, want 1", c, n, typ)
			}
		}
	}
	tests := exec.Command("sh", "check.sh")
	tests.Dir = r.dir
	if out, err := tests.CombinedOutput(); err != nil {
		t.Errorf("the tests fail on main: %v\n%s", err, out)
	}
	rebuilt, err := state.Read(layout.Dir())
	if err != nil {
		t.Fatal(err)
	}
	saved, err := state.Load(layout.State())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rebuilt, saved); diff != "" {
		t.Errorf("state.json differs from the state rebuilt from the journal (-rebuilt +state.json):\n%s", diff)
	}
	for c, s := range rebuilt.Changes {
		if s.Status != state.Archived {
			t.Errorf("%s is %s, want archived", c, s.Status)
		}
	}
	if wts := r.git("worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", wts)
	}
	for _, dir := range []string{layout.Worktrees(), layout.Procs()} {
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("%s is not empty: %s", dir, strings.Join(names, ", "))
		}
	}
	if lock, _ := os.ReadFile(filepath.Join(layout.Dir(), "lock")); len(bytes.TrimSpace(lock)) > 0 {
		t.Errorf(".set/lock still names a holder: %s", lock)
	}
	var locks []string
	_ = filepath.WalkDir(filepath.Join(r.dir, ".git"), func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".lock") {
			locks = append(locks, path)
		}
		return nil
	})
	if len(locks) > 0 {
		t.Errorf("git lock files left: %s", strings.Join(locks, ", "))
	}
	// An orphan killed by the resumed run may take a moment to go.
	var left []int
	for range 50 {
		left = left[:0]
		for _, s := range sessions {
			left = append(left, sessionProcesses(s)...)
		}
		if len(left) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, pid := range left {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		t.Errorf("process %d of the run is left: %s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
	}
}

// lineDiff lists the lines only want has (-) and only got has (+).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for _, l := range w {
		if !slices.Contains(g, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// sessionProcesses are the live processes (zombies left out) of the
// session sid, read from /proc.
func sessionProcesses(sid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp session …; comm may hold spaces and
		// parentheses, so the fields are counted after the last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 4 || fields[0] == "Z" {
			continue
		}
		if s, err := strconv.Atoi(fields[3]); err == nil && s == sid {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids
}

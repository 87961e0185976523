package orchestrator

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/state"
)

// plantHooks is the part of an agent (or of code an agent wrote) that
// plants, from the change's worktree, a post-commit hook in the shared
// git directory and points core.hooksPath at a directory of its own.
const plantHooks = `
common=$(git rev-parse --path-format=absolute --git-common-dir)
printf '#!/bin/sh\necho planted\n' > "$common/hooks/post-commit"
chmod +x "$common/hooks/post-commit"
git config core.hooksPath /tmp/set-test-evil-hooks
`

// userGitDir gives the fixture's repository a hook and an alias of the
// user's own, and returns what the test compares at the end: the hooks
// directory's files (with their modes and times) and the config file.
func userGitDir(f *fixture) func() map[string]string {
	f.t.Helper()
	f.write(".git/hooks/pre-commit", "#!/bin/sh\necho the user's own check\n")
	if err := os.Chmod(filepath.Join(f.root, ".git/hooks/pre-commit"), 0o755); err != nil {
		f.t.Fatal(err)
	}
	f.git("config", "alias.st", "status -s")
	return func() map[string]string {
		out := map[string]string{}
		hooks := filepath.Join(f.root, ".git", "hooks")
		entries, err := os.ReadDir(hooks)
		if err != nil {
			f.t.Fatal(err)
		}
		for _, e := range entries {
			info, err := os.Lstat(filepath.Join(hooks, e.Name()))
			if err != nil {
				f.t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(hooks, e.Name()))
			if err != nil {
				f.t.Fatal(err)
			}
			out["hooks/"+e.Name()] = info.Mode().String() + " " + info.ModTime().Format(time.RFC3339Nano) + "\n" + string(data)
		}
		data, err := os.ReadFile(filepath.Join(f.root, ".git", "config"))
		if err != nil {
			f.t.Fatal(err)
		}
		out["config"] = string(data)
		return out
	}
}

// TestAgentPlantingHooksFailsItsChange: an agent that plants a hook and a
// core.hooksPath in the shared git directory fails its change with a
// security message naming both, journaled; the repository's hooks and
// config end as they began, the user's own hook untouched; the other
// change of the run merges.
func TestAgentPlantingHooksFailsItsChange(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	files := userGitDir(f)
	began := files()
	f.project.MaxParallel = 1 // the check blames the change whose iteration just ended
	f.change("hostile")
	f.change("benign")
	a := f.agentScript(`
if [ "$change" = hostile ]; then` + plantHooks + `fi
echo "$change works" > $change.txt
echo "test for REQ" > ${change}_test.txt
`)
	sum, err := f.apply(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]state.Status{"hostile": state.FailedAgentError, "benign": state.Archived}
	if sum.Result != "failed" || !cmp.Equal(sum.Statuses, want) {
		t.Fatalf("result %s, statuses %v; want failed, %v", sum.Result, sum.Statuses, want)
	}
	msg := `security: the repository's git directory, which every worktree shares, changed while hostile's agent worked, outside its worktree: ` +
		`hook post-commit added; core.hooksPath set to "/tmp/set-test-evil-hooks"; set undid it`
	if got := f.state().Changes["hostile"].Error; got != msg {
		t.Errorf("hostile failed with\n%s\nwant\n%s", got, msg)
	}
	var actions []journal.SentinelActionData
	for _, e := range f.events() {
		if e.Type == journal.SentinelAction && e.Change == "hostile" {
			d, err := journal.Decode[journal.SentinelActionData](e)
			if err != nil {
				t.Fatal(err)
			}
			actions = append(actions, d)
		}
	}
	if len(actions) != 1 || actions[0].Rule != gitDirRule || actions[0].Action != "fail" || actions[0].When != msg {
		t.Errorf("hostile's SENTINEL_ACTION events = %+v, want one of %s failing it with the message", actions, gitDirRule)
	}
	if d := cmp.Diff(began, files()); d != "" {
		t.Errorf("the repository's hooks and config (-began +ended):\n%s", d)
	}
	if log := f.git("log", "--format=%s", "main"); strings.Contains(log, "hostile") {
		t.Errorf("main holds hostile's work:\n%s", log)
	}
}

// TestGateRunningPlantedCodeFailsItsChange: the agent's code, run by a
// verify gate, plants the hook: the stack stops and the change fails
// with the security message, its work never queued.
func TestGateRunningPlantedCodeFailsItsChange(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	files := userGitDir(f)
	began := files()
	f.project.Gates["check"] = gateConfig{Kind: "exec", Mode: "run", Order: 10,
		Run: []string{"sh", "-c", "if [ -f plant.sh ]; then sh plant.sh; fi"}}
	f.change("alpha")
	a := f.agentScript(`
cat > plant.sh <<'EOF'` + plantHooks + `EOF
echo "test for REQ" > alpha_test.txt
`)
	sum, err := f.apply(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if got := sum.Statuses["alpha"]; got != state.FailedAgentError {
		t.Fatalf("alpha is %s, want %s", got, state.FailedAgentError)
	}
	if got := f.state().Changes["alpha"].Error; !strings.HasPrefix(got, "security: ") || !strings.Contains(got, "hook post-commit added") {
		t.Errorf("alpha failed with %q, want the security message", got)
	}
	if n := count(f.events(), journal.MergeQueued, "alpha"); n != 0 {
		t.Errorf("alpha was queued %d times", n)
	}
	if d := cmp.Diff(began, files()); d != "" {
		t.Errorf("the repository's hooks and config (-began +ended):\n%s", d)
	}
}

// TestGitDirChangedOutsideAChangesWorkFailsTheRun: a change no check
// after an agent's iteration or a verify gate saw (here an integration
// gate's) is undone at the end of the run, which fails with the security
// message.
func TestGitDirChangedOutsideAChangesWorkFailsTheRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	files := userGitDir(f)
	began := files()
	// Not on main: the baseline, which judges main before the guard's
	// snapshot, runs the gate too.
	f.project.Gates["plant"] = gateConfig{Kind: "exec", Mode: "run", Order: 20,
		Run: []string{"sh", "-c", "if [ -f alpha.txt ]; then " + plantHooks + "fi"}}
	f.project.Integration = config.Stack{"check": {}, "plant": {}}
	f.change("alpha")
	a := f.agentScript(`
echo "alpha works" > alpha.txt
echo "test for REQ" > alpha_test.txt
`)
	sum, err := f.apply(context.Background(), a)
	want := `security: the repository's git directory, which every worktree shares, changed during the run: ` +
		`hook post-commit added; core.hooksPath set to "/tmp/set-test-evil-hooks"; set undid it`
	if err == nil || err.Error() != want {
		t.Errorf("Apply error = %v, want %s", err, want)
	}
	if sum == nil || sum.Result != "failed" {
		t.Errorf("summary = %+v, want a failed run", sum)
	}
	if d := cmp.Diff(began, files()); d != "" {
		t.Errorf("the repository's hooks and config (-began +ended):\n%s", d)
	}
}

// TestGitDirChangedWhileTwoAgentsWorkedFailsBoth: set cannot tell which
// of two agents at work at once planted the hook; both changes fail, and
// the message says so.
func TestGitDirChangedWhileTwoAgentsWorkedFailsBoth(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	files := userGitDir(f)
	began := files()
	f.project.MaxParallel = 2
	f.change("hostile")
	f.change("benign")
	marks := t.TempDir()
	// hostile plants once benign's agent runs; benign ends once hostile
	// planted.
	a := f.agentScript(`
marks=` + marks + `
wait_for() { i=0; until [ -e "$1" ]; do i=$((i+1)); [ $i -lt 1000 ] || exit 3; sleep 0.01; done; }
echo "$change works" > $change.txt
echo "test for REQ" > ${change}_test.txt
if [ "$change" = hostile ]; then
	wait_for "$marks/benign-runs"` + plantHooks + `	touch "$marks/planted"
else
	touch "$marks/benign-runs"
	wait_for "$marks/planted"
fi
`)
	sum, err := f.apply(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]state.Status{"hostile": state.FailedAgentError, "benign": state.FailedAgentError}
	if !cmp.Equal(sum.Statuses, want) {
		t.Fatalf("statuses %v, want %v", sum.Statuses, want)
	}
	msg := `security: the repository's git directory, which every worktree shares, changed while the agents of benign and hostile worked, ` +
		`outside their worktrees (set cannot tell which of them did it): hook post-commit added; core.hooksPath set to "/tmp/set-test-evil-hooks"; set undid it`
	for _, c := range []string{"hostile", "benign"} {
		if got := f.state().Changes[c].Error; got != msg {
			t.Errorf("%s failed with\n%s\nwant\n%s", c, got, msg)
		}
	}
	if d := cmp.Diff(began, files()); d != "" {
		t.Errorf("the repository's hooks and config (-began +ended):\n%s", d)
	}
}

// TestGitDirChangedWhileNoRunWatchedIsNamed: a run finds the snapshot a
// killed run left, and the git directory changed since (as if the killed
// run's agent had planted a hook and an alias after its last check, or
// the user had added them while no run went): it names each change in
// GIT_DIR_CHANGED, with its path and what to do, and leaves it in place,
// failing no change for it; at its end the snapshot it kept is gone.
func TestGitDirChangedWhileNoRunWatchedIsNamed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	userGitDir(f)
	ctx := context.Background()
	killed, err := git.TakeExecSnapshot(ctx, f.root)
	if err != nil {
		t.Fatal(err)
	}
	data, err := killed.Encode()
	if err != nil {
		t.Fatal(err)
	}
	file := rundir.New(f.root).GitDirSnapshot()
	f.write(".set/gitdir.json", string(data))
	f.write(".git/hooks/post-commit", "#!/bin/sh\necho planted\n")
	f.git("config", "alias.x", "!sh -c evil")
	f.change("alpha")
	a := f.agentScript(`
echo "alpha works" > alpha.txt
echo "test for REQ" > alpha_test.txt
`)
	sum := f.applySucceeds(a)
	if got := sum.Statuses["alpha"]; got != state.Archived {
		t.Errorf("alpha is %s, want %s", got, state.Archived)
	}
	var named []journal.GitDirChangedData
	for _, e := range f.events() {
		switch e.Type {
		case journal.GitDirChanged:
			if e.Change != "" {
				t.Errorf("GIT_DIR_CHANGED of change %s, want one of the run", e.Change)
			}
			d, err := journal.Decode[journal.GitDirChangedData](e)
			if err != nil {
				t.Fatal(err)
			}
			named = append(named, d)
		case journal.SentinelAction:
			t.Errorf("a SENTINEL_ACTION of %s: the changes found are charged to no change", e.Change)
		}
	}
	want := []journal.GitDirChangedData{{Changes: []journal.GitDirChange{
		{What: "hook post-commit added", Path: ".git/hooks/post-commit", Do: "if you did not add it, remove it: rm .git/hooks/post-commit"},
		{What: `alias.x set to "!sh -c evil"`, Path: ".git/config", Do: "if you did not set it, remove it: git config --file .git/config --unset-all alias.x"},
	}}}
	if d := cmp.Diff(want, named); d != "" {
		t.Errorf("GIT_DIR_CHANGED (-want +got):\n%s", d)
	}
	if got := readFile(t, f.root, ".git/hooks/post-commit"); got != "#!/bin/sh\necho planted\n" {
		t.Errorf("the hook found ends as %q, want it left as it was", got)
	}
	if got := f.git("config", "alias.x"); got != "!sh -c evil" {
		t.Errorf("alias.x ends as %q, want it left as it was", got)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the finished run left its snapshot %s (%v)", file, err)
	}
}

// TestGitDirSnapshotOutlivesARunEndedBeforeItsGuard: a run that ends
// before its first dispatch (main's baseline fails) leaves the snapshot a
// killed run left for the next run, which names what changed since.
func TestGitDirSnapshotOutlivesARunEndedBeforeItsGuard(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	killed, err := git.TakeExecSnapshot(context.Background(), f.root)
	if err != nil {
		t.Fatal(err)
	}
	data, err := killed.Encode()
	if err != nil {
		t.Fatal(err)
	}
	f.write(".set/gitdir.json", string(data))
	f.write(".git/hooks/post-commit", "#!/bin/sh\necho planted\n")
	f.write("bad.txt", "bad\n")
	f.git("add", "-A")
	f.git("commit", "-q", "-m", "main fails its check")
	f.change("alpha")
	a := f.agentScript(`echo "test for REQ" > alpha_test.txt`)
	if sum, _ := f.apply(context.Background(), a); sum == nil || sum.Result != "failed" {
		t.Fatalf("summary %+v, want a run failed by its baseline", sum)
	}
	if got := readFile(t, f.root, ".set/gitdir.json"); got != string(data) {
		t.Errorf("the snapshot the killed run left became:\n%s", got)
	}
	if n := count(f.events(), journal.GitDirChanged, ""); n != 0 {
		t.Errorf("%d GIT_DIR_CHANGED before the guard took its snapshot", n)
	}
}

// The advice for what changed in the git directory is pasted into a
// shell, and an agent chose the names in it: a hook or a key named to run
// code is one quoted word.
func TestAdviceQuotesWhatAnAgentNamed(t *testing.T) {
	hook := git.ExecChange{Hook: ".git/hooks/x; touch pwned", What: "added"}
	if got, want := advice(hook, hook.Hook), `if you did not add it, remove it: rm '.git/hooks/x; touch pwned'`; got != want {
		t.Errorf("advice(hook) = %s\nwant %s", got, want)
	}
	key := git.ExecChange{File: "config", Key: "filter.a;b.clean", What: "added"}
	if got, want := advice(key, ".git/config"), `if you did not set it, remove it: git config --file .git/config --unset-all 'filter.a;b.clean'`; got != want {
		t.Errorf("advice(key) = %s\nwant %s", got, want)
	}
}

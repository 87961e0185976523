package project

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/internal/gittest"
)

func TestCheckMainBranch(t *testing.T) {
	gittest.Hermetic(t, "")
	ctx := context.Background()
	gitIn := func(dir string, args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// check gives the verdict as doctor shows it: ok, warn or fail.
	check := func(dir, branch string) (string, string) {
		d, ok := CheckMainBranch(ctx, dir, &config.Project{MainBranch: branch})
		switch {
		case ok:
			return "ok", d.Text(dir)
		case d.Severity == diag.Warning:
			return "warn", d.Text(dir)
		}
		return "fail", d.Text(dir)
	}
	expect := func(what, status, msg, wantStatus, wantMsg string) {
		t.Helper()
		if status != wantStatus || !strings.Contains(msg, wantMsg) {
			t.Errorf("%s: %s %q, want %s with %q", what, status, msg, wantStatus, wantMsg)
		}
	}

	dir := t.TempDir()
	status, msg := check(dir, "main")
	expect("not a repository", status, msg, "warn", "not in a git repository yet; setctl apply needs one with a commit on main (git init -b main, then commit)")

	gitIn(dir, "init", "-q", "-b", "main")
	status, msg = check(dir, "main")
	expect("no commit, on main", status, msg, "warn", "the repository has no commit yet; setctl apply branches from main, so commit first")
	status, msg = check(dir, "develop")
	expect("no commit, on another branch", status, msg, "fail", `project.mainBranch: branch "develop" does not exist: the repository has no commit yet and is on main; set mainBranch: "main" in set.cue`)

	gitIn(dir, "commit", "-q", "--allow-empty", "-m", "first")
	status, msg = check(dir, "main")
	expect("main exists", status, msg, "ok", "main at ")

	// On a feature branch, the suggestion is the branch a main branch
	// usually is, not the one checked out; set's own branches are not listed.
	gitIn(dir, "branch", "-m", "main", "master")
	gitIn(dir, "branch", "set/greet")
	gitIn(dir, "checkout", "-q", "-b", "feature")
	status, msg = check(dir, "main")
	expect("main missing", status, msg, "fail", `project.mainBranch: branch "main" does not exist in this repository (its branches: feature, master); set mainBranch: "master" in set.cue`)
}

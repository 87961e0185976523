package delivery

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/internal/gittest"
)

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// clones makes a bare remote with one commit on main and two clones of
// it: mine (the project) and theirs (a teammate).
func clones(t *testing.T) (mine, theirs string) {
	t.Helper()
	gittest.Hermetic(t, "")
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed")
	gitIn(t, dir, "init", "-q", "-b", "main", seed)
	if err := os.WriteFile(filepath.Join(seed, "README.md"), []byte("# x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, seed, "add", "-A")
	gitIn(t, seed, "commit", "-qm", "seed")
	gitIn(t, dir, "init", "-q", "--bare", "-b", "main", filepath.Join(dir, "remote.git"))
	gitIn(t, seed, "push", "-q", filepath.Join(dir, "remote.git"), "main")
	mine, theirs = filepath.Join(dir, "mine"), filepath.Join(dir, "theirs")
	gitIn(t, dir, "clone", "-q", "remote.git", mine)
	gitIn(t, dir, "clone", "-q", "remote.git", theirs)
	return mine, theirs
}

func commitIn(t *testing.T, dir, msg string) string {
	t.Helper()
	gitIn(t, dir, "commit", "-q", "--allow-empty", "-m", msg)
	return gitIn(t, dir, "rev-parse", "HEAD")
}

var pushMode = &config.Project{MainBranch: "main", Delivery: config.Delivery{Mode: config.DeliveryPush, Remote: "origin"}}

func TestFollowFastForwardsABehindMain(t *testing.T) {
	ctx := context.Background()
	mine, theirs := clones(t)
	record := filepath.Join(t.TempDir(), "ff.json")
	before := gitIn(t, mine, "rev-parse", "main")
	s, err := Follow(ctx, mine, pushMode, record)
	if err != nil || s.Moved() {
		t.Fatalf("Follow at the remote's main = %+v, %v", s, err)
	}
	pushed := commitIn(t, theirs, "theirs")
	gitIn(t, theirs, "push", "-q", "origin", "main")
	s, err = Follow(ctx, mine, pushMode, record)
	if err != nil || s.From != before || s.To != pushed {
		t.Fatalf("Follow behind = %+v, %v; want %s → %s", s, err, before, pushed)
	}
	if got := gitIn(t, mine, "rev-parse", "HEAD"); got != pushed {
		t.Fatalf("main's checkout at %s, want %s", got, pushed)
	}
}

func TestFollowStopsAMainAheadOrDiverged(t *testing.T) {
	ctx := context.Background()
	mine, theirs := clones(t)
	record := filepath.Join(t.TempDir(), "ff.json")
	local := commitIn(t, mine, "mine, not pushed")
	_, err := Follow(ctx, mine, pushMode, record)
	var nf *NotFollowingError
	if !errors.As(err, &nf) || !nf.Ahead || nf.Mine != 1 {
		t.Fatalf("Follow ahead: %v (%+v), want a NotFollowingError, ahead by 1", err, nf)
	}
	commitIn(t, theirs, "theirs")
	gitIn(t, theirs, "push", "-q", "origin", "main")
	_, err = Follow(ctx, mine, pushMode, record)
	if !errors.As(err, &nf) || nf.Ahead || nf.Mine != 1 {
		t.Fatalf("Follow diverged: %v (%+v), want a NotFollowingError, diverged", err, nf)
	}
	if got := gitIn(t, mine, "rev-parse", "main"); got != local {
		t.Fatalf("Follow moved a main it cannot follow to %s", got)
	}
}

package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/llm/usage"
)

// replayRepo is a git repository with one commit of greet.txt on main and
// a recordings directory next to it.
func replayRepo(t *testing.T) (repo, recordings string) {
	t.Helper()
	isolateGit(t)
	root := t.TempDir()
	repo = filepath.Join(root, "repo")
	gitT(t, root, "init", "-q", "-b", "main", repo)
	writeFileT(t, filepath.Join(repo, "greet.txt"), "hello\n")
	gitT(t, repo, "add", "-A")
	gitT(t, repo, "commit", "-q", "-m", "initial")
	return repo, filepath.Join(root, "recordings")
}

const greetPatch = `diff --git a/greet.txt b/greet.txt
index ce01362..94954ab 100644
--- a/greet.txt
+++ b/greet.txt
@@ -1 +1,2 @@
 hello
+world
diff --git a/new/file.go b/new/file.go
new file mode 100644
index 0000000..06ab3b3
--- /dev/null
+++ b/new/file.go
@@ -0,0 +1 @@
+package file
`

func newReplay(t *testing.T, recordings string) Adapter {
	t.Helper()
	a, err := New(config.Agent{Adapter: "replay", Recordings: "recordings"}, filepath.Dir(recordings))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestReplayCommits(t *testing.T) {
	repo, rec := replayRepo(t)
	writeFileT(t, filepath.Join(rec, "add-links", "1.patch"), greetPatch)
	writeFileT(t, filepath.Join(rec, "add-links", "1.json"), `{"durationMs": 250,
		"tokens": {"input": 1200, "output": 300, "cacheRead": 10, "cacheWrite": 5},
		"model": "replay-model", "costUsd": 0.01, "summary": "added world"}`)
	var activity atomic.Int32
	log := &lockedBuffer{}
	res, err := newReplay(t, rec).Run(context.Background(), Request{
		Change: "add-links", Worktree: repo, Iteration: 1, Log: log,
		OnActivity: func() { activity.Add(1) },
	})
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, log)
	}
	if !res.Done || res.Summary != "added world" || res.Duration < 250*time.Millisecond {
		t.Errorf("result = %+v", res)
	}
	want := CallUsage{Model: "replay-model", Tokens: usage.Tokens{Input: 1200, Output: 300, CacheRead: 10, CacheWrite: 5}, CostUSD: 0.01}
	if len(res.Calls) != 1 || res.Calls[0] != want {
		t.Errorf("calls = %+v, want %+v", res.Calls, want)
	}
	if n := activity.Load(); n < 2 {
		t.Errorf("OnActivity called %d times during a 250ms replay", n)
	}
	if got := gitT(t, repo, "log", "-1", "--format=%s|%an <%ae>"); got != "add-links: iteration 1 (replay)|set <set@localhost>" {
		t.Errorf("commit = %q", got)
	}
	if got := gitT(t, repo, "status", "--porcelain"); got != "" {
		t.Errorf("worktree not clean: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "greet.txt")); string(b) != "hello\nworld\n" {
		t.Errorf("greet.txt = %q", b)
	}

	// Replaying the same iteration again (a restart after a crash) finds
	// the patch applied and commits nothing.
	head := gitT(t, repo, "rev-parse", "HEAD")
	if _, err := newReplay(t, rec).Run(context.Background(), Request{Change: "add-links", Worktree: repo, Iteration: 1}); err != nil {
		t.Fatal(err)
	}
	if gitT(t, repo, "rev-parse", "HEAD") != head {
		t.Error("a re-applied patch made a commit")
	}
}

func TestReplayUsesConfiguredIdentity(t *testing.T) {
	repo, rec := replayRepo(t)
	gitT(t, repo, "config", "user.name", "Alice")
	gitT(t, repo, "config", "user.email", "alice@example.com")
	writeFileT(t, filepath.Join(rec, "c", "1.patch"), greetPatch)
	res, err := newReplay(t, rec).Run(context.Background(), Request{Change: "c", Worktree: repo, Iteration: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := gitT(t, repo, "log", "-1", "--format=%an <%ae>"); got != "Alice <alice@example.com>" {
		t.Errorf("author = %q", got)
	}
	// No json: done, no calls.
	if !res.Done || len(res.Calls) != 0 || res.Summary == "" {
		t.Errorf("result = %+v", res)
	}
}

func TestReplayMissingPatch(t *testing.T) {
	repo, rec := replayRepo(t)
	writeFileT(t, filepath.Join(rec, "c", "1.patch"), greetPatch)
	_, err := newReplay(t, rec).Run(context.Background(), Request{Change: "c", Worktree: repo, Iteration: 2})
	if err == nil || !strings.Contains(err.Error(), "no recording for iteration 2") {
		t.Fatalf("err = %v", err)
	}
}

func TestReplayNotDoneAndEmptyPatch(t *testing.T) {
	repo, rec := replayRepo(t)
	writeFileT(t, filepath.Join(rec, "c", "1.patch"), "")
	writeFileT(t, filepath.Join(rec, "c", "1.json"), `{"done": false, "tokens": {"input": 1, "output": 2}}`)
	head := gitT(t, repo, "rev-parse", "HEAD")
	res, err := newReplay(t, rec).Run(context.Background(), Request{Change: "c", Worktree: repo, Iteration: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Done || len(res.Calls) != 1 {
		t.Errorf("result = %+v", res)
	}
	if gitT(t, repo, "rev-parse", "HEAD") != head {
		t.Error("an empty patch made a commit")
	}
}

func TestReplayBadPatch(t *testing.T) {
	repo, rec := replayRepo(t)
	writeFileT(t, filepath.Join(rec, "c", "1.patch"), strings.ReplaceAll(greetPatch, " hello\n", " goodbye\n"))
	_, err := newReplay(t, rec).Run(context.Background(), Request{Change: "c", Worktree: repo, Iteration: 1})
	if err == nil || !strings.Contains(err.Error(), "git apply") {
		t.Fatalf("err = %v", err)
	}
}

func TestReplayCancelDuringSleep(t *testing.T) {
	repo, rec := replayRepo(t)
	writeFileT(t, filepath.Join(rec, "c", "1.patch"), greetPatch)
	writeFileT(t, filepath.Join(rec, "c", "1.json"), `{"durationMs": 60000}`)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := newReplay(t, rec).Run(ctx, Request{Change: "c", Worktree: repo, Iteration: 1})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("err = %v after %v", err, time.Since(start))
	}
	if got := gitT(t, repo, "status", "--porcelain"); got != "" {
		t.Errorf("a cancelled replay touched the worktree: %q", got)
	}
}

// TestReplayCompletesMerge: main merged into the change branch conflicts;
// the recorded patch replaces the conflict markers and the replay's commit
// completes the merge.
func TestReplayCompletesMerge(t *testing.T) {
	repo, rec := replayRepo(t)
	gitT(t, repo, "checkout", "-q", "-b", "set/c")
	writeFileT(t, filepath.Join(repo, "greet.txt"), "hello from the change\n")
	gitT(t, repo, "commit", "-q", "-am", "change")
	gitT(t, repo, "checkout", "-q", "main")
	writeFileT(t, filepath.Join(repo, "greet.txt"), "hello from main\n")
	gitT(t, repo, "commit", "-q", "-am", "main moved")
	mainHead := gitT(t, repo, "rev-parse", "HEAD")
	gitT(t, repo, "checkout", "-q", "set/c")
	if out, err := gitTErr(repo, "merge", "main"); err == nil {
		t.Fatalf("the merge did not conflict: %s", out)
	}
	conflicted, err := os.ReadFile(filepath.Join(repo, "greet.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(conflicted), "<<<<<<<") {
		t.Fatalf("no conflict markers: %q", conflicted)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(conflicted), "\n"), "\n")
	var patch strings.Builder
	patch.WriteString("diff --git a/greet.txt b/greet.txt\n--- a/greet.txt\n+++ b/greet.txt\n")
	patch.WriteString("@@ -1," + strconv.Itoa(len(lines)) + " +1 @@\n")
	for _, l := range lines {
		patch.WriteString("-" + strings.TrimSuffix(l, "\n") + "\n")
	}
	patch.WriteString("+hello from the change and from main\n")
	writeFileT(t, filepath.Join(rec, "c", "2.patch"), patch.String())

	log := &lockedBuffer{}
	res, err := newReplay(t, rec).Run(context.Background(), Request{Change: "c", Worktree: repo, Iteration: 2, Log: log})
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, log)
	}
	if !res.Done {
		t.Errorf("result = %+v", res)
	}
	if strings.Contains(log.String(), "--3way") {
		t.Errorf("plain git apply failed on the conflicted file:\n%s", log)
	}
	if _, err := gitTErr(repo, "rev-parse", "-q", "--verify", "MERGE_HEAD"); err == nil {
		t.Error("the merge is still in progress")
	}
	parents := strings.Fields(gitT(t, repo, "log", "-1", "--format=%P"))
	if len(parents) != 2 || parents[1] != mainHead {
		t.Errorf("HEAD parents = %v, want a merge of %s", parents, mainHead)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "greet.txt")); string(b) != "hello from the change and from main\n" {
		t.Errorf("greet.txt = %q", b)
	}
	if got := gitT(t, repo, "status", "--porcelain"); got != "" {
		t.Errorf("worktree not clean: %q", got)
	}
}

// TestReplayThreeWay: a patch whose context no longer matches applies
// with --3way when the change merges cleanly.
func TestReplayThreeWay(t *testing.T) {
	repo, rec := replayRepo(t)
	ten := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
	writeFileT(t, filepath.Join(repo, "n.txt"), ten)
	gitT(t, repo, "add", "-A")
	gitT(t, repo, "commit", "-q", "-m", "numbers")
	writeFileT(t, filepath.Join(repo, "n.txt"), strings.Replace(ten, "2\n", "two\n", 1))
	patch := gitT(t, repo, "diff") + "\n"
	gitT(t, repo, "checkout", "--", "n.txt")
	writeFileT(t, filepath.Join(repo, "n.txt"), strings.Replace(ten, "5\n", "five\n", 1))
	gitT(t, repo, "commit", "-q", "-am", "five")
	writeFileT(t, filepath.Join(rec, "c", "1.patch"), patch)

	log := &lockedBuffer{}
	if _, err := newReplay(t, rec).Run(context.Background(), Request{Change: "c", Worktree: repo, Iteration: 1, Log: log}); err != nil {
		t.Fatalf("%v\nlog:\n%s", err, log)
	}
	if !strings.Contains(log.String(), "apply --3way") {
		t.Errorf("--3way was not needed: %s", log)
	}
	want := strings.Replace(strings.Replace(ten, "2\n", "two\n", 1), "5\n", "five\n", 1)
	if b, _ := os.ReadFile(filepath.Join(repo, "n.txt")); string(b) != want {
		t.Errorf("n.txt = %q", b)
	}
	if got := gitT(t, repo, "status", "--porcelain"); got != "" {
		t.Errorf("worktree not clean: %q", got)
	}
}

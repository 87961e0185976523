package gate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/runner"
	"github.com/set-engine/set/engine/runner/host"
	"github.com/set-engine/set/internal/gittest"
)

// repo is a git repository in a temp dir whose first commit is the base
// the gates diff against.
type repo struct {
	t    *testing.T
	dir  string
	base string
}

// TestMain makes git hermetic for every test of the package, so that the
// tests can run in parallel (gittest.Main).
func TestMain(m *testing.M) {
	gittest.Main(m, "")
}

// newRepo commits files as the base. Git reads no user or system config
// (TestMain).
func newRepo(t *testing.T, files map[string]string) *repo {
	t.Helper()
	r := &repo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	for name, content := range files {
		r.write(name, content)
	}
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", "base")
	r.base = r.git("rev-parse", "HEAD")
	return r
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.dir}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *repo) write(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) remove(name string) {
	r.t.Helper()
	if err := os.Remove(filepath.Join(r.dir, filepath.FromSlash(name))); err != nil {
		r.t.Fatal(err)
	}
}

// commit commits everything, as the agent loop does before gates run.
func (r *repo) commit() {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "work")
}

// testProject is a Go-like project.
func testProject() *config.Project {
	return &config.Project{
		MainBranch:   "main",
		TestPatterns: map[string]string{"go": "**/*_test.go"},
		Generated:    map[string]config.Generated{"go.sum": {Regenerate: []string{"go", "mod", "tidy"}}},
		Forbidden: map[string]config.Forbidden{
			"debug-print": {
				Pattern: `^\s*(fmt\.)?[Pp]rintln\("(DEBUG|XXX)`,
				Message: "debug printing left in the code",
			},
			"skipped-test": {
				Pattern: `t\.Skip\(`,
				Message: "a test must not be skipped to make a gate pass",
				Paths:   []string{"**/*_test.go"},
			},
		},
		Gates: map[string]config.Gate{},
	}
}

var featureChange = plan.Change{
	Name:         "auth-login",
	Type:         "feature",
	Size:         "S",
	Requirements: []string{"REQ-AUTH-01", "REQ-AUTH-02"},
	Scope:        []string{"internal/auth/**"},
}

// input builds the Input of a gate of kind on r; the log goes to a temp
// dir under the name the orchestrator would use.
func (r *repo) input(kind string, change plan.Change) Input {
	logDir := r.t.TempDir()
	return Input{
		Project:  testProject(),
		Change:   change,
		Step:     graph.GateStep{Gate: kind, Kind: kind, Mode: config.ModeRun, Runner: "host"},
		Stage:    graph.StageVerify,
		Attempt:  1,
		Worktree: r.dir,
		Base:     r.base,
		LogPath:  filepath.Join(logDir, ".set", "logs", change.Name, "verify-"+kind+"-1.log"),
		LogRel:   ".set/logs/" + change.Name + "/verify-" + kind + "-1.log",
	}
}

func runGate(t *testing.T, in Input) Result {
	t.Helper()
	res := Run(context.Background(), in, map[string]runner.Runner{"host": host.New()})
	if res.Status == StatusError {
		t.Logf("error result: %v", res.Err)
	}
	return res
}

// readLog returns the gate's log; every gate leaves one.
func readLog(t *testing.T, res Result) string {
	t.Helper()
	b, err := os.ReadFile(res.Log)
	if err != nil {
		t.Fatalf("gate log: %v", err)
	}
	return string(b)
}

// want checks status, reason and retry context exactly.
func want(t *testing.T, res Result, status, reason, retry string) {
	t.Helper()
	if res.Status != status {
		t.Errorf("status = %q, want %q (reason %q, err %v)", res.Status, status, res.Reason, res.Err)
	}
	if res.Reason != reason {
		t.Errorf("reason = %q\nwant     %q", res.Reason, reason)
	}
	if res.RetryContext != retry {
		t.Errorf("retry context:\n%s\n--- want:\n%s", res.RetryContext, retry)
	}
}

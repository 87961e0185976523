package agent

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fake is one run of testdata/fake-agent.sh: where it records its argv,
// environment and working directory.
type fake struct {
	dir      string // $FAKE_DIR
	worktree string
	env      []string
}

// newFake prepares a fake CLI run that prints testdata/<stream>.
func newFake(t *testing.T, stream string, extraEnv ...string) *fake {
	t.Helper()
	f := &fake{dir: t.TempDir(), worktree: t.TempDir()}
	streamPath, err := filepath.Abs(filepath.Join("testdata", stream))
	if err != nil {
		t.Fatal(err)
	}
	f.env = append(os.Environ(), "FAKE_DIR="+f.dir, "FAKE_STREAM="+streamPath)
	f.env = append(f.env, extraEnv...)
	return f
}

// prefix is the command that replaces "claude"/"codex". The script runs
// through sh so that its file mode does not matter.
func fakePrefix(t *testing.T) []string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "fake-agent.sh"))
	if err != nil {
		t.Fatal(err)
	}
	return []string{"sh", p}
}

// args is the argv the fake received (without the prefix).
func (f *fake) args(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, "args"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSuffix(string(b), "\x00")
	return strings.Split(s, "\x00")
}

func (f *fake) file(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func (f *fake) request(prompt string) Request {
	return Request{
		Change:    "add-links",
		Worktree:  f.worktree,
		Iteration: 1,
		Prompt:    prompt,
		Env:       f.env,
		Log:       &lockedBuffer{},
	}
}

// lockedBuffer is a log safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func equalArgs(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("argv:\n got %q\nwant %q", got, want)
	}
}

// isolateGit makes git ignore the user's configuration: no global or
// system config, no identity from the environment.
func isolateGit(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, "gitconfig"))
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
		"GIT_COMMITTER_EMAIL", "EMAIL", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

// gitT runs git in dir for test setup, with a test identity.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitTErr(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(out)
}

func gitTErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-c", "user.name=tester", "-c", "user.email=tester@example.com",
		"-C", dir}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func writeFileT(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

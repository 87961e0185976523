package githubtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Remote is a test's GitHub repository on the git side, for a Server to
// serve: a bare repository whose main holds one commit (README.md), and a
// clone of it to push from, acting as the people and the forge do. Its
// git runs as the test's fixture, never as set's code (which runs git only
// through engine/git); every failure ends the test.
type Remote struct {
	t testing.TB
	// Bare is the bare repository (Options.Remote), Clone the clone
	// on main whose origin it is.
	Bare, Clone string
}

// NewRemote makes a Remote in a temporary directory of t.
func NewRemote(t testing.TB) *Remote {
	t.Helper()
	dir := t.TempDir()
	r := &Remote{t: t, Bare: filepath.Join(dir, "remote.git"), Clone: filepath.Join(dir, "clone")}
	r.Git(dir, "init", "-q", "--bare", "-b", "main", r.Bare)
	r.Git(dir, "clone", "-q", r.Bare, r.Clone)
	r.Git(r.Clone, "checkout", "-q", "-b", "main")
	r.Commit("README.md", "# repo\n")
	r.Git(r.Clone, "push", "-q", "origin", "main")
	return r
}

// Git runs git with args in dir, as the identity t <t@example.com>, and
// returns its output, trimmed.
func (r *Remote) Git(dir string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// Commit writes the file name with content in the clone and commits it on
// the clone's branch, unpushed, and returns the commit.
func (r *Remote) Commit(name, content string) string {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.Clone, name), []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
	r.Git(r.Clone, "add", "-A")
	r.Git(r.Clone, "commit", "-qm", name)
	return r.Git(r.Clone, "rev-parse", "HEAD")
}

// Branch pushes (forced) a branch off the remote's main with one file,
// named file and holding its name, and returns its tip; the clone is left
// on main.
func (r *Remote) Branch(name, file string) string {
	r.t.Helper()
	r.Git(r.Clone, "checkout", "-q", "-B", name, "origin/main")
	tip := r.Commit(file, file+"\n")
	r.Git(r.Clone, "push", "-q", "-f", "origin", name)
	r.Git(r.Clone, "checkout", "-q", "main")
	return tip
}

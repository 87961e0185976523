package git

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The tests of FinishFastForward build by hand what a fast-forward of
// main's checkout killed half-way leaves: HEAD at from with some of to's
// files written (and a stale index.lock), or with index and files at to.

// moveRepo is a repository with main checked out at from, to a descendant
// of from, and the record of a move from one to the other.
type moveRepo struct {
	*repo
	from, to, record string
}

// movedPaths are the paths the move from moveRepo's from to its to
// changes: an edited file, a deleted one, one added in a new directory, a
// retargeted symbolic link, a file made a directory, an executable bit.
var movedPaths = []string{"gone.txt", "link", "new/deep.txt", "notes.txt", "run.sh", "swap", "swap/inner.txt"}

func newMoveRepo(t *testing.T) *moveRepo {
	t.Helper()
	return newMoveRepoOf(t, "sha1")
}

// newMoveRepoOf is a moveRepo whose objects are named by the hash
// function format (sha1 or sha256).
func newMoveRepoOf(t *testing.T, format string) *moveRepo {
	t.Helper()
	r := &repo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main", "--object-format="+format)
	r.write("README.md", "# repo\n")
	r.write("notes.txt", "line 1\nline 2\nline 3\n")
	r.commit("initial")
	r.write("gone.txt", "gone\n")
	r.write("swap", "a file\n")
	r.write("run.sh", "echo run\n")
	r.symlink("README.md", "link")
	from := r.commit("from")
	r.write("notes.txt", "line 1\nline 2 moved\nline 3\n")
	r.remove("gone.txt")
	r.write("new/deep.txt", "deep\n")
	r.remove("swap")
	r.write("swap/inner.txt", "inner\n")
	r.remove("link")
	r.symlink("notes.txt", "link")
	if err := os.Chmod(filepath.Join(r.dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	to := r.commit("to")
	r.git("reset", "-q", "--hard", from)
	m := &moveRepo{repo: r, from: from, to: to, record: filepath.Join(t.TempDir(), "fast-forward.json")}
	if err := writeRecord(m.record, FastForwardRecord{Branch: "main", From: from, To: to}); err != nil {
		t.Fatal(err)
	}
	return m
}

func (r *repo) symlink(target, name string) {
	r.t.Helper()
	if err := os.Symlink(target, filepath.Join(r.dir, name)); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) remove(name string) {
	r.t.Helper()
	if err := os.Remove(filepath.Join(r.dir, filepath.FromSlash(name))); err != nil {
		r.t.Fatal(err)
	}
}

func (m *moveRepo) removeRecord() {
	m.t.Helper()
	if err := os.Remove(m.record); err != nil {
		m.t.Fatal(err)
	}
}

// halfWritten is the checkout of a move killed while git wrote the files:
// some of to's files written, one of them only in part, the index and
// HEAD at from, and (with lock) the stale index.lock of the killed git.
func (m *moveRepo) halfWritten(lock bool) {
	m.t.Helper()
	m.write("notes.txt", m.git("show", m.to+":notes.txt")+"\n")
	m.remove("gone.txt")
	m.write("new/deep.txt", "deep\n")
	m.remove("swap")
	m.write("swap/inner.txt", "inn") // git was writing "inner\n"
	if lock {
		m.write(".git/index.lock", "")
	}
}

// indexWritten is the checkout of a move killed after git wrote the files
// and the index, before it moved the ref.
func (m *moveRepo) indexWritten() {
	m.t.Helper()
	m.git("read-tree", "-m", "-u", m.from, m.to)
}

// snapshot is everything of the checkout a refused finish must leave as
// it is: HEAD, the index, every file (symbolic links by their target),
// and the record.
func (m *moveRepo) snapshot() map[string]string {
	m.t.Helper()
	s := map[string]string{"HEAD": m.git("rev-parse", "HEAD"), "index": m.git("ls-files", "-s")}
	err := filepath.WalkDir(m.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(m.dir, p)
		switch {
		case rel == ".git":
			return filepath.SkipDir
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			s[rel] = "-> " + target
			return err
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			s[rel] = string(data)
			return err
		}
		return nil
	})
	if err != nil {
		m.t.Fatal(err)
	}
	record, err := os.ReadFile(m.record)
	if err != nil {
		m.t.Fatalf("the record is gone: %v", err)
	}
	s["record"] = string(record)
	return s
}

// checkFinished checks that main and the checkout are at to, nothing
// else changed, and the record is gone.
func (m *moveRepo) checkFinished(untracked ...string) {
	m.t.Helper()
	if got := m.git("rev-parse", "main", "HEAD"); got != m.to+"\n"+m.to {
		m.t.Errorf("main, HEAD = %q, want %s", got, m.to)
	}
	if got := m.git("symbolic-ref", "HEAD"); got != "refs/heads/main" {
		m.t.Errorf("HEAD = %s, want main checked out", got)
	}
	want := ""
	for _, u := range untracked {
		want += "?? " + u + "\n"
	}
	if got := m.git("status", "--porcelain", "--untracked-files=all"); got != strings.TrimSpace(want) {
		m.t.Errorf("status after the finish = %q, want %q", got, want)
	}
	if got, _ := os.Readlink(filepath.Join(m.dir, "link")); got != "notes.txt" {
		m.t.Errorf("link -> %q, want notes.txt", got)
	}
	if info, err := os.Stat(filepath.Join(m.dir, "run.sh")); err != nil || info.Mode()&0o100 == 0 {
		m.t.Errorf("run.sh is not executable: %v", err)
	}
	if got := m.read("swap/inner.txt"); got != "inner\n" {
		m.t.Errorf("swap/inner.txt = %q", got)
	}
	if _, err := os.Stat(m.record); !errors.Is(err, fs.ErrNotExist) {
		m.t.Errorf("the record is left: %v", err)
	}
	if got := m.git("reflog", "-1", "--format=%gs", "main"); got != "set: fast-forward (finished after an interruption)" {
		m.t.Errorf("reflog message = %q", got)
	}
}

// TestFinishFastForward: a move killed while git wrote the files (a stale
// index.lock left), after it wrote the index, or before it wrote anything,
// is finished: main and its checkout at to, exactly.
func TestFinishFastForward(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		leave   func(m *moveRepo)
		written []string
	}{
		{"files half written", func(m *moveRepo) { m.halfWritten(false) },
			[]string{"gone.txt", "new/deep.txt", "notes.txt", "swap", "swap/inner.txt"}},
		{"index and files written", (*moveRepo).indexWritten, movedPaths},
		{"nothing written", func(*moveRepo) {}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMoveRepo(t)
			tc.leave(m)
			done, err := FinishFastForward(ctx, m.dir, m.record)
			if err != nil {
				t.Fatal(err)
			}
			want := &FinishedMove{FastForwardRecord: FastForwardRecord{Branch: "main", From: m.from, To: m.to}, Written: tc.written}
			if diff := cmp.Diff(want, done); diff != "" {
				t.Errorf("FinishFastForward (-want +got):\n%s", diff)
			}
			m.checkFinished()
		})
	}
}

// TestFinishFastForwardSHA256: in a repository of SHA-256 object IDs, a
// symbolic link's content is hashed as git does, and the move finished.
func TestFinishFastForwardSHA256(t *testing.T) {
	t.Parallel()
	m := newMoveRepoOf(t, "sha256")
	if len(m.to) != 64 {
		t.Fatalf("to = %s, want a SHA-256 ID", m.to)
	}
	m.indexWritten()
	done, err := FinishFastForward(context.Background(), m.dir, m.record)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(movedPaths, done.Written); diff != "" {
		t.Errorf("written (-want +got):\n%s", diff)
	}
	m.checkFinished()
}

// TestFinishFastForwardAfterStaleLock: the index.lock of the git killed
// half-way makes the finish fail without touching anything; once the
// lock is removed (RemoveLocks, as a resumed run does), it finishes.
func TestFinishFastForwardAfterStaleLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newMoveRepo(t)
	m.halfWritten(true)
	before := m.snapshot()
	if _, err := FinishFastForward(ctx, m.dir, m.record); err == nil {
		t.Fatal("FinishFastForward with index.lock in place: want an error")
	} else {
		gitError(t, err)
	}
	if diff := cmp.Diff(before, m.snapshot()); diff != "" {
		t.Fatalf("a failed finish changed the checkout (-before +after):\n%s", diff)
	}
	if _, err := RemoveLocks(ctx, m.dir); err != nil {
		t.Fatal(err)
	}
	done, err := FinishFastForward(ctx, m.dir, m.record)
	if err != nil {
		t.Fatal(err)
	}
	if done == nil || len(done.Written) != 5 {
		t.Errorf("FinishFastForward = %+v, want the 5 paths written", done)
	}
	m.checkFinished()
}

// TestFinishFastForwardAgain: a finish killed in turn leaves what a move
// killed half-way does (read-tree writes files then index; update-ref
// moves the ref last), which the next finish completes.
func TestFinishFastForwardAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newMoveRepo(t)
	m.halfWritten(false)
	// The first finish got as far as the files and the index.
	m.git("read-tree", "--reset", "-u", m.to)
	done, err := FinishFastForward(ctx, m.dir, m.record)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(movedPaths, done.Written); diff != "" {
		t.Errorf("written (-want +got):\n%s", diff)
	}
	m.checkFinished()
}

// TestFinishFastForwardRefuses: a change in the checkout that the move
// does not explain, on a path the move changes or any other, staged or
// not, tracked or not, stops the finish; nothing is touched, and the
// error names the paths.
func TestFinishFastForwardRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		leave func(m *moveRepo)
		paths []string
	}{
		{"an edit of a path the move changes", func(m *moveRepo) {
			m.indexWritten()
			m.write("notes.txt", "my own words\n")
		}, []string{"notes.txt"}},
		{"a staged edit of a path the move changes", func(m *moveRepo) {
			m.halfWritten(false)
			m.write("new/deep.txt", "my deep thoughts\n")
			m.git("add", "new/deep.txt")
			m.write("new/deep.txt", "deep\n") // the file is to's, the index is not
		}, []string{"new/deep.txt"}},
		{"an edit of a path the move does not change", func(m *moveRepo) {
			m.halfWritten(false)
			m.write("README.md", "# mine\n")
		}, []string{"README.md"}},
		{"an untracked file the move does not have", func(m *moveRepo) {
			m.indexWritten()
			m.write("new/mine.txt", "mine\n")
		}, []string{"new/mine.txt"}},
		{"an unmerged path", func(m *moveRepo) {
			m.indexWritten()
			blob := func(rev string) string { return m.git("rev-parse", rev+":notes.txt") }
			m.updateIndex("0 " + strings.Repeat("0", 40) + "\tnotes.txt\n" +
				"100644 " + blob(m.from) + " 1\tnotes.txt\n" +
				"100644 " + blob(m.from) + " 2\tnotes.txt\n" +
				"100644 " + blob(m.to) + " 3\tnotes.txt\n")
		}, []string{"notes.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMoveRepo(t)
			tc.leave(m)
			before := m.snapshot()
			done, err := FinishFastForward(ctx, m.dir, m.record)
			var half *HalfMovedError
			if !errors.As(err, &half) {
				t.Fatalf("FinishFastForward = %+v, %v; want a *HalfMovedError", done, err)
			}
			if diff := cmp.Diff(tc.paths, half.Paths); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
			want := "main is checked out in " + m.dir + " half-way through the fast-forward setctl began from " + m.from[:12] + " to " + m.to[:12] +
				", and these paths hold changes setctl did not make: " + strings.Join(tc.paths, ", ") +
				". setctl leaves the checkout as it is: save what you need of those changes elsewhere, put each path back as HEAD has it (git checkout HEAD -- PATH; delete a file HEAD lacks), then run setctl apply again to finish the fast-forward"
			if err.Error() != want {
				t.Errorf("error =\n%s\nwant\n%s", err, want)
			}
			if diff := cmp.Diff(before, m.snapshot()); diff != "" {
				t.Errorf("a refused finish changed the checkout (-before +after):\n%s", diff)
			}
		})
	}
}

// updateIndex feeds lines to git update-index --index-info.
func (r *repo) updateIndex(lines string) {
	r.t.Helper()
	cmd := exec.Command("git", "-C", r.dir, "update-index", "--index-info")
	cmd.Stdin = strings.NewReader(lines)
	if out, err := cmd.CombinedOutput(); err != nil {
		r.t.Fatalf("git update-index: %v\n%s", err, out)
	}
}

// TestFinishFastForwardNothingToFinish: without a record there is nothing
// to do; a record whose branch reached to, or was moved since by someone
// else, or names a commit the repository lacks while nothing was written,
// is removed and the checkout left alone.
func TestFinishFastForwardNothingToFinish(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		leave func(m *moveRepo)
	}{
		{"no record", (*moveRepo).removeRecord},
		{"the branch at to", func(m *moveRepo) { m.git("merge", "-q", "--ff-only", m.to) }},
		{"the branch moved by a user", func(m *moveRepo) {
			m.indexWritten()
			m.git("commit", "-q", "-m", "the user commits what they found")
		}},
		{"another branch checked out", func(m *moveRepo) {
			m.git("checkout", "-q", "-b", "other")
		}},
		{"to not in the repository", func(m *moveRepo) {
			if err := writeRecord(m.record, FastForwardRecord{Branch: "main", From: m.from, To: strings.Repeat("1", 40)}); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMoveRepo(t)
			tc.leave(m)
			head, status := m.git("rev-parse", "HEAD", "main"), m.git("status", "--porcelain")
			done, err := FinishFastForward(ctx, m.dir, m.record)
			if err != nil || done != nil {
				t.Fatalf("FinishFastForward = %+v, %v; want nothing done", done, err)
			}
			if _, err := os.Stat(m.record); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the record is left: %v", err)
			}
			if got := m.git("rev-parse", "HEAD", "main"); got != head {
				t.Errorf("HEAD, main = %q, want unchanged %q", got, head)
			}
			if got := m.git("status", "--porcelain"); got != status {
				t.Errorf("status = %q, want unchanged %q", got, status)
			}
		})
	}
}

// TestFinishFastForwardBadRecord: a record that is no record, or whose
// commit is missing while the checkout has changes, is an error naming
// the record, and nothing is touched.
func TestFinishFastForwardBadRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newMoveRepo(t)
	if err := os.WriteFile(m.record, []byte(`{"branch":"main","from":"abc"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := FinishFastForward(ctx, m.dir, m.record)
	if want := m.record + `: not a fast-forward record (branch "main", from "abc", to "")`; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}

	missing := strings.Repeat("1", 40)
	if err := writeRecord(m.record, FastForwardRecord{Branch: "main", From: m.from, To: missing}); err != nil {
		t.Fatal(err)
	}
	m.write("notes.txt", "written by whom?\n")
	_, err = FinishFastForward(ctx, m.dir, m.record)
	if want := m.record + " records a fast-forward of main to 111111111111, a commit the repository does not have, and main's checkout has changes"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
	if _, err := os.Stat(m.record); err != nil {
		t.Errorf("the record is gone: %v", err)
	}
}

// TestFastForwardRecordsItsMove: FastForward of the checked-out branch
// that git stops half-way (here a lock on the branch's ref: git writes the
// files and the index, then cannot move the ref) leaves its record, which
// FinishFastForward completes once the lock is gone.
func TestFastForwardRecordsItsMove(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newMoveRepo(t)
	m.removeRecord()
	m.write(".git/refs/heads/main.lock", "")
	err := FastForward(ctx, m.dir, "main", m.from, m.to, m.record)
	if err == nil {
		t.Fatal("FastForward with main's ref locked: want an error")
	}
	gitError(t, err)
	data, err := os.ReadFile(m.record)
	if err != nil {
		t.Fatalf("no record of the half-made move: %v", err)
	}
	var rec FastForwardRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if want := (FastForwardRecord{Branch: "main", From: m.from, To: m.to}); rec != want {
		t.Errorf("record = %+v, want %+v", rec, want)
	}
	if got := m.git("rev-parse", "HEAD"); got != m.from {
		t.Fatalf("HEAD = %s, want still %s: the test sets up no half-made move", got, m.from)
	}
	if _, err := RemoveLocks(ctx, m.dir); err != nil {
		t.Fatal(err)
	}
	done, err := FinishFastForward(ctx, m.dir, m.record)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(movedPaths, done.Written); diff != "" {
		t.Errorf("written (-want +got):\n%s", diff)
	}
	m.checkFinished()
}

package git

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFilesAtReadsTheCommitNotTheCheckout(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.write("openspec/specs/a/spec.md", "a\n")
	r.write("openspec/specs/b/c/spec.md", "bc\n")
	r.write("other/x.md", "x\n")
	r.commit("specs")
	if err := os.Symlink("a", filepath.Join(r.dir, "openspec", "specs", "link")); err != nil {
		t.Fatal(err)
	}
	r.git("add", "-A")
	r.git("commit", "-qm", "a link")
	main := r.git("rev-parse", "HEAD")
	r.write("openspec/specs/a/spec.md", "edited, not committed\n")

	got, err := FilesAt(context.Background(), r.dir, main, "openspec/specs")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{"openspec/specs/a/spec.md": []byte("a\n"), "openspec/specs/b/c/spec.md": []byte("bc\n")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FilesAt (-want +got):\n%s", diff)
	}
	none, err := FilesAt(context.Background(), r.dir, main, "nowhere")
	if err != nil || len(none) != 0 {
		t.Errorf("FilesAt of a missing prefix = %v, %v", none, err)
	}
}

// FilesAt reads every blob through one git cat-file --batch: contents
// with no final newline, empty, binary or holding what looks like a batch
// header, and two paths of the same blob, all come back as committed.
func TestFilesAtBatch(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	want := map[string][]byte{
		"d/empty":        {},
		"d/no-newline":   []byte("last line"),
		"d/binary":       {0, 1, 2, '\n', 0xff, '\n'},
		"d/header-lines": []byte("0123456789012345678901234567890123456789 blob 3\nabc\n\n"),
		"d/same-1":       []byte("same\n"),
		"d/same-2":       []byte("same\n"),
	}
	for path, data := range want {
		r.write(path, string(data))
	}
	r.commit("files")
	got, err := FilesAt(context.Background(), r.dir, r.git("rev-parse", "HEAD"), "d")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FilesAt (-want +got):\n%s", diff)
	}
}

func TestGrepAndTreeFiles(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.write("a_test.go", "package a\n\n// REQ-A-01\nfunc TestA() {}\n")
	r.write("dir/b_test.go", "package b\n// nothing\n// TestREQ_B_01 and REQ-A-01\n")
	r.commit("tests")
	ctx := context.Background()
	files, err := TreeFiles(ctx, r.dir, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"README.md", "a_test.go", "dir/b_test.go", "notes.txt"}, files); diff != "" {
		t.Errorf("TreeFiles (-want +got):\n%s", diff)
	}
	got, err := Grep(ctx, r.dir, "HEAD", `REQ[-_]`, []string{"a_test.go", "dir/b_test.go", "notes.txt"})
	if err != nil {
		t.Fatal(err)
	}
	want := []GrepLine{{"a_test.go", 3, "// REQ-A-01"}, {"dir/b_test.go", 3, "// TestREQ_B_01 and REQ-A-01"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Grep (-want +got):\n%s", diff)
	}
	if got, err := Grep(ctx, r.dir, "HEAD", `NOWHERE`, files); err != nil || len(got) != 0 {
		t.Errorf("Grep with no match = %v, %v", got, err)
	}
}

// TestCommitPathsAndCountWork: a commit of some paths leaves the rest of
// the tree uncommitted, and CountWork leaves out the commits that carry
// the trailer.
func TestCommitPathsAndCountWork(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	r.git("checkout", "-q", "-b", "work")
	r.write("folder/a.md", "a\n")
	r.write("code.go", "package x\n")
	ok, err := CommitPaths(ctx, r.dir, "folder\n\nSet-Folder: work\n", "folder")
	if err != nil || !ok {
		t.Fatalf("CommitPaths = %v, %v", ok, err)
	}
	if dirty := r.git("status", "--porcelain"); dirty != "?? code.go" {
		t.Errorf("after CommitPaths, git status: %q", dirty)
	}
	if ok, err := CommitPaths(ctx, r.dir, "again", "folder"); err != nil || ok {
		t.Errorf("CommitPaths with nothing to commit = %v, %v", ok, err)
	}
	if n, err := CountWork(ctx, r.dir, "main", "HEAD", "Set-Folder", "work"); err != nil || n != 0 {
		t.Errorf("CountWork with only set's commit = %d, %v", n, err)
	}
	r.commit("code")
	if n, err := CountWork(ctx, r.dir, "main", "HEAD", "Set-Folder", "work"); err != nil || n != 1 {
		t.Errorf("CountWork with one commit of the agent's = %d, %v", n, err)
	}
	if n, err := CountWork(ctx, r.dir, "main", "HEAD", "Set-Folder", "other"); err != nil || n != 2 {
		t.Errorf("CountWork counting another change's trailer = %d, %v", n, err)
	}
}

package main

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/internal/clitest"
	"github.com/set-engine/set/internal/gittest"
)

// adoptChanges are the change folders of TestOpenSpecAdopt's project, as
// its people write them with the OpenSpec CLI: add-links ADDs "Create a
// short link" to the links capability (and has a design.md), edit-links
// MODIFIES it (so OpenSpec archives it only after add-links), add-auth
// ADDs "Log in" to auth, independent of both.
var adoptChanges = []string{"add-links", "edit-links", "add-auth"}

// TestOpenSpecAdopt adopts set in a project written with the real OpenSpec
// CLI (docs/openspec.md): three change folders made with `openspec new
// change` and edited by hand (testdata/openspec-adopt/changes), which
// `openspec validate --all --strict` accepts. setctl plan shows edit-links
// after add-links and why; setctl apply, with an exec agent that checks
// its prompt carries the proposal (and the design), writes code and a
// test naming each requirement's title and checks the tasks off (which
// spec_verify's tasks "all-checked" asks), implements and merges all
// three, one commit each; main's openspec/ is then byte for
// byte what `openspec archive <change> --yes` run on each change in merge
// order makes of the initial openspec/ (archive dates aside); and a fresh
// clone of main plans nothing.
func TestOpenSpecAdopt(t *testing.T) {
	cli := clitest.OpenSpec.Require(t)
	ctx := context.Background()
	dir := t.TempDir()
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	t.Setenv("CUE_REGISTRY", "none")
	gittest.Hermetic(t, "")
	openspec := func(root string, args ...string) string {
		t.Helper()
		cmd := exec.Command(cli, args...)
		cmd.Dir, cmd.Env = root, clitest.OpenSpecEnv(t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("openspec %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	setctl := func(args ...string) (int, string, string) {
		t.Helper()
		var stdout, stderr strings.Builder
		code := Main(append([]string{"-C", dir}, args...), testProcess(&stdout, &stderr))
		return code, stdout.String(), stderr.String()
	}
	repo := func(args ...string) string { t.Helper(); return gitIn(t, dir, args...) }

	// The project: set.cue, the agent's script, then OpenSpec's own
	// skeleton and folders, each filled in as its people would.
	adopt := filepath.Join("..", "..", "testdata", "openspec-adopt")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(adopt, "project"))); err != nil {
		t.Fatal(err)
	}
	repo("init", "-q", "-b", "main")
	openspec(dir, "init", "--tools", "none", "--no-animation")
	for _, c := range adoptChanges {
		openspec(dir, "new", "change", c)
		folder := filepath.Join(dir, "openspec", "changes", c)
		if _, err := os.Stat(filepath.Join(folder, ".openspec.yaml")); err != nil {
			t.Fatalf("openspec new change %s made no .openspec.yaml: %v", c, err)
		}
		if err := os.CopyFS(folder, os.DirFS(filepath.Join(adopt, "changes", c))); err != nil {
			t.Fatal(err)
		}
	}
	if out := openspec(dir, "validate", "--all", "--strict", "--no-interactive"); !strings.Contains(out, "Totals: 3 passed, 0 failed (3 items)") {
		t.Fatalf("openspec validate --all --strict did not pass the 3 changes:\n%s", out)
	}
	repo("add", "-A")
	repo("commit", "-q", "-m", "three OpenSpec changes")
	initial := repo("rev-parse", "HEAD")

	code, out, errOut := setctl("plan", "--detailed-exitcode")
	if code != 2 {
		t.Fatalf("setctl plan --detailed-exitcode exited %d, want 2 (changes to run):\n%s%s", code, out, errOut)
	}
	for _, c := range adoptChanges {
		if !strings.Contains(out, c) {
			t.Errorf("setctl plan does not show %s:\n%s", c, out)
		}
	}
	if !regexp.MustCompile(`(?m)^  edit-links +feature .* after add-links\n(?:    .*\n)*?    after +add-links: MODIFIED "Create a short link" \(links\), which add-links ADDs\n`).MatchString(out) {
		t.Errorf("setctl plan does not show that edit-links waits for add-links, which ADDs the requirement it MODIFIES:\n%s", out)
	}

	const day = "2006-01-02"
	before := time.Now().Format(day)
	code, out, errOut = setctl("apply", "--yes")
	if code != exitOK {
		t.Fatalf("setctl apply exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	after := time.Now().Format(day)
	var order []string // the changes in the order they merged
	for _, c := range strings.Fields(repo("log", "--reverse", "--format=%(trailers:key=Set-Change,valueonly)", "main")) {
		if !slices.Contains(order, c) {
			order = append(order, c)
		}
	}
	if got := slices.Sorted(slices.Values(order)); !slices.Equal(got, slices.Sorted(slices.Values(adoptChanges))) {
		t.Fatalf("changes merged, in order: %v; want %v", order, adoptChanges)
	}
	if slices.Index(order, "edit-links") < slices.Index(order, "add-links") {
		t.Errorf("edit-links merged before add-links: %v", order)
	}
	if n := repo("rev-list", "--count", initial+"..main"); n != "3" {
		t.Errorf("main has %s commits after the user's, want one per change:\n%s", n, repo("log", "--oneline", "main"))
	}

	// What OpenSpec makes of the initial openspec/: each change's folder
	// as its people wrote it, with its tasks checked off as the agent
	// checks them and nothing else changed, archived in merge order. The
	// folders come from the initial commit, never from main's archive, so
	// that a file set adds to or rewrites in a user's folder shows.
	got, err := git.FilesAt(ctx, dir, "main", "openspec")
	if err != nil {
		t.Fatal(err)
	}
	start, err := git.FilesAt(ctx, dir, initial, "openspec")
	if err != nil {
		t.Fatal(err)
	}
	want := t.TempDir()
	writeTree(t, want, start)
	for _, c := range order {
		tasks := filepath.Join(want, "openspec", "changes", c, "tasks.md")
		data, err := os.ReadFile(tasks)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(tasks, uncheckedTask.ReplaceAll(data, []byte("${1}[x]")), 0o644); err != nil {
			t.Fatal(err)
		}
		openspec(want, "archive", c, "--yes")
	}
	// The comparison writes archive dates DATE (the CLI archives on its
	// day, set on the merge's), so each of set's is checked here: the
	// local day of its merge, as the CLI names the folder.
	dates := map[string]bool{}
	for p := range got {
		if loc := archivedDir.FindStringIndex(p); loc != nil {
			dates[strings.TrimPrefix(p[:loc[1]-1], "openspec/changes/archive/")] = true
		}
	}
	for date := range dates {
		if date != before && date != after {
			t.Errorf("main has change folders archived on %s, not on the day of the run (%s)", date, before)
		}
	}
	wantFiles := readTree(t, want, "openspec")
	if diff := cmp.Diff(treeText(wantFiles), treeText(got)); diff != "" {
		t.Errorf("main's openspec/ is not what `openspec archive` in merge order %v makes (-openspec +set):\n%s", order, diff)
	}

	code, out, _ = setctl("explain", "add-links")
	if code != exitOK || !regexp.MustCompile(`(?m)^  tasks: 2/2 checked \(openspec/changes/archive/\d{4}-\d\d-\d\d-add-links/tasks\.md on main\)$`).MatchString(out) {
		t.Errorf("setctl explain add-links exited %d without the task progress of its archived folder:\n%s", code, out)
	}

	// The spec loop: a fresh clone of main has no open change folder.
	clone := filepath.Join(t.TempDir(), "clone")
	gitIn(t, dir, "clone", "-q", dir, clone)
	var stdout, stderr strings.Builder
	if code := Main([]string{"-C", clone, "plan", "--detailed-exitcode"}, testProcess(&stdout, &stderr)); code != exitOK {
		t.Errorf("setctl plan --detailed-exitcode in a fresh clone exited %d, want 0 (nothing to do):\n%s%s", code, stdout.String(), stderr.String())
	}
}

// archivedDir matches the archive's dated folder names.
var archivedDir = regexp.MustCompile(`^openspec/changes/archive/\d{4}-\d\d-\d\d-`)

// uncheckedTask matches the box of an unchecked task line of tasks.md, as
// testdata/openspec-adopt's agent checks it off (its sed expression).
var uncheckedTask = regexp.MustCompile(`(?m)^([ \t]*[-*+][ \t]*)\[ \]`)

// writeTree writes files (slash paths relative to root) under root.
func writeTree(t *testing.T, root string, files map[string][]byte) {
	t.Helper()
	for p, data := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readTree reads every regular file under root/sub, keyed by its slash
// path relative to root, as git.FilesAt keys them.
func readTree(t *testing.T, root, sub string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(filepath.Join(root, sub), func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// treeText is files as one txtar text, sorted by path, with the date of
// every archived folder written DATE: the CLI archives on its own day,
// set on the day of the merge.
func treeText(files map[string][]byte) string {
	var ar txtar.Archive
	for _, p := range slices.Sorted(maps.Keys(files)) {
		name := archivedDir.ReplaceAllString(p, "openspec/changes/archive/DATE-")
		ar.Files = append(ar.Files, txtar.File{Name: path.Clean(name), Data: files[p]})
	}
	return string(txtar.Format(&ar))
}

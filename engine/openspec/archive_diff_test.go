package openspec

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/set-engine/set/internal/clitest"
)

// The differential archive suite: every directory under
// testdata/archive-diff/ is a case. Its case.txt names the change
// ("change: <name>") and says what the case is about; before/ is the
// project before archiving; want.txtar is the project after
// `openspec archive <change> --yes` of the real OpenSpec CLI
// (OpenSpecVersion), or, when the CLI refuses, the word "refused" and no
// files (the tree is then unchanged). TestArchiveDiff checks set's
// ArchiveChange against want.txtar always, and, when the CLI is installed,
// runs the CLI on another copy and checks that both accept or both refuse
// and leave byte-identical trees. `go test -run TestArchiveDiff -update`
// rewrites want.txtar from the CLI.
//
// The CLI is $SET_OPENSPEC_CLI, else bin/tools/openspec/node_modules/.bin/
// openspec in the repository (`make openspec` installs it). Without it the
// live comparison is skipped, except under CI=true, where it fails.

var updateGolden = flag.Bool("update", false, "rewrite the expected files under testdata (archive-diff: from the OpenSpec CLI)")

// diffDate is the day set archives on in the suite; the archive directory's
// date is written DATE in want.txtar, whoever archived.
var diffDate = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

const dateMark = "DATE"

// cliEnv is the whole environment the CLI runs with: a HOME and XDG
// directories of its own (checked to stay empty), UTC, and every switch
// that keeps it off the network (telemetry, update check).
func cliEnv(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local/share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"TZ=UTC",
		"LANG=C.UTF-8",
		"NO_COLOR=1",
		"OPENSPEC_TELEMETRY=0",
		"DO_NOT_TRACK=1",
		"OPENSPEC_NO_UPDATE_CHECK=1",
		"CI=true",
	}
}

var checkCLIVersion sync.Once

type diffCase struct {
	name, dir string
	change    string
	before    []txtar.File
}

func loadDiffCases(t *testing.T) []diffCase {
	t.Helper()
	dirs, err := filepath.Glob("testdata/archive-diff/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases under testdata/archive-diff: %v", err)
	}
	var cases []diffCase
	for _, dir := range dirs {
		c := diffCase{name: filepath.Base(dir), dir: dir}
		info, err := os.ReadFile(filepath.Join(dir, "case.txt"))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(l, "change: "); ok {
				c.change = strings.TrimSpace(v)
			}
		}
		if c.change == "" {
			t.Fatalf("%s/case.txt names no change (want a line \"change: <name>\")", dir)
		}
		before := filepath.Join(dir, "before")
		err = filepath.WalkDir(before, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(before, p)
			data, err := os.ReadFile(p)
			c.before = append(c.before, txtar.File{Name: filepath.ToSlash(rel), Data: data})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	return cases
}

// diffSnapshot lists every directory (name ending in "/") and file under
// dir with its content, in lexical order, as a txtar archive whose comment
// is the outcome ("archived" or "refused"). The date of an archive
// directory is written DATE. A file without a final newline is named
// "<name> (no final newline)" and gets one, so that the archive keeps every
// byte.
func diffSnapshot(t *testing.T, dir, date, outcome string) string {
	t.Helper()
	ar := txtar.Archive{Comment: []byte(outcome + "\n")}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if r, ok := strings.CutPrefix(rel, "openspec/changes/archive/"+date+"-"); ok {
			rel = "openspec/changes/archive/" + dateMark + "-" + r
		}
		switch {
		case d.IsDir():
			ar.Files = append(ar.Files, txtar.File{Name: rel + "/"})
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			return fmt.Errorf("unexpected symbolic link %s", rel)
		}
		data, err := os.ReadFile(p)
		if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
			rel += " (no final newline)"
			data = append(data, '\n')
		}
		ar.Files = append(ar.Files, txtar.File{Name: rel, Data: data})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(txtar.Format(&ar))
}

func TestArchiveDiff(t *testing.T) {
	cli, missing := clitest.OpenSpec.Find()
	if cli != "" && testing.Short() && !*updateGolden {
		// The goldens are the CLI's own output; -short checks against
		// them without running the CLI forty times.
		cli = ""
		t.Log("live comparison with `openspec archive` skipped under -short")
	} else if cli == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %s", missing)
		}
		if *updateGolden {
			t.Fatalf("-update needs the CLI: %s", missing)
		}
		t.Logf("live comparison with `openspec archive` skipped: %s", missing)
	}
	for _, c := range loadDiffCases(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			wantPath := filepath.Join(c.dir, "want.txtar")
			var cliGot string
			if cli != "" {
				cliGot = runOpenSpecArchive(t, cli, c)
				if *updateGolden {
					if err := os.WriteFile(wantPath, []byte(cliGot), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			want, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatalf("%v (run with the CLI installed and -update to write it)", err)
			}
			if cli != "" {
				if diff := cmp.Diff(string(want), cliGot); diff != "" {
					t.Errorf("`openspec archive` no longer gives %s (-want +cli):\n%s", wantPath, diff)
				}
			}

			root := t.TempDir()
			writeTree(t, root, c.before)
			before := diffSnapshot(t, root, "", "refused")
			res, err := ArchiveChange(root, c.change, diffDate)
			outcome := "archived"
			if err != nil {
				outcome = "refused"
				var ae *ArchiveError
				if !errors.As(err, &ae) {
					t.Errorf("refused without an *ArchiveError: %v", err)
				}
				t.Logf("set refused:\n%v", err)
			} else if len(res.Warnings) > 0 {
				t.Logf("set warned:\n%s", res.Warnings)
			}
			got := diffSnapshot(t, root, diffDate.Format("2006-01-02"), outcome)
			if outcome == "refused" && got != before {
				t.Errorf("set refused but changed the tree (-before +after):\n%s", cmp.Diff(before, got))
			}
			if outcome == "refused" {
				got = refusedSnapshot
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("set's archive differs from %s (-want +set):\n%s", wantPath, diff)
			}
		})
	}
}

// refusedSnapshot is want.txtar of a refusal: the tree is as it was.
const refusedSnapshot = "refused\n"

// runOpenSpecArchive runs `openspec archive <change> --yes` on a copy of
// the case's tree and returns its snapshot, refusedSnapshot when the CLI
// refuses (exits non-zero) and leaves the tree as it was (but for the
// empty directory removeEmptyArchive removes).
func runOpenSpecArchive(t *testing.T, cli string, c diffCase) string {
	t.Helper()
	for attempt := 0; ; attempt++ {
		root := t.TempDir()
		writeTree(t, root, c.before)
		before := diffSnapshot(t, root, "", "refused")
		day := time.Now().UTC().Format("2006-01-02")
		out, ok := runOpenSpec(t, cli, root, "archive", c.change, "--yes")
		if after := time.Now().UTC().Format("2006-01-02"); after != day && attempt == 0 {
			continue // the day changed during the run: run again
		}
		t.Logf("openspec archive %s --yes:\n%s", c.change, out)
		if ok {
			return diffSnapshot(t, root, day, "archived")
		}
		removeEmptyArchive(root, before)
		if got := diffSnapshot(t, root, day, "refused"); got != before {
			t.Errorf("the CLI refused but changed the tree (-before +after):\n%s", cmp.Diff(before, got))
		}
		return refusedSnapshot
	}
}

// removeEmptyArchive removes openspec/changes/archive/ under root when it
// is empty and was not in the snapshot before: the CLI creates it before
// it applies the deltas, and leaves it when a delta then does not apply; an
// empty such directory is not counted as a change (git does not see it).
func removeEmptyArchive(root, before string) {
	archive := filepath.Join(root, "openspec/changes/archive")
	if entries, err := os.ReadDir(archive); err == nil && len(entries) == 0 && !strings.Contains(before, "openspec/changes/archive/\n") {
		os.Remove(archive)
	}
}

// runOpenSpec runs the CLI with args in dir, in cliEnv with a HOME of its
// own (checked to stay empty), and returns its combined output and whether
// it exited 0. The CLI's version is checked once.
func runOpenSpec(t *testing.T, cli, dir string, args ...string) ([]byte, bool) {
	t.Helper()
	checkCLIVersion.Do(func() {
		out, err := exec.Command(cli, "--version").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != OpenSpecVersion {
			t.Errorf("%s --version: %q, %v; want %s", cli, out, err, OpenSpecVersion)
		}
	})
	home := t.TempDir()
	cmd := exec.Command(cli, args...)
	cmd.Dir, cmd.Env = dir, cliEnv(home)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running %s: %v\n%s", cli, err, out)
	}
	if entries, _ := os.ReadDir(home); len(entries) > 0 {
		t.Errorf("the CLI wrote to its HOME: %v", entries)
	}
	return out, err == nil
}

// TestOpenSpecVersionPinned: `make openspec`, which .ci/run runs, installs
// the CLI version the archive reproduces.
func TestOpenSpecVersionPinned(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if want := "\nOPENSPEC_VERSION := " + OpenSpecVersion + "\n"; !strings.Contains(string(makefile), want) {
		t.Errorf("the Makefile does not pin %q", strings.TrimSpace(want))
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ci), "\nmake openspec\n") {
		t.Error(".ci/run does not run `make openspec`")
	}
}

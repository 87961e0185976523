package openspec

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

var archiveDate = time.Date(2026, 3, 4, 23, 30, 0, 0, time.UTC)

// writeTree creates the files of ar under dir; a name ending in "/" is an
// empty directory.
func writeTree(t *testing.T, dir string, files []txtar.File) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if strings.HasSuffix(f.Name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshot lists every directory (name ending in "/"), symbolic link
// ("name -> target") and file under dir with its content, in lexical order,
// as a txtar archive.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var ar txtar.Archive
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			ar.Files = append(ar.Files, txtar.File{Name: rel + "/"})
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			ar.Files = append(ar.Files, txtar.File{Name: rel + " -> " + target})
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		ar.Files = append(ar.Files, txtar.File{Name: rel, Data: data})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(txtar.Format(&ar))
}

// baseTree is a project with one living capability (auth) and a change
// add-mfa that modifies it and creates billing.
var baseTree = []txtar.File{
	{Name: "README.md", Data: []byte("hello\n")},
	{Name: "openspec/specs/auth/spec.md", Data: []byte(authSpec)},
	{Name: "openspec/changes/add-mfa/proposal.md", Data: []byte("## Why\nMFA.\n")},
	{Name: "openspec/changes/add-mfa/specs/auth/spec.md", Data: []byte("## MODIFIED Requirements\n### Requirement: Login\nThe system SHALL log in with a second factor.\n\n#### Scenario: ok\n- WHEN valid\n- THEN in\n")},
	{Name: "openspec/changes/add-mfa/specs/billing/spec.md", Data: []byte(invoiceDelta)},
	{Name: "openspec/changes/other/proposal.md", Data: []byte("other\n")},
}

const authSpec = "# auth Specification\n\n## Purpose\nP.\n\n## Requirements\n\n### Requirement: Login\nThe system SHALL log in.\n\n#### Scenario: ok\n- WHEN valid\n- THEN in\n"

const invoiceDelta = "## ADDED Requirements\n### Requirement: Invoice\nThe system SHALL send invoices.\n\n#### Scenario: month\n- WHEN a month ends\n- THEN an invoice is sent\n"

func TestArchiveChangeErrorsLeaveTreeUntouched(t *testing.T) {
	tests := []struct {
		name    string
		change  string
		extra   []txtar.File // written over baseTree
		setup   func(t *testing.T, root string)
		rename  func(from, to string) error // nil: os.Rename
		wantErr string                      // the whole message
	}{
		{
			name:   "a bad delta writes no other",
			change: "add-mfa",
			extra: []txtar.File{{Name: "openspec/changes/add-mfa/specs/billing/spec.md",
				Data: []byte(invoiceDelta + "### Requirement: Invoice\nThe system SHALL send invoices twice.\n\n#### Scenario: x\n")}},
			wantErr: `openspec/changes/add-mfa/specs/billing/spec.md:8: error: duplicate requirement "Invoice" under ## ADDED Requirements
openspec/changes/add-mfa/specs/billing/spec.md:8: error: ADDED requirement "Invoice" has no scenario (want a "#### Scenario:" heading with steps under it)`,
		},
		{
			name:   "problems in two capabilities are all reported",
			change: "add-mfa",
			extra: []txtar.File{
				{Name: "openspec/changes/add-mfa/specs/auth/spec.md", Data: []byte(strings.ReplaceAll(invoiceDelta, "ADDED", "MODIFIED"))},
				{Name: "openspec/changes/add-mfa/specs/billing/spec.md", Data: []byte(strings.ReplaceAll(invoiceDelta, "ADDED", "MODIFIED"))},
			},
			wantErr: "openspec/changes/add-mfa/specs/auth/spec.md:2: error: MODIFIED requirement \"Invoice\" does not exist in openspec/specs/auth/spec.md\n" +
				"openspec/changes/add-mfa/specs/billing/spec.md:2: error: openspec/specs/billing/spec.md does not exist; a new capability takes only ADDED requirements (MODIFIED \"Invoice\")",
		},
		{
			name:    "archive directory exists",
			change:  "add-mfa",
			extra:   []txtar.File{{Name: "openspec/changes/archive/2026-03-04-add-mfa/proposal.md", Data: []byte("old\n")}},
			wantErr: "archive directory openspec/changes/archive/2026-03-04-add-mfa already exists; not overwriting it",
		},
		{
			name:    "empty archive directory exists",
			change:  "add-mfa",
			extra:   []txtar.File{{Name: "openspec/changes/archive/2026-03-04-add-mfa/"}},
			wantErr: "archive directory openspec/changes/archive/2026-03-04-add-mfa already exists; not overwriting it",
		},
		{
			name:    "living spec is a directory",
			change:  "add-mfa",
			extra:   []txtar.File{{Name: "openspec/specs/billing/spec.md/"}},
			wantErr: "openspec/specs/billing/spec.md is not a regular file",
		},
		{
			name:    "change is a file",
			change:  "notes.md",
			extra:   []txtar.File{{Name: "openspec/changes/notes.md", Data: []byte("x")}},
			wantErr: "openspec/changes/notes.md is not a directory",
		},
		{name: "change name with a slash", change: "a/b", wantErr: `invalid change name "a/b"`},
		{name: "change name ..", change: "..", wantErr: `invalid change name ".."`},
		{name: "change name archive", change: "archive", wantErr: `invalid change name "archive"`},
		{name: "empty change name", change: "", wantErr: `invalid change name ""`},
		{
			name:    "moving the change fails: written specs are restored",
			change:  "add-mfa",
			rename:  func(string, string) error { return errors.New("injected") },
			wantErr: "moving openspec/changes/add-mfa to openspec/changes/archive/2026-03-04-add-mfa: injected",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, baseTree)
			writeTree(t, root, tt.extra)
			if tt.setup != nil {
				tt.setup(t, root)
			}
			before := snapshot(t, root)
			rename := tt.rename
			if rename == nil {
				rename = os.Rename
			}
			res, err := archiveChange(root, tt.change, archiveDate, rename)
			if err == nil {
				t.Fatalf("no error; result %+v", res)
			}
			if res != nil {
				t.Errorf("result %+v on error", res)
			}
			if diff := cmp.Diff(tt.wantErr, errLines(err)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("tree changed (-before +after):\n%s", diff)
			}
		})
	}
}

// TestArchiveChangeRefusesSymlinks commits, in turn, each path the archive
// reads or writes as a symbolic link to a directory or file outside the
// project: the archive fails naming the link, writes nothing inside or
// outside, and no content from outside reaches the project.
func TestArchiveChangeRefusesSymlinks(t *testing.T) {
	const marker = "## ADDED Requirements\n### Requirement: Host secret\nOUTSIDE-MARKER\n"
	tests := []struct {
		link   string // slash path under the project
		target string // "dir" or "file" outside
	}{
		{"openspec/specs", "dir"},
		{"openspec/specs/billing", "dir"},
		{"openspec/specs/auth/spec.md", "file"},
		{"openspec/changes/add-mfa/specs/auth/spec.md", "file"},
		{"openspec/changes/add-mfa/.openspec.yaml", "file"},
		{"openspec/changes/add-mfa/specs/billing", "dir"},
		{"openspec/changes/add-mfa", "dir"},
		{"openspec/changes/archive", "dir"},
		{"openspec/changes", "dir"},
		{"openspec", "dir"},
	}
	for _, tt := range tests {
		t.Run(tt.link, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			writeTree(t, root, baseTree)
			// The outside directory looks like the tree under the link,
			// with the marker in every spec.md.
			writeTree(t, outside, []txtar.File{
				{Name: "spec.md", Data: []byte(marker)},
				{Name: "auth/spec.md", Data: []byte(marker)},
				{Name: "specs/auth/spec.md", Data: []byte(marker)},
				{Name: "add-mfa/specs/auth/spec.md", Data: []byte(marker)},
				{Name: "changes/add-mfa/specs/auth/spec.md", Data: []byte(marker)},
			})
			target := outside
			if tt.target == "file" {
				target = filepath.Join(outside, "spec.md")
			}
			p := filepath.Join(root, filepath.FromSlash(tt.link))
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			before, beforeOutside := snapshot(t, root), snapshot(t, outside)
			res, err := ArchiveChange(root, "add-mfa", archiveDate)
			if err == nil {
				t.Fatalf("no error; result %+v", res)
			}
			want := tt.link + " is a symbolic link; set does not follow links a change adds"
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("project changed (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(beforeOutside, snapshot(t, outside)); diff != "" {
				t.Errorf("outside changed (-before +after):\n%s", diff)
			}
		})
	}
}

func TestArchiveChangeNoDelta(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, baseTree)
	before := snapshot(t, root)
	res, err := ArchiveChange(root, "not-openspec", archiveDate)
	if !errors.Is(err, ErrNoDelta) || res != nil {
		t.Fatalf("got (%v, %v), want (nil, ErrNoDelta)", res, err)
	}
	// A project without an openspec directory at all.
	if _, err := ArchiveChange(t.TempDir(), "x", archiveDate); !errors.Is(err, ErrNoDelta) {
		t.Fatalf("got %v, want ErrNoDelta", err)
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("tree changed (-before +after):\n%s", diff)
	}
}

func TestArchiveChangeKeepsFileMode(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, baseTree)
	p := filepath.Join(root, "openspec/specs/auth/spec.md")
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ArchiveChange(root, "add-mfa", archiveDate); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]fs.FileMode{
		"openspec/specs/auth/spec.md":    0o600,
		"openspec/specs/billing/spec.md": 0o644,
	} {
		fi, err := os.Stat(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", file, got, want)
		}
	}
}

// TestArchiveChangeTwice archives a change, then fails to archive a new
// change of the same name on the same day without touching anything.
func TestArchiveChangeTwice(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, baseTree)
	if _, err := ArchiveChange(root, "add-mfa", archiveDate); err != nil {
		t.Fatal(err)
	}
	writeTree(t, root, []txtar.File{{Name: "openspec/changes/add-mfa/specs/auth/spec.md",
		Data: []byte(strings.ReplaceAll(invoiceDelta, "Invoice", "MFA"))}})
	before := snapshot(t, root)
	if _, err := ArchiveChange(root, "add-mfa", archiveDate); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("got %v, want an 'already exists' error", err)
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("tree changed (-before +after):\n%s", diff)
	}
	// The next day it archives.
	res, err := ArchiveChange(root, "add-mfa", archiveDate.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if res.ArchiveDir != "openspec/changes/archive/2026-03-05-add-mfa" {
		t.Errorf("archive dir %s", res.ArchiveDir)
	}
}

// What CheckNoLinks refuses is a RefusedPathError, the change's failure;
// any other error (one reading the disk) is not.
func TestCheckNoLinksRefusal(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "openspec", "changes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(root, "openspec", "changes", "c")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "openspec", "specs"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{
		"openspec/changes/c/specs": "openspec/changes/c is a symbolic link; set does not follow links a change adds",
		"openspec/specs/x":         "openspec/specs is not a directory",
	} {
		err := CheckNoLinks(root, rel)
		var refused *RefusedPathError
		if !errors.As(err, &refused) || err.Error() != want {
			t.Errorf("CheckNoLinks(%s) = %v, want the RefusedPathError %q", rel, err, want)
		}
	}
}

package spec

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestParseAll(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files [][2]string // name, content
		want  string      // requirement IDs with positions
		diags string
	}{{
		name: "requirements and diagnostics in file order, then line order",
		files: [][2]string{
			{"docs/b.md", "### REQ-B-01: B\n" + ok + "### REQ-B-02: No scenario\n"},
			{"docs/a.md", "### REQ-A-01: A\nDepends on: REQ-B-01\n" + ok},
		},
		want: "REQ-B-01 docs/b.md:1\nREQ-B-02 docs/b.md:4\nREQ-A-01 docs/a.md:1\n",
		diags: `
docs/b.md:4: warning: requirement REQ-B-02 has no scenario
`,
	}, {
		name: "duplicate across files names the first position, once per file",
		files: [][2]string{
			{"a.md", "### REQ-X-01: One\n" + ok + "### REQ-X-02: Two\n" + ok},
			{"b.md", "- REQ-X-01: Again\n  " + ok + "- REQ-X-01: Thrice\n  " + ok + "- REQ-X-02: Two again\n  " + ok},
		},
		want: "REQ-X-01 a.md:1\nREQ-X-02 a.md:4\nREQ-X-01 b.md:1\nREQ-X-01 b.md:4\nREQ-X-02 b.md:7\n",
		diags: `
b.md:1: error: duplicate requirement ID REQ-X-01 (first at a.md:1)
b.md:4: error: duplicate requirement ID REQ-X-01 (first at b.md:1)
b.md:7: error: duplicate requirement ID REQ-X-02 (first at a.md:4)
`,
	}, {
		name: "unknown and self dependencies, at the Depends on line",
		files: [][2]string{
			{"a.md", "### REQ-X-01: One\n" + ok + "- Depends on: REQ-X-01, REQ-Y-09\n\nDepends on: REQ-X-02\n"},
			{"b.md", "### REQ-X-02: Two\n" + ok},
		},
		want: "REQ-X-01 a.md:1\nREQ-X-02 b.md:1\n",
		diags: `
a.md:4: error: requirement REQ-X-01 depends on itself
a.md:4: error: requirement REQ-X-01 depends on unknown requirement REQ-Y-09
`,
	}, {
		name: "dependency cycles",
		files: [][2]string{
			{"a.md", "### REQ-C-01: One\nDepends on: REQ-C-02\n" + ok +
				"### REQ-C-02: Two\nDepends on: REQ-C-04\nDepends on: REQ-C-03\n" + ok},
			{"b.md", "### REQ-C-03: Three\nDepends on: REQ-C-01\n" + ok +
				"### REQ-C-04: Four\nDepends on: REQ-C-02\n" + ok +
				"### REQ-C-05: Five\nDepends on: REQ-C-06\n" + ok +
				"### REQ-C-06: Six\nDepends on: REQ-C-05\n" + ok},
		},
		want: "REQ-C-01 a.md:1\nREQ-C-02 a.md:5\nREQ-C-03 b.md:1\nREQ-C-04 b.md:5\nREQ-C-05 b.md:9\nREQ-C-06 b.md:13\n",
		diags: `
a.md:2: error: dependency cycle: REQ-C-01 → REQ-C-02 → REQ-C-03 → REQ-C-01
b.md:10: error: dependency cycle: REQ-C-05 → REQ-C-06 → REQ-C-05
`,
	}, {
		name: "a file listed twice is parsed once; a missing one is empty",
		files: [][2]string{
			{"a.md", "### REQ-X-01: One\n" + ok},
			{"./a.md", ""},
			{"missing.md", ""},
		},
		want: "REQ-X-01 a.md:1\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var names []string
			contents := map[string][]byte{}
			for _, f := range tc.files {
				names = append(names, f[0])
				if f[1] != "" {
					contents[f[0]] = []byte(f[1])
				}
			}
			s := ParseAll(names, contents, Options{})
			var got strings.Builder
			for _, r := range s.Requirements {
				got.WriteString(r.ID + " " + r.File + ":" + strconv.Itoa(r.Line) + "\n")
			}
			if got.String() != tc.want {
				t.Errorf("requirements:\n got:\n%s\nwant:\n%s", got.String(), tc.want)
			}
			if got, want := renderDiags(s.Diagnostics), strings.TrimPrefix(tc.diags, "\n"); got != want {
				t.Errorf("diagnostics:\n got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	root := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/spec.md", "## Auth\n- REQ-AUTH-01: Login\n  - Depends on: REQ-SESSION-01\n  "+ok)
	write("openspec/specs/session/spec.md", "## Purpose\nSessions: how long a login lasts and what ends it.\n\n"+
		"## Requirements\n### Requirement: Sessions expire\nSessions SHALL expire.\n#### Scenario: idle\n"+ok)

	s, err := Load(root, []string{"docs/spec.md", "openspec/specs/session/spec.md"}, Options{Strict: true})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if err := s.Err(); err != nil {
		t.Fatalf("Err: %v", err)
	}
	want := `
REQ-AUTH-01 "Login" domain=auth docs/spec.md:2 deps=REQ-SESSION-01
  scenario "scenario 1" @4 when=["x"] then=["y"]
REQ-SESSION-01 "Sessions expire" domain=session openspec/specs/session/spec.md:5
  text "Sessions SHALL expire."
  scenario "idle" @7 when=["x"] then=["y"]
`
	if got := render(s.Requirements); got != strings.TrimPrefix(want, "\n") {
		t.Errorf("Load:\n got:\n%s\nwant:%s", got, want)
	}

	_, err = Load(root, []string{"docs/spec.md", "docs/missing.md", "docs/gone.md"}, Options{})
	if err == nil {
		t.Fatal("Load of a missing file succeeded")
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load error %v is not fs.ErrNotExist", err)
	}
	if got := err.Error(); got != "open docs/missing.md: no such file or directory\nopen docs/gone.md: no such file or directory" {
		t.Errorf("Load error = %q, want both missing paths named as given", got)
	}
}

package openspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/internal/clitest"
)

// The differential tests of the folder reading API: each runs the real
// OpenSpec CLI (OpenSpecVersion) beside it, and is skipped without it
// (failing under CI=true), as TestArchiveDiff is.

// writeTreeMap writes the files of tr under root.
func writeTreeMap(t *testing.T, root string, tr Tree) {
	t.Helper()
	if err := materialise(root, tr); err != nil {
		t.Fatal(err)
	}
}

// taskCorpus are tasks.md files, each a change's: every line of TestTasks
// alone, and whole files with CRLF, fences, a BOM and bytes that are not
// UTF-8.
func taskCorpus() []string {
	corpus := []string{
		"",
		"# Tasks\r\n\r\n## 1. Build\r\n- [x] 1.1 one\r\n- [ ] 1.2 two\r\n\r\n```\r\n- [ ] fenced counts too\r\n```\r\n* [X] 1.3 three\r\n",
		"\ufeff- [x] bom first\n- [ ] second\n",
		"- [\xff] not UTF-8\n- [x] \xc3 broken\n",
		"- [A](https://example.com)\n- [ ](x)\n- [1][ref]\n+ [~] tilde\n10) [x] ten\n",
		"  - [ ] nested\n    1. [x] deeper\n\t* [ ] tab\n",
		"- [ ] a\r- [x] lone CR joins the lines\n",
		"- [ ] a\u2028- [x] after a line separator\n",
		"<!-- - [ ] in a comment -->\n    - [ ] indented code\n",
	}
	for _, tc := range taskLineCases {
		corpus = append(corpus, tc.line+"\n")
	}
	// Random lines shaped like a task line, each part drawn from the
	// characters the pattern turns on.
	pick := func(rng *rand.Rand, from ...string) string { return from[rng.Intn(len(from))] }
	rng := rand.New(rand.NewSource(32))
	for i := 0; i < 200; i++ {
		var b strings.Builder
		for l := rng.Intn(4) + 1; l > 0; l-- {
			b.WriteString(pick(rng, "", "", " ", "\t", "    ", "\u00a0", "\ufeff", "\r"))
			b.WriteString(pick(rng, "-", "*", "+", "1.", "2)", "123456789.", "1234567890.", "", "x", "--", "1"))
			b.WriteString(pick(rng, "", " ", " ", "  ", "\t", "\u3000", "\u2028"))
			b.WriteString(pick(rng, "[", "[", "[", "(", ""))
			b.WriteString(pick(rng, "", " ", "  ", "x", "X", " x ", "~", "xx", "😀", "é", "\u00a0", "\t", "]", "\r"))
			b.WriteString(pick(rng, "]", "]", "]", ")", ""))
			b.WriteString(pick(rng, "", " ", "(", "[", "\r", "\u2028", "x"))
			b.WriteString(pick(rng, "", "do it", " 1.1 do it ", "\u2028after", "](x)", "\r"))
			b.WriteString("\n")
		}
		corpus = append(corpus, b.String())
	}
	return corpus
}

func TestTaskProgressDiff(t *testing.T) {
	cli := clitest.OpenSpec.Require(t)
	corpus := taskCorpus()
	root := t.TempDir()
	tr := Tree{"openspec/specs/.gitkeep": nil}
	for i, src := range corpus {
		tr[fmt.Sprintf("openspec/changes/t%03d/tasks.md", i)] = []byte(src)
	}
	writeTreeMap(t, root, tr)
	out, ok := runOpenSpec(t, cli, root, "list", "--json")
	if !ok {
		t.Fatalf("openspec list --json failed:\n%s", out)
	}
	var list struct {
		Changes []struct {
			Name                       string
			CompletedTasks, TotalTasks int
		}
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("openspec list --json: %v\n%s", err, out)
	}
	if len(list.Changes) != len(corpus) {
		t.Fatalf("openspec list --json lists %d changes, want %d:\n%s", len(list.Changes), len(corpus), out)
	}
	withTasks := 0
	for _, c := range list.Changes {
		src := tr["openspec/changes/"+c.Name+"/tasks.md"]
		done, total := TaskProgress(src)
		if total > 0 {
			withTasks++
		}
		if done != c.CompletedTasks || total != c.TotalTasks {
			t.Errorf("%q: TaskProgress %d/%d, the CLI %d/%d", src, done, total, c.CompletedTasks, c.TotalTasks)
		}
	}
	t.Logf("%d tasks.md files, %d with tasks", len(corpus), withTasks)
}

// archivableCases are folder sets and an order to archive them in.
var archivableCases = []struct {
	name  string
	tree  Tree
	order []string
}{
	{"modified missing", Tree{
		"openspec/specs/links/spec.md":             []byte(linksSpec),
		"openspec/changes/bad/specs/links/spec.md": []byte(modifiedDelta("Delete a short link")),
	}, []string{"bad"}},
	{"right order", authChain, []string{"add-x", "mod-x", "ren-x", "mod-renamed"}},
	{"wrong order", authChain, []string{"mod-x", "ren-x", "add-x", "mod-renamed"}},
	{"renamed first", authChain, []string{"add-x", "mod-renamed", "ren-x", "mod-x"}},
	{"new capability with MODIFIED", Tree{
		"openspec/specs/links/spec.md":                []byte(linksSpec),
		"openspec/changes/new-cap/specs/bill/spec.md": []byte(addedDelta("Invoice") + "\n" + modifiedDelta("Pay")),
	}, []string{"new-cap"}},
	{"renamed missing", Tree{
		"openspec/specs/links/spec.md":             []byte(linksSpec),
		"openspec/changes/ren/specs/links/spec.md": []byte("## RENAMED Requirements\n\n- FROM: `### Requirement: Shorten`\n- TO: `### Requirement: Make short`\n"),
	}, []string{"ren"}},
	{"removed", Tree{
		"openspec/specs/links/spec.md":                  []byte(linksSpec + "\n" + block("Delete a short link")),
		"openspec/changes/misspelt/specs/links/spec.md": []byte("## REMOVED Requirements\n\n### Requirement: create a short link\n"),
		"openspec/changes/gone/specs/links/spec.md":     []byte("## REMOVED Requirements\n\n### Requirement: Never there\n"),
		"openspec/changes/rm/specs/links/spec.md":       []byte("## REMOVED Requirements\n\n### Requirement: Delete a short link\n"),
		"openspec/changes/rm-again/specs/links/spec.md": []byte("## REMOVED Requirements\n\n### Requirement: Delete a short link\n"),
	}, []string{"misspelt", "gone", "rm", "rm-again"}},
	{"added twice", Tree{
		"openspec/changes/one/specs/auth/spec.md":   []byte(addedDelta("Log in")),
		"openspec/changes/same/specs/auth/spec.md":  []byte(addedDelta("Log in")),
		"openspec/changes/other/specs/auth/spec.md": []byte(strings.Replace(addedDelta("Log in"), "SHALL log in", "SHALL log in twice", 1)),
	}, []string{"one", "same", "other"}},
	{"drops a scenario", Tree{
		"openspec/specs/links/spec.md": []byte(linksSpec),
		"openspec/changes/drop/specs/links/spec.md": []byte("## MODIFIED Requirements\n\n### Requirement: Create a short link\n" +
			"The system SHALL create it.\n\n#### Scenario: other\n- WHEN x\n- THEN y\n"),
	}, []string{"drop"}},
	{"metadata", Tree{
		"openspec/specs/links/spec.md":                   []byte(linksSpec),
		"openspec/changes/dep/.openspec.yaml":            []byte("schema: spec-driven\ncreated: 2026-11-27\ndepends_on: [docs]\n"),
		"openspec/changes/dep/specs/links/spec.md":       []byte(addedDelta("Share")),
		"openspec/changes/docs/.openspec.yaml":           []byte("schema: spec-driven\nskip_specs: true\ndepends_on:\n  - x\n"),
		"openspec/changes/docs/proposal.md":              []byte("## Why\nDocs.\n"),
		"openspec/changes/retire/.openspec.yaml":         []byte("schema: spec-driven\nretire_capabilities: true\ndepends_on: [dep]\n"),
		"openspec/changes/retire/specs/links/spec.md":    []byte("## REMOVED Requirements\n\n### Requirement: Create a short link\n\n### Requirement: Share\n"),
		"openspec/changes/no-retire/specs/links/spec.md": []byte("## REMOVED Requirements\n\n### Requirement: Create a short link\n"),
	}, []string{"no-retire", "dep", "docs", "retire"}},
}

// authChain: add-x creates auth with "Log in", mod-x modifies it, ren-x
// renames it "Sign in", and mod-renamed modifies "Sign in".
var authChain = Tree{
	"openspec/specs/links/spec.md":                    []byte(linksSpec),
	"openspec/changes/add-x/specs/auth/spec.md":       []byte(addedDelta("Log in")),
	"openspec/changes/mod-x/specs/auth/spec.md":       []byte(modifiedDelta("Log in")),
	"openspec/changes/ren-x/specs/auth/spec.md":       []byte("## RENAMED Requirements\n\n- FROM: `### Requirement: Log in`\n- TO: `### Requirement: Sign in`\n"),
	"openspec/changes/mod-renamed/specs/auth/spec.md": []byte(modifiedDelta("Sign in")),
}

// TestArchivableDiff: CheckArchivable refuses a folder exactly when
// `openspec archive <name> --yes`, run on each folder in the order on a
// copy, exits non-zero; and the refusal says where, in the delta.
func TestArchivableDiff(t *testing.T) {
	cli := clitest.OpenSpec.Require(t)
	for _, c := range archivableCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			refused := CheckArchivable(c.tree, c.order, diffDate)
			root := t.TempDir()
			writeTreeMap(t, root, c.tree)
			for _, name := range c.order {
				before := diffSnapshot(t, root, "", "refused")
				out, ok := runOpenSpec(t, cli, root, "archive", name, "--yes")
				ds, setRefused := refused[name]
				switch {
				case ok && setRefused:
					t.Errorf("%s: the CLI archives it, set refuses:\n%s", name, diagLines(ds))
				case !ok && !setRefused:
					t.Errorf("%s: the CLI refuses, set does not:\n%s", name, out)
				case !ok:
					removeEmptyArchive(root, before)
					if got := diffSnapshot(t, root, "", "refused"); got != before {
						t.Errorf("%s: the CLI refused but changed the tree (-before +after):\n%s", name, cmp.Diff(before, got))
					}
					inFolder := false
					for _, d := range ds {
						inFolder = inFolder || strings.HasPrefix(d.Pos.File, "openspec/changes/"+name+"/") && d.Pos.Line > 0
					}
					if !inFolder {
						t.Errorf("%s: refused at no line of its folder:\n%s", name, diagLines(ds))
					}
				}
				t.Logf("%s: set %s; openspec archive %s --yes:\n%s", name, diagLines(ds), name, out)
			}
		})
	}
}

// TestOpenChangesDiff: OpenChanges refuses a folder exactly when `openspec
// validate <name> --strict` does, but for set's own depends_on, and at
// every line the CLI names.
func TestOpenChangesDiff(t *testing.T) {
	cli := clitest.OpenSpec.Require(t)
	root := t.TempDir()
	writeTreeMap(t, root, openChangesTree)
	folders, ds := OpenChanges(openChangesTree)
	accepted := map[string]bool{}
	for _, f := range folders {
		accepted[f.Name] = true
	}
	entries, err := os.ReadDir(filepath.Join(root, "openspec/changes"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || name == "archive" || strings.HasPrefix(name, ".") || name == "ns" {
			continue
		}
		out, ok := runOpenSpec(t, cli, root, "validate", name, "--strict", "--json", "--no-interactive")
		checked += checkPositions(t, name, out, ds)
		if strings.HasPrefix(name, "bad-dep") {
			if !ok || accepted[name] {
				t.Errorf("%s: the CLI validates it %v (want true), set accepts it %v (want false, for its depends_on)", name, ok, accepted[name])
			}
			continue
		}
		if ok != accepted[name] {
			t.Errorf("%s: the CLI validates it %v, set accepts it %v\n%s\nset: %s", name, ok, accepted[name], out, diagLines(ds))
		}
	}
	if checked == 0 {
		t.Error("the CLI gave no issue with a line to check")
	}
	t.Logf("%d issues' positions checked", checked)
}

// checkPositions checks that every failing issue of `openspec validate
// <name> --strict --json` (its output out) that has a line is one of ds at
// that file and line, and returns how many it checked.
func checkPositions(t *testing.T, name string, out []byte, ds diag.List) int {
	t.Helper()
	var report struct {
		Items []struct {
			Issues []struct {
				Level, Path, Message string
				Line                 int
			}
		}
	}
	if i := bytes.IndexByte(out, '{'); i >= 0 {
		out = out[i:]
	}
	if err := json.Unmarshal(out, &report); err != nil || len(report.Items) != 1 {
		t.Errorf("%s: openspec validate --json: %v\n%s", name, err, out)
		return 0
	}
	n := 0
	at := map[string]bool{}
	for _, d := range ds {
		at[fmt.Sprintf("%s:%d", d.Pos.File, d.Pos.Line)] = true
	}
	for _, is := range report.Items[0].Issues {
		if is.Line == 0 || is.Level == "INFO" {
			continue
		}
		file := "openspec/changes/" + name + "/" + is.Path
		if strings.HasSuffix(is.Path, "spec.md") {
			file = "openspec/changes/" + name + "/specs/" + is.Path
		}
		n++
		if pos := fmt.Sprintf("%s:%d", file, is.Line); !at[pos] {
			t.Errorf("%s: the CLI's %s at %s (%s) is not one of set's:\n%s", name, is.Level, pos, is.Message, diagLines(ds))
		}
	}
	return n
}

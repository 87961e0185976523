package learncue_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/config/decode"
	"github.com/set-engine/set/engine/learn"
	"github.com/set-engine/set/engine/learn/learncue"
	"github.com/set-engine/set/engine/load"
)

// project writes a project on the golang profile, with files beside
// set.cue, and points CUE at a fresh cache and no registry.
func project(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("CUE_CACHE_DIR", filepath.Join(t.TempDir(), "cue-cache"))
	t.Setenv("CUE_REGISTRY", "none")
	files["cue.mod/module.cue"] = "module: \"example.com/demo@v0\"\nlanguage: version: \"v0.17.0\"\ndeps: \"github.com/set-engine/set@v0\": v: \"v0.1.0\"\n"
	files["set.cue"] = "// The demo.\npackage demo\n\nimport \"github.com/set-engine/set/profiles/golang\"\n\nproject: golang.#Project & {\n\tname: \"demo\"\n\tspec: [\"docs/spec.md\"]\n}\n"
	for name, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var proposals = []learn.Proposal{
	{ID: "43fb3e0f", Name: "doc-every-file-needs-header", Kind: "convention",
		Text:      "The `doc` gate failed earlier changes on `every file needs a header comment: \"<file>\"`: make sure yours gives it no cause to print that line before you finish.",
		Signature: "verify gate doc: every file needs a header comment: \"<file>\"", Changes: 2, Runs: 1,
		Evidence: []learn.Evidence{{Run: "run-1", Change: "greet", Round: 1, Line: "every file needs a header comment: \"greet.go\""}, {Run: "run-1", Change: "part", Round: 1, Line: "every file needs a header comment: \"part.go\""}}},
	{ID: "c97ecbd3", Name: "serialise-go-mod", Kind: "planning",
		Text:      "Changes that touched `go.mod` conflicted when they were merged: plan the changes that may touch it one after another, not side by side.",
		Signature: "conflict: go.mod", Serialise: []string{"go.mod"}, Changes: 2, Runs: 2,
		Evidence: []learn.Evidence{{Run: "run-1", Change: "part", Round: 1, Line: "go.mod"}, {Run: "run-2", Change: "shout", Round: 2, Line: "go.mod"}}},
}

func loadLearnings(t *testing.T, dir string) map[string]config.Learning {
	t.Helper()
	p, _, err := decode.Load(dir, load.Options{})
	if err != nil {
		t.Fatal(load.Details(err, dir))
	}
	return p.Learnings
}

// TestWriteCUENew: without learnings.cue, WriteCUE creates it in set.cue's
// package, and the project loads with the learnings as proposed.
func TestWriteCUENew(t *testing.T) {
	dir := project(t, map[string]string{})
	w, err := learncue.WriteCUE(dir, proposals)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"doc-every-file-needs-header", "serialise-go-mod"}; !cmp.Equal(w.Added, want) || len(w.Present) != 0 || w.Path != filepath.Join(dir, "learnings.cue") {
		t.Errorf("WriteCUE = %+v", w)
	}
	got := loadLearnings(t, dir)
	want := map[string]config.Learning{
		"doc-every-file-needs-header": {Kind: "convention", Text: proposals[0].Text, Enabled: true, Signature: proposals[0].Signature, Types: []string{}, Paths: []string{}},
		"serialise-go-mod":            {Kind: "planning", Text: proposals[1].Text, Enabled: true, Signature: "conflict: go.mod", Serialise: []string{"go.mod"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("learnings (-want +got):\n%s", diff)
	}
	data, _ := os.ReadFile(w.Path)
	for _, s := range []string{"package demo\n", "// 43fb3e0f: seen in 2 changes and 1 run:\n//   run-1 greet round 1: every file needs a header comment: \"greet.go\"\n",
		"project: learnings: \"serialise-go-mod\": {"} {
		if !strings.Contains(string(data), s) {
			t.Errorf("learnings.cue lacks %q:\n%s", s, data)
		}
	}
}

// TestWriteCUEAppends: an existing learnings.cue keeps every byte the
// user wrote, and a learning it names (in any form) is not written again.
func TestWriteCUEAppends(t *testing.T) {
	mine := "package demo\n\n// Mine, edited.\nproject: {\n\tlearnings: {\n\t\t\"doc-every-file-needs-header\": {kind: \"convention\", text: \"Start every file with a header comment.\"}\n\t}\n}\n"
	dir := project(t, map[string]string{"learnings.cue": mine})
	w, err := learncue.WriteCUE(dir, proposals)
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(w.Added, []string{"serialise-go-mod"}) || !cmp.Equal(w.Present, []string{"doc-every-file-needs-header"}) {
		t.Errorf("WriteCUE = %+v", w)
	}
	data, _ := os.ReadFile(w.Path)
	if !strings.HasPrefix(string(data), mine) {
		t.Errorf("learnings.cue lost what the user wrote:\n%s", data)
	}
	got := loadLearnings(t, dir)
	if got["doc-every-file-needs-header"].Text != "Start every file with a header comment." || got["serialise-go-mod"].Kind != "planning" {
		t.Errorf("learnings = %+v", got)
	}
	// Written again, nothing changes.
	w, err = learncue.WriteCUE(dir, proposals)
	if again, _ := os.ReadFile(w.Path); err != nil || len(w.Added) != 0 || string(again) != string(data) {
		t.Errorf("WriteCUE again = %+v, %v, file changed: %v", w, err, string(again) != string(data))
	}
}

// TestWriteCUEOtherPackage: a learnings.cue of another package than
// set.cue's, or of none, is not part of the project, so what --write adds
// to it would never be loaded or adopted: it is refused, and left alone.
func TestWriteCUEOtherPackage(t *testing.T) {
	for _, src := range []string{
		"project: learnings: mine: {kind: \"convention\", text: \"t\"}\n",
		"package other\n",
	} {
		dir := project(t, map[string]string{"learnings.cue": src})
		_, err := learncue.WriteCUE(dir, proposals)
		if err == nil || !strings.Contains(err.Error(), "and set.cue is in package demo") || !strings.Contains(err.Error(), "Give it `package demo` first") {
			t.Errorf("WriteCUE of %q: %v, want the package refused", src, err)
		}
		if data, _ := os.ReadFile(filepath.Join(dir, "learnings.cue")); string(data) != src {
			t.Errorf("learnings.cue changed:\n%s", data)
		}
	}
}

// TestWriteCUETrickyText: a failure's own line goes into the comments and
// the text as printed, whatever it holds: quotes, backslashes,
// backticks, unicode, a carriage return, a NUL, a byte that is not
// UTF-8, a very long line. The file loads, and the text comes back byte
// for byte (what is not UTF-8 as U+FFFD, as CUE's strings are UTF-8).
func TestWriteCUETrickyText(t *testing.T) {
	long := strings.Repeat("x", 5000)
	line := "say \"hi\" \\n `code` ``` ünïcødé 日本 \u2028 end\r\x00 \xff " + long
	p := learn.Proposal{ID: "0badf00d", Name: "tricky", Kind: "convention",
		Text: "The `x` gate failed earlier changes on `` " + line + " ``.", Signature: "verify gate x: " + line, Changes: 2, Runs: 1,
		Evidence: []learn.Evidence{{Run: "run-1", Change: "a", Round: 1, Line: line}, {Run: "run-1", Change: "b", Round: 1, Line: line}}}
	dir := project(t, map[string]string{})
	if _, err := learncue.WriteCUE(dir, []learn.Proposal{p}); err != nil {
		t.Fatal(err)
	}
	got := loadLearnings(t, dir)["tricky"]
	valid := func(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
	if got.Text != valid(p.Text) || got.Signature != valid(p.Signature) {
		t.Errorf("text = %q\nsignature = %q", got.Text, got.Signature)
	}
}

// TestWriteCUEReplacesAtomically: learnings.cue is replaced by a rename,
// never rewritten in place, so that a crash or a reader (an editor, a
// running setctl vet) never sees half of it: a second link to the old
// file keeps the old content.
func TestWriteCUEReplacesAtomically(t *testing.T) {
	mine := "package demo\n"
	dir := project(t, map[string]string{"learnings.cue": mine})
	old := filepath.Join(t.TempDir(), "old.cue")
	if err := os.Link(filepath.Join(dir, "learnings.cue"), old); err != nil {
		t.Skip("no hard links here:", err)
	}
	if _, err := learncue.WriteCUE(dir, proposals); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(old); string(data) != mine {
		t.Errorf("learnings.cue was rewritten in place, not replaced:\n%s", data)
	}
	if got := loadLearnings(t, dir); len(got) != 2 {
		t.Errorf("learnings = %+v", got)
	}
}

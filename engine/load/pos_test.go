package load

import (
	"errors"
	"path/filepath"
	"testing"

	"cuelang.org/go/cue/ast"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"github.com/set-engine/set/engine/config"
)

// A config.FieldError, whose position is plain values, prints and sorts
// exactly as the FieldError at the CUE position it was recorded from:
// the same lines, in the same order, duplicates dropped, an error without
// a position first.
func TestDetailsOfPlainFieldErrors(t *testing.T) {
	root := t.TempDir()
	setCUE := filepath.Join(root, "set.cue")
	src := "package demo\n\nproject: {\n\tgates: lint: {}\n\tstacks: feature: {lint: {}, review: {mode: \"warn\"}}\n\tmainBranch: \"trunk\"\n}\n"
	f, err := parser.ParseFile(setCUE, src)
	if err != nil {
		t.Fatal(err)
	}
	other, err := parser.ParseFile(filepath.Join(root, "other.cue"), "package demo\n\nx: 1\n")
	if err != nil {
		t.Fatal(err)
	}
	at := func(path ...string) token.Pos {
		pos := declPos([]*ast.File{f, other}, append([]string{ProjectField}, path...))
		if !pos.IsValid() {
			t.Fatalf("no position for %v", path)
		}
		return pos
	}
	type fieldErr struct {
		path []string
		pos  token.Pos
		msg  string
	}
	// Out of order, with a duplicate, two errors at one place and one
	// without a position.
	errs := []fieldErr{
		{[]string{"mainBranch"}, at("mainBranch"), "no such branch"},
		{[]string{"stacks", "feature", "review"}, at("stacks", "feature", "review"), "cannot run"},
		{[]string{"gates", "lint"}, at("gates", "lint"), "unused"},
		{[]string{"stacks", "feature", "lint"}, at("stacks", "feature", "lint"), "b"},
		{[]string{"stacks", "feature", "lint"}, at("stacks", "feature", "lint"), "a"},
		{[]string{"stacks", "feature", "review"}, at("stacks", "feature", "review"), "cannot run"},
		{[]string{"stacks", "nope"}, token.NoPos, "unknown"},
		{[]string{"x"}, other.Decls[1].(*ast.Field).Value.Pos(), "elsewhere"},
	}
	var fromCUE cueerrors.Error
	var plain []error
	for _, e := range errs {
		fromCUE = cueerrors.Append(fromCUE, NewFieldError(append([]string{ProjectField}, e.path...), e.pos, "%s", e.msg))
		plain = append(plain, &config.FieldError{Path: e.path, Pos: Position(e.pos), Msg: e.msg})
	}
	want := Details(fromCUE, root)
	if got := Details(errors.Join(plain...), root); got != want {
		t.Errorf("config.FieldErrors print\n%s\nwant, as at their CUE positions,\n%s", got, want)
	}
	const golden = "project.stacks.nope: unknown\n" +
		"project.x: elsewhere: other.cue:3:4\n" +
		"project.gates.lint: unused: set.cue:4:15\n" +
		"project.stacks.feature.lint: a: set.cue:5:26\n" +
		"project.stacks.feature.lint: b: set.cue:5:26\n" +
		"project.stacks.feature.review: cannot run: set.cue:5:38\n" +
		"project.mainBranch: no such branch: set.cue:6:14\n"
	if want != golden {
		t.Errorf("Details prints\n%s\nwant\n%s", want, golden)
	}
}

// Position and tokenPos are inverses for every position of a file.
func TestPositionRoundTrip(t *testing.T) {
	src := "package demo\n\nproject: {\n\tname: \"demo\"\n\n\tspec: [\"a.md\"]\n}\n"
	file := token.NewFile("/p/set.cue", -1, len(src))
	file.SetLinesForContent([]byte(src))
	for offset := range len(src) {
		p := Position(file.Pos(offset, token.NoRelPos))
		if back := Position(tokenPos(p)); back != p {
			t.Fatalf("offset %d: %+v comes back as %+v", offset, p, back)
		}
	}
	if Position(token.NoPos) != (config.Pos{}) || tokenPos(config.Pos{}) != token.NoPos {
		t.Error("the zero Pos and token.NoPos do not map to each other")
	}
}

// declPos finds a field whose label is not an identifier both by its
// name and as CUE's errors name it, quoted.
func TestDeclPosOfQuotedLabel(t *testing.T) {
	f, err := parser.ParseFile("learnings.cue", "package demo\n\nproject: learnings: \"doc-comment\": {\n\tkind: \"habit\"\n}\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"doc-comment", `"doc-comment"`} {
		pos := declPos([]*ast.File{f}, []string{ProjectField, "learnings", label, "kind"})
		if pos.Line() != 4 || pos.Column() != 8 {
			t.Errorf("declPos of %s.kind = %v, want learnings.cue:4:8", label, pos)
		}
	}
}

// declPos finds a list's element by its index, as CUE's errors name it,
// and declPath names the element at its position the same way; an index
// past the list's end is no position.
func TestDeclPosOfListElement(t *testing.T) {
	f, err := parser.ParseFile("learnings.cue", "package demo\n\nproject: learnings: \"doc\": {\n\ttypes: [\"feature\", \"feat\"]\n}\n")
	if err != nil {
		t.Fatal(err)
	}
	files := []*ast.File{f}
	path := []string{ProjectField, "learnings", `"doc"`, "types", "1"}
	pos := declPos(files, path)
	if pos.Line() != 4 || pos.Column() != 21 {
		t.Fatalf("declPos of types.1 = %v, want learnings.cue:4:21", pos)
	}
	if got := declPath(files, pos); len(got) != 5 || got[3] != "types" || got[4] != "1" {
		t.Errorf("declPath at learnings.cue:4:21 = %v, want project.learnings.doc.types.1", got)
	}
	if pos := declPos(files, []string{ProjectField, "learnings", `"doc"`, "types", "2"}); pos.IsValid() {
		t.Errorf("declPos of types.2 = %v, want none", pos)
	}
}

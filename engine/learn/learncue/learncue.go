// Package learncue writes the learnings setctl learn proposes as CUE
// source: learnings.cue in the project's package, for a person to read,
// edit and commit. It is the CUE side of engine/learn, apart from it so
// that what reads episodes (the orchestrator hands them on within a run)
// links no CUE.
package learncue

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/parser"

	"github.com/set-engine/set/engine/atomicfile"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/learn"
)

// LearningsFile is the file of the project package that setctl learn
// --write adds proposals to, beside set.cue.
const LearningsFile = "learnings.cue"

// configFile is the project's set.cue, whose package clause
// LearningsFile takes.
const configFile = "set.cue"

// Written is what WriteCUE did: the file and the names of the learnings
// it added, and those it left alone because the file already had them.
type Written struct {
	Path    string
	Added   []string
	Present []string
}

// WriteCUE adds proposals to LearningsFile in the project directory dir
// (see AppendCUE), creating it in set.cue's package when there is none.
// Nothing is adopted until the file is committed: WriteCUE only writes.
func WriteCUE(dir string, proposals []learn.Proposal) (Written, error) {
	path := filepath.Join(dir, LearningsFile)
	pkg, err := Package(dir)
	if err != nil {
		return Written{Path: path}, err
	}
	src, err := os.ReadFile(path)
	switch {
	case os.IsNotExist(err):
		src = nil
	case err != nil:
		return Written{Path: path}, err
	}
	out, w, err := AppendCUE(src, pkg, proposals)
	w.Path = path
	if err != nil || len(w.Added) == 0 {
		return w, err
	}
	return w, atomicfile.Write(path, out, 0o644)
}

// AppendCUE is src, a LearningsFile's content, with proposals added as
// `project: learnings: NAME: {kind, text, signature, …}` fields, each
// under a comment that gives its ID and evidence, for a person to read,
// edit and commit. Every byte of src is kept, and a proposal whose name
// src has already (in whatever form) is left out: Written says which were
// added and which were present (its Path is ""). pkg is the project's
// package (set.cue's): src nil is a new file, which starts with a word on
// what it is and pkg's package clause; a src of another package, or of
// none, is refused, since set would never load what it adds.
func AppendCUE(src []byte, pkg string, proposals []learn.Proposal) ([]byte, Written, error) {
	var w Written
	if src == nil {
		src = []byte("// Learnings set proposed from the journal (setctl learn --write).\n// Read them and edit or delete any: they are adopted once this file is committed on main.\n\npackage " + pkg + "\n")
	}
	f, err := parser.ParseFile(LearningsFile, src, parser.ParseComments)
	if err != nil {
		return nil, w, fmt.Errorf("%s does not parse, so set leaves it alone: %w", LearningsFile, err)
	}
	if got := f.PackageName(); got != pkg {
		has := "has no package clause"
		if got != "" {
			has = "is in package " + got
		}
		return nil, w, fmt.Errorf("%s %s, and set.cue is in package %s: set would never load the learnings added to it. Give it `package %s` first, then run setctl learn --write again", LearningsFile, has, pkg, pkg)
	}
	have := learningNames(f)
	var block strings.Builder
	for _, p := range proposals {
		if have[p.Name] {
			w.Present = append(w.Present, p.Name)
			continue
		}
		have[p.Name] = true
		w.Added = append(w.Added, p.Name)
		block.WriteString("\n" + learningBlock(p))
	}
	if len(w.Added) == 0 {
		return src, w, nil
	}
	formatted, err := format.Source([]byte(block.String()))
	if err != nil {
		return nil, w, fmt.Errorf("the learnings would not parse: %w", err)
	}
	out := append(slices.Clone(bytes.TrimRight(src, "\n")), '\n', '\n')
	return append(out, bytes.TrimLeft(formatted, "\n")...), w, nil
}

// Package is the package of the project in dir: its set.cue's.
func Package(dir string) (string, error) {
	return packageOf(filepath.Join(dir, configFile))
}

// packageOf is the package name of the CUE file at path.
func packageOf(path string) (string, error) {
	f, err := parser.ParseFile(path, nil, parser.PackageClauseOnly)
	if err != nil {
		return "", err
	}
	if f.PackageName() == "" {
		return "", fmt.Errorf("%s has no package clause", path)
	}
	return f.PackageName(), nil
}

// learningsPath is where a project package holds its learnings.
var learningsPath = []string{"project", "learnings"}

// learningNames are the names of the learnings f declares under
// project: learnings, in any of CUE's ways of writing it (nested structs,
// a: b: c shorthand, conjunctions, embeddings).
func learningNames(f *ast.File) map[string]bool {
	names := map[string]bool{}
	var walk func(n ast.Node, path []string)
	walk = func(n ast.Node, path []string) {
		switch x := n.(type) {
		case *ast.File:
			for _, d := range x.Decls {
				walk(d, path)
			}
		case *ast.StructLit:
			for _, e := range x.Elts {
				walk(e, path)
			}
		case *ast.EmbedDecl:
			walk(x.Expr, path)
		case *ast.BinaryExpr:
			walk(x.X, path)
			walk(x.Y, path)
		case *ast.ParenExpr:
			walk(x.X, path)
		case *ast.Field:
			name, _, err := ast.LabelName(x.Label)
			if err != nil {
				return
			}
			switch p := append(slices.Clone(path), name); {
			case len(p) == len(learningsPath)+1:
				names[name] = true
			case name == learningsPath[len(p)-1]:
				walk(x.Value, p)
			}
		}
	}
	walk(f, nil)
	return names
}

// learningBlock is p as a field of the project package, under a
// comment that says where it comes from.
func learningBlock(p learn.Proposal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s: seen in %s and %s:\n", p.ID, english.Plural(p.Changes, "change"), english.Plural(p.Runs, "run"))
	for _, e := range p.Evidence {
		line := e.Line
		if e.Round > 0 {
			line = fmt.Sprintf("round %d: %s", e.Round, line)
		}
		fmt.Fprintf(&b, "//   %s %s %s\n", e.Run, e.Change, commentText(line))
	}
	q := func(s string) string { return literal.String.Quote(strings.ToValidUTF8(s, "\uFFFD")) }
	fmt.Fprintf(&b, "project: learnings: %s: {\n", q(p.Name))
	fmt.Fprintf(&b, "kind: %s\ntext: %s\nsignature: %s\n", q(p.Kind), q(p.Text), q(p.Signature))
	list := func(field string, ss []string) {
		if len(ss) > 0 {
			quoted := make([]string, len(ss))
			for i, s := range ss {
				quoted[i] = q(s)
			}
			fmt.Fprintf(&b, "%s: [%s]\n", field, strings.Join(quoted, ", "))
		}
	}
	list("serialise", p.Serialise)
	if p.Pattern != "" {
		fmt.Fprintf(&b, "pattern: %s\n", q(p.Pattern))
	}
	list("paths", p.Paths)
	b.WriteString("}\n")
	return b.String()
}

// commentText is s as the rest of a CUE comment line holds it: a
// failure's line is printed by a program set does not know, and a
// control character (a NUL, a carriage return, a line break) or a byte
// that is not UTF-8 would end the comment or fail the parse. Each is
// U+FFFD; tabs are spaces.
func commentText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case unicode.IsControl(r), r == '\u2028', r == '\u2029':
			return unicode.ReplacementChar
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

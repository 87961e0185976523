package load

import (
	"path/filepath"
	"slices"
	"strconv"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"

	"github.com/set-engine/set/engine/config"
)

// Position is pos as plain values, the zero config.Pos for token.NoPos:
// the form in which config.Project keeps the positions of its fields.
func Position(pos token.Pos) config.Pos {
	if !pos.IsValid() || pos.File() == nil {
		return config.Pos{}
	}
	return config.Pos{File: pos.Filename(), Offset: pos.Offset(), Line: pos.Line(), Column: pos.Column()}
}

// tokenPos is p as a token.Pos, token.NoPos for the zero Pos: a position
// in a file of p's name at p's offset, line and column, which is all that
// CUE's errors read of a position to sort and print them. For p as
// Position made it, Position(tokenPos(p)) == p.
func tokenPos(p config.Pos) token.Pos {
	if !p.IsValid() {
		return token.NoPos
	}
	// Lines 1 … Line-1 one byte long, then Line starting Column-1 bytes
	// before Offset; a line starts no earlier than the lines before it
	// allow, should p not come from a file.
	lines := make([]int, p.Line)
	for i := range p.Line - 1 {
		lines[i] = i
	}
	lines[p.Line-1] = max(p.Offset-(p.Column-1), p.Line-1)
	offset := lines[p.Line-1] + max(p.Column, 1) - 1
	f := token.NewFile(p.File, -1, offset+1)
	f.SetLines(lines)
	return f.Pos(offset, token.NoRelPos)
}

// FieldPos is the position where the project's own files declare the
// field at path below `project` (e.g. "plan", "changes", "api"), or
// token.NoPos when they do not declare it. It follows struct literals,
// `&` expressions, parentheses and embeddings, which is how set.cue files
// are written (`project: golang.#Project & {plan: changes: api: {...}}`).
func (p *Instance) FieldPos(path ...string) token.Pos {
	return declPos(p.files, append([]string{ProjectField}, path...))
}

// declPos is where files declare the value at path (from the package
// root, e.g. project.gates.test), or token.NoPos. A label of path may be
// quoted, as CUE's errors name one that is not an identifier
// (project.learnings."doc-comment").
// A list's element is named by its index, as CUE's errors name it
// (project.learnings."doc-comment".types.0).
func declPos(files []*ast.File, path []string) token.Pos {
	if len(path) == 0 {
		return token.NoPos
	}
	for _, f := range files {
		if pos := findInDecls(f.Decls, path); pos.IsValid() {
			return pos
		}
	}
	return token.NoPos
}

// declPath is the path (from the package root) of the field whose value
// files declare at pos, or nil: the inverse of declPos.
func declPath(files []*ast.File, pos token.Pos) []string {
	for _, f := range files {
		if path := pathInDecls(f.Decls, nil, pos); path != nil {
			return path
		}
	}
	return nil
}

// ConfigPos is where set.cue itself declares the `project` field's value,
// or token.NoPos when it does not.
func (p *Instance) ConfigPos() token.Pos {
	for _, f := range p.files {
		if filepath.Base(f.Filename) == ConfigFile {
			return findInDecls(f.Decls, []string{ProjectField})
		}
	}
	return token.NoPos
}

func findInDecls(decls []ast.Decl, path []string) token.Pos {
	for _, d := range decls {
		switch d := d.(type) {
		case *ast.Field:
			name, _, err := ast.LabelName(d.Label)
			if err != nil || name != path[0] && strconv.Quote(name) != path[0] {
				continue
			}
			if len(path) == 1 {
				return d.Value.Pos()
			}
			if pos := findInExpr(d.Value, path[1:]); pos.IsValid() {
				return pos
			}
		case *ast.EmbedDecl:
			if pos := findInExpr(d.Expr, path); pos.IsValid() {
				return pos
			}
		}
	}
	return token.NoPos
}

func findInExpr(x ast.Expr, path []string) token.Pos {
	switch x := x.(type) {
	case *ast.StructLit:
		return findInDecls(x.Elts, path)
	case *ast.BinaryExpr:
		if x.Op != token.AND {
			return token.NoPos
		}
		if pos := findInExpr(x.X, path); pos.IsValid() {
			return pos
		}
		return findInExpr(x.Y, path)
	case *ast.ParenExpr:
		return findInExpr(x.X, path)
	case *ast.ListLit:
		// A list's element, as CUE's paths name it: by its index.
		i, err := strconv.Atoi(path[0])
		if err != nil || i < 0 || i >= len(x.Elts) {
			return token.NoPos
		}
		if len(path) == 1 {
			return x.Elts[i].Pos()
		}
		return findInExpr(x.Elts[i], path[1:])
	}
	return token.NoPos
}

func pathInDecls(decls []ast.Decl, prefix []string, pos token.Pos) []string {
	for _, d := range decls {
		switch d := d.(type) {
		case *ast.Field:
			name, _, err := ast.LabelName(d.Label)
			if err != nil {
				continue
			}
			path := append(slices.Clip(prefix), name)
			if d.Value.Pos() == pos {
				return path
			}
			if found := pathInExpr(d.Value, path, pos); found != nil {
				return found
			}
		case *ast.EmbedDecl:
			if found := pathInExpr(d.Expr, prefix, pos); found != nil {
				return found
			}
		}
	}
	return nil
}

func pathInExpr(x ast.Expr, prefix []string, pos token.Pos) []string {
	switch x := x.(type) {
	case *ast.StructLit:
		return pathInDecls(x.Elts, prefix, pos)
	case *ast.BinaryExpr:
		if x.Op != token.AND {
			return nil
		}
		if found := pathInExpr(x.X, prefix, pos); found != nil {
			return found
		}
		return pathInExpr(x.Y, prefix, pos)
	case *ast.ParenExpr:
		return pathInExpr(x.X, prefix, pos)
	case *ast.ListLit:
		for i, e := range x.Elts {
			path := append(slices.Clip(prefix), strconv.Itoa(i))
			if e.Pos() == pos {
				return path
			}
			if found := pathInExpr(e, path, pos); found != nil {
				return found
			}
		}
	}
	return nil
}

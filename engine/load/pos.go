package load

import (
	"path/filepath"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"
)

// FieldPos is the position where the project's own files declare the
// field at path below `project` (e.g. "plan", "changes", "api"), or
// token.NoPos when they do not declare it. It follows struct literals,
// `&` expressions, parentheses and embeddings, which is how set.cue files
// are written (`project: golang.#Project & {plan: changes: api: {...}}`).
func (p *Project) FieldPos(path ...string) token.Pos {
	full := append([]string{ProjectField}, path...)
	for _, f := range p.files {
		if pos := findInDecls(f.Decls, full); pos.IsValid() {
			return pos
		}
	}
	return token.NoPos
}

// ConfigPos is where set.cue itself declares the `project` field's value,
// or token.NoPos when it does not.
func (p *Project) ConfigPos() token.Pos {
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
			if err != nil || name != path[0] {
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
	}
	return token.NoPos
}

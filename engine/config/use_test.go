package config_test

import (
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

const (
	configPkg = "github.com/set-engine/set/engine/config"
	decodePkg = "github.com/set-engine/set/engine/config/decode"
)

// TestEveryFieldIsRead is the other half of decode's
// TestEveryFieldReachesGo: every field of config.Project and of the types it
// reaches is read by engine code, so a schema field that decodes but that
// nothing acts on fails here. A read is a selector x.Field, in non-test
// code outside engine/config/decode, that is not the left-hand side of a
// plain assignment; inside engine/config a read counts only in a method
// that code outside engine/config calls (DaggerRunner.Base reads From).
// Fields the decoder fills for itself (json:"-") are not schema fields;
// fields a `when` condition names (expr:"name") are read by engine/cond.
func TestEveryFieldIsRead(t *testing.T) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo,
		Dir:  "../..",
	}
	pkgs, err := packages.Load(cfg, "github.com/set-engine/set/...")
	if err != nil {
		t.Fatal(err)
	}
	if packages.PrintErrors(pkgs) > 0 {
		t.Fatal("the module's packages do not load")
	}
	var config *packages.Package
	for _, p := range pkgs {
		if p.PkgPath == configPkg {
			config = p
		}
	}
	if config == nil {
		t.Fatalf("%s not loaded", configPkg)
	}
	project := config.Types.Scope().Lookup("Project")
	if project == nil {
		t.Fatal("config.Project not found")
	}
	fields := schemaFields(project.Type())
	if len(fields) < 50 {
		t.Fatalf("found only %d fields below config.Project: is the walk blind?", len(fields))
	}

	read := map[*types.Var]bool{}
	methodReads := map[*types.Func][]*types.Var{} // config methods → fields they read
	usedMethods := map[*types.Func]bool{}         // config methods called outside config
	for _, p := range pkgs {
		if p.PkgPath == decodePkg {
			continue
		}
		inConfig := p.PkgPath == configPkg
		for _, file := range p.Syntax {
			if strings.HasSuffix(p.Fset.Position(file.Pos()).Filename, "_test.go") {
				continue
			}
			written := assignedSelectors(file)
			for _, decl := range file.Decls {
				fn, _ := decl.(*ast.FuncDecl)
				var method *types.Func
				if inConfig && fn != nil && fn.Recv != nil {
					method, _ = p.TypesInfo.Defs[fn.Name].(*types.Func)
				}
				ast.Inspect(decl, func(n ast.Node) bool {
					sel, ok := n.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					s := p.TypesInfo.Selections[sel]
					if s == nil {
						return true
					}
					switch obj := s.Obj().(type) {
					case *types.Var:
						if _, ok := fields[obj]; !ok || written[sel] {
							return true
						}
						switch {
						case !inConfig:
							read[obj] = true
						case method != nil:
							methodReads[method] = append(methodReads[method], obj)
						}
					case *types.Func:
						if !inConfig && obj.Pkg() != nil && obj.Pkg().Path() == configPkg {
							usedMethods[obj.Origin()] = true
						}
					}
					return true
				})
			}
		}
	}
	for m, vs := range methodReads {
		if usedMethods[m] {
			for _, v := range vs {
				read[v] = true
			}
		}
	}

	var unread []string
	for f, path := range fields {
		if !read[f] {
			unread = append(unread, path)
		}
	}
	slices.Sort(unread)
	if len(unread) > 0 {
		t.Errorf("config fields that decode but that no engine code reads (act on them or remove them from schema/ and config):\n  %s",
			strings.Join(unread, "\n  "))
	}
}

// schemaFields returns the fields of t and of every struct it reaches
// through pointers, slices and maps, each with its path (Type.Field),
// leaving out fields tagged json:"-".
func schemaFields(t types.Type) map[*types.Var]string {
	out := map[*types.Var]string{}
	seen := map[types.Type]bool{}
	var walk func(t types.Type, name string)
	walk = func(t types.Type, name string) {
		switch u := t.(type) {
		case *types.Named:
			if seen[u] {
				return
			}
			seen[u] = true
			walk(u.Underlying(), u.Obj().Name())
		case *types.Pointer:
			walk(u.Elem(), name)
		case *types.Slice:
			walk(u.Elem(), name)
		case *types.Map:
			walk(u.Elem(), name)
		case *types.Struct:
			for i := range u.NumFields() {
				f := u.Field(i)
				tag := reflect.StructTag(u.Tag(i))
				if tag.Get("json") == "-" {
					continue
				}
				if name, ok := tag.Lookup("expr"); ok && name != "-" {
					// A gate's `when` reads it by this name (engine/cond
					// evaluates conditions against the struct): that is
					// its use, not a selector.
					continue
				}
				out[f] = name + "." + f.Name()
				walk(f.Type(), name+"."+f.Name())
			}
		}
	}
	walk(t, "")
	return out
}

// assignedSelectors are the selectors that a plain assignment writes to.
func assignedSelectors(file *ast.File) map[*ast.SelectorExpr]bool {
	out := map[*ast.SelectorExpr]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok && (as.Tok == token.ASSIGN || as.Tok == token.DEFINE) {
			for _, lhs := range as.Lhs {
				if sel, ok := lhs.(*ast.SelectorExpr); ok {
					out[sel] = true
				}
			}
		}
		return true
	})
	return out
}

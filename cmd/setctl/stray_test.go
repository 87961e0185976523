package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	set "github.com/set-engine/set"
)

// strayInstruction is an instruction to run the old binary name with one
// of setctl's commands or help topics. `set` is a shell builtin: `set plan`
// runs the builtin and does nothing. The same pattern guards the CLI's
// output in testdata/script/no_stray_set.txtar (the nostrayset command).
var strayInstruction = func() *regexp.Regexp {
	names := []string{"help"}
	for _, c := range commands() {
		names = append(names, c.name)
	}
	for _, t := range topics() {
		names = append(names, t.name)
	}
	return regexp.MustCompile(`\bset (` + strings.Join(names, "|") + `)\b`)
}()

// noStraySet is the script command `nostrayset FILE...`: it fails when a
// line of a file (or of stdout or stderr) tells the user to type `set …`.
func noStraySet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: nostrayset FILE...")
	}
	for _, name := range args {
		for i, line := range strings.Split(ts.ReadFile(name), "\n") {
			if m := strayInstruction.FindString(line); m != "" {
				ts.Fatalf("%s:%d: %q tells the user to run %q; the binary is setctl", name, i+1, line, m)
			}
		}
	}
}

// TestNoStraySetInstruction scans every string literal of the Go code in
// cmd/ and engine/ (tests aside), so that an error message deep in the
// engine cannot tell a user to type `set …`; and the embedded CUE module,
// the README and the pages of docs/, which users read too.
func TestNoStraySetInstruction(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	for _, dir := range []string{"cmd", "engine"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Errorf("%s: %v", fset.Position(lit.Pos()), err)
					return true
				}
				if m := strayInstruction.FindString(s); m != "" {
					t.Errorf("%s: %q tells the user to run %q; the binary is setctl", fset.Position(lit.Pos()), s, m)
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	texts := map[string][]byte{}
	err := fs.WalkDir(set.Module, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		texts["embedded "+path], err = fs.ReadFile(set.Module, path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range docPages(t) {
		texts[page.path] = []byte(page.text)
	}
	if len(texts) < 5 {
		t.Fatalf("scanned only %d texts", len(texts))
	}
	for name, data := range texts {
		for i, line := range strings.Split(string(data), "\n") {
			if m := strayInstruction.FindString(line); m != "" {
				t.Errorf("%s:%d: %q tells the user to run %q; the binary is setctl", name, i+1, line, m)
			}
		}
	}
}

// TestStrayPatternMatches: the pattern catches what it is for and lets the
// binary's name through.
func TestStrayPatternMatches(t *testing.T) {
	for s, want := range map[string]bool{
		"run `set vet` to check it":      true,
		"then set plan -out plan.json":   true,
		"(see the docs of set apply)":    true,
		"run `setctl vet` to check it":   false,
		"the set turns a spec into code": false,
		"a gate set expanded by a when":  false,
		"sets vet":                       false,
		"see set help conditions":        true,
	} {
		if got := strayInstruction.MatchString(s); got != want {
			t.Errorf("%q: match = %v, want %v", s, got, want)
		}
	}
}

package load

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
)

// TestUserErrors pins, exactly, what `setctl vet` prints for mistakes in
// set.cue: one line per mistake, at the user's own position.
func TestUserErrors(t *testing.T) {
	env := []string{"CUE_CACHE_DIR=" + t.TempDir(), "CUE_REGISTRY=none"}
	tests := []struct {
		name, extra, want string
	}{
		{
			name:  "enum",
			extra: `gates: fmt: mode: "warning"`,
			want:  `project.gates.fmt.mode: "warning" is not one of "run", "warn", "skip": set.cue:8:20`,
		},
		{
			name:  "enum of the wrong type",
			extra: `runner: kind: 3`,
			want:  `project.runner.kind: 3 is not one of "host", "dagger": set.cue:8:16`,
		},
		{
			name:  "enum on a gate of the project's own",
			extra: `gates: lint: {run: ["golangci-lint", "run"], mode: "often"}`,
			want:  `project.gates.lint.mode: "often" is not one of "run", "warn", "skip": set.cue:8:53`,
		},
		{
			name:  "gate kind that does not exist",
			extra: `gates: lint: {kind: "audit"}`,
			want:  `project.gates.lint.kind: "audit" is not one of "exec", "scope_check", "test_files", "spec_verify", "rules", "review": set.cue:8:22`,
		},
		{
			name:  "exec gate without run",
			extra: `gates: lint: order: 25`,
			want:  `project.gates.lint.run: field is required but not present (run is the argv of an exec gate): set.cue:8:15`,
		},
		{
			name:  "exec agent without argv",
			extra: `agent: adapter: "exec"`,
			want:  `project.agent.argv: field is required but not present (argv is the command of an exec agent; {prompt_file}, {worktree} and {change} are substituted): set.cue:8:9`,
		},
		{
			// The agent is a disjunction of structs told apart by
			// adapter: only the exec branch's error, at the user's key.
			name:  "exec agent with an env value that is not a string",
			extra: `agent: {adapter: "exec", argv: ["sh", "agent.sh", "{prompt_file}"], env: FOO: 1}`,
			want:  `project.agent.env.FOO: conflicting values 1 and string (mismatched types int and string): set.cue:8:80`,
		},
		{
			name:  "exec agent with a field agents do not have",
			extra: `agent: {adapter: "exec", argv: ["sh", "agent.sh", "{prompt_file}"], model: "x"}`,
			want:  `project.agent.model: field not allowed: set.cue:8:70`,
		},
		{
			// The learnings are keyed by #Name: a label that is not one
			// is told what a name is.
			name:  "learning whose name is not kebab-case",
			extra: `learnings: no_println: {kind: "convention", text: "t"}`,
			want:  `project.learnings.no_println: field not allowed: a learning's name is kebab-case, lower-case letters and digits in groups joined by hyphens (no-println): set.cue:8:13`,
		},
		{
			name:  "agent adapter that does not exist",
			extra: `agent: adapter: "bogus"`,
			want:  `project.agent.adapter: "bogus" is not one of "codex", "exec", "replay", "claude": set.cue:8:18`,
		},
		{
			name:  "bound with a default",
			extra: `maxParallel: 0`,
			want:  `project.maxParallel: invalid value 0 (out of bound >=1): set.cue:8:15`,
		},
		{
			name:  "pattern with a default",
			extra: `budgets: wallTime: "2 hours"`,
			want:  `project.budgets.wallTime: invalid value "2 hours" (out of bound =~"^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$"): set.cue:8:21`,
		},
		{
			name:  "type with a default",
			extra: `maxParallel: "3"`,
			want:  `project.maxParallel: conflicting values "3" and int (mismatched types string and int): set.cue:8:15`,
		},
		{
			// Two values of the user's: CUE's words, both positions.
			name:  "the user's own values in conflict",
			extra: "gates: fmt: mode: \"warn\"\n\tgates: fmt: mode: \"skip\"",
			want: `project.gates.fmt.mode: 2 errors in empty disjunction:
project.gates.fmt.mode: 3 errors in empty disjunction:
project.gates.fmt.mode: conflicting values "skip" and "warn":
    set.cue:8:20
    set.cue:9:20
project.gates.fmt.mode: conflicting values "run" and "warn": set.cue:8:20`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTestProject(t, tt.extra)
			_, err := Load(dir, Options{Env: env})
			if err == nil {
				t.Fatal("Load succeeded")
			}
			if got := strings.TrimSuffix(Details(err, dir), "\n"); got != tt.want {
				t.Errorf("Details:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// writeTestProject writes a golang project whose set.cue has extra on its
// line 8.
func writeTestProject(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	writeModuleFile(t, dir, "example.com/x@v0")
	src := fmt.Sprintf(`package x

import "github.com/set-engine/set/profiles/golang"

project: golang.#Project & {
	name: "x"
	spec: ["docs/spec.md"]
	%s
}
`, extra)
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestDetailsLayout(t *testing.T) {
	root := filepath.FromSlash("/p")
	f := token.NewFile(filepath.Join(root, "set.cue"), -1, 100)
	f.SetLinesForContent([]byte(strings.Repeat("0123456789\n", 9)))
	at := func(line, col int) token.Pos { return f.Pos((line-1)*11+col-1, token.NoRelPos) }
	path := []string{"project", "gates", "x", "when"}
	var err errors.Error
	err = errors.Append(err, NewFieldError(path, at(3, 2), "unknown name y (1:1)\n\t | y\n\t | ^"))
	err = errors.Append(err, NewFieldError([]string{"project", "name"}, at(1, 1), "bad name"))
	err = errors.Append(err, &positioned{err: NewFieldError([]string{"project", "spec"}, token.NoPos, "twice"), path: []string{"project", "spec"}, pos: at(5, 1), more: []token.Pos{at(6, 4)}})
	want := `project.name: bad name: set.cue:1:1
project.gates.x.when: unknown name y (1:1): set.cue:3:2
	 | y
	 | ^
project.spec: twice:
    set.cue:5:1
    set.cue:6:4
`
	if got := Details(err, root); got != want {
		t.Errorf("Details:\n%s\nwant:\n%s", got, want)
	}
	if got := Details(fmt.Errorf("spec file docs/spec.md: no such file"), root); got != "spec file docs/spec.md: no such file\n" {
		t.Errorf("Details of a plain error = %q", got)
	}
}

func TestIsLiteralAndSatisfies(t *testing.T) {
	for text, want := range map[string]bool{`"run"`: true, `3`: true, `-1.5`: true, `true`: true, `null`: true, `int`: false, `>=1`: false, `[string,...string]`: false, `=~"^a$"`: false} {
		if got := isLiteral(text); got != want {
			t.Errorf("isLiteral(%s) = %v", text, got)
		}
	}
	for _, tt := range []struct {
		literal, constraint string
		want                bool
	}{
		{`3`, `>=1`, true},
		{`0`, `>=1`, false},
		{`"2h"`, `=~"^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$"`, true},
		{`3`, `int`, true},
		{`"3"`, `int`, false},
		{`3`, `#Undefined`, false},
	} {
		if got := satisfies(tt.literal, tt.constraint); got != tt.want {
			t.Errorf("satisfies(%s, %s) = %v", tt.literal, tt.constraint, got)
		}
	}
}

// TestDiscriminatedDisjunction pins that any disjunction of definitions
// told apart by a concrete field, not only the agent's, reports the errors
// of the disjunct the user's value of that field picks.
func TestDiscriminatedDisjunction(t *testing.T) {
	const defs = `package x

#A: {kind: "a", x?: int, env: [string]: string}
#B: {kind: "b", y!: string, env: [string]: string}
#C: {kind: "c", z?: bool}
#V: #A | #B | #C
`
	for _, tt := range []struct{ name, value, want string }{
		{
			name:  "wrong type in the picked disjunct",
			value: `{kind: "b", y: "s", env: FOO: 1}`,
			want:  `v.env.FOO: conflicting values 1 and string (mismatched types int and string): set.cue:3:39`,
		},
		{
			name:  "field of another disjunct",
			value: `{kind: "b", y: "s", x: 1}`,
			want:  `v.x: field not allowed: set.cue:3:29`,
		},
		{
			name:  "no disjunct has the value",
			value: `{kind: "d"}`,
			want:  `v.kind: "d" is not one of "a", "b", "c": set.cue:3:16`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			user, err := parser.ParseFile(filepath.Join(dir, ConfigFile), "package x\n\nv: #V & "+tt.value+"\n")
			if err != nil {
				t.Fatal(err)
			}
			schema, err := parser.ParseFile(filepath.Join(dir, "defs", "defs.cue"), defs)
			if err != nil {
				t.Fatal(err)
			}
			inst := build.NewContext().NewInstance(dir, nil)
			for _, f := range []*ast.File{user, schema} {
				if err := inst.AddSyntax(f); err != nil {
					t.Fatal(err)
				}
			}
			v := cuecontext.New().BuildInstance(inst)
			verr := v.Validate(cue.Concrete(true))
			if verr == nil {
				t.Fatal("the value is valid")
			}
			got := strings.TrimSuffix(Details(userErrors(verr, []*ast.File{user}, inst), dir), "\n")
			if got != tt.want {
				t.Errorf("Details:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

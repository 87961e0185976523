package load

import (
	"fmt"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
)

// FieldError is a configuration error at a CUE path below the package
// root (e.g. project.gates.test.when), at one position. It is shaped like
// the errors of the CUE evaluator, so Details prints both the same way:
// `project.gates.test.when: MESSAGE: set.cue:16:21`.
type FieldError struct {
	path []string
	pos  token.Pos
	msg  string
}

// NewFieldError is an error at path, positioned at pos.
func NewFieldError(path []string, pos token.Pos, format string, args ...any) *FieldError {
	return &FieldError{path: path, pos: pos, msg: fmt.Sprintf(format, args...)}
}

func (e *FieldError) Position() token.Pos         { return e.pos }
func (e *FieldError) InputPositions() []token.Pos { return nil }
func (e *FieldError) Path() []string              { return e.path }
func (e *FieldError) Error() string               { return e.msg }
func (e *FieldError) Msg() (string, []any)        { return "%s", []any{e.msg} }

// Messages of the CUE evaluator that userErrors rewrites.
const (
	msgEmptyDisjunction = "%d errors in empty disjunction:"
	msgConflict         = "conflicting values %s and %s"
	msgOutOfBound       = "invalid value %v (out of bound %s)"
	msgRequired         = "field is required but not present"
)

// userErrors rewrites the evaluator's errors about a project into one error
// per mistake, at the position in the project's own files where the user
// can fix it:
//
//   - a value outside a disjunction of literals (an enum of the schema,
//     however a profile narrows it), reported by CUE as one "conflicting
//     values" per literal under "N errors in empty disjunction" headers,
//     becomes `"warning" is not one of "run", "warn", "skip"`;
//   - a required field missing from a struct the user declared (the run of
//     an exec gate), which CUE reports at the schema's field, is reported
//     at the user's struct, with the schema's doc of the field;
//   - any other error that has positions in the user's files keeps its
//     message and only those positions, not the trail through the schema
//     and the enclosing structs.
//
// files are the project package's files; inst is the project's instance,
// whose imports hold the schema's doc comments.
func userErrors(err error, files []*ast.File, inst *build.Instance) error {
	list := errors.Errors(err)
	if len(list) == 0 {
		return err
	}
	u := rewriter{files: files, inst: inst}
	var out errors.Error
	done := map[string]bool{} // paths whose disjunction was rewritten
	for _, e := range list {
		key := strings.Join(e.Path(), ".")
		if done[key] {
			continue
		}
		if rewritten, ok := u.disjunction(list, e.Path()); ok {
			done[key] = true
			for _, r := range rewritten {
				out = errors.Append(out, r)
			}
			continue
		}
		out = errors.Append(out, u.rewrite(e))
	}
	return out
}

type rewriter struct {
	files []*ast.File
	inst  *build.Instance
}

// inUserFiles reports whether pos lies in one of the project's files.
func (u rewriter) inUserFiles(pos token.Pos) bool {
	for _, f := range u.files {
		if pos.Filename() == f.Filename {
			return true
		}
	}
	return false
}

// rewrite handles one error that is not part of a collapsed disjunction.
func (u rewriter) rewrite(e errors.Error) errors.Error {
	path := e.Path()
	positions := errors.Positions(e)
	format, _ := e.Msg()
	if format == msgRequired && !slices.ContainsFunc(positions, u.inUserFiles) {
		// CUE names the schema's field; point at the struct the user
		// declared that lacks it, the closest one up the path.
		for n := len(path) - 1; n > 0; n-- {
			if pos := declPos(u.files, path[:n]); pos.IsValid() {
				msg := msgRequired
				if doc := u.schemaDoc(positions); doc != "" {
					msg += " (" + doc + ")"
				}
				return NewFieldError(path, pos, "%s", msg)
			}
		}
		return e
	}
	// Where the user wrote the values in conflict: positions in the
	// project's files, but not those of the structs that enclose the field
	// (`project: golang.#Project & {`).
	var own []token.Pos
	for _, p := range positions {
		if u.inUserFiles(p) && !u.enclosing(path, p) {
			own = append(own, p)
		}
	}
	if len(own) > 0 && len(own) < len(positions) {
		return &positioned{err: e, pos: own[0], more: own[1:]}
	}
	return e
}

// enclosing reports whether pos is where the project's files declare a
// struct that encloses path.
func (u rewriter) enclosing(path []string, pos token.Pos) bool {
	for n := 1; n < len(path); n++ {
		if declPos(u.files, path[:n]) == pos {
			return true
		}
	}
	return false
}

// positioned is an evaluator error shown at the user's positions only.
type positioned struct {
	err  errors.Error
	pos  token.Pos
	more []token.Pos
}

func (e *positioned) Position() token.Pos         { return e.pos }
func (e *positioned) InputPositions() []token.Pos { return e.more }
func (e *positioned) Path() []string              { return e.err.Path() }
func (e *positioned) Error() string               { return e.err.Error() }
func (e *positioned) Msg() (string, []any)        { return e.err.Msg() }
func (e *positioned) Unwrap() error               { return errors.Unwrap(e.err) }

// disjunction rewrites the errors at path when CUE reports an empty
// disjunction there: a header "N errors in empty disjunction:" and one
// error per disjunct, each pitting the user's value against that
// disjunct. It reports false when path holds no such group, or one it
// cannot read.
//
// A literal disjunct that satisfies another disjunct is that disjunct's
// default (`int & >=1 | *3`) and adds nothing, so it is dropped. What is
// left is either literals only, one error `V is not one of L1, L2, …`;
// or a single error, shown alone; or several, shown under the header.
func (u rewriter) disjunction(list []errors.Error, path []string) ([]errors.Error, bool) {
	var header errors.Error
	var members []member
	for _, e := range list {
		if !slices.Equal(e.Path(), path) {
			continue
		}
		format, args := e.Msg()
		m := member{err: e, positions: errors.Positions(e)}
		switch {
		case format == msgEmptyDisjunction:
			header = e
			continue
		case strings.HasPrefix(format, msgConflict) && len(args) >= 2:
			m.sides = []string{fmt.Sprint(args[0]), fmt.Sprint(args[1])}
		case format == msgOutOfBound && len(args) == 2:
			m.sides = []string{fmt.Sprint(args[0])}
			m.disjunct = fmt.Sprint(args[1])
		}
		members = append(members, m)
	}
	if header == nil || len(members) == 0 {
		return nil, false
	}
	// The user's value is the side every member names.
	var value string
	for _, cand := range members[0].sides {
		if !slices.ContainsFunc(members, func(m member) bool { return !slices.Contains(m.sides, cand) }) {
			value = cand
			break
		}
	}
	if value == "" {
		return nil, false
	}
	for i := range members {
		m := &members[i]
		if m.disjunct == "" {
			m.disjunct = m.sides[0]
			if m.disjunct == value {
				m.disjunct = m.sides[1]
			}
		}
		m.literal = isLiteral(m.disjunct)
	}
	// A member's own position, among those all share (the value's trail),
	// is its disjunct's declaration.
	shared := slices.Clone(members[0].positions)
	for _, m := range members[1:] {
		shared = slices.DeleteFunc(shared, func(p token.Pos) bool { return !slices.Contains(m.positions, p) })
	}
	own := func(m member) token.Pos {
		for _, p := range m.positions {
			if !slices.Contains(shared, p) {
				return p
			}
		}
		return token.NoPos
	}
	// A disjunct the user wrote is a conflict between their own values,
	// not a disjunction of the schema's: leave it to CUE's words.
	for _, m := range members {
		if slices.ContainsFunc(m.positions, func(p token.Pos) bool {
			return !slices.Contains(shared, p) && u.inUserFiles(p) && !u.enclosing(path, p)
		}) {
			return nil, false
		}
	}
	var literals, others []member
	for _, m := range members {
		switch {
		case !m.literal:
			// Nested disjunctions repeat a disjunct's error.
			if !slices.ContainsFunc(others, func(o member) bool { return o.err.Error() == m.err.Error() }) {
				others = append(others, m)
			}
		case slices.ContainsFunc(members, func(o member) bool { return !o.literal && satisfies(m.disjunct, o.disjunct) }):
			// a default
		case !slices.ContainsFunc(literals, func(l member) bool { return l.disjunct == m.disjunct }):
			literals = append(literals, m)
		}
	}
	switch {
	case len(others) == 0 && len(literals) >= 2:
		// In the order the schema (or a profile) declares them.
		slices.SortStableFunc(literals, func(x, y member) int { return own(x).Compare(own(y)) })
		texts := make([]string, len(literals))
		for i, l := range literals {
			texts[i] = l.disjunct
		}
		msg := fmt.Sprintf("%s is not one of %s", value, strings.Join(texts, ", "))
		if pos := declPos(u.files, path); pos.IsValid() {
			return []errors.Error{NewFieldError(path, pos, "%s", msg)}, true
		}
		return []errors.Error{&trailError{FieldError: NewFieldError(path, token.NoPos, "%s", msg), trail: shared}}, true
	case len(others)+len(literals) == 1:
		return []errors.Error{u.rewrite(append(others, literals...)[0].err)}, true
	}
	out := []errors.Error{header}
	for _, m := range append(literals, others...) {
		out = append(out, u.rewrite(m.err))
	}
	return out, true
}

// member is one disjunct's error in an empty disjunction.
type member struct {
	err       errors.Error
	positions []token.Pos
	// sides are the values the message names: both of a conflict, the
	// value of an out-of-bound error.
	sides []string
	// disjunct is the side that is not the user's value, as CUE prints it.
	disjunct string
	// literal is set when disjunct is a concrete scalar.
	literal bool
}

// satisfies reports whether the literal unifies with the constraint, both
// as CUE prints them ("3" and ">=0", "\"2h\"" and "=~\"^…$\"").
func satisfies(literal, constraint string) bool {
	v := cuecontext.New().CompileString(literal + " & (" + constraint + ")")
	return v.Err() == nil && v.Validate(cue.Concrete(true)) == nil
}

// trailError is a FieldError shown with several positions: where the value
// came from when the project's files do not declare it.
type trailError struct {
	*FieldError
	trail []token.Pos
}

func (e *trailError) InputPositions() []token.Pos { return e.trail }

// isLiteral reports whether text, as CUE prints a value, is a concrete
// scalar: a string, number, bool or null.
func isLiteral(text string) bool {
	x, err := parser.ParseExpr("", text)
	if err != nil {
		return false
	}
	if u, ok := x.(*ast.UnaryExpr); ok && u.Op == token.SUB {
		x = u.X
	}
	_, ok := x.(*ast.BasicLit)
	return ok
}

// schemaDoc is the first sentence of the doc comment of the field declared
// at one of positions, in the files the project imports (the schema, its
// profile), or "".
func (u rewriter) schemaDoc(positions []token.Pos) string {
	var doc string
	seen := map[*build.Instance]bool{}
	var visit func(inst *build.Instance)
	visit = func(inst *build.Instance) {
		if inst == nil || seen[inst] || doc != "" {
			return
		}
		seen[inst] = true
		for _, f := range inst.Files {
			// The doc of a field declared under a condition
			// (`if kind == "exec" { run!: … }`) sits on the condition.
			var enclosing []*ast.Comprehension
			ast.Walk(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Comprehension:
					enclosing = append(enclosing, n)
				case *ast.Field:
					if doc == "" && slices.ContainsFunc(positions, func(p token.Pos) bool { return samePlace(p, n.Label.Pos()) }) {
						doc = firstSentence(ast.Comments(n))
						for i := len(enclosing) - 1; doc == "" && i >= 0; i-- {
							doc = firstSentence(ast.Comments(enclosing[i]))
						}
					}
				}
				return doc == ""
			}, func(n ast.Node) {
				if _, ok := n.(*ast.Comprehension); ok {
					enclosing = enclosing[:len(enclosing)-1]
				}
			})
		}
		for _, imp := range inst.Imports {
			visit(imp)
		}
	}
	visit(u.inst)
	return doc
}

// samePlace reports whether a and b are the same place of the same file,
// even when the file was parsed twice (the schema is built on its own and
// through the profile's import).
func samePlace(a, b token.Pos) bool {
	return a.Filename() == b.Filename() && a.Offset() == b.Offset()
}

// firstSentence is the first sentence of the doc comment among groups.
func firstSentence(groups []*ast.CommentGroup) string {
	for _, g := range groups {
		if !g.Doc {
			continue
		}
		text := strings.Join(strings.Fields(g.Text()), " ")
		if i := strings.Index(text, ". "); i >= 0 {
			text = text[:i+1]
		}
		return strings.TrimSuffix(text, ".")
	}
	return ""
}

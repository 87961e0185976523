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
	more []token.Pos // further positions, printed after pos
	msg  string
}

// NewFieldError is an error at path, positioned at pos.
func NewFieldError(path []string, pos token.Pos, format string, args ...any) *FieldError {
	return &FieldError{path: path, pos: pos, msg: fmt.Sprintf(format, args...)}
}

func (e *FieldError) Position() token.Pos         { return e.pos }
func (e *FieldError) InputPositions() []token.Pos { return e.more }
func (e *FieldError) Path() []string              { return e.path }
func (e *FieldError) Error() string               { return e.msg }
func (e *FieldError) Msg() (string, []any)        { return "%s", []any{e.msg} }

// Messages of the CUE evaluator that userErrors rewrites.
const (
	msgEmptyDisjunction = "%d errors in empty disjunction:"
	msgConflict         = "conflicting values %s and %s"
	msgOutOfBound       = "invalid value %v (out of bound %s)"
	msgRequired         = "field is required but not present"
	msgNotAllowed       = "field not allowed"
)

// userErrors rewrites the evaluator's errors about a project into one error
// per mistake, at the position in the project's own files where the user
// can fix it:
//
//   - a disjunction of structs told apart by a concrete field (the
//     agent's adapter) reports only the errors of the disjuncts the
//     user's value of that field picks, not a conflict on that field with
//     every other disjunct (see pickBranches);
//   - a value outside a disjunction of literals (an enum of the schema,
//     however a profile narrows it), reported by CUE as one "conflicting
//     values" per literal under "N errors in empty disjunction" headers,
//     becomes `"warning" is not one of "run", "warn", "skip"`; but where a
//     profile gave the field a concrete value, the user's conflicts with
//     that one (`conflicting values "convention" and "rule"`), whether or
//     not it is one of the schema's;
//   - a required field missing from a struct the user declared (the run of
//     an exec gate), which CUE reports at the schema's field, is reported
//     at the user's struct, with the schema's doc of the field;
//   - a learning whose name is not a #Name, which CUE reports as a field
//     not allowed, is told what a name is (namedHint);
//   - any other error that has positions in the user's files keeps its
//     message and only those positions, not the trail through the schema
//     and the enclosing structs; its path goes down to the field the user
//     wrote there (project.agent.env.FOO, where CUE names the pattern's
//     struct project.agent.env).
//
// files are the project package's files; inst is the project's instance,
// whose imports hold the schema's doc comments.
func userErrors(err error, files []*ast.File, inst *build.Instance) error {
	list := errors.Errors(err)
	if len(list) == 0 {
		return err
	}
	u := rewriter{files: files, inst: inst}
	list = pickBranches(list)
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
		out = errors.Append(out, namedHint(u.rewrite(e)))
	}
	return out
}

// namedHint is e, or, when e is a label of project.learnings that CUE
// did not allow, e saying why: the learnings are keyed by #Name, and a
// label that is not one is all the struct refuses.
func namedHint(e errors.Error) errors.Error {
	path := e.Path()
	format, args := e.Msg()
	if len(path) != 3 || path[0] != ProjectField || path[1] != LearningsField || fmt.Sprintf(format, args...) != msgNotAllowed {
		return e
	}
	return &positioned{
		err:  errors.Newf(e.Position(), "%s: a learning's name is kebab-case, lower-case letters and digits in groups joined by hyphens (no-println)", msgNotAllowed),
		path: path, pos: e.Position(), more: e.InputPositions(),
	}
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
	if len(own) == 0 {
		return e
	}
	at := path
	if len(own) == 1 {
		// A conflict with a pattern constraint (`env: [string]: string`)
		// names the struct; the user wrote a field of it.
		if p := declPath(u.files, own[0]); len(p) > len(path) && slices.Equal(p[:len(path)], path) {
			at = p
		}
	}
	if len(own) < len(positions) || len(at) > len(path) {
		return &positioned{err: e, path: at, pos: own[0], more: own[1:]}
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

// positioned is an evaluator error shown at the user's positions only, at
// path.
type positioned struct {
	err  errors.Error
	path []string
	pos  token.Pos
	more []token.Pos
}

func (e *positioned) Position() token.Pos         { return e.pos }
func (e *positioned) InputPositions() []token.Pos { return e.more }
func (e *positioned) Path() []string              { return e.path }
func (e *positioned) Error() string               { return e.err.Error() }
func (e *positioned) Msg() (string, []any)        { return e.err.Msg() }
func (e *positioned) Unwrap() error               { return errors.Unwrap(e.err) }

// pickBranches drops, from each disjunction of structs that a concrete
// field tells apart (#Agent's by adapter), the errors of the disjuncts
// whose value of that field is not the user's.
//
// CUE reports one error per disjunct, the first it meets, under a header
// "N errors in empty disjunction:" at the disjunction's path. A disjunct
// that a field rules out reports a conflict of two literals at that field
// (`conflicting values "claude" and "exec"`). When other disjuncts report
// other errors, those are the disjuncts the user meant: only theirs are
// kept, and the header goes, since blaming the field the user got right
// would send them to change it. When no disjunct reports anything else, the
// field's value is the mistake: the header moves to the field, so that its
// conflicts collapse into `"bogus" is not one of …` like any enum.
func pickBranches(list []errors.Error) []errors.Error {
	for i := 0; i < len(list); i++ {
		if isHeader(list[i]) {
			if picked, ok := pickBranch(list, i); ok {
				list = picked
				i = -1 // start over: indices moved
			}
		}
	}
	return list
}

// pickBranch does pickBranches' work for the header list[at]. It reports
// false when it changes nothing.
func pickBranch(list []errors.Error, at int) ([]errors.Error, bool) {
	path := list[at].Path()
	fields, others := discriminators(list, path)
	if len(fields) == 0 {
		return nil, false
	}
	isField := func(e errors.Error) bool {
		p := e.Path()
		return len(p) == len(path)+1 && slices.Equal(p[:len(path)], path) && fields[p[len(path)]]
	}
	switch {
	case others:
		out := slices.Clone(list)
		out = slices.Delete(out, at, at+1)
		return slices.DeleteFunc(out, isField), true
	case len(fields) == 1:
		var field string
		for f := range fields {
			field = f
		}
		fieldPath := append(slices.Clip(path), field)
		out := slices.Clone(list)
		if slices.ContainsFunc(list, func(e errors.Error) bool { return isHeader(e) && slices.Equal(e.Path(), fieldPath) }) {
			return slices.Delete(out, at, at+1), true
		}
		out[at] = &movedHeader{header: list[at], path: fieldPath}
		return out, true
	}
	return nil, false
}

// discriminators are the fields right below path at which every error of
// list is a conflict of two literals (or a nested header), with at least
// one such conflict: the fields that rule disjuncts out. others reports
// whether list has any other error at or below path, besides its header.
func discriminators(list []errors.Error, path []string) (fields map[string]bool, others bool) {
	fields = map[string]bool{}
	not := map[string]bool{}
	for _, e := range list {
		p := e.Path()
		if len(p) < len(path) || !slices.Equal(p[:len(path)], path) {
			continue
		}
		if len(p) == len(path) {
			others = others || !isHeader(e)
			continue
		}
		field := p[len(path)]
		switch {
		case len(p) == len(path)+1 && isLiteralConflict(e):
			fields[field] = true
		case len(p) == len(path)+1 && isHeader(e):
		default:
			not[field] = true
		}
	}
	for f := range not {
		delete(fields, f)
		others = true
	}
	return fields, others
}

// isHeader reports whether e is CUE's "N errors in empty disjunction:".
func isHeader(e errors.Error) bool {
	format, _ := e.Msg()
	return format == msgEmptyDisjunction
}

// isLiteralConflict reports whether e is a conflict of two concrete
// scalars, such as a disjunct's adapter and the user's.
func isLiteralConflict(e errors.Error) bool {
	format, args := e.Msg()
	return format == msgConflict && len(args) == 2 && isLiteral(fmt.Sprint(args[0])) && isLiteral(fmt.Sprint(args[1]))
}

// movedHeader is a disjunction's header shown at another path.
type movedHeader struct {
	header errors.Error
	path   []string
}

func (h *movedHeader) Position() token.Pos         { return h.header.Position() }
func (h *movedHeader) InputPositions() []token.Pos { return h.header.InputPositions() }
func (h *movedHeader) Path() []string              { return h.path }
func (h *movedHeader) Error() string               { return h.header.Error() }
func (h *movedHeader) Msg() (string, []any)        { return h.header.Msg() }

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
	header, members, plain := disjunctionAt(list, path)
	if header == nil || len(members) == 0 {
		return nil, false
	}
	value := userValue(members)
	if value == "" {
		return nil, false
	}
	for i := range members {
		members[i].setDisjunct(value)
	}
	shared := sharedPositions(members)
	if u.userWroteDisjunct(members, shared, path) {
		return nil, false
	}
	if plain != nil {
		// A level above the user's (a profile) gave the field a
		// concrete value, and the user's conflicts with it: that is
		// the mistake, whether or not the user's value is one of the
		// schema's, and CUE's words say it.
		return []errors.Error{u.rewrite(plain)}, true
	}
	literals, others := splitDisjuncts(members)
	switch {
	case len(others) == 0 && len(literals) >= 2:
		return []errors.Error{u.notOneOf(path, value, literals, shared)}, true
	case len(others)+len(literals) == 1:
		return []errors.Error{u.rewrite(append(others, literals...)[0].err)}, true
	}
	out := []errors.Error{header}
	for _, m := range append(literals, others...) {
		out = append(out, u.rewrite(m.err))
	}
	return out, true
}

// disjunctionAt is the header of the empty disjunction at path, or nil,
// and the errors at path, one per disjunct. plain is a conflict at path
// that CUE reports before the header, outside the disjunction: two
// concrete values, the user's and a profile's, with the disjunct of the
// one of them merged into it.
func disjunctionAt(list []errors.Error, path []string) (header errors.Error, members []member, plain errors.Error) {
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
			if header == nil && plain == nil {
				plain = e
			}
			m.sides = []string{fmt.Sprint(args[0]), fmt.Sprint(args[1])}
		case format == msgOutOfBound && len(args) == 2:
			m.sides = []string{fmt.Sprint(args[0])}
			m.disjunct = fmt.Sprint(args[1])
		}
		members = append(members, m)
	}
	return header, members, plain
}

// userValue is the side every member names: the user's value, pitted
// against each disjunct; "" when there is none.
func userValue(members []member) string {
	for _, cand := range members[0].sides {
		if !slices.ContainsFunc(members, func(m member) bool { return !slices.Contains(m.sides, cand) }) {
			return cand
		}
	}
	return ""
}

// sharedPositions are the positions every member has: the trail of the
// user's value. A member's other position is its disjunct's declaration
// (ownPos).
func sharedPositions(members []member) []token.Pos {
	shared := slices.Clone(members[0].positions)
	for _, m := range members[1:] {
		shared = slices.DeleteFunc(shared, func(p token.Pos) bool { return !slices.Contains(m.positions, p) })
	}
	return shared
}

// ownPos is where m's disjunct is declared: its first position not in
// shared.
func ownPos(m member, shared []token.Pos) token.Pos {
	for _, p := range m.positions {
		if !slices.Contains(shared, p) {
			return p
		}
	}
	return token.NoPos
}

// userWroteDisjunct reports whether a disjunct is one the user wrote: then
// the error is a conflict between their own values, not a disjunction of
// the schema's, and is left to CUE's words.
func (u rewriter) userWroteDisjunct(members []member, shared []token.Pos, path []string) bool {
	return slices.ContainsFunc(members, func(m member) bool {
		return slices.ContainsFunc(m.positions, func(p token.Pos) bool {
			return !slices.Contains(shared, p) && u.inUserFiles(p) && !u.enclosing(path, p)
		})
	})
}

// splitDisjuncts parts members into the literal disjuncts, each once and
// without the defaults of other disjuncts (`int & >=1 | *3`), and the
// others, each error once (nested disjunctions repeat a disjunct's error).
func splitDisjuncts(members []member) (literals, others []member) {
	for _, m := range members {
		switch {
		case !m.literal:
			if !slices.ContainsFunc(others, func(o member) bool { return o.err.Error() == m.err.Error() }) {
				others = append(others, m)
			}
		case slices.ContainsFunc(members, func(o member) bool { return !o.literal && satisfies(m.disjunct, o.disjunct) }):
			// a default
		case !slices.ContainsFunc(literals, func(l member) bool { return l.disjunct == m.disjunct }):
			literals = append(literals, m)
		}
	}
	return literals, others
}

// notOneOf is the error `V is not one of L1, L2, …`, the literals in the
// order the schema (or a profile) declares them, at the user's value, or
// with the value's trail when the project's files do not declare it.
func (u rewriter) notOneOf(path []string, value string, literals []member, shared []token.Pos) errors.Error {
	slices.SortStableFunc(literals, func(x, y member) int { return ownPos(x, shared).Compare(ownPos(y, shared)) })
	texts := make([]string, len(literals))
	for i, l := range literals {
		texts[i] = l.disjunct
	}
	msg := fmt.Sprintf("%s is not one of %s", value, strings.Join(texts, ", "))
	if pos := declPos(u.files, path); pos.IsValid() {
		return NewFieldError(path, pos, "%s", msg)
	}
	return &trailError{FieldError: NewFieldError(path, token.NoPos, "%s", msg), trail: shared}
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

// setDisjunct sets m's disjunct, when its message did not name it, to the
// side that is not the user's value, and whether it is a literal.
func (m *member) setDisjunct(value string) {
	if m.disjunct == "" {
		m.disjunct = m.sides[0]
		if m.disjunct == value {
			m.disjunct = m.sides[1]
		}
	}
	m.literal = isLiteral(m.disjunct)
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

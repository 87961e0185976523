package load

import (
	"fmt"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/token"
)

// msgIncomplete is the evaluator's message for a value that is not
// concrete.
const msgIncomplete = "incomplete value %v"

// explainDefaults rewrites each "incomplete value" error of project whose
// field has two or more different defaults (a team profile gave a default
// over its profile's: CUE keeps one default per field, so neither wins)
// into an error that names each default with where it comes from and says
// what to do, at the position of each default; every other error is kept
// as it is.
func explainDefaults(project cue.Value, err error) error {
	list := errors.Errors(err)
	var out errors.Error
	for _, e := range list {
		format, _ := e.Msg()
		path := e.Path()
		if format != msgIncomplete || len(path) < 2 || path[0] != ProjectField {
			out = errors.Append(out, e)
			continue
		}
		sels := make([]cue.Selector, len(path)-1)
		for i, s := range path[1:] {
			sels[i] = cue.Str(s)
		}
		defaults := distinctDefaults(project.LookupPath(cue.MakePath(sels...)))
		if len(defaults) < 2 {
			out = errors.Append(out, e)
			continue
		}
		var texts []string
		var more []token.Pos
		for _, d := range defaults {
			texts = append(texts, d.text)
			more = append(more, d.pos)
		}
		fe := NewFieldError(path, more[0], "has %d defaults, %s, and CUE keeps one default per field: set it in set.cue, or let the profile that builds on another give a plain value, or drop the other's entry and add its own (see schema #Profile)",
			len(defaults), strings.Join(texts, " and "))
		fe.more = more[1:]
		out = errors.Append(out, fe)
	}
	return out
}

// aDefault is a default a disjunction gives, with its position.
type aDefault struct {
	text string
	pos  token.Pos
}

// distinctDefaults are the different concrete defaults of the
// disjunctions that v unifies, in the order CUE lists them.
func distinctDefaults(v cue.Value) []aDefault {
	var out []aDefault
	seen := map[string]bool{}
	var walk func(v cue.Value)
	walk = func(v cue.Value) {
		op, args := v.Expr()
		if op == cue.AndOp {
			for _, a := range args {
				walk(a)
			}
			return
		}
		d, ok := v.Default()
		if !ok || !d.IsConcrete() {
			return
		}
		text := fmt.Sprint(d)
		if !seen[text] {
			seen[text] = true
			out = append(out, aDefault{text, v.Pos()})
		}
	}
	walk(v)
	return out
}

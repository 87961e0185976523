package load

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"

	set "github.com/set-engine/set"
)

// PlannedChangesDef is the schema definition a model planner's answer
// is checked against.
const PlannedChangesDef = "#PlannedChanges"

// Checker checks JSON documents against one definition of the embedded
// schema, for answers set did not write (a model's). It is safe for
// concurrent use.
type Checker struct {
	mu  sync.Mutex
	ctx *cue.Context
	def cue.Value
}

// NewChecker builds the embedded schema package (it imports nothing, so
// no registry is needed) and returns a checker for its definition def.
func NewChecker(def string) (*Checker, error) {
	paths, err := fs.Glob(set.Module, "schema/*.cue")
	if err != nil {
		return nil, err
	}
	inst := build.NewContext().NewInstance("schema", nil)
	for _, p := range paths {
		src, err := fs.ReadFile(set.Module, p)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(p, src, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("embedded schema: %w", err)
		}
		if err := inst.AddSyntax(f); err != nil {
			return nil, fmt.Errorf("embedded schema: %w", err)
		}
	}
	ctx := cuecontext.New()
	v := ctx.BuildInstance(inst)
	if err := v.Err(); err != nil {
		return nil, fmt.Errorf("embedded schema: %w", err)
	}
	d := v.LookupPath(cue.MakePath(cue.Def(def)))
	if !d.Exists() {
		return nil, fmt.Errorf("embedded schema: no %s", def)
	}
	return &Checker{ctx: ctx, def: d}, nil
}

// Check unifies data, a JSON document, with the definition and returns
// every error, each as "PATH: MESSAGE" with PATH the field of data at
// fault ("changes.0.type: …"); none when data conforms.
func (c *Checker) Check(data []byte) []string {
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		return []string{fmt.Sprintf("the answer is not valid JSON: %v", err)}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	doc := c.ctx.CompileBytes(data)
	if err := doc.Err(); err != nil {
		return []string{fmt.Sprintf("the answer is not valid JSON: %v", err)}
	}
	err := c.def.Unify(doc).Validate(cue.Concrete(true))
	if err == nil {
		return nil
	}
	// The answer is no project file: userErrors reads the errors as about
	// values the user wrote (an enum's "is not one of"), with no files.
	list := errors.Errors(userErrors(err, nil, nil))
	if ce, ok := userErrors(err, nil, nil).(errors.Error); ok {
		list = errors.Errors(errors.Sanitize(ce))
	}
	var out []string
	for _, e := range list {
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		path := e.Path()
		if len(path) > 0 && strings.HasPrefix(path[0], "#") {
			path = path[1:] // the definition's name: the answer is the root
		}
		if len(path) > 0 {
			msg = strings.Join(path, ".") + ": " + msg
		}
		out = append(out, msg)
	}
	return out
}

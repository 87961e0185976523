package cond

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/expr-lang/expr/file"
)

// Error is a compile or evaluation error of one condition. Its Err speaks
// the condition's vocabulary (change, files, list of strings), not Go's,
// and keeps expr's line:column and source snippet.
type Error struct {
	Source string
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("condition %q: %v", e.Source, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// newError wraps an error of expr for the condition source compiled
// against env.
func newError(source string, err error, env reflect.Type) *Error {
	var fe *file.Error
	switch {
	case errors.As(err, &fe):
		user := *fe
		user.Message = userMessage(fe.Message, env)
		err = &user
	case userMessage(err.Error(), env) != err.Error():
		// expr.AsBool's "expected bool, but got int" has no position.
		err = errors.New(userMessage(err.Error(), env))
	}
	return &Error{Source: source, Err: err}
}

var (
	unknownName = regexp.MustCompile(`^unknown name (\S+)$`)
	noField     = regexp.MustCompile(`^type (\S+) has no field (\S+)$`)
	goTypeName  = regexp.MustCompile(`\[\]\w+|\w+(\.\w+)?`)
)

// userMessage rewrites one message of expr's checker: an unknown name
// lists the names env has, a missing field the fields its struct has, and
// Go type names become the words of `setctl help conditions`.
func userMessage(msg string, env reflect.Type) string {
	v := newVocabulary(env)
	if m := unknownName.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("unknown name %s; names: %s", m[1], strings.Join(fieldNames(env), ", "))
	}
	if m := noField.FindStringSubmatch(msg); m != nil {
		if fields, ok := v.fields[m[1]]; ok {
			return fmt.Sprintf("%s has no field %s; fields: %s", v.words[m[1]], m[2], strings.Join(fields, ", "))
		}
		if w, ok := v.words[m[1]]; ok {
			return fmt.Sprintf("%s has no field %s", w, m[2])
		}
		return msg
	}
	return goTypeName.ReplaceAllStringFunc(msg, func(name string) string {
		if w, ok := v.words[name]; ok {
			return w
		}
		return name
	})
}

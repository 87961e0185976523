package openspec

import (
	"fmt"
	"strings"

	"github.com/set-engine/set/engine/diag"
)

// diagLine is d as the tables of these tests write it, position first:
// "specs/auth/spec.md:12: error: message" ("specs/auth/spec.md: …" for the
// whole file).
func diagLine(d diag.Diagnostic) string {
	var b strings.Builder
	if d.Pos.File != "" {
		b.WriteString(d.Pos.File + ":")
	}
	if d.Pos.Line > 0 {
		fmt.Fprintf(&b, "%d:", d.Pos.Line)
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	return b.String() + string(d.Severity) + ": " + d.Summary
}

// errLines is err's message with each diagnostic in it as diagLine shows
// it: the members of an errors.Join (or of an error that unwraps to
// several) one a line, any other error as its message.
func errLines(err error) string {
	switch e := err.(type) {
	case diag.Diagnostic:
		return diagLine(e)
	case interface{ Unwrap() []error }:
		lines := make([]string, 0, len(e.Unwrap()))
		for _, m := range e.Unwrap() {
			lines = append(lines, errLines(m))
		}
		return strings.Join(lines, "\n")
	}
	return err.Error()
}

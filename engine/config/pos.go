package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Positions is where a project declares the fields that stages after
// decoding report errors on (see Project.FieldError).
type Positions struct {
	// Root is the absolute project directory, which Project.Pos makes
	// positions relative to.
	Root string
	// At maps a dotted path below `project` (e.g.
	// "plan.changes.api.dependsOn") to where it is declared: in the
	// project's own files when they declare it, otherwise in its profile
	// or the schema.
	At map[string]Pos
	// Declared holds the paths of At that the project's own files declare.
	Declared map[string]bool
}

// Pos is a position in a CUE file, as plain values. The zero Pos is no
// position.
type Pos struct {
	// File is the file's name as CUE loaded it (absolute for the
	// project's files and the extracted embedded module).
	File string
	// Offset is the byte offset of the position in File; Line and Column
	// count from 1, Column in bytes.
	Offset, Line, Column int
}

// IsValid reports whether p is a position, not the zero Pos.
func (p Pos) IsValid() bool { return p.Line > 0 }

// Rel is p as "file:line:col", the file relative to root when it is
// inside it, in forward slashes: how set names a position in a project.
func (p Pos) Rel(root string) string {
	file := p.File
	if rel, err := filepath.Rel(root, file); err == nil && !strings.HasPrefix(rel, "..") {
		file = rel
	}
	return fmt.Sprintf("%s:%d:%d", filepath.ToSlash(file), p.Line, p.Column)
}

// FieldError is a configuration error about the field at Path below
// `project` (e.g. "stacks", "feature", "review"), at Pos, the zero Pos
// when none is known. load.Details prints it as the CUE evaluator's own
// errors, sorted among them by position:
// `project.stacks.feature.review: MESSAGE: set.cue:9:27`.
// It is config's own, not a load.FieldError, so that code holding only a
// decoded Project (no CUE) can raise one; load makes it a load.FieldError
// to print it among CUE's errors.
type FieldError struct {
	Path []string
	Pos  Pos
	Msg  string
}

func (e *FieldError) Error() string { return e.Msg }

// Package diag holds the one form in which every stage of set reports a
// problem to the user (loading set.cue, decoding it, parsing the spec,
// validating the plan) and the one text form the CLI prints it in.
//
// A Diagnostic carries its position as values (config.Pos), never as a
// pre-formatted string: the presenter makes it relative to the project
// root, in forward slashes, when it prints it.
package diag

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/set-engine/set/engine/config"
)

// Severity says whether a Diagnostic fails the command (Error) or only
// informs (Warning).
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Diagnostic is one problem, with what is known of where it is.
type Diagnostic struct {
	Severity Severity
	// Summary is the message's first line; Detail the lines below it
	// (a source snippet), or "".
	Summary, Detail string
	// Path is the CUE path of the field at fault, from the package root
	// (project.gates.fmt.mode), or nil.
	Path []string
	// Pos is where the problem is; the zero Pos when unknown. More holds
	// further positions of an error that has several (a value and where
	// it came from); Pos is then the zero Pos.
	Pos  config.Pos
	More []config.Pos
}

// Errorf is an error at line of file (line 0: the whole file, file "":
// no position), its summary formatted as fmt.Sprintf formats it.
func Errorf(file string, line int, format string, args ...any) Diagnostic {
	return at(Error, file, line, format, args...)
}

// Warningf is Errorf for a warning.
func Warningf(file string, line int, format string, args ...any) Diagnostic {
	return at(Warning, file, line, format, args...)
}

func at(sev Severity, file string, line int, format string, args ...any) Diagnostic {
	return Diagnostic{Severity: sev, Summary: fmt.Sprintf(format, args...), Pos: config.Pos{File: file, Line: line}}
}

// Error makes a Diagnostic an error: its text without the root.
func (d Diagnostic) Error() string { return d.Text("") }

// Text is d in the one form set prints a problem in, positions relative
// to root:
//
//	project.gates.fmt.mode: "warning" is not one of "run", "warn", "skip": set.cue:8:20
//
// the path first when there is one, the position last; the detail lines
// below, and several positions each on a line of their own.
func (d Diagnostic) Text(root string) string {
	var b strings.Builder
	if len(d.Path) > 0 {
		b.WriteString(strings.Join(d.Path, ".") + ": ")
	}
	b.WriteString(d.Summary)
	switch {
	case len(d.More) > 0:
		b.WriteString(":")
		for _, p := range d.More {
			b.WriteString("\n    " + Rel(p, root))
		}
	case d.Pos.IsValid() || d.Pos.File != "":
		b.WriteString(": " + Rel(d.Pos, root))
	}
	if d.Detail != "" {
		b.WriteString("\n" + d.Detail)
	}
	return b.String()
}

// Rel is p as "file:line:col" ("file:line" when p has no column, "file"
// when it has no line either: the whole file), the file relative to root
// when it is inside it, in forward slashes.
func Rel(p config.Pos, root string) string {
	s := p.Rel(root)
	if p.Column == 0 {
		s = strings.TrimSuffix(s, ":0")
	}
	if p.Line == 0 {
		s = strings.TrimSuffix(s, ":0")
	}
	return s
}

// RelFile is file relative to root when it is inside it, in forward
// slashes, as Rel shows it.
func RelFile(file, root string) string {
	if rel, err := filepath.Rel(root, file); err == nil && !strings.HasPrefix(rel, "..") {
		file = rel
	}
	return filepath.ToSlash(file)
}

// List is the problems one command found, in the order they are shown.
type List []Diagnostic

// Err is l as an error when it holds an error, nil otherwise (it may
// still hold warnings).
func (l List) Err() error {
	if l.HasErrors() {
		return l
	}
	return nil
}

// HasErrors reports whether a diagnostic of l is an error.
func (l List) HasErrors() bool {
	for _, d := range l {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

func (l List) Error() string {
	lines := make([]string, len(l))
	for i, d := range l {
		lines[i] = d.Error()
	}
	return strings.Join(lines, "\n")
}

// Lister is an error that knows its diagnostics (an invalid plan's).
// load.Diagnostics, the one converter of an error into diagnostics, asks
// it for them.
type Lister interface {
	Diagnostics() List
}

package openspec

import (
	"strings"
	"unicode/utf8"
)

// This file reads a change's tasks.md as the OpenSpec CLI counts its tasks
// (`openspec list`, the archive's "Task status").

// Task is one task line of a tasks.md.
type Task struct {
	Done bool
	Text string
	Line int // 1-based
}

// Tasks returns the task lines of a tasks.md in document order, as OpenSpec
// recognises them: a list item ("-", "*", "+" or "1." / "1)") whose text
// starts with a checkbox; it is done when the box holds x or X.
//
// It is the CLI's TASK_LINE_PATTERN (dist/utils/task-progress.js),
//
//	^\s*(?:[-*+]|\d{1,9}[.)])\s*\[(?:\s*([^\]\s]?)\s*\](?![([])|\s+\])\s*(.*)
//
// applied to each line of src split at "\n", with JavaScript's \s and "."
// (which stops at "\r", U+2028 and U+2029): the box holds at most one
// UTF-16 code unit that is neither white space nor "]", and a box followed
// by "(" or "[" (a link) is a task only when it holds white space alone.
// Every such line counts, fenced or not; the text is trimmed.
func Tasks(src []byte) []Task {
	var tasks []Task
	for i, line := range strings.Split(decodeUTF8(src), "\n") {
		if t, ok := taskLine(line); ok {
			t.Line = i + 1
			tasks = append(tasks, t)
		}
	}
	return tasks
}

// taskLine matches one line against TASK_LINE_PATTERN. The pattern's
// alternatives and its negative lookahead leave no choice to backtrack
// into, so it is matched left to right.
func taskLine(l string) (Task, bool) {
	l = jsTrimStart(l)
	// (?:[-*+]|\d{1,9}[.)])
	switch {
	case l != "" && strings.ContainsRune("-*+", rune(l[0])):
		l = l[1:]
	default:
		n := 0
		for n < len(l) && n < 10 && l[n] >= '0' && l[n] <= '9' {
			n++
		}
		if n == 0 || n > 9 || n == len(l) || (l[n] != '.' && l[n] != ')') {
			return Task{}, false
		}
		l = l[n+1:]
	}
	// \s*\[
	l = jsTrimStart(l)
	if !strings.HasPrefix(l, "[") {
		return Task{}, false
	}
	l = l[1:]
	// \s*([^\]\s]?)\s*\]  or  \s+\]
	inner := jsTrimStart(l)
	spaced := len(inner) < len(l)
	marker := ""
	if r, size := utf8.DecodeRuneInString(inner); size > 0 && r != ']' && !jsIsSpace(r) {
		if r >= 0x10000 { // two UTF-16 code units: the second is not "]"
			return Task{}, false
		}
		marker, inner = inner[:size], jsTrimStart(inner[size:])
	}
	if !strings.HasPrefix(inner, "]") {
		return Task{}, false
	}
	rest := inner[1:]
	// (?![([]), unless the box is white space alone (\s+\])
	if strings.HasPrefix(rest, "(") || strings.HasPrefix(rest, "[") {
		if marker != "" || !spaced {
			return Task{}, false
		}
	}
	// \s*(.*), then trim()
	rest = jsTrimStart(rest)
	if i := strings.IndexFunc(rest, jsIsLineTerminator); i >= 0 {
		rest = rest[:i]
	}
	return Task{Done: marker == "x" || marker == "X", Text: jsTrim(rest)}, true
}

// TaskProgress counts the tasks of a tasks.md and those done.
func TaskProgress(src []byte) (done, total int) {
	for _, t := range Tasks(src) {
		total++
		if t.Done {
			done++
		}
	}
	return done, total
}

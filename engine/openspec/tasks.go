package openspec

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/set-engine/set/engine/diag"
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
	l, ok := listMarker(jsTrimStart(l))
	if !ok {
		return Task{}, false
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

// taskFileIssues are the problems `openspec validate <change> --strict`
// finds in the tasks.md of a change of the built-in spec-driven schema
// (rel names it): warnings to the CLI, which --strict fails on. A file
// without any task whose first list item (outside front matter, fences
// and comments, indented less than a code block) is at a line counts no
// work; in a file with "## N." group headings, a task whose ID ("2.1")
// names another group, or an ID twice (validator.js
// collectTaskFileIssues, task-checkboxes.js, task-numbering.js).
func taskFileIssues(rel string, src []byte) diag.List {
	content := decodeUTF8(src)
	lines := strings.Split(content, "\n")
	var ds diag.List
	if len(Tasks(src)) == 0 {
		if line := firstListItemLine(lines); line > 0 {
			ds = append(ds, diag.Errorf(rel, line, "this change counts as 0 tasks: no line of its tasks.md is a checkbox, so OpenSpec reports no work and `openspec validate --strict` refuses it; write each task as \"- [ ] 1.1 Description\""))
		}
	}
	numbered := false
	for _, l := range lines {
		if _, ok := numberedGroup(l); ok {
			numbered = true
			break
		}
	}
	if !numbered {
		return ds
	}
	group, inGroup := "", false
	first := map[string]int{}
	for i, l := range lines {
		if levelTwoHeading(l) {
			group, inGroup = numberedGroup(l)
		}
		if !inGroup {
			continue
		}
		t, ok := taskLine(l)
		if !ok {
			continue
		}
		id := taskID(t.Text)
		if id == "" {
			continue
		}
		taskGroup, _, _ := strings.Cut(id, ".")
		if trimZeros(taskGroup) != trimZeros(group) {
			ds = append(ds, diag.Errorf(rel, i+1, "task %q is under group %s, but its leading number points to group %s; move it to group %s or renumber it", id, group, taskGroup, taskGroup))
		}
		if at, dup := first[id]; dup {
			ds = append(ds, diag.Errorf(rel, i+1, "task ID %q is duplicated; it was first declared on line %d", id, at))
		} else {
			first[id] = i + 1
		}
	}
	return ds
}

var (
	// reLevelTwoHeading is LEVEL_TWO_HEADING, whose (?!#) the
	// alternatives make redundant: neither matches a "#".
	reLevelTwoHeading = regexp.MustCompile(`^ {0,3}##([ \t]+|[ \t]*\r?$)`)
	reNumberedGroup   = regexp.MustCompile(`^ {0,3}##[ \t]+(\d+)\.([ \t]|\r?$)`)
	reTaskID          = regexp.MustCompile(`^\d+(?:\.\d+)+(?:[A-Za-z]+)?`)
	reFence           = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})(" + reDot + "*)")
	reFrontMatter     = regexp.MustCompile(`^-{3}` + reS + `*$`)
)

func levelTwoHeading(l string) bool { return reLevelTwoHeading.MatchString(l) }

// numberedGroup returns N of a "## N." heading.
func numberedGroup(l string) (string, bool) {
	m := reNumberedGroup.FindStringSubmatch(l)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// taskID is TASK_ID, ^(\d+(?:\.\d+)+(?:[A-Za-z]+)?)(?=\s|$): the greedy
// match or none, since no shorter one is followed by white space.
func taskID(text string) string {
	id := reTaskID.FindString(text)
	if id == "" {
		return ""
	}
	if r, _ := utf8.DecodeRuneInString(text[len(id):]); len(text) > len(id) && !jsIsSpace(r) {
		return ""
	}
	return id
}

// trimZeros is s.replace(/^0+(?=\d)/, "").
func trimZeros(s string) string {
	t := strings.TrimLeft(s, "0")
	if t == "" && s != "" {
		return "0"
	}
	return t
}

// firstListItemLine is findFirstListItemLine: the 1-based line of the
// first list item ("- x", "1. x") indented less than four columns, past
// front matter and outside fences and HTML comments that open a line; 0
// when there is none.
func firstListItemLine(lines []string) int {
	i := skipFrontMatter(lines)
	var fenceChar byte
	fenceLen, inComment := 0, false
	for ; i < len(lines); i++ {
		l := lines[i]
		if inComment {
			if strings.Contains(l, "-->") {
				inComment = false
			}
			continue
		}
		if m := reFence.FindStringSubmatch(l); m != nil {
			switch {
			case fenceLen == 0:
				fenceChar, fenceLen = m[1][0], len(m[1])
			case m[1][0] == fenceChar && len(m[1]) >= fenceLen && jsTrim(m[2]) == "":
				fenceLen = 0
			}
			continue
		}
		if fenceLen > 0 {
			continue
		}
		if t := jsTrimStart(l); strings.HasPrefix(t, "<!--") {
			open := strings.Index(l, "<!--")
			if !strings.Contains(l[open+4:], "-->") {
				inComment = true
			}
			continue
		}
		if listItem(l) && indentColumns(l) < 4 {
			return i + 1
		}
	}
	return 0
}

// listItem is LIST_ITEM, ^\s*(?:[-*+]|\d{1,9}[.)])\s+\S.
func listItem(l string) bool {
	l, ok := listMarker(jsTrimStart(l))
	if !ok {
		return false
	}
	rest := jsTrimStart(l)
	return len(rest) < len(l) && rest != ""
}

// listMarker matches a list item's marker, (?:[-*+]|\d{1,9}[.)]), at the
// start of l, and returns what follows it; ok is false when l does not
// start with one.
func listMarker(l string) (rest string, ok bool) {
	if l != "" && strings.ContainsRune("-*+", rune(l[0])) {
		return l[1:], true
	}
	n := 0
	for n < len(l) && n < 10 && l[n] >= '0' && l[n] <= '9' {
		n++
	}
	if n == 0 || n > 9 || n == len(l) || (l[n] != '.' && l[n] != ')') {
		return "", false
	}
	return l[n+1:], true
}

// indentColumns is the column of a line's first character that is neither
// a space nor a tab, tabs stopping at multiples of four.
func indentColumns(l string) int {
	col := 0
	for _, c := range l {
		switch c {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			return col
		}
	}
	return col
}

// skipFrontMatter returns the index of the first line after a front
// matter block ("---" lines), 0 when the file has none.
func skipFrontMatter(lines []string) int {
	if len(lines) == 0 || !reFrontMatter.MatchString(jsTrimEnd(stripBOM(lines[0]))) {
		return 0
	}
	for i := 1; i < len(lines); i++ {
		if reFrontMatter.MatchString(jsTrimEnd(lines[i])) {
			return i + 1
		}
	}
	return 0
}

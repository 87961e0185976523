package openspec

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTasks holds Tasks to the CLI's TASK_LINE_PATTERN, line by line (each
// want read off the pattern; TestTaskProgressDiff checks the counts against
// the CLI itself).
func TestTasks(t *testing.T) {
	for _, tc := range taskLineCases {
		got, ok := taskLine(tc.line)
		if tc.want == nil {
			if ok {
				t.Errorf("%q: a task %+v, want none", tc.line, got)
			}
			continue
		}
		if !ok || got != *tc.want {
			t.Errorf("%q: got %+v (task %v), want %+v", tc.line, got, ok, *tc.want)
		}
	}
}

// taskLineCases are lines and the task each is (nil: none).
var taskLineCases = []struct {
	line string
	want *Task
}{
	{"- [ ] write it", &Task{Text: "write it"}},
	{"- [x] done", &Task{Done: true, Text: "done"}},
	{"* [X] done", &Task{Done: true, Text: "done"}},
	{"+ [ ] plus", &Task{Text: "plus"}},
	{"1. [ ] ordered", &Task{Text: "ordered"}},
	{"12) [x] paren", &Task{Done: true, Text: "paren"}},
	{"123456789. [ ] nine digits", &Task{Text: "nine digits"}},
	{"1234567890. [ ] ten digits", nil},
	{"- [~] in progress", &Task{Text: "in progress"}},
	{"- [] empty box", &Task{Text: "empty box"}},
	{"- [ x ] padded", &Task{Done: true, Text: "padded"}},
	{"- [ x] padded left", &Task{Done: true, Text: "padded left"}},
	{"- [1] digit", &Task{Text: "digit"}},
	{"- [xx] two", nil},
	{"- [WIP] word", nil},
	{"- [A](https://example.com)", nil},
	{"- [1][ref]", nil},
	{"- [x](x)", nil},
	{"- [](x)", nil},
	{"- [ ](x)", &Task{Text: "(x)"}},
	{"- [  ][ref] spaced", &Task{Text: "[ref] spaced"}},
	{"- [x]done", &Task{Done: true, Text: "done"}},
	{"-[ ] tight", &Task{Text: "tight"}},
	{"1.[x] tight", &Task{Done: true, Text: "tight"}},
	{"    - [ ] 1.1.1 nested", &Task{Text: "1.1.1 nested"}},
	{"\t* [x] tab", &Task{Done: true, Text: "tab"}},
	{"\ufeff- [ ] after a BOM", &Task{Text: "after a BOM"}},
	{"\u00a0- [ ] after NBSP", &Task{Text: "after NBSP"}},
	{"- [\u3000] ideographic space", &Task{Text: "ideographic space"}},
	{"- [é] accent", &Task{Text: "accent"}},
	{"- [😀] astral", nil},
	{"- [ ] crlf\r", &Task{Text: "crlf"}},
	{"- [ ] two\rparts", &Task{Text: "two"}},
	{"- [ ]\u2028after separator", &Task{Text: "after separator"}},
	{"- [ ]  text  ", &Task{Text: "text"}},
	{"- [ ]", &Task{}},
	{"[ ] no bullet", nil},
	{"-- [ ] double", nil},
	{"a- [ ] letter", nil},
	{"1 [ ] no dot", nil},
	{"- x [ ] late box", nil},
	{"- [ ", nil},
	{"```", nil},
}

func TestTasksLines(t *testing.T) {
	src := "# Tasks\r\n\r\n## 1. Build\r\n- [x] 1.1 one\r\n- [ ] 1.2 two\r\n\r\n```\r\n- [ ] fenced counts too\r\n```\r\n* [X] 1.3 three\r\n"
	want := []Task{
		{Done: true, Text: "1.1 one", Line: 4},
		{Text: "1.2 two", Line: 5},
		{Text: "fenced counts too", Line: 8},
		{Done: true, Text: "1.3 three", Line: 10},
	}
	if diff := cmp.Diff(want, Tasks([]byte(src))); diff != "" {
		t.Errorf("Tasks (-want +got):\n%s", diff)
	}
	if done, total := TaskProgress([]byte(src)); done != 2 || total != 4 {
		t.Errorf("TaskProgress = %d/%d, want 2/4", done, total)
	}
	if got := Tasks(nil); got != nil {
		t.Errorf("Tasks(nil) = %v, want none", got)
	}
}

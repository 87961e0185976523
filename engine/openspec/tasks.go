package openspec

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
func Tasks(src []byte) []Task {
	panic("contract: engine/openspec part")
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

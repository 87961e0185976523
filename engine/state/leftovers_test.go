package state

import (
	"os"
	"path/filepath"
	"testing"
)

func TestUnfinished(t *testing.T) {
	if Unfinished(t.TempDir()) {
		t.Error("a project that never ran: unfinished")
	}
	finished, _ := writeJournal(t, lifecycle)
	if Unfinished(finished) {
		t.Error("a run that finished with every change archived or failed: unfinished")
	}
	killed, _ := writeJournal(t, lifecycle[:len(lifecycle)-1])
	if !Unfinished(killed) {
		t.Error("a run killed before RUN_FINISHED: finished")
	}
	// The run finished with add-login merged, not archived.
	merged := append(append([]step{}, lifecycle[:27]...), lifecycle[len(lifecycle)-1])
	if dir, _ := writeJournal(t, merged); !Unfinished(dir) {
		t.Error("a run that left a change merged but not archived: finished")
	}
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "events.jsonl"), []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !Unfinished(broken) {
		t.Error("a journal that cannot be read: finished")
	}
}

func TestClearDeadHolder(t *testing.T) {
	dir := t.TempDir()
	ClearDeadHolder(dir)
	if _, err := os.Stat(filepath.Join(dir, LockFile)); !os.IsNotExist(err) {
		t.Fatalf("without a lock file, ClearDeadHolder made one (%v)", err)
	}
	l, err := AcquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	ClearDeadHolder(dir) // held: left alone
	if held, _, err := LockHolder(dir); err != nil || !held {
		t.Errorf("a held lock after ClearDeadHolder: held %v, %v", held, err)
	}
	l.Release()
	ClearDeadHolder(dir)
	if held, _, err := LockHolder(dir); err != nil || held {
		t.Errorf("a released lock after ClearDeadHolder: held %v, %v", held, err)
	}
}

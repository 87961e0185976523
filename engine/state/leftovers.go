package state

import (
	"os"
	"path/filepath"
)

// Unfinished reports whether the journal of the run directory setDir
// holds a run that did not end (killed before RUN_FINISHED), or that left
// a change in flight or merged but not archived. Its work may all be on
// main, so that a new plan has no change, and still the run must be
// resumed: to record what reached main, remove its worktrees and release
// what it held. A change in review (pull-request mode) leaves it
// unfinished too: the next run watches its pull request. A journal that cannot be read counts as unfinished: the
// run that resumes it says what is wrong with it.
func Unfinished(setDir string) bool {
	st, err := Read(setDir)
	if err != nil {
		return true
	}
	if st.Run != "" && !st.Finished {
		return true
	}
	for _, c := range st.Changes {
		if c.Status.Active() || c.Status == Merged || c.Status == InReview {
			return true
		}
	}
	return false
}

// ClearDeadHolder takes and releases the run lock of setDir when its file
// exists, so that the PID of an apply killed after its run finished (it
// held the lock, the kernel released it) is no longer named there. An
// apply that holds the lock is left alone; no lock file is created.
func ClearDeadHolder(setDir string) {
	if _, err := os.Stat(filepath.Join(setDir, LockFile)); err != nil {
		return
	}
	if l, err := AcquireLock(setDir); err == nil {
		l.Release()
	}
}

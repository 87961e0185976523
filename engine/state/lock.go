package state

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// LockFile is the name of the run lock inside the run directory (.set).
const LockFile = "lock"

// Lock is the run lock of a project: while a Lock is held, no other
// `setctl apply` runs in the project.
//
// The lock is a flock(2) on <setDir>/lock, which also holds the holder's
// PID for the error message of the next contender. The kernel releases a
// flock when the last descriptor of its open file goes away, so a holder
// that dies, however it dies, leaves no stale lock: there is nothing to
// detect or clean up. The descriptor is close-on-exec, so agents and gates
// started by the holder do not inherit (and cannot outlive it holding) the
// lock. The file itself is never deleted: a contender that opened it must
// be locking the same file the next holder locks.
type Lock struct {
	f *os.File
}

// LockedError is returned by AcquireLock when another process holds the
// lock. PID is the holder's (0 when it could not be read).
type LockedError struct {
	PID  int
	Path string
}

func (e *LockedError) Error() string {
	// The lock is named relative to the project root: .set/lock.
	rel := filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(e.Path)), filepath.Base(e.Path)))
	if e.PID <= 0 {
		return fmt.Sprintf("another setctl apply is running in this project (lock: %s)", rel)
	}
	return fmt.Sprintf("another setctl apply (PID %d) is running in this project (lock: %s)", e.PID, rel)
}

// probeGrace is how long AcquireLock tries again when the lock is taken:
// a LockHolder probe holds it for an instant, and must never keep a
// setctl apply from starting.
const probeGrace = 100 * time.Millisecond

// AcquireLock takes the run lock of the run directory setDir without
// waiting for a holder (beyond probeGrace, for a LockHolder probe). If
// another process (or another Lock in this one) holds it, the error is a
// *LockedError naming the holder's PID.
func AcquireLock(setDir string) (*Lock, error) {
	path := filepath.Join(setDir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	for deadline := time.Now().Add(probeGrace); errors.Is(err, syscall.EWOULDBLOCK) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &LockedError{PID: holderPID(f), Path: path}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt(pid, 0)
	}
	if err != nil {
		f.Close() // closing releases the flock
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// LockHolder reports whether a process holds the run lock of the run
// directory setDir now, and its PID (0 when it could not be read). It is
// how a reader of the journal tells a live run from one whose setctl
// apply is gone: the kernel releases the lock of a process however it
// dies, where a PID may be handed to another process. LockHolder takes a
// shared lock for an instant to find out (AcquireLock waits that out);
// it never creates the lock file.
func LockHolder(setDir string) (held bool, pid int, err error) {
	f, err := os.Open(filepath.Join(setDir, LockFile))
	if errors.Is(err, os.ErrNotExist) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, fmt.Errorf("lock: %w", err)
	}
	defer f.Close()
	switch err := flock(f, syscall.LOCK_SH|syscall.LOCK_NB); {
	case errors.Is(err, syscall.EWOULDBLOCK):
		return true, holderPID(f), nil
	case err != nil:
		return false, 0, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return false, 0, flock(f, syscall.LOCK_UN)
}

// flock retries flock(2) when a signal interrupts it.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// holderPID reads the PID the holder wrote. The holder writes it just after
// taking the lock, so an empty file is read again for a moment.
func holderPID(f *os.File) int {
	deadline := time.Now().Add(200 * time.Millisecond)
	buf := make([]byte, 32)
	for {
		n, _ := f.ReadAt(buf, 0)
		if pid, err := strconv.Atoi(string(bytes.TrimSpace(buf[:n]))); err == nil && pid > 0 {
			return pid
		}
		if time.Now().After(deadline) {
			return 0
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Release empties the lock file and releases the lock. Releasing twice is
// not an error.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	// Emptied while still held, so that no contender reads a PID of a
	// process that no longer holds the lock.
	errTrunc := f.Truncate(0)
	errUnlock := flock(f, syscall.LOCK_UN)
	errClose := f.Close()
	if err := errors.Join(errTrunc, errUnlock, errClose); err != nil {
		return fmt.Errorf("unlock: %w", err)
	}
	return nil
}

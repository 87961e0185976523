package proc

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// DieWithParent does nothing on macOS, which has no parent-death signal
// (Linux's Pdeathsig): a child of a SIGKILLed setctl keeps running until
// the next setctl apply finds it by its PID file (see KillOrphans).
func DieWithParent(*exec.Cmd) {}

// bootID identifies the running boot of the machine: the kernel's boot
// session UUID, new at every boot. (kern.boottime is not used: macOS
// moves it when the clock is set, which would make a run's own orphans
// look like another boot's.)
func bootID() (string, error) {
	id, err := unix.Sysctl("kern.bootsessionuuid")
	if err != nil {
		return "", fmt.Errorf("sysctl kern.bootsessionuuid: %w", err)
	}
	if id == "" {
		return "", errors.New("sysctl kern.bootsessionuuid is empty")
	}
	return id, nil
}

// startTime is when process pid started, in microseconds since the epoch
// (kinfo_proc's p_starttime); an error wrapping syscall.ESRCH when there
// is no such process.
func startTime(pid int) (uint64, error) {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return 0, fmt.Errorf("process %d: %w", pid, syscall.ESRCH)
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			return 0, fmt.Errorf("process %d: %w", pid, syscall.ESRCH)
		}
		return 0, fmt.Errorf("sysctl kern.proc.pid %d: %w", pid, err)
	}
	t := kp.Proc.P_starttime
	return uint64(t.Sec)*1_000_000 + uint64(t.Usec), nil
}

// zombie is SZOMB of <sys/proc.h>: a process that has exited and waits
// for its parent to reap it.
const zombie = 5

// groupAlive reports whether process group pgid has a member that is not
// a zombie: a killed member reparented to a parent that does not reap it
// stays in its group as a zombie, and can no longer do anything.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	members, err := unix.SysctlKinfoProcSlice("kern.proc.pgrp", pgid)
	if err != nil {
		return true // cannot tell: kill's answer stands
	}
	for _, m := range members {
		if m.Proc.P_stat != zombie {
			return true
		}
	}
	return false
}

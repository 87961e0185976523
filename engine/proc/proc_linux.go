package proc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// DieWithParent makes the kernel SIGKILL cmd's process when set dies, so
// that a SIGKILLed setctl leaves no agent, gate or git process behind
// that it started (a git would otherwise race the resumed run for a lock
// file; a child would otherwise outlive set if set died between starting
// it and writing its PID file). Only the process itself: what it starts
// in turn is found by its process group (see KillOrphans).
//
// The signal comes when the thread that started the child ends, not the
// process (go.dev/issue/27505). That is the same thing here: the Go
// runtime ends a thread only when a goroutine locked to it
// (runtime.LockOSThread) exits still locked, and neither set nor any
// package it links does that; otherwise threads live as long as the
// process.
func DieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// bootID identifies the running boot of the machine: the kernel's random
// boot_id, new at every boot.
func bootID() (string, error) {
	data, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(data))
	if id == "" {
		return "", errors.New("/proc/sys/kernel/random/boot_id is empty")
	}
	return id, nil
}

// startTime is when process pid started, in clock ticks since boot
// (field 22 of /proc/PID/stat); an error wrapping syscall.ESRCH when
// there is no such process.
func startTime(pid int) (uint64, error) {
	st, err := readStat(pid)
	if err != nil {
		return 0, err
	}
	return st.start, nil
}

// groupAlive reports whether process group pgid has a member that is not
// a zombie: a killed member reparented to an init that does not reap
// stays in its group as a zombie, and can no longer do anything.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true // cannot tell: kill's answer stands
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readStat(pid); err == nil && st.pgrp == pgid && st.state != 'Z' && st.state != 'X' {
			return true
		}
	}
	return false
}

// stat is what set reads of /proc/PID/stat.
type stat struct {
	state byte   // field 3: R, S, D, Z, X…
	pgrp  int    // field 5
	start uint64 // field 22
}

// readStat reads /proc/PID/stat. The command name (field 2) is in
// parentheses and may itself hold spaces and parentheses, so the fields
// are counted from the last ')'.
func readStat(pid int) (stat, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return stat{}, fmt.Errorf("process %d: %w", pid, syscall.ESRCH)
	}
	if err != nil {
		return stat{}, err
	}
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return stat{}, fmt.Errorf("%s: no ')' after the command name", path)
	}
	// fields[0] is field 3 of the file.
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 20 || len(fields[0]) != 1 {
		return stat{}, fmt.Errorf("%s: malformed after the command name: %q", path, data[i+1:])
	}
	pgrp, err := strconv.Atoi(fields[2])
	if err != nil {
		return stat{}, fmt.Errorf("%s: process group: %v", path, err)
	}
	start, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return stat{}, fmt.Errorf("%s: start time: %v", path, err)
	}
	return stat{state: fields[0][0], pgrp: pgrp, start: start}, nil
}

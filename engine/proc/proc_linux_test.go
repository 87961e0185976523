package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestChildDiesWithParent: the child Run started gets SIGKILL when its
// parent dies (Pdeathsig), before any KillOrphans.
func TestChildDiesWithParent(t *testing.T) {
	p := startOrphanParent(t)
	p.kill(t)
	for deadline := time.Now().Add(10 * time.Second); alive(p.leader); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the child (PID %d) outlived its parent", p.leader)
		}
	}
}

// TestReadStatAfterAnOddName: the fields of /proc/PID/stat are found
// after a command name holding spaces and parentheses.
func TestReadStatAfterAnOddName(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(t.TempDir(), "a) b (c) 1 2")
	writeFile(t, odd, string(data), 0o755)
	cmd := exec.Command(odd, "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	st, err := readStat(pid)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if st.pgrp != pid || (st.state != 'R' && st.state != 'S') {
		t.Errorf("readStat = %+v, want group %d, running or sleeping", st, pid)
	}
	// Ticks since boot: the child did not start before this process.
	self, err := readStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.start < self.start {
		t.Errorf("the child's start %d is before this process's %d", st.start, self.start)
	}
	if _, err := startTime(pid); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("startTime of a reaped process = %v, want ESRCH", err)
	}
}

package state

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".set")
	os.Mkdir(dir, 0o755)
	l, err := AcquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, LockFile)); string(data) != fmt.Sprintf("%d\n", os.Getpid()) {
		t.Fatalf("lock file holds %q, want our PID", data)
	}

	// A second open file of the lock, even in this process, is refused.
	_, err = AcquireLock(dir)
	var locked *LockedError
	if !errors.As(err, &locked) {
		t.Fatalf("second AcquireLock = %v, want a *LockedError", err)
	}
	if locked.PID != os.Getpid() || locked.Path != filepath.Join(dir, LockFile) {
		t.Fatalf("LockedError = %+v", locked)
	}
	want := fmt.Sprintf("another setctl apply (PID %d) is running in this project (lock: .set/lock)", os.Getpid())
	if err.Error() != want {
		t.Fatalf("error:\n%s\nwant:\n%s", err, want)
	}

	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatalf("second Release = %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, LockFile)); len(data) != 0 {
		t.Fatalf("released lock file holds %q", data)
	}
	l2, err := AcquireLock(dir)
	if err != nil {
		t.Fatalf("AcquireLock after Release = %v", err)
	}
	l2.Release()
}

func TestLockedErrorWithoutPID(t *testing.T) {
	err := &LockedError{Path: "/p/.set/lock"}
	if want := "another setctl apply is running in this project (lock: .set/lock)"; err.Error() != want {
		t.Fatalf("error = %q", err)
	}
}

const lockHelperEnv = "SET_TEST_LOCK_HELPER_DIR"

// TestLockHelperProcess is the child of TestLockAcrossProcesses: it takes
// the lock, says so, and holds it until its stdin closes.
func TestLockHelperProcess(t *testing.T) {
	dir := os.Getenv(lockHelperEnv)
	if dir == "" {
		t.Skip("helper process of TestLockAcrossProcesses")
	}
	l, err := AcquireLock(dir)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	bufio.NewReader(os.Stdin).ReadString('\n')
	l.Release()
	os.Exit(0)
}

func TestLockAcrossProcesses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".set")
	os.Mkdir(dir, 0o755)
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := false
	defer func() {
		if !exited {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		t.Fatalf("helper said %q (%v)", line, err)
	}

	_, err = AcquireLock(dir)
	var locked *LockedError
	if !errors.As(err, &locked) || locked.PID != cmd.Process.Pid {
		t.Fatalf("AcquireLock while the child holds it = %v, want a LockedError naming PID %d", err, cmd.Process.Pid)
	}

	if held, pid, err := LockHolder(dir); !held || pid != cmd.Process.Pid || err != nil {
		t.Fatalf("LockHolder while the child holds it = %v, %d, %v", held, pid, err)
	}

	// The holder dies without releasing: the kernel releases the lock.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	exited = true
	var l *Lock
	for deadline := time.Now().Add(5 * time.Second); ; {
		l, err = AcquireLock(dir)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("AcquireLock after the holder died = %v", err)
	}
	l.Release()
	// The dead holder's PID is still in the file; the lock says no one
	// holds it.
	if held, _, err := LockHolder(dir); held || err != nil {
		t.Fatalf("LockHolder after the holder died = %v, %v", held, err)
	}
}

func TestLockHolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".set")
	os.Mkdir(dir, 0o755)
	if held, pid, err := LockHolder(dir); held || pid != 0 || err != nil {
		t.Fatalf("LockHolder without a lock file = %v, %d, %v", held, pid, err)
	}
	if _, err := os.Stat(filepath.Join(dir, LockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("LockHolder created the lock file: %v", err)
	}
	l, err := AcquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if held, pid, err := LockHolder(dir); !held || pid != os.Getpid() || err != nil {
		t.Fatalf("LockHolder while held = %v, %d, %v", held, pid, err)
	}
	l.Release()
	if held, _, err := LockHolder(dir); held || err != nil {
		t.Fatalf("LockHolder after Release = %v, %v", held, err)
	}
}

// A probe that holds the lock when an apply starts does not keep the
// apply from taking it.
func TestAcquireLockWaitsOutAProbe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".set")
	os.Mkdir(dir, 0o755)
	l, err := AcquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	probe, err := os.Open(filepath.Join(dir, LockFile))
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	if err := flock(probe, syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	unlocked := make(chan struct{})
	go func() {
		defer close(unlocked)
		time.Sleep(probeGrace / 4)
		flock(probe, syscall.LOCK_UN)
	}()
	defer func() { <-unlocked }() // before the probe is closed
	l, err = AcquireLock(dir)
	if err != nil {
		t.Fatalf("AcquireLock during a probe = %v", err)
	}
	l.Release()
}

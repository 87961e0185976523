package proc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunExitCodeAndOutput(t *testing.T) {
	var out bytes.Buffer
	o, err := Run(context.Background(), Spec{
		Argv:   []string{"sh", "-c", "echo hello; echo oops >&2; exit 3"},
		Stdout: &out, Stderr: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.ExitCode != 3 {
		t.Errorf("exit code = %d, want 3", o.ExitCode)
	}
	if !strings.Contains(out.String(), "hello") || !strings.Contains(out.String(), "oops") {
		t.Errorf("output = %q", out.String())
	}
}

func TestRunStartError(t *testing.T) {
	_, err := Run(context.Background(), Spec{Argv: []string{"/no/such/binary"}})
	if !errors.Is(err, ErrStart) {
		t.Errorf("err = %v, want ErrStart", err)
	}
}

// TestTimeoutKillsTheGroup: a grandchild started in the background must
// die with its parent's group. It writes its PID before the parent
// settles down to wait; the test then waits for that process to be gone
// rather than for a time it would have needed to do harm.
func TestTimeoutKillsTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	o, err := Run(context.Background(), Spec{
		Argv: []string{"sh", "-c", `sh -c 'echo $$ > "$1.tmp" && mv "$1.tmp" "$1"; sleep 30' grandchild "$0" &
while [ ! -f "$0" ]; do sleep 0.01; done
sleep 30`, pidFile},
		Timeout: 500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !o.TimedOut || o.ExitCode != -1 {
		t.Errorf("outcome = %+v, want a timeout", o)
	}
	if _, err := os.Stat(pidFile); err != nil {
		t.Fatalf("the grandchild did not start before the timeout: %v", err)
	}
	waitGone(t, readPID(t, pidFile), "the background grandchild survived the timeout")
}

// waitGone waits for process pid to end, failing with what (and the
// PID) if it has not after 10 seconds.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (PID %d)", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether process pid exists and is not a zombie: the
// killed grandchild is reparented to PID 1, which need not reap it.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		_, noProc := os.Stat("/proc/self")
		return noProc != nil // without /proc (macOS) kill's answer stands
	}
	// The state follows the command name in parentheses: "pid (comm) S …".
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

// A child that a signal ends, whoever sent it, says which; one that
// exits by itself says none.
func TestSignal(t *testing.T) {
	for _, tt := range []struct {
		script, signal string
		code           int
	}{
		{"kill -KILL $$", "SIGKILL", -1},
		{"kill -SEGV $$", "SIGSEGV", -1},
		{"exit 3", "", 3},
	} {
		o, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", tt.script}})
		if err != nil {
			t.Fatal(err)
		}
		if o.Signal != tt.signal || o.ExitCode != tt.code {
			t.Errorf("%s: outcome = %+v, want signal %q, exit code %d", tt.script, o, tt.signal, tt.code)
		}
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	o, err := Run(ctx, Spec{Argv: []string{"sleep", "30"}})
	if err != nil {
		t.Fatal(err)
	}
	if !o.Canceled || o.ExitCode != -1 || o.Signal != "SIGTERM" {
		t.Errorf("outcome = %+v, want canceled by SIGTERM", o)
	}
}

func TestKillOrphans(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(WithPIDDir(context.Background(), dir))
	defer cancel()
	started := make(chan struct{})
	go func() {
		close(started)
		_, _ = Run(ctx, Spec{Argv: []string{"sleep", "30"}})
	}()
	<-started
	var pid int
	for range 100 {
		entries, _ := os.ReadDir(dir)
		if len(entries) == 1 {
			pid, _ = strconv.Atoi(entries[0].Name())
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pid == 0 {
		t.Fatal("no PID file written")
	}
	killed, err := KillOrphans(dir)
	if err != nil || len(killed) != 1 || killed[0].PGID != pid {
		t.Fatalf("KillOrphans = %v, %v; want [%d]", killed, err, pid)
	}
}

// TestKillNowSkipsTheGrace: a group that ignores SIGTERM is killed as
// soon as now is closed, not after the grace (an hour here, so a kill
// that waited for it would time the test out).
func TestKillNowSkipsTheGrace(t *testing.T) {
	cmd := exec.Command("sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The trap is set once the child says so.
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("child said %q, %v", line, err)
	}
	now := make(chan struct{})
	kill(cmd, time.Hour, now)
	close(now)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("Wait = %v, want the child killed", err)
	}
	if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("child ended with %v, want killed by SIGKILL", ee)
	}
}

// TestWithKillNow: the channel stored by WithKillNow is the one Run
// hands to the kill of a cancelled child.
func TestWithKillNow(t *testing.T) {
	now := make(chan struct{})
	if killNow(WithKillNow(context.Background(), now)) != (<-chan struct{})(now) {
		t.Error("killNow does not return the channel WithKillNow stored")
	}
	if killNow(context.Background()) != nil {
		t.Error("killNow without WithKillNow is not nil")
	}
}

func TestGetenv(t *testing.T) {
	env := []string{"A=1", "B=x=y", "A=2", "EMPTY=", "NOEQUALS", "AB=3"}
	for key, want := range map[string]string{"A": "2", "B": "x=y", "EMPTY": "", "NOEQUALS": "", "AB": "3", "MISSING": ""} {
		if got := Getenv(env, key); got != want {
			t.Errorf("Getenv(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestRunEndsWhatTheChildLeft: a child that exits leaving a job in the
// background, holding its output, is done when it exits; the job ends
// with it, and the child's exit status stands.
func TestRunEndsWhatTheChildLeft(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "job.pid")
	var out strings.Builder
	o, err := Run(context.Background(), Spec{
		Argv:   []string{"sh", "-c", `sleep 300 & echo $! > "$0"; echo started; exit 3`, pidFile},
		Stdout: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.ExitCode != 3 || out.String() != "started\n" {
		t.Errorf("outcome = %+v, output %q; want exit 3 and the child's output", o, out.String())
	}
	waitGone(t, readPID(t, pidFile), "the background job outlived the child")
}

// readPID waits for the file (written whole, by a rename) and reads the
// PID in it.
func readPID(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if data, err := os.ReadFile(path); err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			return pid
		}
	}
	t.Fatalf("%s was not written", path)
	return 0
}

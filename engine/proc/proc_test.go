package proc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
// die with its parent's group.
func TestTimeoutKillsTheGroup(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "survived")
	o, err := Run(context.Background(), Spec{
		Argv:    []string{"sh", "-c", "(sleep 3; touch " + marker + ") & sleep 30"},
		Timeout: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !o.TimedOut || o.ExitCode != -1 {
		t.Errorf("outcome = %+v, want a timeout", o)
	}
	time.Sleep(3500 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Error("the background grandchild survived the timeout")
	}
}

func TestStall(t *testing.T) {
	o, err := Run(context.Background(), Spec{
		Argv:       []string{"sh", "-c", "echo start; sleep 30"},
		StallAfter: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !o.Stalled {
		t.Errorf("outcome = %+v, want stalled", o)
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	o, err := Run(ctx, Spec{Argv: []string{"sleep", "30"}})
	if err != nil {
		t.Fatal(err)
	}
	if !o.Canceled || o.ExitCode != -1 {
		t.Errorf("outcome = %+v, want canceled", o)
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
	if err != nil || len(killed) != 1 || killed[0] != pid {
		t.Fatalf("KillOrphans = %v, %v; want [%d]", killed, err, pid)
	}
}

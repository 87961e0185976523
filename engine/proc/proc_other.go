//go:build unix && !linux && !darwin

package proc

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"syscall"
)

// On the other systems set builds for, it cannot tell one process from a
// later one with the same PID, so Run records no PID file and KillOrphans
// kills nothing (it only removes the files).

// DieWithParent does nothing here.
func DieWithParent(*exec.Cmd) {}

// errNoIdentity says why no process is recorded here.
var errNoIdentity = fmt.Errorf("set reads no process start time on %s, so it records no process to end after a crash", runtime.GOOS)

func bootID() (string, error) { return "", errNoIdentity }

func startTime(int) (uint64, error) { return 0, errNoIdentity }

func groupAlive(pgid int) bool {
	return !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

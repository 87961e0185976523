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

var errNoIdentity = fmt.Errorf("telling processes apart is not implemented on %s", runtime.GOOS)

func bootID() (string, error) { return "", errNoIdentity }

func startTime(int) (uint64, error) { return 0, errNoIdentity }

func groupAlive(pgid int) bool {
	return !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

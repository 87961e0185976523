package proc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

type pidDirKey struct{}

// WithPIDDir returns a context under which every child started by Run
// leaves a PID file in dir while it runs (see record). If the parent dies
// without cleaning up (SIGKILL), KillOrphans finds and ends the child's
// process group on the next start, whatever the child has become since
// (an interpreter run through #!/usr/bin/env, a shell that exec'd).
func WithPIDDir(ctx context.Context, dir string) context.Context {
	return context.WithValue(ctx, pidDirKey{}, dir)
}

func pidDir(ctx context.Context) string {
	dir, _ := ctx.Value(pidDirKey{}).(string)
	return dir
}

// record is the content of a PID file, named by the child's PID: who the
// child is, in terms that outlive set and tell it apart from any later
// process given the same PID. (plan.Record is what main records as done,
// another thing.)
type record struct {
	// PGID is the child's process group, which Run makes the child's own
	// PID: the child leads it.
	PGID int `json:"pgid"`
	// Start is when the leader started, in the OS's own unit: only ever
	// compared for equality, within one boot.
	Start uint64 `json:"start"`
	// Boot identifies the boot of the machine the child started in.
	Boot string `json:"boot"`
	// Argv is the command Run started, for people and the journal.
	Argv []string `json:"argv"`
}

// writeRecord writes the PID file of the child pid (which leads its own
// process group) in dir and returns its path. Where the OS cannot tell
// processes apart it writes nothing and returns an error.
func writeRecord(dir string, pid int, argv []string) (string, error) {
	start, err := startTime(pid)
	if err != nil {
		return "", err
	}
	boot, err := bootID()
	if err != nil {
		return "", err
	}
	data, err := json.Marshal(record{PGID: pid, Start: start, Boot: boot, Argv: argv})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, strconv.Itoa(pid))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		os.Remove(path)
		return "", err
	}
	return path, nil
}

// Orphan is a process group of an earlier set that KillOrphans killed.
type Orphan struct {
	PGID int
	// Argv is the command set started as the group's leader.
	Argv []string
}

// orphanArgvMax bounds the command an Orphan's String shows: an agent's
// argv ends with its whole prompt.
const orphanArgvMax = 100

// String is "process group PGID (ARGV)", with ARGV cut short at
// orphanArgvMax characters.
func (o Orphan) String() string {
	cmd := strings.Join(o.Argv, " ")
	if utf8.RuneCountInString(cmd) > orphanArgvMax {
		cmd = string([]rune(cmd)[:orphanArgvMax]) + "…"
	}
	return fmt.Sprintf("process group %d (%s)", o.PGID, cmd)
}

// orphanWait bounds how long KillOrphans waits for the groups it killed
// to end.
const orphanWait = 2 * time.Second

// KillOrphans ends the process groups that children Run started under
// WithPIDDir(dir) left running when their set died without cleaning up,
// and removes their PID files (the files of dir named by a number). It is for the start of a run that holds
// the project's lock, when no live set has a child recorded there.
//
// What it does with each PID file:
//   - A file from another boot is stale: it is removed, nothing is
//     killed (the processes it names ended with that boot).
//   - A file it cannot read (not JSON, as the plain command lines of
//     older versions of set; or naming a group Run cannot have made: not
//     the file's name, 0 or 1, or this process's own group) is removed
//     and nothing is killed: the processes it names cannot be told from
//     others.
//   - A live leader whose start time is the recorded one is the child:
//     its group is SIGKILLed.
//   - A live process with the leader's PID but another start time is a
//     later process given the PID once it was free. The OS never hands
//     out a PID that is still a process group's ID, so the recorded group
//     has ended: nothing is killed.
//   - No process with the leader's PID: the leader has ended, but members
//     of its group may live on (a node CLI's children after the wrapper
//     that led the group died, or a gate's background job). The group is
//     SIGKILLed, which ends them. (Its number cannot have been handed out
//     again while it has members; when it has none, only a process that
//     took the PID and made itself a group leader in the instant between
//     the check and the kill could be hit, which is not guarded against.)
//
// KillOrphans then waits, up to orphanWait, until none of the groups it
// killed has a live member (zombies, which can do nothing, do not count),
// so that once it returns they no longer write into worktrees. It returns
// the groups it killed that had a live member, in the order of their
// files; an error is a file it could not remove.
func KillOrphans(dir string) ([]Orphan, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	boot, bootErr := bootID()
	var killed []Orphan
	var errs []error
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue // not a PID file
		}
		path := filepath.Join(dir, e.Name())
		if rec, ok := readRecord(path); ok && rec.PGID == pid && bootErr == nil && rec.Boot == boot && ours(rec) && groupAlive(rec.PGID) {
			if syscall.Kill(-rec.PGID, syscall.SIGKILL) == nil {
				killed = append(killed, Orphan{PGID: rec.PGID, Argv: rec.Argv})
			}
		}
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	for deadline := time.Now().Add(orphanWait); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !anyAlive(killed) {
			break
		}
	}
	return killed, errors.Join(errs...)
}

// readRecord reads a PID file; ok is false when it is not one Run can
// have written.
func readRecord(path string) (rec record, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(data, &rec) != nil {
		return record{}, false
	}
	return rec, rec.PGID > 1 && rec.PGID != syscall.Getpgrp() && rec.Boot != ""
}

// ours reports whether the group rec names is still the one its child
// led (see KillOrphans): its leader, if any, is the recorded process.
func ours(rec record) bool {
	start, err := startTime(rec.PGID)
	if errors.Is(err, syscall.ESRCH) {
		return true // the leader has ended; members may not have
	}
	return err == nil && start == rec.Start
}

func anyAlive(groups []Orphan) bool {
	for _, g := range groups {
		if groupAlive(g.PGID) {
			return true
		}
	}
	return false
}

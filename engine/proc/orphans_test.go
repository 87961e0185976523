//go:build linux || darwin

package proc

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests of this file build what a set killed mid-run leaves (a PID
// file and the processes it names, alive or not) and check what
// KillOrphans does with it.

// TestKillOrphansFindsAnInterpreter: a child started through a
// #!/usr/bin/env script runs as its interpreter (in /proc/PID/cmdline it
// is "sh SCRIPT …", as the npm codex is "node …/codex …"), and is still
// found, with the job it started; KillOrphans returns once both are gone.
func TestKillOrphansFindsAnInterpreter(t *testing.T) {
	tmp := t.TempDir()
	script := filepath.Join(tmp, "agent")
	writeFile(t, script, "#!/usr/bin/env sh\n"+`sleep 30 & echo $! > "$1.tmp" && mv "$1.tmp" "$1"`+"\nwait\n", 0o755)
	grandchildFile := filepath.Join(tmp, "grandchild.pid")
	procs := mkdir(t, tmp, "procs")
	argv := []string{script, grandchildFile}
	done := make(chan Outcome, 1)
	go func() {
		o, _ := Run(WithPIDDir(context.Background(), procs), Spec{Argv: argv})
		done <- o
	}()
	pid := onePIDFile(t, procs)
	grandchild := readPID(t, grandchildFile)

	killed, err := KillOrphans(procs)
	if want := []Orphan{{PGID: pid, Argv: argv}}; err != nil || !reflect.DeepEqual(killed, want) {
		t.Fatalf("KillOrphans = %+v, %v; want %+v", killed, err, want)
	}
	if alive(grandchild) {
		t.Errorf("the child's background job (PID %d) is alive after KillOrphans returned", grandchild)
	}
	if o := <-done; o.ExitCode != -1 {
		t.Errorf("the child ended with %+v, want killed", o)
	}
	noFilesLeft(t, procs)
}

// TestKillOrphansLeaderGone: the leader of the group has ended (a child
// killed by Pdeathsig when set died) but a process it started is left in
// its group; it is killed. The state is built by hand: the group is
// started as Run starts it and recorded as Run records it, then only its
// leader is killed.
func TestKillOrphansLeaderGone(t *testing.T) {
	tmp := t.TempDir()
	grandchildFile := filepath.Join(tmp, "grandchild.pid")
	procs := mkdir(t, tmp, "procs")
	argv := []string{"sh", "-c", `sleep 30 & echo $! > "$0.tmp" && mv "$0.tmp" "$0"; sleep 30`, grandchildFile}
	leader := exec.Command(argv[0], argv[1:]...)
	leader.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := leader.Start(); err != nil {
		t.Fatal(err)
	}
	pid := leader.Process.Pid
	if _, err := writeRecord(procs, pid, argv); err != nil {
		t.Fatal(err)
	}
	grandchild := readPID(t, grandchildFile)
	if err := leader.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = leader.Wait()
	if !alive(grandchild) {
		t.Fatal("the background job ended with its leader")
	}

	killed, err := KillOrphans(procs)
	if want := []Orphan{{PGID: pid, Argv: argv}}; err != nil || !reflect.DeepEqual(killed, want) {
		t.Fatalf("KillOrphans = %+v, %v; want %+v", killed, err, want)
	}
	if alive(grandchild) {
		t.Errorf("the leader's background job (PID %d) is alive after KillOrphans returned", grandchild)
	}
	noFilesLeft(t, procs)
}

// TestKillOrphansAfterTheParentDied: the set that ran the child (here a
// child test process running Run) is SIGKILLed; the next KillOrphans ends
// the child's group, however much of it the parent's death took along
// (on Linux the leader gets Pdeathsig, its background job does not).
func TestKillOrphansAfterTheParentDied(t *testing.T) {
	p := startOrphanParent(t)
	p.kill(t)

	killed, err := KillOrphans(p.procs)
	if err != nil || len(killed) != 1 || killed[0].PGID != p.leader {
		t.Fatalf("KillOrphans = %+v, %v; want the group %d", killed, err, p.leader)
	}
	for _, pid := range []int{p.leader, p.grandchild} {
		if alive(pid) {
			t.Errorf("process %d of the group is alive after KillOrphans returned", pid)
		}
	}
	noFilesLeft(t, p.procs)
}

const envOrphanParent = "SET_TEST_ORPHAN_PARENT"

// orphanParent is a child test process (TestOrphanParent) running a
// child through Run, under WithPIDDir(procs); that child leads its group
// and has started a background job in it.
type orphanParent struct {
	cmd                *exec.Cmd
	procs              string
	leader, grandchild int
}

// startOrphanParent starts an orphanParent and waits until its child has
// written its PID file and started its job.
func startOrphanParent(t *testing.T) *orphanParent {
	t.Helper()
	tmp := t.TempDir()
	p := &orphanParent{procs: mkdir(t, tmp, "procs")}
	p.cmd = exec.Command(os.Args[0], "-test.run=^TestOrphanParent$")
	p.cmd.Env = append(os.Environ(), envOrphanParent+"="+tmp)
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
		if p.leader > 0 {
			_ = syscall.Kill(-p.leader, syscall.SIGKILL)
		}
	})
	p.leader = onePIDFile(t, p.procs)
	p.grandchild = readPID(t, filepath.Join(tmp, "grandchild.pid"))
	return p
}

// kill SIGKILLs the parent, leaving its child's PID file behind.
func (p *orphanParent) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	if _, err := os.Stat(filepath.Join(p.procs, strconv.Itoa(p.leader))); err != nil {
		t.Fatalf("the killed parent left no PID file: %v", err)
	}
}

// TestOrphanParent is the child test process of startOrphanParent.
func TestOrphanParent(t *testing.T) {
	dir := os.Getenv(envOrphanParent)
	if dir == "" {
		t.Skip("run by startOrphanParent")
	}
	_, _ = Run(WithPIDDir(context.Background(), filepath.Join(dir, "procs")), Spec{Argv: []string{"sh", "-c",
		`sleep 30 & echo $! > "$0/grandchild.tmp" && mv "$0/grandchild.tmp" "$0/grandchild.pid"; wait`, dir}})
}

// TestKillOrphansLeavesOthersAlone: a PID file naming a live process
// that is not the child it recorded is removed, and the process lives.
func TestKillOrphansLeavesOthersAlone(t *testing.T) {
	boot, err := bootID()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		// file is the PID file's content for a live group leader pid that
		// started at start.
		file func(pid int, start uint64) string
		// fileName is the file's name, if not pid.
		fileName string
	}{
		{"another start time: the PID was reused", func(pid int, start uint64) string {
			return recordJSON(t, record{PGID: pid, Start: start + 1, Boot: boot, Argv: []string{"sleep", "30"}})
		}, ""},
		{"another boot", func(pid int, start uint64) string {
			return recordJSON(t, record{PGID: pid, Start: start, Boot: "another-boot", Argv: []string{"sleep", "30"}})
		}, ""},
		{"the command line older versions wrote", func(int, uint64) string {
			return "sleep 30"
		}, ""},
		{"not a whole record", func(pid int, start uint64) string {
			return recordJSON(t, record{PGID: pid, Start: start, Boot: boot})[:20]
		}, ""},
		{"a name that is not its group", func(pid int, start uint64) string {
			return recordJSON(t, record{PGID: pid, Start: start, Boot: boot, Argv: []string{"sleep", "30"}})
		}, "999999999"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("sleep", "30")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { _ = cmd.Wait(); close(exited) }()
			pid := cmd.Process.Pid
			t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL); <-exited })
			start, err := startTime(pid)
			if err != nil {
				t.Fatal(err)
			}
			procs := t.TempDir()
			fileName := tc.fileName
			if fileName == "" {
				fileName = strconv.Itoa(pid)
			}
			writeFile(t, filepath.Join(procs, fileName), tc.file(pid, start), 0o644)

			killed, err := KillOrphans(procs)
			if err != nil || len(killed) > 0 {
				t.Errorf("KillOrphans = %+v, %v; want nothing killed", killed, err)
			}
			select {
			case <-exited:
				t.Error("the process was killed")
			default:
			}
			noFilesLeft(t, procs)
		})
	}
}

// TestReadRecordRefusesGroupsRunCannotHaveMade: a record naming group 0
// or 1 (kill(0) is this process's own group, kill(-1) every process)
// or this process's own group is not read as a child's, whatever its
// start time.
func TestReadRecordRefusesGroupsRunCannotHaveMade(t *testing.T) {
	boot, err := bootID()
	if err != nil {
		t.Fatal(err)
	}
	own := syscall.Getpgrp()
	for _, pgid := range []int{-1, 0, 1, own} {
		start, _ := startTime(pgid)
		path := filepath.Join(t.TempDir(), "rec")
		writeFile(t, path, recordJSON(t, record{PGID: pgid, Start: start, Boot: boot}), 0o644)
		if rec, ok := readRecord(path); ok {
			t.Errorf("readRecord(group %d) = %+v, accepted", pgid, rec)
		}
	}
	path := filepath.Join(t.TempDir(), "rec")
	want := record{PGID: os.Getpid() + 1, Start: 7, Boot: boot, Argv: []string{"a", "b c"}}
	writeFile(t, path, recordJSON(t, want), 0o644)
	if rec, ok := readRecord(path); !ok || !reflect.DeepEqual(rec, want) {
		t.Errorf("readRecord = %+v, %v; want %+v", rec, ok, want)
	}
}

// TestRecordOfRun: the PID file Run writes names the child's group, its
// start time and this boot.
func TestRecordOfRun(t *testing.T) {
	tmp := t.TempDir()
	procs, exit := mkdir(t, tmp, "procs"), filepath.Join(tmp, "exit")
	argv := []string{"sh", "-c", `while [ ! -f "$0" ]; do sleep 0.01; done`, exit}
	done := make(chan struct{})
	go func() {
		_, _ = Run(WithPIDDir(context.Background(), procs), Spec{Argv: argv})
		close(done)
	}()
	pid := onePIDFile(t, procs)
	rec, ok := readRecord(filepath.Join(procs, strconv.Itoa(pid)))
	start, err := startTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	boot, _ := bootID()
	if want := (record{PGID: pid, Start: start, Boot: boot, Argv: argv}); !ok || !reflect.DeepEqual(rec, want) {
		t.Errorf("record = %+v, %v; want %+v", rec, ok, want)
	}
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
		t.Errorf("the child's group = %d, %v; want its own, %d", pgid, err, pid)
	}
	writeFile(t, exit, "", 0o644)
	<-done
	noFilesLeft(t, procs)
}

func TestOrphanString(t *testing.T) {
	o := Orphan{PGID: 1234, Argv: []string{"codex", "exec", "--json", strings.Repeat("é", 200)}}
	want := "process group 1234 (codex exec --json " + strings.Repeat("é", orphanArgvMax-len("codex exec --json ")) + "…)"
	if got := o.String(); got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got := (Orphan{PGID: 7, Argv: []string{"sleep", "30"}}).String(); got != "process group 7 (sleep 30)" {
		t.Errorf("String = %q", got)
	}
}

func recordJSON(t *testing.T, r record) string {
	t.Helper()
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func writeFile(t *testing.T, path, content string, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, parent, name string) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// onePIDFile waits for the one PID file in dir and returns its PID.
func onePIDFile(t *testing.T, dir string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		entries, _ := os.ReadDir(dir)
		if len(entries) == 1 {
			pid, err := strconv.Atoi(entries[0].Name())
			if err != nil {
				t.Fatalf("PID file %s", entries[0].Name())
			}
			return pid
		}
	}
	t.Fatalf("no PID file in %s", dir)
	return 0
}

func noFilesLeft(t *testing.T, dir string) {
	t.Helper()
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("files left in %s: %v", dir, entries)
	}
}

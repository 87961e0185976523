package journal

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// threeRuns writes a journal of three runs into dir: run-1 works on a and
// b, run-2 and run-3 on b. It returns the lines of events.jsonl.
func threeRuns(t *testing.T, dir string) []string {
	t.Helper()
	for _, run := range []string{"run-1", "run-2", "run-3"} {
		w, err := Open(dir, run)
		if err != nil {
			t.Fatal(err)
		}
		appendT(t, w, "", RunStartedData{})
		if run == "run-1" {
			appendT(t, w, "a", AgentIterationData{Iteration: 1, Log: ".set/logs/a/agent-1.log"})
		}
		appendT(t, w, "b", AgentIterationData{Iteration: 1, Log: ".set/logs/b/agent-1.log"})
		appendT(t, w, "", RunFinishedData{Result: "success"})
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return lines(t, filepath.Join(dir, EventsFile))
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l := strings.SplitAfter(string(data), "\n")
	return l[:len(l)-1] // after the last newline: ""
}

func ofRun(run string) func(Event) bool { return func(e Event) bool { return e.Run == run } }

// TestRemove: the kept events stay the lines they were, Seqs included;
// the change journals follow; a journal that starts above Seq 1 opens,
// and Seq goes on from its highest.
func TestRemove(t *testing.T) {
	dir := t.TempDir()
	all := threeRuns(t, dir)
	counted, err := Count(dir, ofRun("run-1"))
	if err != nil {
		t.Fatal(err)
	}
	removed, err := Remove(dir, ofRun("run-1"))
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len(strings.Join(all[:4], ""))); removed.Events != 4 || removed.Bytes != want || counted != removed {
		t.Errorf("removed %+v, want 4 events of %d bytes", removed, want)
	}
	got := lines(t, filepath.Join(dir, EventsFile))
	if strings.Join(got, "") != strings.Join(all[4:], "") {
		t.Errorf("events.jsonl:\n%s\nwant:\n%s", strings.Join(got, ""), strings.Join(all[4:], ""))
	}
	if _, err := os.Stat(ChangeJournal(dir, "a")); !os.IsNotExist(err) {
		t.Errorf("the journal of a, whose every event went, is still there: %v", err)
	}
	if got, want := lines(t, ChangeJournal(dir, "b")), []string{all[5], all[8]}; strings.Join(got, "") != strings.Join(want, "") {
		t.Errorf("journal of b:\n%s\nwant:\n%s", strings.Join(got, ""), strings.Join(want, ""))
	}
	if seqs := seqs(readT(t, filepath.Join(dir, EventsFile))); seqs[0] != 5 || seqs[len(seqs)-1] != 10 {
		t.Errorf("seqs after the removal: %v", seqs)
	}

	// A run in the middle: a gap, which Open does not mind.
	if _, err := Remove(dir, ofRun("run-2")); err != nil {
		t.Fatal(err)
	}
	w, err := Open(dir, "run-4")
	if err != nil {
		t.Fatal(err)
	}
	if e := appendT(t, w, "b", AgentIterationData{Iteration: 2}); e.Seq != 11 {
		t.Errorf("the next event after the removals has seq %d, want 11", e.Seq)
	}
	w.Close()
	if got := seqs(readT(t, ChangeJournal(dir, "b"))); len(got) != 2 || got[0] != 9 || got[1] != 11 {
		t.Errorf("journal of b after a removal and an append: %v", got)
	}
	// Removing nothing writes nothing.
	before, _ := os.ReadFile(filepath.Join(dir, EventsFile))
	if r, err := Remove(dir, ofRun("run-9")); err != nil || r.Events != 0 {
		t.Errorf("removing no event: %+v, %v", r, err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, EventsFile)); !bytes.Equal(before, after) {
		t.Error("removing no event changed events.jsonl")
	}
}

// TestRemoveKilledBeforeRename: a Remove killed once the new journal is
// written, before it replaces the old one, leaves the old journal whole
// (the next Remove deletes the temporary file it left).
func TestRemoveKilledBeforeRename(t *testing.T) {
	dir := t.TempDir()
	all := threeRuns(t, dir)
	before, err := os.ReadFile(filepath.Join(dir, EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRemoveKilledHelper$")
	cmd.Env = append(os.Environ(), "SET_REMOVE_KILLED_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the remove was not killed: %v\n%s", err, out)
	}
	after, err := os.ReadFile(filepath.Join(dir, EventsFile))
	if err != nil || !bytes.Equal(before, after) {
		t.Fatalf("events.jsonl after the killed remove (%v):\n%s", err, after)
	}
	temps, _ := filepath.Glob(filepath.Join(dir, tempPrefix+"*"))
	if len(temps) != 1 {
		t.Fatalf("temporary files: %v, want the killed remove's", temps)
	}
	if _, err := Remove(dir, ofRun("run-1")); err != nil {
		t.Fatal(err)
	}
	if got := lines(t, filepath.Join(dir, EventsFile)); strings.Join(got, "") != strings.Join(all[4:], "") {
		t.Errorf("events.jsonl after the next remove:\n%s", strings.Join(got, ""))
	}
	if temps, _ := filepath.Glob(filepath.Join(dir, tempPrefix+"*")); len(temps) != 0 {
		t.Errorf("temporary files left: %v", temps)
	}
}

// TestRemoveKilledHelper is the process TestRemoveKilledBeforeRename
// kills.
func TestRemoveKilledHelper(t *testing.T) {
	dir := os.Getenv("SET_REMOVE_KILLED_DIR")
	if dir == "" {
		t.Skip("run by TestRemoveKilledBeforeRename")
	}
	_, err := remove(dir, ofRun("run-1"), func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) })
	t.Fatalf("not killed: %v", err)
}

// TestOpenRepairsHalfRemoved: a Remove killed after it replaced
// events.jsonl, before the change journals, leaves them with removed
// events; Open writes them again from events.jsonl.
func TestOpenRepairsHalfRemoved(t *testing.T) {
	dir := t.TempDir()
	all := threeRuns(t, dir)
	if err := os.WriteFile(filepath.Join(dir, EventsFile), []byte(strings.Join(all[4:], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Open(dir, "run-4")
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if got, want := lines(t, ChangeJournal(dir, "b")), []string{all[5], all[8]}; strings.Join(got, "") != strings.Join(want, "") {
		t.Errorf("journal of b:\n%s\nwant:\n%s", strings.Join(got, ""), strings.Join(want, ""))
	}
}

// TestOpenRepairsHalfRemovedChange: a change whose every event a Remove
// killed half-way took out of events.jsonl (a, only run-1's) has no
// journal once Open has repaired them, and a later run that works on a
// change of that name again starts its journal afresh, without the
// removed run's events.
func TestOpenRepairsHalfRemovedChange(t *testing.T) {
	dir := t.TempDir()
	all := threeRuns(t, dir)
	if err := os.WriteFile(filepath.Join(dir, EventsFile), []byte(strings.Join(all[4:], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Open(dir, "run-4")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ChangeJournal(dir, "a")); !os.IsNotExist(err) {
		t.Errorf("a's journal after Open: %v, want none", err)
	}
	appendT(t, w, "a", AgentIterationData{Iteration: 2, Log: ".set/logs/a/agent-2.log"})
	w.Close()
	got := lines(t, ChangeJournal(dir, "a"))
	if len(got) != 1 || !strings.Contains(got[0], `"run":"run-4"`) {
		t.Errorf("journal of a:\n%s\nwant run-4's event only", strings.Join(got, ""))
	}
}

// TestFollowAcrossRemove: a follower of the journal (the dashboard's
// stream, status --watch) that a Remove replaces under it delivers the
// events journaled after, and none it delivered again: the events kept
// keep their Seqs.
func TestFollowAcrossRemove(t *testing.T) {
	dir := t.TempDir()
	all := threeRuns(t, dir)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	got := make(chan Event, 100)
	go Follow(ctx, filepath.Join(dir, EventsFile), 0, func(e Event) error { got <- e; return nil })
	for range all {
		select {
		case <-got:
		case <-time.After(10 * time.Second):
			t.Fatal("Follow delivered nothing")
		}
	}
	if _, err := Remove(dir, ofRun("run-1")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * FollowInterval)
	w, err := Open(dir, "run-4")
	if err != nil {
		t.Fatal(err)
	}
	appendT(t, w, "", RunStartedData{})
	w.Close()
	select {
	case e := <-got:
		if e.Run != "run-4" {
			t.Fatalf("after the Remove, Follow delivered %s's event %d again", e.Run, e.Seq)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Follow delivered nothing after the Remove")
	}
}

// TestFollowAcrossANewJournal: a journal replaced by another (a new .set),
// which has Seqs the follower delivered already, is followed from its
// start.
func TestFollowAcrossANewJournal(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	all := threeRuns(t, dir)
	fresh := threeRuns(t, other)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	got := make(chan Event, 100)
	go Follow(ctx, filepath.Join(dir, EventsFile), 0, func(e Event) error { got <- e; return nil })
	for range all {
		<-got
	}
	if err := os.Rename(filepath.Join(other, EventsFile), filepath.Join(dir, EventsFile)); err != nil {
		t.Fatal(err)
	}
	for range fresh {
		select {
		case <-got:
		case <-time.After(10 * time.Second):
			t.Fatal("Follow did not start over on the new journal")
		}
	}
}

package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/set-engine/set/engine/redact"
)

func openT(t *testing.T, dir string, opts ...Option) *Writer {
	t.Helper()
	w, err := Open(dir, "run-1", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func appendT(t *testing.T, w *Writer, change string, p Payload) Event {
	t.Helper()
	e, err := w.Append(change, p)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func readT(t *testing.T, path string) []Event {
	t.Helper()
	events, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

func seqs(events []Event) []int64 {
	var s []int64
	for _, e := range events {
		s = append(s, e.Seq)
	}
	return s
}

func TestAppendFillsEvent(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 5, 1, 12, 0, 0, 5, time.FixedZone("X", 3600))
	w := openT(t, dir, WithClock(func() time.Time { return at }))
	e := appendT(t, w, "add-login", StateChangeData{From: "pending", To: "dispatched"})
	want := Event{
		Seq:    1,
		Time:   at.UTC(),
		Type:   StateChange,
		Run:    "run-1",
		Change: "add-login",
		Data:   []byte(`{"from":"pending","to":"dispatched"}`),
	}
	if !reflect.DeepEqual(e, want) {
		t.Fatalf("Append returned\n%+v\nwant\n%+v", e, want)
	}
	got := readT(t, filepath.Join(dir, EventsFile))
	if !reflect.DeepEqual(got, []Event{want}) {
		t.Fatalf("events.jsonl holds\n%+v\nwant\n%+v", got, want)
	}
	d, err := Decode[StateChangeData](got[0])
	if err != nil || d.To != "dispatched" {
		t.Fatalf("Decode = %+v, %v", d, err)
	}
	if w.LastSeq() != 1 {
		t.Fatalf("LastSeq = %d", w.LastSeq())
	}
}

func TestConcurrentAppend(t *testing.T) {
	dir := t.TempDir()
	w := openT(t, dir)
	const workers, each = 8, 25
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		returned = map[int64]bool{}
	)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			change := fmt.Sprintf("change-%d", i)
			for j := range each {
				e, err := w.Append(change, AgentIterationData{Iteration: j + 1})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if returned[e.Seq] {
					t.Errorf("seq %d returned twice", e.Seq)
				}
				returned[e.Seq] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()

	all := readT(t, filepath.Join(dir, EventsFile))
	if len(all) != workers*each {
		t.Fatalf("events.jsonl holds %d events, want %d", len(all), workers*each)
	}
	for i, e := range all {
		if e.Seq != int64(i+1) {
			t.Fatalf("line %d holds seq %d", i+1, e.Seq)
		}
		if !returned[e.Seq] {
			t.Fatalf("seq %d in the file was never returned", e.Seq)
		}
	}
	for i := range workers {
		change := fmt.Sprintf("change-%d", i)
		var want []Event
		for _, e := range all {
			if e.Change == change {
				want = append(want, e)
			}
		}
		got := readT(t, ChangeJournal(dir, change))
		if len(got) != each || !reflect.DeepEqual(got, want) {
			t.Fatalf("journal of %s holds seqs %v, want %v", change, seqs(got), seqs(want))
		}
		// Iterations of one goroutine stay in its order.
		for j, e := range got {
			d, err := Decode[AgentIterationData](e)
			if err != nil || d.Iteration != j+1 {
				t.Fatalf("%s event %d: iteration %d, %v", change, j, d.Iteration, err)
			}
		}
	}
}

func TestReopenContinuesSeq(t *testing.T) {
	dir := t.TempDir()
	w := openT(t, dir)
	appendT(t, w, "", RunStartedData{PID: 1})
	appendT(t, w, "a", MergedData{Commit: "c1"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append("", RunFinishedData{}); err == nil {
		t.Fatal("Append after Close succeeded")
	}

	w2 := openT(t, dir)
	if w2.LastSeq() != 2 {
		t.Fatalf("LastSeq after reopen = %d, want 2", w2.LastSeq())
	}
	if e := appendT(t, w2, "a", ArchivedData{Commit: "c2"}); e.Seq != 3 {
		t.Fatalf("first seq after reopen = %d, want 3", e.Seq)
	}
	if got := seqs(readT(t, filepath.Join(dir, EventsFile))); !reflect.DeepEqual(got, []int64{1, 2, 3}) {
		t.Fatalf("seqs = %v", got)
	}
	if got := seqs(readT(t, ChangeJournal(dir, "a"))); !reflect.DeepEqual(got, []int64{2, 3}) {
		t.Fatalf("journal seqs = %v", got)
	}
}

func TestTornLastLine(t *testing.T) {
	dir := t.TempDir()
	w := openT(t, dir)
	appendT(t, w, "a", MergedData{Commit: "c1"})
	appendT(t, w, "a", MergedData{Commit: "c2"})
	w.Close()

	path := filepath.Join(dir, EventsFile)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A crash in the middle of writing event 3.
	torn := `{"seq":3,"time":"2026-05-01T12:00:00Z","type":"MERGED","ru`
	if err := os.WriteFile(path, append(bytes.Clone(good), torn...), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := seqs(readT(t, path)); !reflect.DeepEqual(got, []int64{1, 2}) {
		t.Fatalf("ReadFile seqs = %v, want [1 2]", got)
	}

	w2 := openT(t, dir)
	after, _ := os.ReadFile(path)
	if !bytes.Equal(after, good) {
		t.Fatalf("Open left\n%s\nwant the torn line truncated away:\n%s", after, good)
	}
	if e := appendT(t, w2, "a", ArchivedData{}); e.Seq != 3 {
		t.Fatalf("seq after torn line = %d, want 3", e.Seq)
	}
	if got := seqs(readT(t, path)); !reflect.DeepEqual(got, []int64{1, 2, 3}) {
		t.Fatalf("seqs = %v", got)
	}
}

func TestLostNewlineIsKept(t *testing.T) {
	dir := t.TempDir()
	w := openT(t, dir)
	appendT(t, w, "", RunStartedData{})
	appendT(t, w, "", RunFinishedData{Result: "success"})
	w.Close()
	path := filepath.Join(dir, EventsFile)
	data, _ := os.ReadFile(path)
	// The crash came after the object, before its newline.
	os.WriteFile(path, bytes.TrimSuffix(data, []byte("\n")), 0o644)

	if got := seqs(readT(t, path)); !reflect.DeepEqual(got, []int64{1, 2}) {
		t.Fatalf("ReadFile seqs = %v, want [1 2]", got)
	}
	w2 := openT(t, dir)
	if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
		t.Fatalf("Open did not restore the newline:\n%s", after)
	}
	if e := appendT(t, w2, "", RunStartedData{}); e.Seq != 3 {
		t.Fatalf("seq = %d, want 3", e.Seq)
	}
}

func TestCorruptMiddleLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, EventsFile)
	lines := `{"seq":1,"time":"2026-05-01T12:00:00Z","type":"RUN_STARTED","run":"r","data":{}}
{"seq":2,"time":"2026-05-01T12:00:00Z","type":"RUN_STARTED","run":"r","data":{}}
{"seq":3, oops
{"seq":4,"time":"2026-05-01T12:00:00Z","type":"RUN_STARTED","run":"r","data":{}}
`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(path)
	if err == nil || !strings.Contains(err.Error(), path+":3: invalid event") {
		t.Fatalf("ReadFile error = %v, want one naming %s:3", err, path)
	}
	if _, err := Open(dir, "r"); err == nil || !strings.Contains(err.Error(), path+":3:") {
		t.Fatalf("Open error = %v, want one naming %s:3", err, path)
	}
	if after, _ := os.ReadFile(path); string(after) != lines {
		t.Fatal("Open changed a corrupt journal")
	}

	// A line that is JSON but not an event is corrupt too.
	os.WriteFile(path, []byte("{}\n"), 0o644)
	if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), ":1: invalid event") {
		t.Fatalf("ReadFile error = %v", err)
	}
}

func TestChangeJournalRepairedOnOpen(t *testing.T) {
	dir := t.TempDir()
	jpath, want := journalOfA(t, dir)

	// The crash came between the write to events.jsonl and the write of
	// the change journal, in the middle of the latter.
	first := bytes.SplitAfter(want, []byte("\n"))[0]
	os.WriteFile(jpath, append(bytes.Clone(first), `{"seq":3,"ti`...), 0o644)

	openT(t, dir)
	if got, _ := os.ReadFile(jpath); !bytes.Equal(got, want) {
		t.Fatalf("repaired journal:\n%s\nwant:\n%s", got, want)
	}
}

func TestAppendRefusesPathNames(t *testing.T) {
	dir := t.TempDir()
	w := openT(t, dir)
	for _, name := range []string{"../x", "a/b", "..", `a\b`} {
		if _, err := w.Append(name, MergedData{}); err == nil {
			t.Errorf("Append(%q) succeeded", name)
		}
	}
	if e := appendT(t, w, "ok", MergedData{}); e.Seq != 1 {
		t.Fatalf("refused names used seqs: next is %d", e.Seq)
	}
}

func TestSubscribe(t *testing.T) {
	w := openT(t, t.TempDir())
	ch, cancel := w.Subscribe()
	e1 := appendT(t, w, "a", MergedData{Commit: "c1"})
	e2 := appendT(t, w, "", MonitorHeartbeatData{})
	for _, want := range []Event{e1, e2} {
		select {
		case got := <-ch:
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("received %+v, want %+v", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no event received")
		}
	}
	if w.Lagged(ch) {
		t.Fatal("subscriber lagged")
	}
	cancel()
	cancel() // a second cancel is harmless
	if _, ok := <-ch; ok {
		t.Fatal("channel open after cancel")
	}
	appendT(t, w, "a", MergedData{}) // no subscriber left

	// Close ends the remaining subscriptions.
	ch2, _ := w.Subscribe()
	w.Close()
	if _, ok := <-ch2; ok {
		t.Fatal("channel open after Close")
	}
}

func TestSlowSubscriberDoesNotBlock(t *testing.T) {
	w := openT(t, t.TempDir())
	w.subBuf = 2
	ch, cancel := w.Subscribe()
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 5 {
			if _, err := w.Append("", MonitorHeartbeatData{}); err != nil {
				t.Error(err)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Append blocked on a full subscriber")
	}
	if !w.Lagged(ch) {
		t.Fatal("subscriber not marked lagged")
	}
	if got := []int64{(<-ch).Seq, (<-ch).Seq}; !reflect.DeepEqual(got, []int64{1, 2}) {
		t.Fatalf("buffered seqs = %v", got)
	}
	// After the gap, delivery resumes.
	e := appendT(t, w, "", MonitorHeartbeatData{})
	if got := <-ch; got.Seq != e.Seq {
		t.Fatalf("after the gap got seq %d, want %d", got.Seq, e.Seq)
	}
}

func TestFollow(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, EventsFile)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	got := make(chan Event, 100)
	errc := make(chan error, 1)
	// Follow starts before the journal exists, and skips seq 1.
	go func() {
		errc <- Follow(ctx, path, 1, func(e Event) error {
			got <- e
			return nil
		})
	}()
	next := func() Event {
		t.Helper()
		select {
		case e := <-got:
			return e
		case err := <-errc:
			t.Fatalf("Follow returned early: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("Follow delivered nothing")
		}
		return Event{}
	}

	w := openT(t, dir)
	appendT(t, w, "", RunStartedData{})
	e2 := appendT(t, w, "a", MergedData{Commit: "c"})
	if e := next(); !reflect.DeepEqual(e, e2) {
		t.Fatalf("Follow delivered %+v, want %+v", e, e2)
	}
	// A line being written is not delivered until its newline.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	line := `{"seq":3,"time":"2026-05-01T12:00:00Z","type":"RUN_FINISHED","run":"r","data":{"result":"success"}}`
	f.WriteString(line[:40])
	time.Sleep(3 * FollowInterval)
	f.WriteString(line[40:] + "\n")
	f.Close()
	if e := next(); e.Seq != 3 || e.Type != RunFinished {
		t.Fatalf("Follow delivered %+v, want seq 3", e)
	}
	select {
	case e := <-got:
		t.Fatalf("extra event %+v", e)
	default:
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow returned %v, want context.Canceled", err)
	}
}

func TestFollowStopsOnCallbackError(t *testing.T) {
	dir := t.TempDir()
	w := openT(t, dir)
	appendT(t, w, "", RunStartedData{})
	stop := errors.New("stop")
	err := Follow(t.Context(), filepath.Join(dir, EventsFile), 0, func(Event) error { return stop })
	if err != stop {
		t.Fatalf("Follow = %v, want the callback's error", err)
	}
}

func TestRedactorMasksEventData(t *testing.T) {
	dir := t.TempDir()
	w := openT(t, dir, WithRedactor(redact.New([]string{"MY_TOKEN=planted-token-abcdef"}, nil)))
	ch, stop := w.Subscribe()
	defer stop()
	e := appendT(t, w, "add-login", RetryScheduledData{Stage: "verify", Attempt: 1, Budget: 2,
		Reason: "exit code 1", RetryContext: "MY_TOKEN=planted-token-abcdef\n\"quoted\" <b>"})
	want := `{"attempt":1,"budget":2,"reason":"exit code 1","retryContext":"MY_TOKEN=[REDACTED]\n\"quoted\" \u003cb\u003e","stage":"verify"}`
	if string(e.Data) != want {
		t.Errorf("Append returned data %s\nwant %s", e.Data, want)
	}
	if got := <-ch; string(got.Data) != want {
		t.Errorf("subscriber saw %s", got.Data)
	}
	for _, f := range []string{EventsFile, filepath.Join(JournalsDir, "add-login.jsonl")} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "planted-token-abcdef") || !strings.Contains(string(data), "[REDACTED]") {
			t.Errorf("%s = %s", f, data)
		}
	}
	// An event without secrets keeps its bytes (and field order).
	e = appendT(t, w, "add-login", StateChangeData{From: "pending", To: "dispatched"})
	if string(e.Data) != `{"from":"pending","to":"dispatched"}` {
		t.Errorf("clean event data = %s", e.Data)
	}
}

// TestGroupCommit holds the commit of one event in its commit hook while
// more Appends arrive: they are committed together, in one write of
// events.jsonl (the hook of the first of them finds all of them there),
// and none of them returns, nor is seen by the hook, before that.
func TestGroupCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, EventsFile)
	release := make(chan struct{})
	var seen []int64
	var linesAt []int // lines of events.jsonl when the hook saw each event
	w := openT(t, dir, OnCommit(func(e Event) error {
		if e.Seq == 1 {
			<-release
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		seen = append(seen, e.Seq)
		linesAt = append(linesAt, bytes.Count(data, []byte("\n")))
		return nil
	}))
	const more = 5
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := w.Append("a", MergedData{Commit: "first"}); err != nil {
			t.Error(err)
		}
	}()
	waitFor(t, w, func() bool { return w.committing })
	returned := make(chan int64, more)
	for i := range more {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := w.Append(fmt.Sprintf("c%d", i), MergedData{})
			if err != nil {
				t.Error(err)
			}
			returned <- e.Seq
		}()
	}
	waitFor(t, w, func() bool { return len(w.pending) == more })
	select {
	case seq := <-returned:
		t.Fatalf("Append of event %d returned before its commit", seq)
	default:
	}
	if w.LastSeq() != 0 {
		t.Fatalf("LastSeq = %d before the first commit ended", w.LastSeq())
	}
	close(release)
	wg.Wait()
	if !reflect.DeepEqual(seen, []int64{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("the hook saw %v, want Seq order", seen)
	}
	if !reflect.DeepEqual(linesAt, []int{1, 6, 6, 6, 6, 6}) {
		t.Fatalf("events.jsonl held %v lines as the hook saw each event, want [1 6 6 6 6 6]: the five were not committed together", linesAt)
	}
	if w.LastSeq() != 6 {
		t.Fatalf("LastSeq = %d, want 6", w.LastSeq())
	}
}

// waitFor waits until cond, evaluated under w's lock, holds.
func waitFor(t *testing.T, w *Writer, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		w.mu.Lock()
		ok := cond()
		w.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestCommitHookError: an event the commit hook fails on is committed all
// the same, returned with the error, and the Writer goes on.
func TestCommitHookError(t *testing.T) {
	dir := t.TempDir()
	bad := errors.New("projection refused it")
	w := openT(t, dir, OnCommit(func(e Event) error {
		if e.Seq == 1 {
			return bad
		}
		return nil
	}))
	e, err := w.Append("a", MergedData{})
	if !errors.Is(err, bad) || e.Seq != 1 {
		t.Fatalf("Append = %+v, %v; want event 1 with the hook's error", e, err)
	}
	if e := appendT(t, w, "a", ArchivedData{}); e.Seq != 2 {
		t.Fatalf("next seq = %d", e.Seq)
	}
	if got := seqs(readT(t, filepath.Join(dir, EventsFile))); !reflect.DeepEqual(got, []int64{1, 2}) {
		t.Fatalf("seqs = %v", got)
	}
}

// TestCorruptChangeJournalRebuilt: a change journal, written without
// fsync, that a machine crash damaged is written again from events.jsonl.
func TestCorruptChangeJournalRebuilt(t *testing.T) {
	dir := t.TempDir()
	jpath, want := journalOfA(t, dir)
	os.WriteFile(jpath, []byte("\x00\x00\x00\x00\n{\"seq\":3}\n"), 0o644)

	openT(t, dir)
	if got, _ := os.ReadFile(jpath); !bytes.Equal(got, want) {
		t.Fatalf("rebuilt journal:\n%q\nwant:\n%q", got, want)
	}
}

// journalOfA journals two events of change a and one of b in dir, and
// returns a's change journal and what it holds, for a test to damage.
func journalOfA(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	w := openT(t, dir)
	appendT(t, w, "a", MergedData{Commit: "c1"})
	appendT(t, w, "b", MergedData{Commit: "c2"})
	appendT(t, w, "a", ArchivedData{Commit: "c3"})
	w.Close()
	jpath := ChangeJournal(dir, "a")
	want, err := os.ReadFile(jpath)
	if err != nil {
		t.Fatal(err)
	}
	return jpath, want
}

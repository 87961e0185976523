package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/set-engine/set/engine/atomicfile"
	"github.com/set-engine/set/engine/redact"
)

// File names inside the run directory (.set).
const (
	// EventsFile holds every event of the project, in Seq order.
	EventsFile = "events.jsonl"
	// JournalsDir holds one journal per change: JournalsDir/<change>.jsonl.
	JournalsDir = "journals"
)

// ChangeJournal is the path of a change's own journal in setDir.
func ChangeJournal(setDir, change string) string {
	return filepath.Join(setDir, JournalsDir, change+".jsonl")
}

// SubscriberBuffer is how many events a subscriber's channel holds.
const SubscriberBuffer = 1024

var errClosed = errors.New("journal: writer is closed")

// Writer appends events to a run directory's journal files. It is safe for
// concurrent use.
//
// Invariants, for the events.jsonl of one run directory:
//   - Seq is 1 for the first event ever written and grows by exactly one
//     per event, across runs; file order is Seq order. (Remove takes
//     whole runs out and keeps the Seqs of the rest: a journal may then
//     start above 1, or have gaps, and Seq goes on from its highest.)
//   - An event is committed once its line, newline included, is written
//     and fsync'd; Append returns only after that, and only a committed
//     event reaches the commit hook (OnCommit) and the subscribers.
//   - Group commit: the events whose Appends arrive while a commit is
//     under way are committed together, with one write and one fsync, by
//     one of their Appends (commits never overlap and go in Seq order).
//   - journals/<change>.jsonl holds the lines of events.jsonl that name
//     that change, byte for byte and in the same order, or a prefix of
//     them: it is derived from events.jsonl, the truth, and never ahead
//     of it, because a line is written there only once the fsync of
//     events.jsonl that covers it returned. It has no fsync of its own
//     (a crash can leave it behind); Open brings it back in line.
//
// Only one Writer may be open on a run directory at a time, across
// processes; the caller holds the run lock (state.AcquireLock) for that.
// (redact.Writer is an io.Writer that masks secrets, another thing.)
type Writer struct {
	setDir string
	run    string
	now    func() time.Time
	subBuf int
	redact *redact.Redactor // nil: events are written as given
	// onCommit, if set, sees every committed event (see OnCommit).
	onCommit func(Event) error

	mu sync.Mutex
	// committed is broadcast when a commit ends, committed or failed,
	// and so whenever committing, pending or durable change.
	committed *sync.Cond
	events    *os.File
	journals  map[string]*os.File
	// seq is the Seq of the last event given out; durable that of the last
	// committed event. Events durable+1…seq are in pending, in Seq order,
	// or in the batch being committed.
	seq, durable int64
	pending      []*pendingEvent
	// committing is set while one Append commits a batch, with w.mu
	// released for the I/O.
	committing bool
	err        error // sticky: the first I/O error; no append succeeds after it
	closed     bool
	subs       map[*subscriber]struct{}
}

// pendingEvent is an event given its Seq, waiting for its commit.
type pendingEvent struct {
	e       Event
	line    []byte
	journal *os.File // the change's journal; nil for an event of the run
	// err is what went wrong after the event was committed: its change
	// journal, or the commit hook. Its Append returns it with the event.
	err error
}

type subscriber struct {
	ch chan Event
	// lagged is set once an event was dropped because ch was full.
	lagged bool
}

// OnCommit makes the Writer call fn with every event once it is committed,
// in Seq order, before the event's Append returns and before subscribers
// get it: what fn records of an event is there when its Append returns.
// fn runs in the goroutine that commits the event's batch (another
// Append's, perhaps), one call at a time, and commits wait for it; it must
// not call the Writer. An error of fn is returned by the event's Append,
// with the event, which stays committed.
func OnCommit(fn func(Event) error) Option {
	return func(w *Writer) { w.onCommit = fn }
}

// Option configures a Writer.
type Option func(*Writer)

// WithClock makes the Writer take event times from now instead of
// time.Now. Times are stored in UTC. No run sets it: it is for the tests
// of the packages that read journals (state, dashboard), which need
// stable times, and so it cannot live in a _test.go file.
func WithClock(now func() time.Time) Option {
	return func(w *Writer) { w.now = now }
}

// WithRedactor makes the Writer mask the secrets r finds in every
// event's data before the event is written, published or returned: no
// journal line, and so no state projected from one, holds them.
func WithRedactor(r *redact.Redactor) Option {
	return func(w *Writer) { w.redact = r }
}

// Open opens the journal of the run directory setDir (creating it, its
// events.jsonl and its journals/ directory as needed) for appending events
// of the run named run. Seq continues from the last event in the file.
//
// Open repairs what a crash during an Append can leave: a torn final line
// of a journal file is truncated away, a final event that lost only its
// newline gets it back, and a change journal missing the last events of its
// change (the crash came between the two writes) gets them appended. A
// corrupt line anywhere else is an error: Open never appends after it.
func Open(setDir, run string, opts ...Option) (*Writer, error) {
	w := &Writer{
		setDir:   setDir,
		run:      run,
		now:      time.Now,
		subBuf:   SubscriberBuffer,
		journals: map[string]*os.File{},
		subs:     map[*subscriber]struct{}{},
	}
	w.committed = sync.NewCond(&w.mu)
	for _, o := range opts {
		o(w)
	}
	if err := os.MkdirAll(filepath.Join(setDir, JournalsDir), 0o755); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := atomicfile.SyncDir(setDir); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := w.open(); err != nil {
		w.closeFiles()
		return nil, err
	}
	return w, nil
}

func (w *Writer) open() error {
	path := filepath.Join(w.setDir, EventsFile)
	f, err := openAppend(path)
	if err != nil {
		return err
	}
	w.events = f
	// first and last are the Seqs of the first and the last event of each
	// change.
	first, last := map[string]int64{}, map[string]int64{}
	w.seq, err = recoverFile(f, path, func(_ []byte, e Event) error {
		if e.Change != "" {
			last[e.Change] = e.Seq
			if first[e.Change] == 0 {
				first[e.Change] = e.Seq
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	w.durable = w.seq
	if err := removeStrayJournals(w.setDir, last); err != nil {
		return err
	}

	// behind is, for each change journal that misses events, the Seq of
	// the last event it holds.
	behind := map[string]int64{}
	for change, seq := range last {
		jf, err := w.journal(change)
		if err != nil {
			return err
		}
		jpath := jf.Name()
		var from int64 // the Seq of its first event
		have, err := recoverFile(jf, jpath, func(_ []byte, e Event) error {
			if from == 0 {
				from = e.Seq
			}
			return nil
		})
		if errors.Is(err, errCorrupt) || (err == nil && from != 0 && from != first[change]) {
			// Written without fsync, a change journal can come back from a
			// machine crash with any unsynced part damaged; one that
			// starts elsewhere than its change's first event still has
			// events a Remove killed half-way took out of events.jsonl. It
			// is derived from events.jsonl: it is written again from there.
			err, have = nil, 0
			if err = jf.Truncate(0); err != nil {
				err = fmt.Errorf("journal: %w", err)
			}
		}
		if err != nil {
			return err
		}
		if have < seq {
			behind[change] = have
		}
	}
	if len(behind) == 0 {
		return nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	_, err = scan(f, path, func(raw []byte, e Event) error {
		have, ok := behind[e.Change]
		if !ok || e.Seq <= have {
			return nil
		}
		_, err := w.journals[e.Change].Write(raw)
		return err
	})
	if err != nil {
		return fmt.Errorf("journal: repair change journals: %w", err)
	}
	for change := range behind {
		if err := w.journals[change].Sync(); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	return nil
}

// removeStrayJournals deletes the change journals of setDir whose change
// has no event in events.jsonl (last holds those that do): a Remove
// killed half-way leaves the journals of changes only removed runs had,
// which a later run's events of a change of that name must not follow.
func removeStrayJournals(setDir string, last map[string]int64) error {
	dir := filepath.Join(setDir, JournalsDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	removed := false
	for _, ent := range entries {
		change, ok := strings.CutSuffix(ent.Name(), ".jsonl")
		if !ok || ent.IsDir() || last[change] != 0 {
			continue
		}
		if err := os.Remove(filepath.Join(dir, ent.Name())); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		removed = true
	}
	if !removed {
		return nil
	}
	return atomicfile.SyncDir(dir)
}

// openAppend opens path for reading and appending, creating it (and
// syncing its directory, so the new name survives a crash) if needed.
func openAppend(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if errors.Is(err, os.ErrNotExist) {
		f, err = os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			err = atomicfile.SyncDir(filepath.Dir(path))
			if err != nil {
				f.Close()
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return f, nil
}

// recoverFile reads the journal file f from its start, calling fn for each
// event, and repairs its end: a torn final line is truncated away, a final
// event without newline gets its newline. It returns the highest Seq in the
// file.
func recoverFile(f *os.File, name string, fn func(raw []byte, e Event) error) (int64, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("journal: %w", err)
	}
	var maxSeq int64
	res, err := scan(f, name, func(raw []byte, e Event) error {
		maxSeq = max(maxSeq, e.Seq)
		return fn(raw, e)
	})
	if err != nil {
		return 0, fmt.Errorf("journal: %w", err)
	}
	switch {
	case res.tail == nil:
		return maxSeq, nil
	case res.tailEvent != nil:
		_, err = f.Write([]byte{'\n'})
	default:
		err = f.Truncate(res.end)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		return 0, fmt.Errorf("journal: repair %s: %w", name, err)
	}
	return maxSeq, nil
}

// checkChange refuses change names that could leave the journals
// directory. Callers validate names (kebab-case) before; this is the last
// line of defence for the path.
func checkChange(change string) error {
	if strings.ContainsAny(change, `/\`+"\x00") || strings.Contains(change, "..") {
		return fmt.Errorf("journal: invalid change name %q", change)
	}
	return nil
}

// journal returns the open journal file of change. w.mu is held, or w is
// not yet shared.
func (w *Writer) journal(change string) (*os.File, error) {
	if f, ok := w.journals[change]; ok {
		return f, nil
	}
	if err := checkChange(change); err != nil {
		return nil, err
	}
	path := ChangeJournal(w.setDir, change)
	f, err := openAppend(path)
	if err != nil {
		return nil, err
	}
	w.journals[change] = f
	return f, nil
}

// Append commits one event of change ("" for an event of the whole run)
// with payload p, and returns it once it is committed: its line written
// and fsync'd to events.jsonl (together with the lines of the Appends that
// arrived meanwhile, see Writer), then written to journals/<change>.jsonl
// and handed to the commit hook and the subscribers.
//
// After any I/O error the Writer refuses every further Append (reopen it to
// repair the files). If only the change journal failed, or the commit
// hook, the event is committed all the same: it is returned, with the
// error.
func (w *Writer) Append(change string, p Payload) (Event, error) {
	if p == nil {
		return Event{}, errors.New("journal: nil payload")
	}
	if err := checkChange(change); err != nil {
		return Event{}, err
	}
	data, err := json.Marshal(p)
	if err == nil {
		data, err = w.redact.JSON(data)
	}
	if err != nil {
		return Event{}, fmt.Errorf("journal: %s: %w", p.EventType(), err)
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return Event{}, errClosed
	}
	if w.err != nil {
		return Event{}, w.err
	}
	e := Event{
		Seq:    w.seq + 1,
		Time:   w.now().UTC(),
		Type:   p.EventType(),
		Run:    w.run,
		Change: change,
		Data:   data,
	}
	line, err := json.Marshal(e)
	if err != nil {
		return Event{}, fmt.Errorf("journal: %s: %w", e.Type, err)
	}
	// A change journal is opened before the event takes its Seq, so that
	// a bad name or an unopenable file costs no Seq.
	pe := &pendingEvent{e: e, line: append(line, '\n')}
	if change != "" {
		if pe.journal, err = w.journal(change); err != nil {
			return Event{}, err
		}
	}
	w.seq = e.Seq
	w.pending = append(w.pending, pe)
	// Either a commit under way takes this event in its successor, or
	// this Append commits it itself, with whatever else is pending.
	for w.durable < e.Seq && w.err == nil {
		if w.committing {
			w.committed.Wait()
			continue
		}
		w.commit()
	}
	if w.durable < e.Seq {
		return Event{}, w.err
	}
	return pe.e, pe.err
}

// commit commits every pending event, as one batch: one write and one
// fsync of events.jsonl, then the change journals' lines, the commit
// hook and the subscribers, in Seq order. w.mu is held on entry and on
// return, and released for the I/O; committing keeps other commits out
// meanwhile (and Close waits for it).
func (w *Writer) commit() {
	batch := w.pending
	w.pending = nil
	w.committing = true
	w.mu.Unlock()

	var buf []byte
	for _, pe := range batch {
		buf = append(buf, pe.line...)
	}
	first, last := batch[0].e.Seq, batch[len(batch)-1].e.Seq
	_, err := w.events.Write(buf)
	if err == nil {
		err = w.events.Sync()
	}
	var journalErr error
	if err == nil {
		// Committed: only now may the change journals have the lines.
		// After a failed write the other lines of the batch go unwritten
		// too, so that no change journal gets a gap; Open fills them in.
		for _, pe := range batch {
			if pe.journal == nil {
				continue
			}
			if journalErr == nil {
				if _, jerr := pe.journal.Write(pe.line); jerr != nil {
					journalErr = fmt.Errorf("journal: append event %d to %s: %w", pe.e.Seq, pe.journal.Name(), jerr)
				}
			}
			pe.err = journalErr
		}
		if w.onCommit != nil {
			for _, pe := range batch {
				if herr := w.onCommit(pe.e); herr != nil && pe.err == nil {
					pe.err = herr
				}
			}
		}
	}

	w.mu.Lock()
	w.committing = false
	defer w.committed.Broadcast()
	if err != nil {
		// Nothing of the batch, nor of what queued behind it, is committed.
		w.err = fmt.Errorf("journal: append events %d–%d: %w", first, last, err)
		w.pending = nil
		return
	}
	w.durable = last
	if journalErr != nil {
		w.err = journalErr
	}
	for _, pe := range batch {
		w.publish(pe.e)
	}
}

// LastSeq is the Seq of the last committed event (0 for an empty journal).
func (w *Writer) LastSeq() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.durable
}

// Subscribe returns a channel that receives every event committed after
// the call, in Seq order, and a function that ends the subscription and
// closes the channel (Close ends every subscription too).
//
// Append never blocks on a subscriber: when a subscriber's channel is full
// (SubscriberBuffer events), the event is dropped for that subscriber, which
// is then lagged (see Lagged). A lagged subscriber sees a gap in Seq and,
// if it needs every event, reads the missing ones from events.jsonl.
func (w *Writer) Subscribe() (<-chan Event, func()) {
	s := &subscriber{ch: make(chan Event, w.subBuf)}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		close(s.ch)
		return s.ch, func() {}
	}
	w.subs[s] = struct{}{}
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			if _, ok := w.subs[s]; ok {
				delete(w.subs, s)
				close(s.ch)
			}
		})
	}
}

// Lagged reports whether an event was dropped for the subscription whose
// channel is ch because the channel was full.
func (w *Writer) Lagged(ch <-chan Event) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for s := range w.subs {
		if (<-chan Event)(s.ch) == ch {
			return s.lagged
		}
	}
	return false
}

// publish hands e to every subscriber without blocking. w.mu is held, so
// channels are neither closed during a send nor sent to out of Seq order.
func (w *Writer) publish(e Event) {
	for s := range w.subs {
		select {
		case s.ch <- e:
		default:
			s.lagged = true
		}
	}
}

// Close ends every subscription and closes the journal files, once the
// Appends under way have returned. Appending after Close is an error;
// closing twice is not.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	for w.committing || len(w.pending) > 0 {
		w.committed.Wait()
	}
	for s := range w.subs {
		close(s.ch)
	}
	w.subs = nil
	return w.closeFiles()
}

func (w *Writer) closeFiles() error {
	var errs []error
	if w.events != nil {
		errs = append(errs, w.events.Close())
	}
	for _, f := range w.journals {
		errs = append(errs, f.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

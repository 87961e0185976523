package journal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// A journal file is JSONL: one Event per line, each line ended by '\n'.
// Writers write a whole line, newline included, with a single write and
// fsync it before the next one, so the only damage a crash can leave is a
// torn final line: bytes of one event without its newline. A final line
// without newline that still decodes as an event lost only its newline (the
// JSON object is complete, since no proper prefix of an object is valid
// JSON); one that does not decode is torn, and every reader treats it as
// never written.

// parseLine decodes one journal line (with or without its newline).
func parseLine(raw []byte) (Event, error) {
	raw = bytes.TrimRight(raw, "\r\n")
	var e Event
	if err := json.Unmarshal(raw, &e); err != nil {
		return Event{}, err
	}
	if e.Seq < 1 {
		return Event{}, fmt.Errorf("event without a positive seq")
	}
	if e.Type == "" {
		return Event{}, fmt.Errorf("event %d has no type", e.Seq)
	}
	return e, nil
}

// blank reports whether a line holds only white space; such lines carry no
// event and are skipped.
func blank(raw []byte) bool { return len(bytes.TrimSpace(raw)) == 0 }

// ReadFile reads the journal at path. A torn final line (no newline at EOF
// and not a valid event) is ignored: it is an append that a crash cut
// short. Any other line that is not a valid event is an error naming the
// file and the line number.
func ReadFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var events []Event
	_, err = scan(f, path, func(_ []byte, e Event) error {
		events = append(events, e)
		return nil
	})
	return events, err
}

// errCorrupt is a line of a journal file, not its last, that is no event.
var errCorrupt = errors.New("invalid event")

// scanResult describes the end of a journal file.
type scanResult struct {
	// end is the offset just past the last complete event line.
	end int64
	// tail is the final line when it has no newline: it is either
	// torn (tailEvent is nil) or an event that lost only its newline.
	tail      []byte
	tailEvent *Event
}

// scan reads every line of r, from its current position, calling fn for
// each event in file order; raw is the line as stored, newline included
// (except for an unterminated final event). Blank lines are skipped.
func scan(r io.Reader, name string, fn func(raw []byte, e Event) error) (scanResult, error) {
	var res scanResult
	br := bufio.NewReaderSize(r, 64<<10)
	for lineNo := 1; ; lineNo++ {
		raw, err := br.ReadBytes('\n')
		if err == io.EOF {
			if len(raw) == 0 || blank(raw) {
				res.end += int64(len(raw))
				return res, nil
			}
			res.tail = raw
			if e, perr := parseLine(raw); perr == nil {
				res.tailEvent = &e
				if err := fn(raw, e); err != nil {
					return res, err
				}
			}
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("%s: %w", name, err)
		}
		if !blank(raw) {
			e, perr := parseLine(raw)
			if perr != nil {
				return res, fmt.Errorf("%s:%d: %w: %v", name, lineNo, errCorrupt, perr)
			}
			if err := fn(raw, e); err != nil {
				return res, err
			}
		}
		res.end += int64(len(raw))
	}
}

// FollowInterval is how often Follow looks for new events.
const FollowInterval = 200 * time.Millisecond

// Follow tails the journal at path, calling fn, in file order, for every
// event with a Seq greater than fromSeq: first those already in the file,
// then each one appended later. A file that does not exist yet is waited
// for. Only newline-terminated lines are delivered, so a line being written
// is never seen half-written. If the file is replaced by the same journal
// less removed runs (Remove), Follow goes on after the last event it
// delivered; by another (a new .set), it starts over on it with fromSeq.
//
// Follow returns fn's first error, an error for a corrupt line, or ctx's
// error once ctx is done. It polls every FollowInterval: it serves
// `setctl events --follow`, not the engine, which uses Writer.Subscribe.
func Follow(ctx context.Context, path string, fromSeq int64, fn func(Event) error) error {
	t := &follower{path: path, fromSeq: fromSeq, last: fromSeq}
	ticker := time.NewTicker(FollowInterval)
	defer ticker.Stop()
	for {
		if err := t.poll(fn); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
	}
}

type follower struct {
	path    string
	fromSeq int64
	info    os.FileInfo // of the file being followed; nil before it exists
	off     int64       // just past the last complete line read
	line    int         // lines read up to off
	last    int64       // highest Seq delivered
	// lastLine is the line of the event last delivered, nil before one.
	lastLine []byte
}

func (t *follower) poll(fn func(Event) error) error {
	f, err := os.Open(t.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if t.info != nil && (!os.SameFile(t.info, info) || info.Size() < t.off) {
		// Another file now has this name: read it from its start. The
		// same journal, rewritten by Remove (it still holds the line of
		// the last event delivered, byte for byte), goes on after that
		// event; another journal (a new .set) starts over from fromSeq.
		t.off, t.line = 0, 0
		if !holdsLine(f, t.lastLine) {
			t.last, t.lastLine = t.fromSeq, nil
		}
	}
	t.info = info
	if info.Size() == t.off {
		return nil
	}
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		raw, err := br.ReadBytes('\n')
		if err == io.EOF {
			return nil // an unterminated line is read again next time
		}
		if err != nil {
			return fmt.Errorf("%s: %w", t.path, err)
		}
		t.line++
		t.off += int64(len(raw))
		if blank(raw) {
			continue
		}
		e, err := parseLine(raw)
		if err != nil {
			return fmt.Errorf("%s:%d: invalid event: %v", t.path, t.line, err)
		}
		if e.Seq <= t.last {
			continue
		}
		t.last, t.lastLine = e.Seq, bytes.TrimRight(raw, "\r\n")
		if err := fn(e); err != nil {
			return err
		}
	}
}

// holdsLine reports whether the journal f holds line (an event's line,
// without its newline), byte for byte; never a nil line.
func holdsLine(f *os.File, line []byte) bool {
	if line == nil {
		return false
	}
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		raw, err := br.ReadBytes('\n')
		if bytes.Equal(bytes.TrimRight(raw, "\r\n"), line) {
			return true
		}
		if err != nil {
			return false
		}
	}
}

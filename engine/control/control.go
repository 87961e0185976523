// Package control carries requests from other setctl processes (setctl
// pause, setctl resume, the dashboard) to the running apply, through one
// append-only file in the run directory: a requester appends a line, the
// apply reads the lines appended since it last looked; the apply answers
// each in the journal with a CONTROL event, which AwaitAnswer waits for.
// Nothing is signalled to a process, so a request reaches exactly the
// apply that holds the project's lock, and one that arrives while none
// runs is read by none.
//
// Invariant: a line is appended whole with one write to a file opened
// O_APPEND, and fsync'd, so a reader never sees half a request from a
// requester that finished; a line without its newline is not read until
// it has one.
package control

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"time"
)

// Actions of a request.
const (
	Pause  = "pause"
	Resume = "resume"
	// Stop stops the run as Ctrl-C does: agents and gates are ended,
	// nothing recorded is lost, no retry is spent, and the run is
	// recorded as interrupted; a later setctl apply continues it.
	Stop = "stop"
)

// Known reports whether action is one a Request may carry.
func Known(action string) bool {
	return action == Pause || action == Resume || action == Stop
}

// Request is one line of the control file (agent.Request and
// llm.Request are other things).
type Request struct {
	// ID tells the request apart: the apply journals it in its CONTROL
	// event, which the requester waits for.
	ID     string    `json:"id"`
	Time   time.Time `json:"time"`
	Action string    `json:"action"`
	// Change is the change asked for; "" asks for every change (--all).
	// A stop is for the whole run: it names none.
	Change string `json:"change,omitempty"`
	// By says who asked, for the journal: the requester and the user it
	// runs as, such as "setctl pause (user alice)" or "dashboard (user
	// alice, 127.0.0.1)".
	By string `json:"by,omitempty"`
}

// Append writes req to the control file at path, with a new ID when it
// has none, and returns it.
func Append(path string, req Request) (Request, error) {
	if req.ID == "" {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return req, err
		}
		req.ID = hex.EncodeToString(b[:])
	}
	line, err := json.Marshal(req)
	if err != nil {
		return req, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return req, err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return req, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return req, err
	}
	return req, f.Close()
}

// Reader reads the requests appended to a control file after it was
// opened. It is not safe for concurrent use.
type Reader struct {
	path   string
	offset int64
}

// NewReader starts reading path at its current end: requests written
// before the apply started were for no apply.
func NewReader(path string) *Reader {
	r := &Reader{path: path}
	if fi, err := os.Stat(path); err == nil {
		r.offset = fi.Size()
	}
	return r
}

// Next returns the complete requests appended since the last call. A
// line that does not decode is returned as an error after the requests
// before it, and skipped.
func (r *Reader) Next() ([]Request, error) {
	fi, err := os.Stat(r.path)
	if err != nil || fi.Size() <= r.offset {
		if fi != nil && fi.Size() < r.offset {
			r.offset = 0 // the file was replaced
		}
		return nil, nil
	}
	f, err := os.Open(r.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, fi.Size()-r.offset)
	n, err := f.ReadAt(data, r.offset)
	if err != nil && err != io.EOF {
		return nil, err
	}
	data = data[:n]
	var out []Request
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return out, nil
		}
		line := data[:i]
		data = data[i+1:]
		r.offset += int64(i + 1)
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var req Request
		if err := json.Unmarshal(line, &req); err != nil || !Known(req.Action) {
			return out, fmt.Errorf("%s: a request that is not one: %.200s", r.path, line)
		}
		out = append(out, req)
	}
}

// User is the name of the user this process runs as, for a request's By:
// the account's name, else $USER, else the numeric user ID.
func User() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if name := os.Getenv("USER"); name != "" {
		return name
	}
	return strconv.Itoa(os.Getuid())
}

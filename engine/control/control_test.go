package control

import (
	"os"
	"path/filepath"
	"testing"
)

// A reader sees the requests appended after it opened, each once; a line
// still without its newline waits; a line that is no request is an error
// after the requests before it, and skipped.
func TestReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "control.jsonl")
	if _, err := Append(path, Request{Action: Pause, Change: "old"}); err != nil {
		t.Fatal(err)
	}
	r := NewReader(path)
	if reqs, err := r.Next(); err != nil || len(reqs) != 0 {
		t.Fatalf("before any new request: %v, %v", reqs, err)
	}
	req, err := Append(path, Request{Action: Pause, Change: "greet"})
	if err != nil || req.ID == "" {
		t.Fatalf("append: %+v, %v", req, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString(`{"id":"x","action":"resume"`) // half a line
	reqs, err := r.Next()
	if err != nil || len(reqs) != 1 || reqs[0].ID != req.ID || reqs[0].Change != "greet" {
		t.Fatalf("first read: %+v, %v", reqs, err)
	}
	f.WriteString(",\"change\":\"greet\"}\nnot a request\n")
	reqs, err = r.Next()
	if err == nil || len(reqs) != 1 || reqs[0].Action != Resume {
		t.Fatalf("second read: %+v, %v", reqs, err)
	}
	if reqs, err = r.Next(); err != nil || len(reqs) != 0 {
		t.Fatalf("third read: %+v, %v", reqs, err)
	}
}

// A stop is a request, and who asked travels with every request.
func TestReaderStopAndBy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "control.jsonl")
	r := NewReader(path)
	if _, err := Append(path, Request{Action: Stop, By: "dashboard (user alice, 127.0.0.1)"}); err != nil {
		t.Fatal(err)
	}
	reqs, err := r.Next()
	if err != nil || len(reqs) != 1 || reqs[0].Action != Stop || reqs[0].By != "dashboard (user alice, 127.0.0.1)" {
		t.Fatalf("read: %+v, %v", reqs, err)
	}
}

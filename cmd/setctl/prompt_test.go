package main

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// pipe is a pipe whose ends the test closes when it ends.
func pipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func TestReadLineReadsOneLine(t *testing.T) {
	r, w := pipe(t)
	if _, err := io.WriteString(w, "yes\nno\n"); err != nil {
		t.Fatal(err)
	}
	line, err := readLine(context.Background(), r)
	if err != nil || line != "yes\n" {
		t.Fatalf("readLine = %q, %v; want %q, nil", line, err, "yes\n")
	}
}

func TestReadLineAtEnd(t *testing.T) {
	r, w := pipe(t)
	io.WriteString(w, "y")
	w.Close()
	line, err := readLine(context.Background(), r)
	if !errors.Is(err, io.EOF) || line != "y" {
		t.Fatalf("readLine = %q, %v; want %q, EOF", line, err, "y")
	}
}

// An interrupt ends the wait for an answer, and leaves nothing reading:
// the line typed after it goes to the next reader.
func TestReadLineInterrupted(t *testing.T) {
	r, w := pipe(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if line, err := readLine(ctx, r); !errors.Is(err, context.Canceled) {
		t.Fatalf("readLine = %q, %v; want context.Canceled", line, err)
	}
	io.WriteString(w, "second\n")
	if line, err := readLine(context.Background(), r); err != nil || line != "second\n" {
		t.Fatalf("readLine after an interrupt = %q, %v; want %q, nil", line, err, "second\n")
	}
}

// Without a terminal on stdin, confirm does not ask: it warns and the
// answer is no, whatever stdin holds.
func TestConfirmWithoutTerminal(t *testing.T) {
	var stdout, stderr strings.Builder
	e := &env{stdin: strings.NewReader("yes\n"), stdout: &stdout, stderr: &stderr}
	if confirm(context.Background(), e, 2, "main") {
		t.Error("confirm = true without a terminal")
	}
	if stdout.Len() != 0 || !strings.Contains(stderr.String(), "stdin is not a terminal") {
		t.Errorf("stdout %q, stderr %q; want no question and the warning", stdout.String(), stderr.String())
	}
}

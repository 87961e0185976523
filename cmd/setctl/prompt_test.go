package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

// openPTY opens a pseudo-terminal: the master end, which the test types
// into, and the slave end, a terminal to read answers from. It skips the
// test where there is none.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Skipf("ptsname: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return master, tty
}

// On a terminal, confirm asks and takes "y" for a yes; an interrupt while
// it waits is a no, and the line typed after it is not taken by confirm.
func TestConfirmOnATerminal(t *testing.T) {
	master, tty := openPTY(t)
	var stdout, stderr strings.Builder
	e := &env{stdin: tty, stdout: &stdout, stderr: &stderr}
	io.WriteString(master, "y\n")
	if !confirm(context.Background(), e, 1, "main") {
		t.Errorf("confirm after y = false; stderr %q", stderr.String())
	}
	if want := "\nApply this change? Agents will run and main will move. [y/N] "; stdout.String() != want {
		t.Errorf("stdout = %q, want %q", stdout.String(), want)
	}

	stdout.Reset()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if confirm(ctx, e, 3, "main") {
		t.Error("confirm when interrupted = true")
	}
	if want := "\nApply these 3 changes? Agents will run and main will move. [y/N] \n"; stdout.String() != want {
		t.Errorf("stdout = %q, want %q", stdout.String(), want)
	}
	io.WriteString(master, "yes\n")
	if line, err := readLine(context.Background(), tty); err != nil || line != "yes\n" {
		t.Errorf("the line after an interrupted confirm: %q, %v; want %q", line, err, "yes\n")
	}
}

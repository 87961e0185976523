package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/set-engine/set/engine/diag"
)

// confirm asks on the terminal whether to run n changes that move
// mainBranch, and reads the answer from e.stdin. It asks only when stdin
// is a terminal; otherwise it warns and the answer is no. An interrupt
// (ctx ending) is a no too. confirm returns with nothing of it left
// running (see readLine).
func confirm(ctx context.Context, e *env, n int, mainBranch string) bool {
	tty, ok := e.stdin.(*os.File)
	if !ok || !isTerminal(tty) {
		e.present("apply", diag.List{{Severity: diag.Warning, Summary: "stdin is not a terminal, so setctl cannot ask before running; pass --yes, or a plan file from `setctl plan --out`"}}, "")
		return false
	}
	fmt.Fprintf(e.stdout, "\nApply %s? Agents will run and %s will move. [y/N] ", map[bool]string{true: "this change", false: fmt.Sprintf("these %d changes", n)}[n == 1], mainBranch)
	line, err := readLine(ctx, tty)
	if ctx.Err() != nil {
		fmt.Fprintln(e.stdout)
		return false
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	answer := strings.ToLower(strings.TrimSpace(line))
	return answer == "y" || answer == "yes"
}

// readLine reads one line from f (a terminal, or a pipe), up to and
// including its newline, or what came before the end of f. When ctx ends
// first it returns ctx's error.
//
// It blocks in poll(2) on f and on a pipe that ctx's end closes, and reads
// f only once poll says a read will not block, so an interrupt never
// leaves a goroutine stuck in a read of f: when readLine returns, nothing
// it started is running (the goroutine that closes the pipe at ctx's end
// is waited for).
func readLine(ctx context.Context, f *os.File) (string, error) {
	wake, wakeW, err := os.Pipe()
	if err != nil {
		return "", err
	}
	defer wake.Close()
	closed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		wakeW.Close()
		close(closed)
	})
	defer func() {
		if stop() {
			wakeW.Close()
		} else {
			<-closed // ctx ended: its function runs, or ran; wait for it
		}
	}()

	fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLIN}, {Fd: int32(wake.Fd()), Events: unix.POLLIN}}
	var line []byte
	buf := make([]byte, 512)
	for {
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) { // a signal came; ctx says whether it ends the wait
				continue
			}
			return "", err
		}
		if fds[1].Revents != 0 {
			return "", ctx.Err()
		}
		n, err := f.Read(buf)
		line = append(line, buf[:n]...)
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			return string(line[:i+1]), nil
		}
		if err != nil {
			return string(line), err
		}
	}
}

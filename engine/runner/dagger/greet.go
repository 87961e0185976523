package dagger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
	"unicode"
)

// h2Greeting is how a connection to a Dagger engine's API begins (the
// CLI's HTTP/2 transport speaks first, without TLS): the HTTP/2 client
// preface, then an empty SETTINGS frame.
var h2Greeting = []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + "\x00\x00\x00\x04\x00\x00\x00\x00\x00")

// errSilent is an address that accepted the connection and the greeting
// but said nothing back in time: a paused, overloaded or stopping engine
// does that, and so does a listener that waits for something else.
var errSilent = errors.New("no answer")

// notEngineError is an address that answered the greeting, but not as a
// Dagger engine does.
type notEngineError struct{ said string }

func (e *notEngineError) Error() string { return e.said }

// greet connects to addr on network and sends h2Greeting. A Dagger engine
// (v0.19 to v0.21 and later: an HTTP server of both HTTP/1 and HTTP/2
// without TLS) answers with its own SETTINGS frame at once. greet returns
// nil for that answer, the dial's error when nothing accepts, errSilent
// when nothing comes back before ctx ends, and a *notEngineError saying
// what came back instead (an HTTP/1 answer, a banner, a TLS alert, a
// closed connection).
func greet(ctx context.Context, network, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := c.Write(h2Greeting); err != nil {
		if ctx.Err() != nil {
			return errSilent
		}
		return &notEngineError{"it closed the connection at once"}
	}
	// A frame header: 3 bytes of length, its type, flags, 4 bytes of
	// stream; the server's first frame is SETTINGS (type 4) on stream 0.
	// The first bytes may take as long as ctx allows; the rest of the
	// frame header comes with them, or within a moment.
	head := make([]byte, 9)
	n, err := io.ReadAtLeast(c, head, 1)
	if n > 0 && n < len(head) {
		c.SetReadDeadline(time.Now().Add(time.Second))
		var m int
		m, err = io.ReadFull(c, head[n:])
		n += m
	}
	switch {
	case err == nil && head[3] == 0x4 && bytes.Equal(head[5:9], []byte{0, 0, 0, 0}):
		return nil
	case n == 0 && ctx.Err() != nil:
		return errSilent
	case n == 0:
		return &notEngineError{"it closed the connection without answering"}
	}
	// Something else: read what else came with it, to quote it.
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	more := make([]byte, 120)
	m, _ := io.ReadAtLeast(c, more, len(more))
	return &notEngineError{"it answered " + quote(append(head[:n], more[:m]...))}
}

// quote is the first line of an answer, quoted, printable and short.
func quote(b []byte) string {
	if i := bytes.IndexAny(b, "\r\n"); i >= 0 {
		b = b[:i]
	}
	if len(b) > 60 {
		b = b[:60]
	}
	printable := bytes.Map(func(r rune) rune {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			return '.'
		}
		return r
	}, b)
	return strconv.Quote(string(printable))
}

// silentTried is what a PreflightError says was tried when what did not
// answer within timeout.
func silentTried(what string, timeout time.Duration) string {
	return fmt.Sprintf("%s did not answer within %s (it may be a busy or stopped engine)", what, timeout)
}

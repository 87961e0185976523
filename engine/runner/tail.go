package runner

import "sync"

// Tail is an io.Writer that keeps only the last max bytes (see NewTail) written to it.
// Its memory stays at 2*max however much is written, and it is safe for
// concurrent use. The zero value keeps nothing; use NewTail.
type Tail struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	written int64
}

// NewTail returns a Tail keeping the last max bytes.
func NewTail(max int) *Tail {
	return &Tail{max: max}
}

// Write keeps the tail of p; it never fails.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	t.written += int64(n)
	if t.max <= 0 {
		return n, nil
	}
	if t.buf == nil {
		t.buf = make([]byte, 0, 2*t.max)
	}
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	// Compact only when p would not fit in twice the cap, so that many
	// small writes cost amortised O(1) per byte and the buffer never grows
	// past its first allocation.
	if len(t.buf)+len(p) > 2*t.max {
		keep := t.max - len(p)
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-keep:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// Bytes returns a copy of the last (at most max) bytes written.
func (t *Tail) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	return append([]byte(nil), b...)
}

// Written is the total number of bytes written, including those dropped.
func (t *Tail) Written() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.written
}

// Truncated reports whether bytes were dropped from the front.
func (t *Tail) Truncated() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.written > int64(t.max)
}

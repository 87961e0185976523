package runner

import (
	"io"
	"sync"
)

// Terminal escapes: what a program writes for a terminal (colours,
// cursor moves, window titles, hyperlinks) and a file, an error message
// or a JSON line must not hold. StripEscapes and EscapeStripper drop
// them, with the same rules:
//   - a CSI sequence: ESC [, parameter and intermediate bytes, and one
//     final byte (0x40–0x7E) ("\x1b[31m", "\x1b[2K");
//   - an OSC, DCS, SOS, PM or APC string: ESC ], P, X, ^ or _, up to BEL
//     or ESC \ ("\x1b]8;;https://…\x1b\\"), or up to the end of its line
//     when it is left open;
//   - any other escape: ESC, intermediate bytes (0x20–0x2F), and one
//     final byte ("\x1b(B", "\x1b7");
//   - an ESC that begins no sequence, and BEL.
//
// Every other byte is kept, carriage returns and tabs included.

// StripEscapes returns s without terminal escapes.
func StripEscapes(s string) string {
	if !hasEscape(s) {
		return s
	}
	var st escState
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if st.keep(s[i]) {
			out = append(out, s[i])
		}
	}
	return string(out)
}

func hasEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == esc || s[i] == bel {
			return true
		}
	}
	return false
}

// EscapeStripper is an io.Writer that writes to another without terminal
// escapes, also when one is split across writes. It is safe for
// concurrent use.
type EscapeStripper struct {
	mu  sync.Mutex
	w   io.Writer
	st  escState
	buf []byte
}

// NewEscapeStripper returns an EscapeStripper writing to w.
func NewEscapeStripper(w io.Writer) *EscapeStripper {
	return &EscapeStripper{w: w}
}

// Write writes p to the underlying writer without its escapes. It reports
// len(p) written unless the underlying writer fails.
func (s *EscapeStripper) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = s.buf[:0]
	for _, b := range p {
		if s.st.keep(b) {
			s.buf = append(s.buf, b)
		}
	}
	if len(s.buf) == 0 {
		return len(p), nil
	}
	if _, err := s.w.Write(s.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

const (
	esc = 0x1b
	bel = 0x07
)

// escState is where a stream of bytes is in a terminal escape.
type escState uint8

const (
	inText      escState = iota
	afterESC             // ESC seen
	inCSI                // ESC [ seen
	inString             // OSC, DCS, SOS, PM or APC: until BEL or ESC \
	inStringESC          // ESC seen inside a string
	inEscape             // ESC and intermediate bytes seen
)

// keep advances the state by b and reports whether b is text to keep.
func (st *escState) keep(b byte) bool {
	switch *st {
	case inText:
		switch b {
		case esc:
			*st = afterESC
			return false
		case bel:
			return false
		}
		return true
	case afterESC:
		switch {
		case b == '[':
			*st = inCSI
		case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
			*st = inString
		case b >= 0x20 && b <= 0x2f:
			*st = inEscape
		case b == esc:
			// a new escape
		case b >= 0x30 && b <= 0x7e:
			*st = inText
		default:
			// An ESC that begins no sequence: drop it, keep b.
			*st = inText
			return b != bel
		}
		return false
	case inCSI:
		switch {
		case b >= 0x40 && b <= 0x7e:
			*st = inText
		case b >= 0x20 && b <= 0x3f:
		case b == esc:
			*st = afterESC
		default:
			// Not a CSI byte: the sequence was cut; keep b as text.
			*st = inText
			return b != bel
		}
		return false
	case inString, inStringESC:
		switch {
		case b == '\n':
			// No terminal string spans lines: one left open ends here,
			// so that it cannot swallow the rest of the stream.
			*st = inText
			return true
		case b == bel || *st == inStringESC && b == '\\':
			*st = inText
		case b == esc:
			*st = inStringESC
		default:
			*st = inString
		}
		return false
	case inEscape:
		switch {
		case b >= 0x20 && b <= 0x2f:
		case b >= 0x30 && b <= 0x7e:
			*st = inText
		case b == esc:
			*st = afterESC
		default:
			*st = inText
			return b != bel
		}
		return false
	}
	*st = inText
	return true
}

package runner

import (
	"strings"
	"testing"
)

func TestStripEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\n":                                            "plain text\n",
		"\x1b[31mERROR\x1b[0m failed":                             "ERROR failed",
		"\x1b[1;38;5;196mred\x1b[m\r\n":                           "red\r\n",
		"\x1b[2K\x1b[1A12  : sync DONE [0.1s]":                    "12  : sync DONE [0.1s]",
		"see \x1b]8;;https://dagger.io\x1b\\dagger\x1b]8;;\x1b\\": "see dagger",
		"\x1b]0;title\x07after":                                   "after",
		"\x1b(Bcharset\x1b7saved\x1b8":                            "charsetsaved",
		"bell\x07 and a lone \x1b":                                "bell and a lone ",
		"\x1b]unterminated\nnext line\n":                          "\nnext line\n",
		"tab\tand ünïcode ✓":                                      "tab\tand ünïcode ✓",
	} {
		if got := StripEscapes(in); got != want {
			t.Errorf("StripEscapes(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEscapeStripperSplitWrites: an escape split across writes, at every
// byte, is still dropped whole.
func TestEscapeStripperSplitWrites(t *testing.T) {
	in := "12  : \x1b[32mDONE\x1b[0m \x1b]8;;https://x\x1b\\link\x1b]8;;\x07 [\x1b[90m0.1s\x1b[0m]\n"
	want := "12  : DONE link [0.1s]\n"
	for cut := range len(in) {
		var b strings.Builder
		s := NewEscapeStripper(&b)
		s.Write([]byte(in[:cut]))
		s.Write([]byte(in[cut:]))
		if b.String() != want {
			t.Errorf("cut at %d: %q, want %q", cut, b.String(), want)
		}
	}
}

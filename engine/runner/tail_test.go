package runner

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

func TestTailKeepsLastBytes(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"empty", 4, nil, ""},
		{"under cap", 8, []string{"ab", "cd"}, "abcd"},
		{"exactly cap", 4, []string{"ab", "cd"}, "abcd"},
		{"over cap in small writes", 4, []string{"ab", "cd", "ef", "g"}, "defg"},
		{"one write over cap", 4, []string{"abcdefgh"}, "efgh"},
		{"big write after small", 4, []string{"xy", "abcdefgh"}, "efgh"},
		{"small after big", 4, []string{"abcdefgh", "ij"}, "ghij"},
		{"zero cap", 0, []string{"abc"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tail := NewTail(tt.max)
			total := 0
			for _, w := range tt.writes {
				n, err := tail.Write([]byte(w))
				if err != nil || n != len(w) {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
				total += len(w)
			}
			if got := string(tail.Bytes()); got != tt.want {
				t.Errorf("Bytes() = %q, want %q", got, tt.want)
			}
			if tail.Written() != int64(total) {
				t.Errorf("Written() = %d, want %d", tail.Written(), total)
			}
			if got, want := tail.Truncated(), total > tt.max; got != want {
				t.Errorf("Truncated() = %v, want %v", got, want)
			}
		})
	}
}

// TestTailMemoryBounded: a long stream of small writes keeps memory below
// twice the cap and the content equal to the stream's tail.
func TestTailMemoryBounded(t *testing.T) {
	const max = 1000
	tail := NewTail(max)
	var all bytes.Buffer
	for i := range 10000 {
		line := strings.Repeat(string(rune('a'+i%26)), i%7+1) + "\n"
		all.WriteString(line)
		tail.Write([]byte(line))
		if cap(tail.buf) > 2*max {
			t.Fatalf("after %d writes the buffer holds %d bytes", i+1, cap(tail.buf))
		}
	}
	want := all.Bytes()[all.Len()-max:]
	if !bytes.Equal(tail.Bytes(), want) {
		t.Error("tail differs from the last bytes of the stream")
	}
}

func TestTailConcurrent(t *testing.T) {
	tail := NewTail(64)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				tail.Write([]byte("0123456789"))
			}
		})
	}
	wg.Wait()
	if tail.Written() != 8000 || len(tail.Bytes()) != 64 {
		t.Errorf("written %d, kept %d", tail.Written(), len(tail.Bytes()))
	}
}

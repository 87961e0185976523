package english

import (
	"slices"
	"strings"
	"testing"
)

func TestPlural(t *testing.T) {
	for _, tt := range []struct {
		n    int
		noun string
		want string
	}{
		{0, "change", "0 changes"},
		{1, "change", "1 change"},
		{2, "retry", "2 retries"},
		{1, "retry", "1 retry"},
		{2, "day", "2 days"},
		{3, "match", "3 matches"},
		{2, "pass", "2 passes"},
		{2, "gate run", "2 gate runs"},
		{2, "commit", "2 commits"},
	} {
		if got := Plural(tt.n, tt.noun); got != tt.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", tt.n, tt.noun, got, tt.want)
		}
	}
}

func TestList(t *testing.T) {
	for _, tt := range []struct {
		items []string
		want  string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a and b"},
		{[]string{"a", "b", "c"}, "a, b and c"},
	} {
		if got := List(tt.items); got != tt.want {
			t.Errorf("List(%q) = %q, want %q", tt.items, got, tt.want)
		}
	}
}

func TestTokens(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 950: "950", 1000: "1.0k", 12_345: "12.3k", 2_000_000: "2.0M", 2_150_000: "2.1M"} {
		if got := Tokens(n); got != want {
			t.Errorf("Tokens(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestClosest(t *testing.T) {
	names := []string{"greet", "shout", "bye", "wave", "vet", "test"}
	for name, want := range map[string]string{
		"gret": "greet", "greets": "greet", "shuot": "shout", "by": "bye", "waves": "wave", "nothing-like": "", "": "", "tset": "test", "vte": "vet",
	} {
		if got := Closest(name, names); got != want {
			t.Errorf("Closest(%q) = %q, want %q", name, got, want)
		}
	}
	if got := Closest("x", nil); got != "" {
		t.Errorf("Closest among none = %q", got)
	}
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		items []string
		want  string
	}{
		{nil, ""},
		{[]string{"a", "b"}, "a|b"},
		{[]string{"a", "b", "c"}, "a|b|c"},
		{[]string{"a", "b", "c", "d"}, "a|b|c|and 1 more"},
		{[]string{"a", "b", "c", "d", "e"}, "a|b|c|and 2 more"},
	} {
		items := slices.Clone(tc.items)
		if got := strings.Join(Cut(items, 3), "|"); got != tc.want {
			t.Errorf("Cut(%q, 3) = %q, want %q", tc.items, got, tc.want)
		}
		if !slices.Equal(items, tc.items) {
			t.Errorf("Cut changed its input: %q", items)
		}
	}
}

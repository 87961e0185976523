package english

import "testing"

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

package plan

import (
	"slices"
	"testing"
)

// Holder looks at a change's own waits first, then at the later changes
// that wait for it, each in dispatch order, and names only a change at
// work.
func TestHolder(t *testing.T) {
	order := []string{"a", "b", "c", "d"}
	waits := [][]Wait{
		nil,
		{{Change: "a", Files: []string{"r.go"}}},
		{{Change: "a", Files: []string{"r.go"}}, {Change: "b", Files: []string{"r.go"}}},
		{{Change: "b", Files: []string{"s.go"}}},
	}
	for _, tc := range []struct {
		name    string
		working []string
		want    Wait
		ok      bool
	}{
		{"b", []string{"a", "c"}, Wait{Change: "a", Files: []string{"r.go"}}, true},
		{"b", []string{"d", "c"}, Wait{Change: "c", Files: []string{"r.go"}}, true},
		{"a", []string{"d"}, Wait{}, false},
		{"b", nil, Wait{}, false},
		{"e", []string{"a", "b", "c", "d"}, Wait{}, false},
	} {
		got, ok := Holder(order, waits, tc.name, func(n string) bool { return slices.Contains(tc.working, n) })
		if ok != tc.ok || got.Change != tc.want.Change || !slices.Equal(got.Files, tc.want.Files) {
			t.Errorf("Holder(%s) with %v at work = %v, %v; want %v, %v", tc.name, tc.working, got, ok, tc.want, tc.ok)
		}
	}
	if _, ok := Holder(order, nil, "b", func(string) bool { return true }); ok {
		t.Error("Holder without waits names a holder")
	}
}

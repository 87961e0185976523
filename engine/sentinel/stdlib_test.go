package sentinel

import (
	"encoding/json"
	"testing"

	"github.com/set-engine/set/internal/profiletest"
)

// TestStdlibDefaults: the sentinel a golang project gets from the stdlib
// is the one these tests exercise (defaults), and it compiles.
func TestStdlibDefaults(t *testing.T) {
	p := profiletest.Load(t, "golang", "")
	got, _ := json.MarshalIndent(p.Sentinel, "", "  ")
	want, _ := json.MarshalIndent(defaults(), "", "  ")
	if string(got) != string(want) {
		t.Errorf("the stdlib's sentinel:\n%s\nwant (defaults in sentinel_test.go):\n%s", got, want)
	}
	if _, err := Compile(p.Sentinel); err != nil {
		t.Error(err)
	}
}

package main

import (
	"regexp"
	"slices"
	"testing"

	"github.com/set-engine/set/engine/load"
)

// TestBuiltinProfilesHelp: init's help describes every built-in profile,
// and no other.
func TestBuiltinProfilesHelp(t *testing.T) {
	var described []string
	for _, m := range regexp.MustCompile(`(?m)^  (\S+) `).FindAllStringSubmatch(builtinProfilesHelp(), -1) {
		described = append(described, m[1])
	}
	if want := load.BuiltinProfiles(); !slices.Equal(described, want) {
		t.Errorf("init's help describes profiles %v, the embedded module has %v", described, want)
	}
	for _, m := range profileMarkers {
		if !slices.Contains(load.BuiltinProfiles(), m.profile) {
			t.Errorf("%s names profile %s, which is not built in", m.file, m.profile)
		}
	}
}

package config

import (
	"slices"
	"testing"
)

// learned is a project with a learning of each kind, and one turned off.
func learned() *Project {
	return &Project{
		CrossCutting: map[string]bool{"internal/routes.go": true, "go.mod": false},
		Forbidden:    map[string]Forbidden{"debug-print": {Pattern: "println", Message: "no debug printing"}},
		Learnings: map[string]Learning{
			"doc-comment": {Kind: LearningConvention, Text: "Every Go file starts with a package comment.", Enabled: true},
			"handler-tests": {Kind: LearningConvention, Text: "Every handler has a table test.", Enabled: true,
				Types: []string{"feature", "fix"}, Paths: []string{"internal/http/**"}},
			"old-habit":    {Kind: LearningConvention, Text: "Turned off.", Enabled: false},
			"routes-apart": {Kind: LearningPlanning, Text: "Keep route changes apart.", Enabled: true, Serialise: []string{"internal/routes.go", "cmd/app/wire.go"}},
			"no-printf":    {Kind: LearningRule, Text: "log through slog", Pattern: `log\.Printf`, Paths: []string{"**/*.go"}, Enabled: true},
		},
	}
}

// A convention reaches a change of one of its types whose scope may touch
// one of its paths; a change without a scope may touch any file.
func TestConventionsFor(t *testing.T) {
	p := learned()
	for _, tt := range []struct {
		changeType string
		scope      []string
		want       []string
	}{
		{"feature", []string{"internal/http/**"}, []string{"doc-comment", "handler-tests"}},
		{"feature", []string{"internal/http/users.go"}, []string{"doc-comment", "handler-tests"}},
		{"feature", []string{"internal/store/**"}, []string{"doc-comment"}},
		{"docs", []string{"internal/http/**"}, []string{"doc-comment"}},
		{"fix", nil, []string{"doc-comment", "handler-tests"}},
	} {
		if got := Names(p.ConventionsFor(tt.changeType, tt.scope)); !slices.Equal(got, tt.want) {
			t.Errorf("ConventionsFor(%s, %v) = %v, want %v", tt.changeType, tt.scope, got, tt.want)
		}
	}
	if got, want := Names(p.PlannerLearnings()), []string{"doc-comment", "handler-tests", "routes-apart"}; !slices.Equal(got, want) {
		t.Errorf("PlannerLearnings = %v, want %v", got, want)
	}
}

// A planning learning's serialise globs join crossCutting's, each once.
func TestCrossCuttingGlobsHoldSerialise(t *testing.T) {
	if got, want := learned().CrossCuttingGlobs(), []string{"cmd/app/wire.go", "internal/routes.go"}; !slices.Equal(got, want) {
		t.Errorf("CrossCuttingGlobs = %v, want %v", got, want)
	}
}

// The rules gate checks the forbidden patterns, then the rule learnings,
// each named as a learning with its text as the message.
func TestRules(t *testing.T) {
	got := learned().Rules()
	want := []Rule{
		{Name: "debug-print", Pattern: "println", Message: "no debug printing"},
		{Name: "learning no-printf", Pattern: `log\.Printf`, Message: "log through slog", Paths: []string{"**/*.go"}},
	}
	if !slices.EqualFunc(got, want, func(a, b Rule) bool {
		return a.Name == b.Name && a.Pattern == b.Pattern && a.Message == b.Message && slices.Equal(a.Paths, b.Paths)
	}) {
		t.Errorf("Rules = %+v, want %+v", got, want)
	}
}

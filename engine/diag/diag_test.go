package diag

import (
	"testing"

	"github.com/set-engine/set/engine/config"
)

func TestText(t *testing.T) {
	root := "/p"
	tests := []struct {
		name string
		d    Diagnostic
		want string
	}{
		{"path and position", Diagnostic{Summary: "bad", Path: []string{"project", "gates", "fmt"}, Pos: config.Pos{File: "/p/set.cue", Line: 8, Column: 20}},
			"project.gates.fmt: bad: set.cue:8:20"},
		{"line only", Diagnostic{Summary: "dup", Pos: config.Pos{File: "docs/spec.md", Line: 3}}, "dup: docs/spec.md:3"},
		{"whole file", Diagnostic{Summary: "empty", Pos: config.Pos{File: "/p/docs/a.md"}}, "empty: docs/a.md"},
		{"outside root", Diagnostic{Summary: "x", Pos: config.Pos{File: "/q/s.cue", Line: 1, Column: 2}}, "x: /q/s.cue:1:2"},
		{"several positions and detail", Diagnostic{Summary: "conflict", Detail: "\t| a", More: []config.Pos{{File: "/p/a.cue", Line: 1, Column: 1}, {File: "/p/b.cue", Line: 2, Column: 3}}},
			"conflict:\n    a.cue:1:1\n    b.cue:2:3\n\t| a"},
		{"no position", Diagnostic{Summary: "plain"}, "plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.d.Text(root); got != tt.want {
				t.Errorf("Text = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestListErr(t *testing.T) {
	if (List{{Severity: Warning}}).Err() != nil || (List{{Severity: Warning}, {Severity: Error}}).Err() == nil {
		t.Error("List.Err is wrong")
	}
}

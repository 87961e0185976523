package cond

import (
	"errors"
	"strings"
	"testing"
)

// TestErrorsSpeakConditions: expr's messages name Go types; the rewritten
// ones name the condition's own names and types and keep the position.
func TestErrorsSpeakConditions(t *testing.T) {
	tests := []struct {
		compile func(string) (*Condition, error)
		src     string
		want    string
	}{
		{CompileGate, `change.typ == "fix"`, "change has no field typ; fields: dependsOn, domain, name, requirements, scope, size, type (1:8)"},
		{CompileGate, `chnage.type == "fix"`, "unknown name chnage; names: change, files, userFolder (1:1)"},
		{CompileGate, `change.requirements > 1`, "invalid operation: > (mismatched types list of strings and number) (1:21)"},
		{CompileGate, `len(change.requirements)`, "expected bool, but got number"},
		{CompileGate, `change.type.x == "y"`, "string has no field x (1:13)"},
		{CompileGate, `change.type ==`, "unexpected token EOF (1:14)"},
	}
	for _, tt := range tests {
		_, err := tt.compile(tt.src)
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("%s: error %v is not a *cond.Error", tt.src, err)
			continue
		}
		first, snippet, _ := strings.Cut(ce.Err.Error(), "\n")
		if first != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.src, first, tt.want)
		}
		if strings.HasSuffix(tt.want, ")") && !strings.Contains(snippet, " | "+tt.src) {
			t.Errorf("%s: the source snippet is gone: %q", tt.src, ce.Err.Error())
		}
	}
}

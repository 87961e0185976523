package main

import (
	"strings"
	"testing"

	"github.com/set-engine/set/engine/learn"
)

// TestLearningsBody: the pull request's body quotes each evidence line as
// one code span, a line with backticks too (cargo's "`x`"), so that
// GitHub shows it as printed.
func TestLearningsBody(t *testing.T) {
	p := learn.Proposal{ID: "0badf00d", Name: "build-cannot-find-value", Kind: "convention", Text: "t", Changes: 2, Runs: 1,
		Evidence: []learn.Evidence{{Run: "run-1", Change: "a", Round: 1, Line: "error[E0425]: cannot find value `x` in this scope"}}}
	body := learningsBody([]learn.Proposal{p}, []string{p.Name})
	if want := "- run-1 a round 1: ``error[E0425]: cannot find value `x` in this scope``\n"; !strings.Contains(body, want) {
		t.Errorf("body lacks %q:\n%s", want, body)
	}
}

package spec

import (
	"strings"
	"testing"
)

// readSpec is a requirement whose text has a paragraph, a list, a quote
// and a code block, for the tests of what a reader sees.
const readSpec = `## Stats

### REQ-STATS-01: Median of an array
The library SHALL return the median of a non-empty array of numbers, the
middle value once sorted.

It needs:
- a sorted copy,
  never the caller's array;
- an even length handled.

> Averages of the two middle values.

` + "```" + `
median([1, 3, 2])  == 2
` + "```" + `

#### Scenario: odd length
- **WHEN** Median([3, 1, 2]) is called
- **THEN** it returns 2
`

// TestCompareReadsAsAReader: a requirement whose text, title or steps
// only changed their spacing (a re-wrapped paragraph, a wrapped step,
// doubled spaces) stays implemented; one whose paragraphs, list items or
// code changed is changed, since a reader sees that.
func TestCompareReadsAsAReader(t *testing.T) {
	reqs, _ := Parse("docs/spec.md", []byte(readSpec), Options{})
	living := livingOf(t, reqs)
	for _, tc := range []struct {
		name      string
		old, new_ string
		want      string
	}{
		{"re-wrapped paragraph", "numbers, the\nmiddle value", "numbers,\nthe middle value", "implemented@stats"},
		{"one line paragraph", "of a non-empty array of numbers, the\nmiddle", "of a non-empty array of numbers, the middle", "implemented@stats"},
		{"doubled spaces and trailing tab", "SHALL return the", "SHALL  return\tthe", "implemented@stats"},
		{"list item re-wrapped", "- a sorted copy,\n  never", "- a sorted copy, never", "implemented@stats"},
		{"title spacing", "Median of an array", "Median of  an array", "implemented@stats"},
		{"step wrapped", "- **THEN** it returns 2", "- **THEN** it\n  returns 2", "implemented@stats"},
		{"scenario name spacing", "Scenario: odd length", "Scenario: odd  length", "implemented@stats"},
		{"blank lines doubled", "middle value once sorted.\n\nIt needs:", "middle value once sorted.\n\n\nIt needs:", "implemented@stats"},

		{"paragraph split", "numbers, the\nmiddle value", "numbers, the\n\nmiddle value", "changed@stats(text)"},
		{"paragraphs joined", "once sorted.\n\nIt needs:", "once sorted.\nIt needs:", "changed@stats(text)"},
		{"list items joined", "never the caller's array;\n- an even", "never the caller's array; - an even", "changed@stats(text)"},
		{"list item nested", "- an even length", "  - an even length", "changed@stats(text)"},
		{"code spacing", "median([1, 3, 2])  == 2", "median([1, 3, 2]) == 2", "changed@stats(text)"},
		{"a word", "middle value", "central value", "changed@stats(text)"},
		{"a step", "it returns 2", "it returns 3", "changed@stats(scenarios)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(readSpec, tc.old) {
				t.Fatalf("the spec has no %q", tc.old)
			}
			edited, diags := Parse("docs/spec.md", []byte(strings.Replace(readSpec, tc.old, tc.new_, 1)), Options{})
			for _, d := range diags {
				t.Fatalf("edited spec: %s", d)
			}
			got := statusLine(standings(t, edited, living))
			if want := "REQ-STATS-01=" + tc.want; got != want {
				t.Errorf("%s, want %s", got, want)
			}
		})
	}
}

func TestReadText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a\n  b   c\n\td", "a b c d"},
		{"a\n\n\n\nb", "a\n\nb"},
		{"a\n- b\n  c\n  - d\n1. e\n2) f\n> g\n| h |\n##### i", "a\n- b c\n  - d\n1. e\n2) f\n> g\n| h |\n##### i"},
		{"a\n```\n  x   y\n\n```\nb", "a\n```\n  x   y\n\n```\nb"},
		{"a\n\n```\nx\n```\n\nb", "a\n\n```\nx\n```\n\nb"},
		{"2024 was\na year", "2024 was a year"},
	} {
		if got := readText(tc.in); got != tc.want {
			t.Errorf("readText(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := readText(tc.want); got != tc.want {
			t.Errorf("readText(%q) = %q: reading what was read changes it", tc.want, got)
		}
	}
}

// TestCompareReadsAsAReaderFolds: a requirement whose title changed its
// spacing and whose text changed a word is changed in its text only, and
// the delta set writes for it still folds into the living spec (renamed
// to the title as now spaced, then modified), leaving it implemented.
func TestCompareReadsAsAReaderFolds(t *testing.T) {
	reqs, _ := Parse("docs/spec.md", []byte(readSpec), Options{})
	living := livingOf(t, reqs)
	edited := strings.NewReplacer("Median of an array", "Median  of an array", "middle value", "central value").Replace(readSpec)
	next, _ := Parse("docs/spec.md", []byte(edited), Options{})
	sts := standings(t, next, living)
	if got, want := statusLine(sts), "REQ-STATS-01=changed@stats(text)"; got != want {
		t.Fatalf("%s, want %s", got, want)
	}
	folder := ChangeFolder(ChangeFolderInput{Change: "edit", Requirements: []ChangeRequirement{{Standing: sts[0], Requirement: next[0]}}})
	after := fold(t, living, folder)
	if got, want := statusLine(standings(t, next, after)), "REQ-STATS-01=implemented@stats"; got != want {
		t.Errorf("after folding: %s, want %s", got, want)
	}
}

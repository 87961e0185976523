package load

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/plan"
)

// A model planner's answer is checked against the schema's
// #PlannedChanges: every error at its path in the answer, enums worded
// as set.cue's are.
func TestCheckPlannedChanges(t *testing.T) {
	c, err := NewChecker(PlannedChangesDef)
	if err != nil {
		t.Fatal(err)
	}
	const valid = `{"name":"add-links","type":"fix","size":"S","description":"d","requirements":["REQ-A-01"],"dependsOn":[],"scope":["internal/**"]}`
	for _, tt := range []struct {
		answer string
		want   []string
	}{
		{`{"changes":[` + valid + `]}`, nil},
		{`{"changes":[]}`, nil},
		{`{"changes":[{"name":"Add_Links","type":"bugfix","size":"XL","description":"d","requirements":["REQ-A-01"],"dependsOn":["Bad Name"],"scope":[]}]}`, []string{
			`changes.0.size: "XL" is not one of "S", "M", "L"`,
			`changes.0.type: "bugfix" is not one of "feature", "fix", "refactor", "infrastructure", "schema", "docs", "test", "cleanup"`,
			`changes.0.dependsOn.0: invalid value "Bad Name" (out of bound =~"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")`,
			`changes.0.name: invalid value "Add_Links" (out of bound =~"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")`,
		}},
		{`{"changes":[{"name":"a","type":"fix","size":"S","description":"d","requirements":[],"dependsOn":[],"scope":[],"agent":"codex"}]}`, []string{
			"changes.0.agent: field not allowed",
		}},
		{`{"changes":[{"name":"a"}]}`, []string{
			"changes.0.dependsOn: field is required but not present",
			"changes.0.description: field is required but not present",
			"changes.0.requirements: field is required but not present",
			"changes.0.scope: field is required but not present",
			"changes.0.size: field is required but not present",
			"changes.0.type: field is required but not present",
		}},
		{`{}`, []string{"changes: field is required but not present"}},
		{`{"changes":"x"}`, []string{`changes: conflicting values [...#PlannedChange] and "x" (mismatched types list and string)`}},
		{`{"changes":[`, []string{"the answer is not valid JSON: unexpected end of JSON input"}},
	} {
		if got := c.Check([]byte(tt.answer)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.answer, got, tt.want)
		}
	}
}

// The answer schema the planner sends a model (engine/plan/planner) is
// built from plan.Types, plan.Sizes and plan.NamePattern: they are the
// schema's #ChangeType, #Size and #Name.
func TestPlannerSchemaMatchesCUE(t *testing.T) {
	c, err := NewChecker(PlannedChangesDef)
	if err != nil {
		t.Fatal(err)
	}
	quoted := func(xs []string) string {
		q := make([]string, len(xs))
		for i, x := range xs {
			q[i] = strconv.Quote(x)
		}
		return strings.Join(q, ", ")
	}
	got := c.Check([]byte(`{"changes":[{"name":"-","type":"bogus","size":"XL","description":"","requirements":[],"dependsOn":[],"scope":[]}]}`))
	want := []string{
		`changes.0.size: "XL" is not one of ` + quoted(plan.Sizes),
		`changes.0.type: "bogus" is not one of ` + quoted(plan.Types),
		`changes.0.name: invalid value "-" (out of bound =~"` + plan.NamePattern + `")`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

package prompt

import (
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
)

func valid() config.PlannerPrompts {
	return config.PlannerPrompts{
		System: "Plan {{.Project}}.", Single: "{{range .Requirements}}{{.ID}} {{join .DependsOn \",\"}}\n{{end}}",
		Brief: "{{len .Domains}}", Domain: "{{.Domain}}: {{.Brief.Overview}}", Merge: "{{range .Drafts}}{{.Domain}}{{end}}",
		Repair: "{{.Answer}}{{range .Errors}}\n- {{.}}{{end}}",
	}
}

func TestParseAndRender(t *testing.T) {
	tm, errs := Parse(valid())
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	got, err := tm.Render(Single, Data{Requirements: []Requirement{{ID: "REQ-A-01", DependsOn: []string{"REQ-A-02", "REQ-B-01"}}}})
	if err != nil || got != "REQ-A-01 REQ-A-02,REQ-B-01\n" {
		t.Errorf("single: %q, %v", got, err)
	}
	got, err = tm.Render(Repair, RepairData{Answer: "{}", Errors: []string{"one", "two"}})
	if err != nil || got != "{}\n- one\n- two" {
		t.Errorf("repair: %q, %v", got, err)
	}
}

// Every template is checked, each error naming its template: a syntax
// error, a field its data lacks (even inside a range), an empty template.
func TestParseErrors(t *testing.T) {
	p := valid()
	p.Single = "{{range .Requirements}}{{.Name}}{{end}}"
	p.Merge = "{{if .Drafts}"
	p.Repair = " \n"
	_, errs := Parse(p)
	var got []string
	for _, e := range errs {
		got = append(got, e.Name+": "+e.Error())
	}
	want := []string{
		`single: template: single:1:25: executing "single" at <.Name>: can't evaluate field Name in type prompt.Requirement`,
		`merge: template: merge:1: bad character U+007D '}'`,
		`repair: the template is empty`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

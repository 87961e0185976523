package judge

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckTemplates(t *testing.T) {
	for _, tc := range []struct{ src, err string }{
		{"Review {{.Change.Name}}: {{range .Requirements}}{{.ID}} {{range .Scenarios}}{{.When}}{{end}}{{end}}{{.Diff}}", ""},
		{"{{.Change.Nmae}}", `template line 1, column 9: at <.Change.Nmae>: can't evaluate field Nmae in type config.Change`},
		// Inside a range over a list that is empty in a real change: the
		// sample fills every list, so the typo is still found.
		{"ok\n{{range .Omitted}}{{.Path}}{{end}}", `template line 2, column 20: at <.Path>: can't evaluate field Path in type string`},
		{"{{json .Diff}}", `template line 1: function "json" not defined`},
		{"{{if .Diff}}", `template line 1: unexpected EOF`},
	} {
		_, err := Check(tc.src)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("Check(%q): %v", tc.src, err)
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("Check(%q) = %v\nwant %s", tc.src, err, tc.err)
		}
	}
}

func TestRender(t *testing.T) {
	got, err := Render("{{.Gate}} of {{.Change.Name}} blocks on {{.BlockOn}}:{{range .Omitted}} {{.}}{{end}}", PromptData{
		Gate: "review", BlockOn: "high", Omitted: []string{"go.sum (+3 -1 lines)"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "review of  blocks on high: go.sum (+3 -1 lines)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestBlocks(t *testing.T) {
	for _, tc := range []struct {
		severity, blockOn string
		want              bool
	}{
		{"critical", "critical", true},
		{"high", "critical", false},
		{"high", "high", true},
		{"critical", "high", true},
		{"medium", "high", false},
		{"low", "low", true},
		{"blocker", "low", false},
	} {
		if got := Blocks(tc.severity, tc.blockOn); got != tc.want {
			t.Errorf("Blocks(%s, %s) = %v", tc.severity, tc.blockOn, got)
		}
	}
}

// The schemas are valid JSON objects whose every property is required,
// as the OpenAI strict mode and Codex's --output-schema want.
func TestSchemasAreStrict(t *testing.T) {
	var check func(path string, s map[string]any)
	check = func(path string, s map[string]any) {
		if props, ok := s["properties"].(map[string]any); ok {
			req, _ := s["required"].([]any)
			if len(req) != len(props) || s["additionalProperties"] != false {
				t.Errorf("%s: required %v of %d properties, additionalProperties %v", path, req, len(props), s["additionalProperties"])
			}
			for k, v := range props {
				check(path+"."+k, v.(map[string]any))
			}
		}
		if items, ok := s["items"].(map[string]any); ok {
			check(path+"[]", items)
		}
	}
	for _, kind := range []string{KindReview, KindRequirements} {
		var s map[string]any
		if err := json.Unmarshal(Schema(kind), &s); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		check(kind, s)
	}
}

const finding = `{"severity": "critical", "file": "./a.go", "line": 3, "requirements": ["REQ-A-01"], "message": "wrong", "fix": "fix it"}`

func TestDecodeReview(t *testing.T) {
	v, problems := Decode(KindReview, "```json\n{\"findings\": ["+finding+"]}\n```", []string{"REQ-A-01"})
	if problems != nil {
		t.Fatal(problems)
	}
	want := Verdict{Findings: []Finding{{Severity: "critical", File: "a.go", Line: 3, Requirements: []string{"REQ-A-01"}, Message: "wrong", Fix: "fix it"}}}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Error(diff)
	}
	if v, problems := Decode(KindReview, `{"findings": []}`, nil); problems != nil || len(v.Findings) != 0 {
		t.Errorf("no findings: %v %v", v, problems)
	}
}

func TestDecodeRequirements(t *testing.T) {
	answer := `{"requirements": [{"id": "REQ-A-02", "implemented": false, "reason": "no redirect"}, {"id": "REQ-A-01", "implemented": true, "reason": "done"}], "findings": []}`
	v, problems := Decode(KindRequirements, answer, []string{"REQ-A-01", "REQ-A-02"})
	if problems != nil {
		t.Fatal(problems)
	}
	// In the change's order.
	want := []Judgement{{ID: "REQ-A-01", Implemented: true, Reason: "done"}, {ID: "REQ-A-02", Reason: "no redirect"}}
	if diff := cmp.Diff(want, v.Requirements); diff != "" {
		t.Error(diff)
	}
	if got := v.Unimplemented(); len(got) != 1 || got[0].ID != "REQ-A-02" {
		t.Errorf("unimplemented %v", got)
	}
}

func TestDecodeProblems(t *testing.T) {
	ids := []string{"REQ-A-01", "REQ-A-02"}
	for _, tc := range []struct {
		kind, answer string
		want         []string
	}{
		{KindReview, `not json`, []string{`the answer is not a JSON object: not json`}},
		{KindReview, `[]`, []string{`the answer is not a JSON object: []`}},
		{KindReview, `{"findings": [], "verdict": "ok"}`, []string{`verdict: unknown field (allowed: findings)`}},
		{KindReview, `{}`, []string{`findings: missing`}},
		{KindReview, `{"findings": {}}`, []string{`findings: want a list, got {}`}},
		{KindReview, `{"findings": [{"severity": "blocker", "file": "", "line": -1, "requirements": ["REQ-B-01"], "message": " ", "fix": ""}]}`, []string{
			`findings[0].severity: "blocker" is not one of critical, high, medium, low`,
			`findings[0].line: -1 is negative (0 means no line)`,
			`findings[0].requirements: REQ-B-01 is not a requirement of the change (its requirements: REQ-A-01, REQ-A-02)`,
			`findings[0].message: empty: say what is wrong`,
			`findings[0].fix: empty: say what to do`,
		}},
		{KindReview, `{"findings": [{"severity": "low", "file": "a.go", "line": "3", "requirements": [], "message": "m", "fix": "f"}]}`, []string{`findings[0].line: want an integer, got "3"`}},
		{KindReview, `{"findings": [{"severity": "low", "message": "m", "fix": "f"}]}`, []string{`findings[0].file: missing`, `findings[0].line: missing`, `findings[0].requirements: missing`}},
		{KindRequirements, `{"findings": []}`, []string{`requirements: missing`}},
		{KindRequirements, `{"requirements": [{"id": "REQ-A-01", "implemented": true, "reason": "ok"}, {"id": "REQ-A-01", "implemented": true, "reason": "ok"}, {"id": "REQ-C-01", "implemented": false, "reason": ""}], "findings": []}`, []string{
			`requirements[1].id: REQ-A-01 is judged twice`,
			`requirements[2].id: REQ-C-01 is not a requirement of the change (its requirements: REQ-A-01, REQ-A-02)`,
			`requirements[2].reason: empty: say what is missing`,
			`requirements: REQ-A-02 is not judged: give every requirement of the change a judgement`,
		}},
		{KindRequirements, `{"requirements": [{"id": "REQ-A-01", "implemented": "yes", "reason": "ok"}], "findings": []}`, []string{
			`requirements[0].implemented: want true or false, got "yes"`,
			`requirements: REQ-A-01 is not judged: give every requirement of the change a judgement`,
			`requirements: REQ-A-02 is not judged: give every requirement of the change a judgement`,
		}},
	} {
		_, got := Decode(tc.kind, tc.answer, ids)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s %s:\n%s", tc.kind, tc.answer, diff)
		}
	}
}

// The system prompt says what the schema's fields mean.
func TestSystem(t *testing.T) {
	for _, kind := range []string{KindReview, KindRequirements} {
		s := System(kind)
		for _, word := range []string{"critical", "high", "medium", "low", "fix", "JSON"} {
			if !strings.Contains(s, word) {
				t.Errorf("%s system prompt lacks %q", kind, word)
			}
		}
	}
	if !strings.Contains(System(KindRequirements), "implemented") {
		t.Error("spec_verify's system prompt does not ask for a judgement per requirement")
	}
}

package plan

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/spec"
)

func req(id string, scenarios int, deps ...string) spec.Requirement {
	r := spec.Requirement{ID: id, Title: "title of " + id, Domain: spec.DomainOf(id), DependsOn: deps, File: "spec.md", Line: 1}
	for range scenarios {
		r.Scenarios = append(r.Scenarios, spec.Scenario{Name: "s", When: []string{"w"}, Then: []string{"t"}})
	}
	return r
}

func TestStaticGroupsByDomainAndLiftsDependencies(t *testing.T) {
	reqs := []spec.Requirement{
		req("REQ-LINKS-01", 3),
		req("REQ-LINKS-02", 1, "REQ-LINKS-01"),
		req("REQ-STATS-01", 2, "REQ-LINKS-02"),
		req("REQ-ADMIN-01", 3, "REQ-LINKS-01"),
		req("REQ-ADMIN-02", 2, "REQ-ADMIN-01", "REQ-STATS-01"),
	}
	got := Static(reqs, 6)
	want := []Change{
		{Name: "links", Type: "feature", Size: SizeM, Domain: "links", Requirements: []string{"REQ-LINKS-01", "REQ-LINKS-02"}, DependsOn: []string{}},
		{Name: "stats", Type: "feature", Size: SizeS, Domain: "stats", Requirements: []string{"REQ-STATS-01"}, DependsOn: []string{"links"}},
		{Name: "admin", Type: "feature", Size: SizeM, Domain: "admin", Requirements: []string{"REQ-ADMIN-01", "REQ-ADMIN-02"}, DependsOn: []string{"links", "stats"}},
	}
	for i := range got {
		got[i].Description = ""
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Static =\n%+v\nwant\n%+v", got, want)
	}
}

func TestStaticSplitsBalancedAndOrdersWithinDomain(t *testing.T) {
	var reqs []spec.Requirement
	// REQ-A-01 depends on REQ-A-07: it must come after it.
	reqs = append(reqs, req("REQ-A-01", 1, "REQ-A-07"))
	for i := 2; i <= 7; i++ {
		reqs = append(reqs, req("REQ-A-0"+string(rune('0'+i)), 1))
	}
	got := Static(reqs, 3)
	if len(got) != 3 {
		t.Fatalf("got %d changes, want 3 (7 requirements, at most 3 each)", len(got))
	}
	sizes := []int{len(got[0].Requirements), len(got[1].Requirements), len(got[2].Requirements)}
	if !reflect.DeepEqual(sizes, []int{3, 2, 2}) {
		t.Errorf("chunk sizes = %v, want [3 2 2]", sizes)
	}
	names := []string{got[0].Name, got[1].Name, got[2].Name}
	if !reflect.DeepEqual(names, []string{"a-1", "a-2", "a-3"}) {
		t.Errorf("names = %v", names)
	}
	last := got[2].Requirements
	if last[len(last)-1] != "REQ-A-01" {
		t.Errorf("REQ-A-01 should follow REQ-A-07: %v", got)
	}
	p := &Plan{Changes: got, Requirements: reqs}
	if err := Validate(p, Limits{MaxRequirementsPerChange: 3}); err != nil {
		t.Errorf("static plan does not validate: %v", err)
	}
}

func TestValidate(t *testing.T) {
	reqs := []spec.Requirement{req("REQ-A-01", 1), req("REQ-A-02", 1, "REQ-A-01"), req("REQ-B-01", 1)}
	tests := []struct {
		name     string
		changes  []Change
		deferred []Deferred
		want     []string
	}{
		{
			name: "valid",
			changes: []Change{
				{Name: "a", Requirements: []string{"REQ-A-01"}},
				{Name: "b", Requirements: []string{"REQ-A-02", "REQ-B-01"}, DependsOn: []string{"a"}},
			},
		},
		{
			name: "cycle",
			changes: []Change{
				{Name: "a", Requirements: []string{"REQ-A-01"}, DependsOn: []string{"c"}},
				{Name: "b", Requirements: []string{"REQ-A-02"}, DependsOn: []string{"a"}},
				{Name: "c", Requirements: []string{"REQ-B-01"}, DependsOn: []string{"b"}},
			},
			want: []string{"dependency cycle: a → c → b → a"},
		},
		{
			name: "names, self, unknown",
			changes: []Change{
				{Name: "Bad_Name", Requirements: []string{"REQ-A-01", "REQ-A-02"}},
				{Name: "x", Requirements: []string{"REQ-B-01"}, DependsOn: []string{"x", "nope"}},
				{Name: "x"},
			},
			want: []string{
				`change name "Bad_Name" is not kebab-case`,
				`change "x" is declared twice`,
				`change "x" depends on itself`,
				`change "x" depends on unknown change "nope"`,
			},
		},
		{
			name: "reserved and long names",
			changes: []Change{
				{Name: "archive", Requirements: []string{"REQ-A-01", "REQ-A-02"}},
				{Name: strings.Repeat("a", 65), Requirements: []string{"REQ-B-01"}},
				{Name: strings.Repeat("b", 64)},
			},
			want: []string{
				`change name "archive" is reserved: openspec/changes/archive holds the archived changes`,
				`change name "` + strings.Repeat("a", 65) + `" is 65 characters long, more than the limit of 64`,
			},
		},
		{
			name: "coverage",
			changes: []Change{
				{Name: "a", Requirements: []string{"REQ-A-01", "REQ-Z-09"}},
				{Name: "b", Requirements: []string{"REQ-A-01"}},
			},
			deferred: []Deferred{{Requirement: "REQ-A-02", Reason: " "}},
			want: []string{
				`change "a" covers REQ-Z-09, which no spec file defines`,
				`REQ-A-01 is covered by both "a" and "b"`,
				`deferred REQ-A-02 needs a reason`,
				`REQ-B-01 is not covered by any change`,
			},
		},
		{
			// The suggestion is another change, never the change itself.
			name: "no self suggestion",
			changes: []Change{
				{Name: "a", Requirements: []string{"REQ-A-01", "REQ-A-02"}, DependsOn: []string{"b"}},
				{Name: "store", Requirements: []string{"REQ-B-01"}},
			},
			want: []string{`change "a" depends on unknown change "b": `},
		},
		{
			name: "limit",
			changes: []Change{
				{Name: "a", Requirements: []string{"REQ-A-01", "REQ-A-02", "REQ-B-01"}},
			},
			want: []string{`change "a" has 3 requirements, more than the limit of 2`},
		},
		{
			name: "requirement order",
			changes: []Change{
				{Name: "a", Requirements: []string{"REQ-A-01"}},
				{Name: "b", Requirements: []string{"REQ-A-02", "REQ-B-01"}},
			},
			want: []string{`REQ-A-02 in change "b" depends on REQ-A-01 in change "a", but "b" does not depend on "a"`},
		},
		{
			name:     "depends on deferred",
			changes:  []Change{{Name: "b", Requirements: []string{"REQ-A-02", "REQ-B-01"}}},
			deferred: []Deferred{{Requirement: "REQ-A-01", Reason: "next release"}},
			want:     []string{`REQ-A-02 in change "b" depends on REQ-A-01, which is deferred`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Plan{Changes: tt.changes, Deferred: tt.deferred, Requirements: reqs}
			err := Validate(p, Limits{MaxRequirementsPerChange: 2 + boolInt(tt.name != "limit")})
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("Validate = %v, want *InvalidError", err)
			}
			var got []string
			for _, p := range inv.Problems {
				got = append(got, p.Message)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("problems:\n%s\nwant %d", strings.Join(got, "\n"), len(tt.want))
			}
			for i, w := range tt.want {
				if strings.HasSuffix(w, ": ") {
					if got[i] != strings.TrimSuffix(w, ": ") {
						t.Errorf("problem %d = %q, want %q", i, got[i], strings.TrimSuffix(w, ": "))
					}
					continue
				}
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("problem %d = %q, want prefix %q", i, got[i], w)
				}
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestMakeWithoutModel: a strategy that asks a model, given none, is a
// NeedsModelError, never replaced by the static strategy.
func TestMakeWithoutModel(t *testing.T) {
	for _, s := range []string{"single", "three-phase", "auto"} {
		cfg := &config.Project{Name: "p", Planner: config.Planner{Strategy: s, MaxRequirementsPerChange: 6}}
		_, err := Make(cfg, &spec.Spec{Requirements: []spec.Requirement{req("REQ-A-01", 1)}}, Record{}, Fingerprint{})
		var nm *NeedsModelError
		if !errors.As(err, &nm) || nm.Strategy != s {
			t.Errorf("Make with strategy %q = %v, want a NeedsModelError", s, err)
		}
	}
}

func TestMakeOrdersTopologically(t *testing.T) {
	cfg := &config.Project{Name: "p", Planner: config.Planner{Strategy: "static", MaxRequirementsPerChange: 6}}
	s := &spec.Spec{Requirements: []spec.Requirement{req("REQ-Z-01", 1), req("REQ-A-01", 1, "REQ-Z-01")}}
	p, err := Make(cfg, s, Record{}, Fingerprint{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Changes[0].Name != "z" || p.Changes[1].Name != "a" {
		t.Errorf("order = %s, %s; want z before a", p.Changes[0].Name, p.Changes[1].Name)
	}
}

func TestFingerprintChanges(t *testing.T) {
	cfg := &config.Project{Name: "p"}
	a, err := NewFingerprint(cfg, map[string][]byte{"spec.md": []byte("one")}, "abc", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	same, _ := NewFingerprint(cfg, map[string][]byte{"spec.md": []byte("one")}, "abc", nil, nil)
	if a.Sum != same.Sum || len(a.Changes(same)) != 0 {
		t.Fatalf("same inputs, different fingerprints: %v", a.Changes(same))
	}
	cfg2 := &config.Project{Name: "p", MaxParallel: 4}
	b, _ := NewFingerprint(cfg2, map[string][]byte{"spec.md": []byte("two"), "more.md": nil}, "def", map[string][]byte{"openspec/specs/a/spec.md": []byte("x")}, nil)
	want := []string{
		"the configuration (set.cue and its modules) changed",
		"spec file spec.md changed",
		"spec file more.md was added",
		"git HEAD moved from abc to def",
		"the living specs on main (openspec/specs) changed",
	}
	if got := a.Changes(b); !reflect.DeepEqual(got, want) {
		t.Errorf("Changes =\n%q\nwant\n%q", got, want)
	}
	if a.Sum == b.Sum {
		t.Error("different inputs, same sum")
	}
}

// Budgets and the sentinel bound and supervise a run, and learn's
// settings and a learning's signature are setctl learn's; they do not
// shape its plan: changing them leaves the fingerprint as it was, so a
// saved plan stays valid and a paused run resumes under the new budget.
// Any other field changes it, a learning's text too.
func TestFingerprintLeavesOutBudgetsAndSentinel(t *testing.T) {
	base := func() *config.Project {
		p := &config.Project{Name: "x", MainBranch: "main", Gates: map[string]config.Gate{"test": {Kind: "exec", Run: []string{"go", "test"}}}}
		p.Budgets.Tokens = map[string]int{"S": 10}
		p.Learn = config.Learn{Threshold: 2, ExpireAfter: 5}
		p.Learnings = map[string]config.Learning{"doc": {Kind: config.LearningConvention, Text: "Doc it.", Enabled: true, Signature: "verify gate doc: x"}}
		return p
	}
	sum := func(p *config.Project) string {
		f, err := NewFingerprint(p, map[string][]byte{"spec.md": []byte("# spec\n")}, "abc", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return f.Sum
	}
	want := sum(base())
	raised := base()
	raised.Budgets.Tokens["S"] = 1000
	raised.Budgets.Tokens["run"] = 5000
	raised.Budgets.Retries.Verify = 9
	raised.Sentinel.Heartbeat = config.Duration(time.Second)
	raised.Sentinel.Rules = map[string]config.SentinelRule{"stall": {When: "false", Action: "warn"}}
	raised.Learn = config.Learn{Threshold: 3, ExpireAfter: 10}
	raised.Learnings["doc"] = config.Learning{Kind: config.LearningConvention, Text: "Doc it.", Enabled: true, Signature: "verify gate doc: y"}
	if got := sum(raised); got != want {
		t.Errorf("budgets, sentinel, learn and signatures changed the fingerprint")
	}
	reworded := base()
	reworded.Learnings["doc"] = config.Learning{Kind: config.LearningConvention, Text: "Document it.", Enabled: true, Signature: "verify gate doc: x"}
	if sum(reworded) == want {
		t.Errorf("a learning's text did not change the fingerprint")
	}
	if reworded.Learnings["doc"].Signature == "" {
		t.Error("NewFingerprint cleared the project's signature")
	}
	gated := base()
	gated.Gates["test"] = config.Gate{Kind: "exec", Run: []string{"go", "test", "-race"}}
	if sum(gated) == want {
		t.Errorf("a gate's command did not change the fingerprint")
	}
}

package plan

import (
	"reflect"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/spec"
)

// The static strategy gives each change its domain's planner.scopes, the
// globs whose entry is true, sorted; a domain without any gets none.
func TestStaticScopeByDomain(t *testing.T) {
	cfg := &config.Project{Name: "p", Planner: config.Planner{Strategy: "static", MaxRequirementsPerChange: 1,
		Scopes: map[string]map[string]bool{
			"links": {"internal/links/**": true, "internal/routes.go": true, "cmd/old": false},
		}}}
	s := &spec.Spec{Requirements: []spec.Requirement{req("REQ-LINKS-01", 1), req("REQ-LINKS-02", 1), req("REQ-STATS-01", 1)}}
	p, err := Make(cfg, s, Record{}, Fingerprint{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, c := range p.Changes {
		got[c.Name] = c.Scope
	}
	links := []string{"internal/links/**", "internal/routes.go"}
	want := map[string][]string{"links-1": links, "links-2": links, "stats": nil}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scopes = %q, want %q", got, want)
	}
}

// A static plan uses the planning learnings whose serialise globs keep
// its changes apart, and no other: it asks no model to be given the
// conventions or the other planning learnings. A model's plan uses every
// convention and planning learning (Used with modelled).
func TestStaticPlanLearnings(t *testing.T) {
	cfg := &config.Project{Name: "p", Planner: config.Planner{Strategy: "static", MaxRequirementsPerChange: 1},
		Learnings: map[string]config.Learning{
			"routes-apart": {Kind: config.LearningPlanning, Text: "Keep route changes apart.", Serialise: []string{"internal/routes.go"}, Enabled: true},
			"small":        {Kind: config.LearningPlanning, Text: "One route per change.", Enabled: true},
			"doc-comment":  {Kind: config.LearningConvention, Text: "Every file has a comment.", Enabled: true},
			"old-apart":    {Kind: config.LearningPlanning, Text: "Off.", Serialise: []string{"go.mod"}, Enabled: false},
			"no-printf":    {Kind: config.LearningRule, Text: "no printf", Pattern: "Printf", Enabled: true},
		}}
	s := &spec.Spec{Requirements: []spec.Requirement{req("REQ-LINKS-01", 1)}}
	p, err := Make(cfg, s, Record{}, Fingerprint{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"routes-apart"}; !reflect.DeepEqual(p.Learnings, want) {
		t.Errorf("static plan learnings = %v, want %v", p.Learnings, want)
	}
	if got, want := Used(cfg, true), []string{"doc-comment", "routes-apart", "small"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Used(modelled) = %v, want %v", got, want)
	}
}

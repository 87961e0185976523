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

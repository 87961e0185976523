package graph

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/plan"
)

// Changes whose scopes may touch a crossCutting file wait for those
// before them in the dispatch order, except the ones they depend on; a
// change without a scope may touch any file; the plan's text says why.
func TestBuildCrossCuttingWaits(t *testing.T) {
	cfg := smallConfig()
	cfg.CrossCutting = map[string]bool{"internal/routes.go": true, "schema/*.sql": true, "old.go": false}
	scoped := func(name string, scope ...string) plan.Change {
		c := change(name, "S")
		c.Scope = scope
		return c
	}
	after := scoped("after", "internal/routes.go")
	after.DependsOn = []string{"alpha"}
	p := &plan.Plan{Project: "p", Changes: []plan.Change{
		scoped("alpha", "internal/alpha/**", "internal/routes.go"),
		scoped("bravo", "internal/**"),
		scoped("charlie", "web/**"),
		scoped("delta", "schema/users.sql", "old.go"),
		change("echo", "S"), // no scope: any file
		after,
	}}
	g, err := Build(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]Wait{}
	for _, c := range g.Changes {
		if len(c.Waits) > 0 {
			got[c.Name] = c.Waits
		}
	}
	routes := []string{"internal/routes.go"}
	// The order is alpha, after (on the critical path), bravo, charlie,
	// delta, echo; after depends on alpha and so waits for it anyway.
	want := map[string][]Wait{
		"bravo": {{Change: "alpha", Files: routes}, {Change: "after", Files: routes}},
		"echo": {{Change: "alpha", Files: routes}, {Change: "after", Files: routes},
			{Change: "bravo", Files: routes}, {Change: "delta", Files: []string{"schema/*.sql"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("waits (-want +got):\n%s\norder %v", diff, g.Order)
	}
	var out bytes.Buffer
	if err := Text(&out, g, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if line := "    scope         internal/**\n    waits for     alpha: both touch internal/routes.go · after: both touch internal/routes.go\n"; !strings.Contains(out.String(), line) {
		t.Errorf("plan text lacks %q:\n%s", line, out.String())
	}
}

// Without crossCutting globs nothing waits.
func TestBuildNoCrossCutting(t *testing.T) {
	p := &plan.Plan{Project: "p", Changes: []plan.Change{change("a", "S"), change("b", "S")}}
	g, err := Build(p, smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range g.Changes {
		if c.Waits != nil {
			t.Errorf("%s waits for %v", c.Name, c.Waits)
		}
	}
}

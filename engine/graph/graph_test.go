package graph

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/plan"
)

// smallConfig runs one verify gate for features and one integration gate.
func smallConfig() *config.Project {
	return &config.Project{
		Name: "p",
		Gates: map[string]config.Gate{
			"build": {Kind: config.KindExec, Mode: config.ModeRun, Order: 10},
			"test":  {Kind: config.KindExec, Mode: config.ModeRun, Order: 30},
		},
		Stacks:      map[string]config.Stack{"feature": {"build": {}}},
		Integration: config.Stack{"test": {}},
		Agent:       config.Agent{Adapter: "claude"},
		Runner:      config.Runner{Kind: "host"},
	}
}

func change(name, size string, deps ...string) plan.Change {
	return plan.Change{Name: name, Type: "feature", Size: size, DependsOn: deps}
}

func TestBuildChain(t *testing.T) {
	p := &plan.Plan{Project: "p", Changes: []plan.Change{change("a", "S")}}
	g, err := Build(p, smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	wantNodes := []string{
		"a/dispatch", "a/agent", "a/verify/build", "a/queue", "a/integrate",
		"a/archive", "a/integration/test", "a/merge",
	}
	var nodes []string
	for _, n := range g.Nodes {
		nodes = append(nodes, n.ID)
	}
	if diff := cmp.Diff(wantNodes, nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	var wantEdges []Edge
	for i := 1; i < len(wantNodes); i++ {
		wantEdges = append(wantEdges, Edge{From: wantNodes[i-1], To: wantNodes[i], Kind: EdgeNext})
	}
	if diff := cmp.Diff(wantEdges, g.Edges); diff != "" {
		t.Errorf("edges (-want +got):\n%s", diff)
	}
	if got := g.Nodes[2]; got.Kind != NodeVerify || got.Gate != "build" {
		t.Errorf("verify node = %+v", got)
	}
}

func TestBuildDependencies(t *testing.T) {
	// a diamond: a → b, a → c, b and c → d; plus e alone.
	p := &plan.Plan{Changes: []plan.Change{
		change("d", "S", "c", "b"),
		change("b", "L", "a"),
		change("c", "M", "a"),
		change("a", "S"),
		change("e", "M"),
	}}
	g, err := Build(p, smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	var deps []Edge
	for _, e := range g.Edges {
		if e.Kind == EdgeDependency {
			deps = append(deps, e)
		}
	}
	wantDeps := []Edge{
		{From: "a/merge", To: "b/dispatch", Kind: EdgeDependency},
		{From: "a/merge", To: "c/dispatch", Kind: EdgeDependency},
		{From: "b/merge", To: "d/dispatch", Kind: EdgeDependency},
		{From: "c/merge", To: "d/dispatch", Kind: EdgeDependency},
	}
	if diff := cmp.Diff(wantDeps, deps); diff != "" {
		t.Errorf("dependency edges (-want +got):\n%s", diff)
	}

	// Priorities: d 1, b 5+1, c 3+1, a 1+6, e 3. a's path outweighs e,
	// and once a is merged b (6) goes before e (3) and c (4).
	if diff := cmp.Diff([]string{"a", "b", "c", "e", "d"}, g.Order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b", "d"}, g.CriticalPath); diff != "" {
		t.Errorf("critical path (-want +got):\n%s", diff)
	}
	if g.CriticalWeight != 7 {
		t.Errorf("critical weight = %d, want 7", g.CriticalWeight)
	}
	levels := map[string]int{}
	critical := map[string]bool{}
	for _, c := range g.Changes {
		levels[c.Name] = c.Level
		critical[c.Name] = c.Critical
	}
	if diff := cmp.Diff(map[string]int{"a": 0, "b": 1, "c": 1, "d": 2, "e": 0}, levels); diff != "" {
		t.Errorf("levels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]bool{"a": true, "b": true, "c": false, "d": true, "e": false}, critical); diff != "" {
		t.Errorf("critical (-want +got):\n%s", diff)
	}
	d, _ := g.Change("d")
	if diff := cmp.Diff([]string{"b", "c"}, d.DependsOn); diff != "" {
		t.Errorf("d.DependsOn (-want +got):\n%s", diff)
	}
	a, _ := g.Change("a")
	if diff := cmp.Diff([]string{"b", "c"}, a.Dependents); diff != "" {
		t.Errorf("a.Dependents (-want +got):\n%s", diff)
	}
}

func TestBuildTopologicalOrder(t *testing.T) {
	g, err := Build(fixturePlan(), fixtureConfig())
	if err != nil {
		t.Fatal(err)
	}
	pos := map[string]int{}
	for i, n := range g.Order {
		pos[n] = i
	}
	for _, c := range g.Changes {
		for _, d := range c.DependsOn {
			if pos[d] >= pos[c.Name] {
				t.Errorf("%s comes before its dependency %s in %v", c.Name, d, g.Order)
			}
		}
	}
	var names []string
	for _, c := range g.Changes {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, g.Order) {
		t.Errorf("Changes %v are not in Order %v", names, g.Order)
	}
	ids := map[string]bool{}
	for _, n := range g.Nodes {
		ids[n.ID] = true
	}
	for _, e := range g.Edges {
		if !ids[e.From] || !ids[e.To] {
			t.Errorf("edge %v joins an unknown node", e)
		}
	}
}

func TestCriticalPathTieBreak(t *testing.T) {
	// b and c weigh the same: the path goes through the smaller name, and
	// so does the dispatch order.
	p := &plan.Plan{Changes: []plan.Change{
		change("root", "M"),
		change("c", "M", "root"),
		change("b", "M", "root"),
		change("leaf", "S", "b", "c"),
	}}
	g, err := Build(p, smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"root", "b", "leaf"}, g.CriticalPath); diff != "" {
		t.Errorf("critical path (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"root", "b", "c", "leaf"}, g.Order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name    string
		changes []plan.Change
		want    string
	}{
		{"cycle", []plan.Change{change("a", "S", "c"), change("b", "S", "a"), change("c", "S", "b")},
			"dependency cycle: a → c → b → a"},
		{"self", []plan.Change{change("a", "S", "a")}, "dependency cycle: a → a"},
		{"unknown dependency", []plan.Change{change("a", "S", "zz")}, `change "a" depends on unknown change "zz"`},
		{"duplicate", []plan.Change{change("a", "S"), change("a", "M")}, `change "a" is declared twice`},
		{"no stack", []plan.Change{{Name: "a", Type: "docs", Size: "S"}}, `change "a": no stack for change type "docs"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(&plan.Plan{Changes: tt.changes}, smallConfig())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Build error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestBuildEmpty(t *testing.T) {
	g, err := Build(&plan.Plan{Project: "p"}, smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 0 || len(g.CriticalPath) != 0 || g.CriticalWeight != 0 {
		t.Errorf("empty plan gave %+v", g)
	}
}

func TestBuildChangeDetails(t *testing.T) {
	g, err := Build(fixturePlan(), fixtureConfig())
	if err != nil {
		t.Fatal(err)
	}
	admin, _ := g.Change("admin")
	if admin.Agent != "codex" || admin.Model != "gpt-5-codex" {
		t.Errorf("admin agent = %s (%s), want the change's override", admin.Agent, admin.Model)
	}
	stats, _ := g.Change("stats")
	if stats.Agent != "claude" || stats.Model != "claude-sonnet-4-5" {
		t.Errorf("stats agent = %s (%s), want the project's", stats.Agent, stats.Model)
	}
	want := []SkippedGate{{Gate: "lint", Reason: `when: change.size != "S" is false`, Stage: StageVerify}}
	if diff := cmp.Diff(want, stats.Skipped); diff != "" {
		t.Errorf("stats skipped (-want +got):\n%s", diff)
	}
}

func TestBuildEmptyJSON(t *testing.T) {
	g, err := Build(&plan.Plan{Project: "p"}, smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := JSON(&b, g); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "null") {
		t.Errorf("empty graph JSON has a null list:\n%s", b.String())
	}
}

// Package graph is the execution graph of a plan: for every change the
// chain of steps it goes through (dispatch, agent, the gates of its verify
// stack, the merge queue, merging main in, the archive of its OpenSpec
// delta, the integration stack, the fast-forward of main), the dependency
// edges between changes, the dispatch order and the critical path; and the
// renderers that show it as text, Graphviz DOT, Mermaid, JSON and
// markdown.
//
// A Graph is a plain value computed once from a validated plan and its
// project config; nothing in it refers back to CUE, and rendering it twice
// gives the same bytes.
package graph

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	set "github.com/set-engine/set"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/plan"
)

// Kinds of node. A change's nodes always come in this order.
const (
	NodeDispatch    = "dispatch"
	NodeAgent       = "agent"
	NodeVerify      = "verify" // one per gate of the verify stack
	NodeQueue       = "queue"
	NodeIntegrate   = "integrate" // merge main into the change's branch
	NodeIntegration = "integration"
	NodeMerge       = "merge" // fast-forward main
	NodeArchive     = "archive"
)

// Kinds of edge.
const (
	// EdgeNext links two consecutive steps of one change.
	EdgeNext = "next"
	// EdgeDependency links D/merge to C/dispatch when change C depends on
	// change D: a change is dispatched only once its dependencies are merged.
	EdgeDependency = "dependency"
)

// Graph is the execution graph of one plan.
//
// Invariants: Changes and Order list the same changes in the same order, a
// topological order (every change after its dependencies) in which ties go
// to the higher Priority, then to the smaller name; Nodes hold each
// change's steps in run order, changes in Order; every Edge joins two
// Nodes; CriticalPath runs from a root to a leaf along dependency edges and
// its weights sum to CriticalWeight.
type Graph struct {
	Project  string `json:"project"`
	Strategy string `json:"strategy,omitempty"`
	// Fingerprint is a short form of the plan's fingerprint ("" if none).
	Fingerprint string `json:"fingerprint,omitempty"`
	// Requirements counts the distinct requirements the changes cover.
	Requirements int `json:"requirements"`
	// Deferred counts the requirements the plan defers.
	Deferred int `json:"deferred,omitempty"`
	// Runner is the project's default runner kind; a GateStep whose Runner
	// differs overrides it.
	Runner string `json:"runner,omitempty"`
	// RunnerBase is the base of the default runner when it is a container
	// runner ("from golang:1.26").
	RunnerBase string `json:"runnerBase,omitempty"`
	// MaxParallel bounds how many changes are worked on at once.
	MaxParallel int `json:"maxParallel,omitempty"`
	// Speculative is how many queued changes the merge queue integrates
	// at once, stacked (mergeQueue.speculative; 1: one at a time).
	Speculative int `json:"speculative,omitempty"`
	// MainBranch is the branch changes start from and integrate into;
	// drawings name it.
	MainBranch string `json:"mainBranch,omitempty"`
	// Profile is the project's profile ("golang"), and SetModule the
	// module and version of set's CUE module that set.cue was checked
	// against: always the one the binary embeds
	// ("github.com/set-engine/set@v0 v0.1.0").
	Profile   string `json:"profile,omitempty"`
	SetModule string `json:"setModule,omitempty"`

	Order   []string      `json:"order"`
	Changes []ChangeGraph `json:"changes"`
	Nodes   []Node        `json:"nodes"`
	Edges   []Edge        `json:"edges"`

	CriticalPath   []string `json:"criticalPath"`
	CriticalWeight int      `json:"criticalWeight"`
}

// ChangeGraph is what the graph knows about one change: the plan's change
// and where it stands in the graph.
type ChangeGraph struct {
	// Change is the plan's change with its agent resolved: Agent is the
	// change's own adapter, else the project's; Model the change's own,
	// else the project's agent.models.implement ("" lets the adapter
	// choose). DependsOn is sorted by name and Requirements and DependsOn
	// are never nil.
	plan.Change
	// Status is where the change stands in the project's run (a status of
	// engine/state: pending, implementing, merged…), for a caller that
	// knows the run to fill in; Build leaves it empty. The text and JSON
	// renderers show it.
	Status string `json:"status,omitempty"`
	// Dependents are the changes that depend on this one, sorted by name.
	Dependents []string `json:"dependents"`

	// Weight is plan.SizeWeight(Size).
	Weight int `json:"weight"`
	// Level is the length of the longest chain of dependencies above the
	// change: 0 for a change without dependencies, else one more than the
	// highest Level among its dependencies.
	Level int `json:"level"`
	// Priority is the weight of the heaviest path from this change
	// (included) down to a change nothing depends on. Ready changes are
	// dispatched highest Priority first, so the critical path starts first.
	Priority int `json:"priority"`
	// Critical reports whether the change is on the graph's CriticalPath.
	Critical bool `json:"critical,omitempty"`

	// Verify and Integration are the resolved gates of the change's verify
	// stack (cfg.Stacks[Type]) and of the integration stack, in run order.
	Verify      []GateStep `json:"verify"`
	Integration []GateStep `json:"integration"`
	// Skipped are the gates of both stacks that do not run for this change,
	// verify first, each stage sorted by name.
	Skipped []SkippedGate `json:"skipped,omitempty"`
	// Learnings are the names of the adopted convention learnings that
	// every prompt of the change's agent carries (config.Project's
	// ConventionsFor its type and scope), by name: what setctl plan shows
	// of them for a plan no model planner was given them for.
	Learnings []string `json:"learnings,omitempty"`
	// Titles gives, by requirement ID, the OpenSpec name of each of the
	// change's requirements when the plan comes from the folders people
	// wrote (the openspec strategy), whose IDs set made up and who know
	// their requirements by name; nil for the other strategies.
	Titles map[string]string `json:"titles,omitempty"`
	// Waits are the changes earlier in Order that this one is not at work
	// alongside, because both may touch a crossCutting file: dispatch
	// holds it until each has merged or failed. In Order.
	Waits []Wait `json:"waits,omitempty"`
}

// Node is one step of one change. Gate is set on verify and integration
// nodes only.
type Node struct {
	ID     string `json:"id"`
	Change string `json:"change"`
	Kind   string `json:"kind"`
	Gate   string `json:"gate,omitempty"`
}

// Edge says that To starts only after From has finished.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Kind string `json:"kind"`
}

// NodeID is the ID of a change's node of the given kind. For NodeVerify and
// NodeIntegration pass the gate; IDs are "<change>/<kind>" and
// "<change>/<kind>/<gate>".
func NodeID(change, kind, gate string) string {
	if gate == "" {
		return change + "/" + kind
	}
	return change + "/" + kind + "/" + gate
}

// Change returns the change with the given name.
func (g *Graph) Change(name string) (*ChangeGraph, bool) {
	for i := range g.Changes {
		if g.Changes[i].Name == name {
			return &g.Changes[i], true
		}
	}
	return nil, false
}

// Build turns a validated plan and its project config into the execution
// graph. It does not trust the validation: duplicate names, unknown
// dependencies, a dependency cycle, a change type without a stack or a
// stack naming an unknown gate are errors, and Build always terminates.
func Build(p *plan.Plan, cfg *config.Project) (*Graph, error) {
	byName := make(map[string]*plan.Change, len(p.Changes))
	for i := range p.Changes {
		c := &p.Changes[i]
		if _, dup := byName[c.Name]; dup {
			return nil, fmt.Errorf("change %q is declared twice", c.Name)
		}
		byName[c.Name] = c
	}
	for _, c := range p.Changes {
		for _, d := range c.DependsOn {
			if _, ok := byName[d]; !ok {
				return nil, fmt.Errorf("change %q depends on unknown change %q", c.Name, d)
			}
		}
	}

	d, err := analyse(p)
	if err != nil {
		return nil, err
	}
	g := &Graph{
		Project:        p.Project,
		Strategy:       p.Strategy,
		Fingerprint:    p.Fingerprint.Short(),
		Deferred:       len(p.Deferred),
		Runner:         cfg.Runner.Kind,
		RunnerBase:     runnerBase(cfg),
		MaxParallel:    cfg.MaxParallel,
		Speculative:    cfg.MergeQueue.Speculative,
		MainBranch:     cfg.MainBranch,
		Profile:        cfg.Profile,
		SetModule:      set.ModulePath + " " + set.ModuleVersion,
		Order:          nonNil(d.Order),
		Changes:        []ChangeGraph{},
		Nodes:          []Node{},
		Edges:          []Edge{},
		CriticalPath:   nonNil(d.critical),
		CriticalWeight: d.criticalWeight,
	}
	var titles map[string]string
	if p.Strategy == config.StrategyOpenSpec {
		titles = map[string]string{}
		for _, r := range p.Requirements {
			titles[r.ID] = r.Title
		}
	}
	covered := map[string]bool{}
	for _, name := range d.Order {
		c := byName[name]
		for _, r := range c.Requirements {
			covered[r] = true
		}
		cg, err := changeGraph(cfg, c, d)
		if err != nil {
			return nil, fmt.Errorf("change %q: %w", name, err)
		}
		for _, r := range c.Requirements {
			if title, ok := titles[r]; ok {
				if cg.Titles == nil {
					cg.Titles = map[string]string{}
				}
				cg.Titles[r] = title
			}
		}
		g.Changes = append(g.Changes, cg)
	}
	g.Requirements = len(covered)
	addWaits(g, cfg.CrossCuttingGlobs())
	for i := range g.Changes {
		addNodes(g, &g.Changes[i])
	}
	return g, nil
}

func changeGraph(cfg *config.Project, c *plan.Change, d *dag) (ChangeGraph, error) {
	stack, ok := cfg.Stacks[c.Type]
	if !ok {
		return ChangeGraph{}, fmt.Errorf("no stack for change type %q", c.Type)
	}
	verify, skippedVerify, err := ResolveStack(cfg, stack, c)
	if err != nil {
		return ChangeGraph{}, fmt.Errorf("verify stack %q: %w", c.Type, err)
	}
	integration, skippedIntegration, err := ResolveStack(cfg, cfg.Integration, c)
	if err != nil {
		return ChangeGraph{}, fmt.Errorf("integration stack: %w", err)
	}
	var skipped []SkippedGate
	for _, s := range skippedVerify {
		s.Stage = StageVerify
		skipped = append(skipped, s)
	}
	for _, s := range skippedIntegration {
		s.Stage = StageIntegration
		skipped = append(skipped, s)
	}
	deps := slices.Sorted(slices.Values(c.DependsOn)) // a copy
	rc := *c
	rc.Requirements = nonNil(slices.Clone(c.Requirements))
	rc.Scope = slices.Clone(c.Scope)
	rc.Because = maps.Clone(c.Because)
	rc.DependsOn = nonNil(slices.Compact(deps))
	rc.Agent = cmp.Or(c.Agent, cfg.Agent.Adapter)
	rc.Model = cmp.Or(c.Model, cfg.Agent.Models.Implement)
	var learnings []string
	for _, l := range cfg.ConventionsFor(c.Type, c.Scope) {
		learnings = append(learnings, l.Name)
	}
	return ChangeGraph{
		Learnings:   learnings,
		Change:      rc,
		Dependents:  nonNil(slices.Clone(d.Dependents[c.Name])),
		Weight:      plan.SizeWeight(c.Size),
		Level:       d.level[c.Name],
		Priority:    d.Priority[c.Name],
		Critical:    slices.Contains(d.critical, c.Name),
		Verify:      nonNil(verify),
		Integration: nonNil(integration),
		Skipped:     skipped,
	}, nil
}

// addNodes appends the change's nodes and the edges into and along its
// chain: first the dependency edges into its dispatch (by dependency name),
// then the chain in run order.
func addNodes(g *Graph, cg *ChangeGraph) {
	name := cg.Name
	nodes := changeNodes(cg)
	for _, n := range nodes {
		g.Nodes = append(g.Nodes, n.Node)
	}
	for _, dep := range cg.DependsOn {
		g.Edges = append(g.Edges, Edge{
			From: NodeID(dep, NodeMerge, ""),
			To:   NodeID(name, NodeDispatch, ""),
			Kind: EdgeDependency,
		})
	}
	for i := 1; i < len(nodes); i++ {
		g.Edges = append(g.Edges, Edge{From: nodes[i-1].ID, To: nodes[i].ID, Kind: EdgeNext})
	}
}

// stepNode is a Node with its change and the gate step it runs, if any.
type stepNode struct {
	Node
	change *ChangeGraph
	step   *GateStep
}

// changeNodes lists a change's nodes in run order. It is the one place
// that lays out a change's chain: Build and the renderers use it.
func changeNodes(c *ChangeGraph) []stepNode {
	n := func(kind string, s *GateStep) stepNode {
		gate := ""
		if s != nil {
			gate = s.Gate
		}
		return stepNode{Node{ID: NodeID(c.Name, kind, gate), Change: c.Name, Kind: kind, Gate: gate}, c, s}
	}
	out := []stepNode{n(NodeDispatch, nil), n(NodeAgent, nil)}
	for i := range c.Verify {
		out = append(out, n(NodeVerify, &c.Verify[i]))
	}
	// The archive (the OpenSpec fold) is part of the tree the integration
	// stack checks, so it comes before the stack; the fast-forward is last.
	out = append(out, n(NodeQueue, nil), n(NodeIntegrate, nil), n(NodeArchive, nil))
	for i := range c.Integration {
		out = append(out, n(NodeIntegration, &c.Integration[i]))
	}
	return append(out, n(NodeMerge, nil))
}

func nonNil[S ~[]E, E any](s S) S {
	if s == nil {
		return S{}
	}
	return s
}

// runnerBase is the base of the project's default runner, if it has one.
func runnerBase(cfg *config.Project) string {
	if cfg.Runner.Kind == config.RunnerDagger && cfg.Runner.Dagger != nil {
		return cfg.Runner.Dagger.Base()
	}
	return ""
}

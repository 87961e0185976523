package graph

import (
	"cmp"
	"fmt"
	"unicode/utf8"

	"github.com/set-engine/set/engine/config"
)

// DrawOptions configure the drawn renderers, DOT and Mermaid.
type DrawOptions struct {
	// Detail draws every step of a change as its own node: dispatch, the
	// agent, each verify gate, the merge queue, integrate main, archive,
	// each integration gate and fast-forward main. Without it a change
	// is three nodes, its agent, its verify stack and its integration into
	// main, each stack node listing its gates in run order, so that a plan
	// of ten changes fits a screen.
	Detail bool
}

// drawNode is one node as DOT and Mermaid draw it.
type drawNode struct {
	id    string
	label []string
	cond  bool // a single gate decided at run time
	warn  bool // a single non-blocking gate
	moves bool // main moves here
}

// drawNodes lists the nodes of a change of g in run order, in the form
// opts asks for. The first node is where dependency edges arrive and the
// node with ID NodeID(change, NodeMerge, "") is where they leave, in both
// forms.
func drawNodes(g *Graph, c *ChangeGraph, opts DrawOptions) []drawNode {
	if !opts.Detail {
		return []drawNode{
			{id: NodeID(c.Name, NodeAgent, ""), label: agentLabel(c)},
			{id: NodeID(c.Name, NodeVerify, ""), label: stackLabel("verify", c.Verify, g.Runner)},
			{id: NodeID(c.Name, NodeMerge, ""), label: stackLabel("integration → "+g.MainBranch, c.Integration, g.Runner), moves: true},
		}
	}
	var out []drawNode
	for _, n := range changeNodes(c) {
		out = append(out, drawNode{
			id:    n.ID,
			label: n.label(g),
			cond:  n.step != nil && n.step.Condition != "",
			warn:  n.step != nil && n.step.Mode == config.ModeWarn,
			moves: n.Kind == NodeMerge,
		})
	}
	return out
}

// stackLabelWidth is the width, in characters, at which a stack node's
// list of gates wraps.
const stackLabelWidth = 40

// stackLabel is the label of a stack drawn as one node: the title, the
// gates in run order marked as in Text ("?" decided at run time, "(warn)"
// non-blocking, "[runner]" off the default runner) and wrapped, then one
// line per run-time condition. An empty stack shows "—".
func stackLabel(title string, steps []GateStep, defaultRunner string) []string {
	lines := []string{title}
	if len(steps) == 0 {
		return append(lines, "—")
	}
	const sep = " · "
	cur := ""
	for _, s := range steps {
		gate := s.Gate
		if s.Condition != "" {
			gate += markCondition
		}
		if s.Mode == config.ModeWarn {
			gate += markWarn
		}
		if s.Runner != "" && s.Runner != cmp.Or(defaultRunner, config.RunnerHost) {
			gate += "[" + s.Runner + "]"
		}
		switch {
		case cur == "":
			cur = gate
		case utf8.RuneCountInString(cur+sep+gate) > stackLabelWidth:
			lines = append(lines, cur)
			cur = gate
		default:
			cur += sep + gate
		}
	}
	lines = append(lines, cur)
	for _, s := range steps {
		if s.Condition != "" {
			lines = append(lines, s.Gate+markCondition+" when "+s.Condition)
		}
	}
	return lines
}

// agentLabel names the agent that implements a change, and its model.
func agentLabel(c *ChangeGraph) []string {
	agent := c.Agent
	if c.Model != "" {
		agent += " (" + c.Model + ")"
	}
	if agent == "" {
		return []string{"agent"}
	}
	return []string{"agent", agent}
}

// label is the lines shown for a node of g in the detailed drawing. Gates
// running elsewhere than g's default runner name their runner.
func (n stepNode) label(g *Graph) []string {
	switch n.Kind {
	case NodeDispatch:
		return []string{"dispatch"}
	case NodeAgent:
		return agentLabel(n.change)
	case NodeQueue:
		return []string{"merge queue"}
	case NodeIntegrate:
		return []string{"integrate " + g.MainBranch}
	case NodeMerge:
		return []string{"fast-forward " + g.MainBranch}
	case NodeArchive:
		return []string{"archive"}
	}
	s := n.step
	first := n.Kind + ": " + s.Gate
	if s.Mode == config.ModeWarn {
		first += " (warn)"
	}
	lines := []string{first}
	if s.Runner != "" && s.Runner != cmp.Or(g.Runner, config.RunnerHost) {
		lines = append(lines, "["+s.Runner+"]")
	}
	if s.Condition != "" {
		lines = append(lines, "when: "+s.Condition)
	}
	return lines
}

// graphTitle is the caption of a drawn graph.
func graphTitle(g *Graph) string {
	t := "Plan for " + g.Project
	if g.Fingerprint != "" {
		t += " (" + g.Fingerprint + ")"
	}
	return t
}

// changeTitle is the caption of a change's cluster or subgraph.
func changeTitle(c *ChangeGraph) string {
	return fmt.Sprintf("%s · %s · %s", c.Name, c.Type, c.Size)
}

// dependencyEdge is an edge between changes as drawn: from the node of a
// dependency where main moves to the change's first node, labelled with
// why the change waits for it ("" when the planner did not say).
type dependencyEdge struct{ from, to, why string }

// dependencyEdges are the edges between changes as drawn, changes in graph
// order and dependencies by name (the order of Graph.Edges).
func dependencyEdges(g *Graph, opts DrawOptions) []dependencyEdge {
	var out []dependencyEdge
	for i := range g.Changes {
		c := &g.Changes[i]
		to := drawNodes(g, c, opts)[0].id
		for _, d := range c.DependsOn {
			out = append(out, dependencyEdge{NodeID(d, NodeMerge, ""), to, c.Because[d]})
		}
	}
	return out
}

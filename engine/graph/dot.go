package graph

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/set-engine/set/engine/config"
)

// DOT writes the graph in Graphviz's DOT language: one cluster per change
// (in dispatch order) holding its steps, chain edges inside the clusters,
// and bold dependency edges between them. Every ID is quoted and every
// label escaped, so any change or gate name yields valid DOT. Warn gates
// are dashed, gates with a run-time condition are drawn as hexagons with
// the condition in their label, and changes on the critical path have a
// thick red border.
func DOT(w io.Writer, g *Graph) error {
	var b strings.Builder
	b.WriteString("digraph set {\n")
	fmt.Fprintf(&b, "  graph [label=%s, labelloc=t, fontname=\"Helvetica\"];\n",
		dotQuote(graphTitle(g)))
	b.WriteString("  node [shape=box, style=rounded, fontname=\"Helvetica\", fontsize=10];\n")
	b.WriteString("  edge [fontname=\"Helvetica\", fontsize=9];\n")

	for i := range g.Changes {
		c := &g.Changes[i]
		b.WriteString("\n")
		fmt.Fprintf(&b, "  subgraph %s {\n", dotQuote("cluster_"+c.Name))
		fmt.Fprintf(&b, "    label=%s;\n", dotQuote(changeTitle(c)))
		if c.Critical {
			b.WriteString("    color=\"red\";\n    penwidth=2;\n")
		}
		nodes := changeNodes(c)
		for _, n := range nodes {
			fmt.Fprintf(&b, "    %s [%s];\n", dotQuote(n.ID), dotAttrs(n, g.Runner))
		}
		for j := 1; j < len(nodes); j++ {
			fmt.Fprintf(&b, "    %s -> %s;\n", dotQuote(nodes[j-1].ID), dotQuote(nodes[j].ID))
		}
		b.WriteString("  }\n")
	}

	var deps []Edge
	for _, e := range g.Edges {
		if e.Kind == EdgeDependency {
			deps = append(deps, e)
		}
	}
	if len(deps) > 0 {
		b.WriteString("\n")
	}
	for _, e := range deps {
		fmt.Fprintf(&b, "  %s -> %s [style=bold];\n", dotQuote(e.From), dotQuote(e.To))
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func dotAttrs(n stepNode, defaultRunner string) string {
	attrs := []string{"label=" + dotLabel(n.label(defaultRunner))}
	var style []string
	if n.step != nil {
		if n.step.Condition != "" {
			attrs = append(attrs, "shape=hexagon")
		}
		if n.step.Mode == config.ModeWarn {
			style = append(style, "dashed")
		}
	}
	if n.Kind == NodeMerge {
		style = append(style, "bold")
	}
	if len(style) > 0 {
		attrs = append(attrs, "style="+dotQuote(strings.Join(append([]string{"rounded"}, style...), ",")))
	}
	return strings.Join(attrs, ", ")
}

// dotQuote makes s a quoted DOT ID: backslashes and double quotes are
// escaped and line breaks become spaces, so the ID reads back as s.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\r", " ", "\n", " ")
	return `"` + r.Replace(s) + `"`
}

// dotLabel quotes a label of one or more lines; each line is escaped like
// dotQuote and lines are joined with DOT's centred line break.
func dotLabel(lines []string) string {
	q := make([]string, len(lines))
	for i, l := range lines {
		q[i] = strings.TrimSuffix(strings.TrimPrefix(dotQuote(l), `"`), `"`)
	}
	return `"` + strings.Join(q, `\n`) + `"`
}

// label is the lines shown for a node in DOT and Mermaid. Gates running
// elsewhere than defaultRunner name their runner.
func (n stepNode) label(defaultRunner string) []string {
	switch n.Kind {
	case NodeDispatch:
		return []string{"dispatch"}
	case NodeAgent:
		agent := n.change.Agent
		if n.change.Model != "" {
			agent += " (" + n.change.Model + ")"
		}
		if agent == "" {
			return []string{"agent"}
		}
		return []string{"agent", agent}
	case NodeQueue:
		return []string{"merge queue"}
	case NodeIntegrate:
		return []string{"integrate main"}
	case NodeMerge:
		return []string{"fast-forward main"}
	case NodeArchive:
		return []string{"archive"}
	}
	s := n.step
	first := n.Kind + ": " + s.Gate
	if s.Mode == config.ModeWarn {
		first += " (warn)"
	}
	lines := []string{first}
	if s.Runner != "" && s.Runner != cmp.Or(defaultRunner, "host") {
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

package graph

import (
	"fmt"
	"io"
	"strings"
)

// DOT writes the graph in Graphviz's DOT language: one cluster per change
// (in dispatch order) holding its nodes (see DrawOptions), chain edges
// inside the clusters, and bold dependency edges between them, labelled
// with why when the planner said (Change.Because). Every ID is
// quoted and every label escaped, so any change or gate name yields valid
// DOT. The node where main moves is bold and changes on the critical path
// have a thick red border; in the detailed form warn gates are dashed and
// gates with a run-time condition are drawn as hexagons with the condition
// in their label.
func DOT(w io.Writer, g *Graph, opts DrawOptions) error {
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
		nodes := drawNodes(g, c, opts)
		for _, n := range nodes {
			fmt.Fprintf(&b, "    %s [%s];\n", dotQuote(n.id), dotAttrs(n))
		}
		for j := 1; j < len(nodes); j++ {
			fmt.Fprintf(&b, "    %s -> %s;\n", dotQuote(nodes[j-1].id), dotQuote(nodes[j].id))
		}
		b.WriteString("  }\n")
	}

	deps := dependencyEdges(g, opts)
	if len(deps) > 0 {
		b.WriteString("\n")
	}
	for _, e := range deps {
		attrs := "style=bold"
		if e.why != "" {
			attrs += ", label=" + dotQuote(e.why)
		}
		fmt.Fprintf(&b, "  %s -> %s [%s];\n", dotQuote(e.from), dotQuote(e.to), attrs)
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func dotAttrs(n drawNode) string {
	attrs := []string{"label=" + dotLabel(n.label)}
	var style []string
	if n.cond {
		attrs = append(attrs, "shape=hexagon")
	}
	if n.warn {
		style = append(style, "dashed")
	}
	if n.moves {
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

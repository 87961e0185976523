package graph

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Mermaid writes the graph as a Mermaid flowchart: one subgraph per change
// (in dispatch order) holding its nodes (see DrawOptions), chain edges
// inside, thick dependency edges between them, labelled with why when the
// planner said (Change.Because). Node and subgraph IDs are
// sanitised to [A-Za-z0-9_] and are distinct for distinct graph IDs;
// labels are quoted with inner quotes as #quot;. Critical changes are
// outlined; in the detailed form warn gates are dashed and run-time
// conditional gates are hexagons with the condition in their label.
func Mermaid(w io.Writer, g *Graph, opts DrawOptions) error {
	ids := newMermaidIDs()
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	var warn, conds, critical []string
	for i := range g.Changes {
		c := &g.Changes[i]
		sub := ids.id("c_" + c.Name)
		if c.Critical {
			critical = append(critical, sub)
		}
		fmt.Fprintf(&b, "  subgraph %s[%s]\n", sub, mermaidLabel([]string{changeTitle(c)}))
		b.WriteString("    direction TB\n")
		nodes := drawNodes(g, c, opts)
		for _, n := range nodes {
			id := ids.id(n.id)
			open, closing := "[", "]"
			if n.cond {
				open, closing = "{{", "}}"
				conds = append(conds, id)
			}
			if n.warn {
				warn = append(warn, id)
			}
			fmt.Fprintf(&b, "    %s%s%s%s\n", id, open, mermaidLabel(n.label), closing)
		}
		for j := 1; j < len(nodes); j++ {
			fmt.Fprintf(&b, "    %s --> %s\n", ids.id(nodes[j-1].id), ids.id(nodes[j].id))
		}
		b.WriteString("  end\n")
	}
	for _, e := range dependencyEdges(g, opts) {
		if e.why != "" {
			fmt.Fprintf(&b, "  %s ==>|%s| %s\n", ids.id(e.from), mermaidLabel([]string{e.why}), ids.id(e.to))
			continue
		}
		fmt.Fprintf(&b, "  %s ==> %s\n", ids.id(e.from), ids.id(e.to))
	}
	b.WriteString("  classDef warn stroke-dasharray: 5 5\n")
	b.WriteString("  classDef cond stroke-width:2px\n")
	b.WriteString("  classDef critical stroke:#d33,stroke-width:2px\n")
	for _, cl := range []struct {
		name string
		ids  []string
	}{{"warn", warn}, {"cond", conds}, {"critical", critical}} {
		if len(cl.ids) > 0 {
			fmt.Fprintf(&b, "  class %s %s\n", strings.Join(cl.ids, ","), cl.name)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mermaidIDs hands out Mermaid IDs: a graph ID always gets the same one,
// and two graph IDs never share one.
type mermaidIDs struct {
	byKey map[string]string
	used  map[string]bool
}

func newMermaidIDs() *mermaidIDs {
	return &mermaidIDs{byKey: map[string]string{}, used: map[string]bool{}}
}

// id returns the Mermaid ID of key: its letters and digits kept, "/"
// becoming "__" and every other character "_", suffixed with _2, _3… when
// that is already taken by another key. The first key to ask keeps the
// plain form, so the result depends only on the order of calls.
func (m *mermaidIDs) id(key string) string {
	if id, ok := m.byKey[key]; ok {
		return id
	}
	var b strings.Builder
	for _, r := range key {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '/':
			b.WriteString("__")
		default:
			b.WriteByte('_')
		}
	}
	base := b.String()
	id := base
	for n := 2; m.used[id]; n++ {
		id = base + "_" + strconv.Itoa(n)
	}
	m.used[id] = true
	m.byKey[key] = id
	return id
}

// mermaidLabel quotes label lines for Mermaid. Characters Mermaid would
// read as markup are written as entity codes: '#' first (it starts an
// entity), then quotes and angle brackets; lines are joined with <br/>.
func mermaidLabel(lines []string) string {
	r := strings.NewReplacer("#", "#35;", `"`, "#quot;", "<", "#lt;", ">", "#gt;", "\n", " ")
	q := make([]string, len(lines))
	for i, l := range lines {
		q[i] = r.Replace(l)
	}
	return `"` + strings.Join(q, "<br/>") + `"`
}

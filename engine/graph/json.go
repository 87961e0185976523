package graph

import (
	"encoding/json"
	"io"
)

// JSON writes the graph as indented JSON, fields in struct order, followed
// by a newline. Characters such as < > & are written as themselves, so
// conditions stay readable.
func JSON(w io.Writer, g *Graph) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(g)
}

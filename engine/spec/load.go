package spec

import (
	"path"
	"sort"
	"strings"

	"github.com/set-engine/set/engine/diag"
)

// ParseAll is Load without I/O: contents maps a file name to its content and
// names gives the order. A name missing from contents is parsed as an empty
// file; a name listed twice (after path.Clean) is parsed once.
//
// Besides each file's own diagnostics, ParseAll reports as errors: an ID
// already used in an earlier file (naming the first position), a Depends on
// entry naming an unknown ID or the requirement itself, and a dependency
// cycle (printed as "A → B → A").
func ParseAll(names []string, contents map[string][]byte, opts Options) *Spec {
	var files []fileResult
	listed := map[string]bool{}
	for _, n := range names {
		if key := path.Clean(n); !listed[key] {
			listed[key] = true
			files = append(files, parseFile(n, contents[n], opts))
		}
	}
	return link(files)
}

// reqRef locates a requirement: file index and index in that file.
type reqRef struct{ file, req int }

// link combines parsed files into a Spec and runs the checks that need all
// of them.
func link(files []fileResult) *Spec {
	diags := make([][]diag.Diagnostic, len(files))
	for i, f := range files {
		diags[i] = append([]diag.Diagnostic(nil), f.diags...)
	}
	errorf := func(fi, line int, format string, args ...any) {
		diags[fi] = append(diags[fi], diag.Errorf(files[fi].file, line, format, args...))
	}

	// Duplicates within a file were reported by parseFile; report the first
	// reuse of an ID in each later file.
	first := map[string]reqRef{}
	var order []reqRef // first occurrences, in spec order
	type idInFile struct {
		id   string
		file int
	}
	reported := map[idInFile]bool{}
	for fi, f := range files {
		for ri, r := range f.reqs {
			ref, ok := first[r.ID]
			if !ok {
				first[r.ID] = reqRef{fi, ri}
				order = append(order, reqRef{fi, ri})
				continue
			}
			key := idInFile{r.ID, fi}
			if ref.file != fi && !reported[key] {
				reported[key] = true
				r0 := files[ref.file].reqs[ref.req]
				errorf(fi, r.Line, "duplicate requirement ID %s (first at %s:%d)", r.ID, r0.File, r0.Line)
			}
		}
	}

	for fi, f := range files {
		for ri, r := range f.reqs {
			for di, d := range r.DependsOn {
				line := depLine(f, ri, di, r.Line)
				switch _, known := first[d]; {
				case d == r.ID:
					errorf(fi, line, "requirement %s depends on itself", r.ID)
				case !known:
					errorf(fi, line, "requirement %s depends on unknown requirement %s", r.ID, d)
				}
			}
		}
	}

	for _, c := range cycles(files, first, order) {
		start := files[c[0].file].reqs[c[0].req]
		next := files[c[1].file].reqs[c[1].req].ID
		line := start.Line
		for di, d := range start.DependsOn {
			if d == next {
				line = depLine(files[c[0].file], c[0].req, di, start.Line)
			}
		}
		ids := make([]string, 0, len(c)+1)
		for _, ref := range c {
			ids = append(ids, files[ref.file].reqs[ref.req].ID)
		}
		ids = append(ids, start.ID)
		errorf(c[0].file, line, "dependency cycle: %s", strings.Join(ids, " → "))
	}

	s := &Spec{}
	for fi, f := range files {
		s.Requirements = append(s.Requirements, f.reqs...)
		sort.SliceStable(diags[fi], func(i, j int) bool { return diags[fi][i].Pos.Line < diags[fi][j].Pos.Line })
		s.Diagnostics = append(s.Diagnostics, diags[fi]...)
	}
	return s
}

// depLine is the line on which the di-th dependency of requirement ri was
// written, or def when unknown.
func depLine(f fileResult, ri, di, def int) int {
	if ri < len(f.depLines) && di < len(f.depLines[ri]) {
		return f.depLines[ri][di]
	}
	return def
}

// cycles returns one dependency cycle per strongly connected component of
// more than one requirement, over the first occurrence of each ID. Each cycle
// starts at the component's earliest requirement in spec order, is a shortest
// cycle through it, and cycles are in the order of their starts.
func cycles(files []fileResult, first map[string]reqRef, order []reqRef) [][]reqRef {
	index := make(map[reqRef]int, len(order))
	for i, ref := range order {
		index[ref] = i
	}
	adj := make([][]int, len(order))
	for i, ref := range order {
		for _, d := range files[ref.file].reqs[ref.req].DependsOn {
			if to, ok := first[d]; ok && index[to] != i {
				adj[i] = append(adj[i], index[to])
			}
		}
	}
	comp := scc(adj)
	var out [][]reqRef
	done := map[int]bool{}
	for start := range order {
		c := comp[start]
		if done[c] {
			continue
		}
		done[c] = true
		path := shortestCycle(adj, comp, start)
		if len(path) < 2 {
			continue
		}
		refs := make([]reqRef, len(path))
		for i, n := range path {
			refs[i] = order[n]
		}
		out = append(out, refs)
	}
	return out
}

// scc returns the strongly connected component of every node (Tarjan).
func scc(adj [][]int) []int {
	n := len(adj)
	idx, low, comp := make([]int, n), make([]int, n), make([]int, n)
	onStack := make([]bool, n)
	for i := range idx {
		idx[i], comp[i] = -1, -1
	}
	var stack []int
	next, ncomp := 0, 0
	var visit func(v int)
	visit = func(v int) {
		idx[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range adj[v] {
			if idx[w] < 0 {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], idx[w])
			}
		}
		if low[v] == idx[v] {
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = ncomp
				if w == v {
					break
				}
			}
			ncomp++
		}
	}
	for v := range adj {
		if idx[v] < 0 {
			visit(v)
		}
	}
	return comp
}

// shortestCycle returns the nodes of a shortest cycle through start within
// its component (start first), or nil when there is none. Edges are explored
// in the order written, so the result is deterministic.
func shortestCycle(adj [][]int, comp []int, start int) []int {
	parent := map[int]int{start: -1}
	queue := []int{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range adj[v] {
			if comp[w] != comp[start] {
				continue
			}
			if w == start {
				var path []int
				for u := v; u >= 0; u = parent[u] {
					path = append(path, u)
				}
				for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
					path[i], path[j] = path[j], path[i]
				}
				return path
			}
			if _, seen := parent[w]; !seen {
				parent[w] = v
				queue = append(queue, w)
			}
		}
	}
	return nil
}

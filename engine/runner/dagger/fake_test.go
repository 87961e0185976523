package dagger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// fakeEngine is an engineconn.EngineConn that answers the GraphQL the
// Dagger SDK sends, without an engine. The SDK (v0.21.9, through
// github.com/dagger/querybuilder) sends one chain of fields per request,
// with every argument inlined (objects passed as arguments are resolved to
// IDs by earlier `{…{id}}` requests, issued concurrently), for example
//
//	query Query {container{from(address:"golang"){withExec(args:["go"], expect:ANY){sync}}}}
//	query Query {node(id:"id-3"){... on Container{exitCode}}}
//
// The fake parses each request, records it, and replies with an object
// that mirrors the selection path down to the leaf. It records every leaf
// path in a canonical form: fields joined by dots, arguments sorted by
// name, and every fake ID replaced by the chain that produced it, so a
// recorded query reads as the whole pipeline, e.g.
//
//	container.from(address:"golang").withExec(args:["go"],expect:ANY).sync
//	container.from(address:"golang").withExec(args:["go"],expect:ANY).exitCode
//
// (`node(id:…)`, `load…FromID(id:…)` and `... on T` fragments disappear
// into the expansion of the ID).
type fakeEngine struct {
	// Answers, set before use.
	exitCode       int
	stdout, stderr string
	fail           map[string]string // leaf field → GraphQL error message
	block          map[string]bool   // leaf field → wait for the request's context to end

	mu      sync.Mutex
	queries []string          // canonical leaf paths, in arrival order
	raw     []string          // the queries as sent, in arrival order
	objects map[string]string // fake ID → canonical chain of the object it names
	ids     map[string]string // canonical chain → its fake ID
	closed  bool
}

func newFakeEngine() *fakeEngine {
	return &fakeEngine{fail: map[string]string{}, block: map[string]bool{},
		objects: map[string]string{}, ids: map[string]string{}}
}

func (f *fakeEngine) Host() string { return "fake-engine" }

func (f *fakeEngine) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// sent returns the queries as the SDK sent them.
func (f *fakeEngine) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.raw)
}

// recorded returns the canonical queries received so far.
func (f *fakeEngine) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.queries)
}

// Do answers one GraphQL request.
func (f *fakeEngine) Do(req *http.Request) (*http.Response, error) {
	var body struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
		return nil, err
	}
	if len(body.Variables) > 0 {
		return reply(nil, "fake engine: variables are not supported")
	}
	doc, ok := strings.CutPrefix(body.Query, "query Query ")
	if !ok {
		return reply(nil, "fake engine: not a query: "+body.Query)
	}
	p := &parser{s: doc}
	sel, err := p.selection()
	if err == nil && p.i != len(p.s) {
		err = p.errorf("trailing input")
	}
	if err != nil {
		return reply(nil, err.Error())
	}

	f.mu.Lock()
	f.raw = append(f.raw, doc)
	leaves := f.leaves(sel, "")
	for _, l := range leaves {
		f.queries = append(f.queries, l.path)
	}
	f.mu.Unlock()
	for _, l := range leaves {
		name := l.field
		if f.block[name] {
			<-req.Context().Done()
			return nil, req.Context().Err()
		}
		if msg, ok := f.fail[name]; ok {
			return reply(nil, msg)
		}
	}

	f.mu.Lock()
	data, err := f.answer(sel, "")
	f.mu.Unlock()
	if err != nil {
		return reply(nil, err.Error())
	}
	return reply(data, "")
}

// reply is an HTTP 200 carrying a GraphQL response: data, or an error.
func reply(data any, errMsg string) (*http.Response, error) {
	resp := map[string]any{"data": data}
	if errMsg != "" {
		resp["errors"] = []map[string]any{{"message": errMsg}}
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return nil, err
	}
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"application/json"}},
		Body:       io.NopCloser(bytes.NewReader(b)),
	}, nil
}

// step renders f's own part of a canonical chain; "" for fragments. Call
// with f.mu held.
func (f *fakeEngine) step(fl *field) string {
	if fl.fragment != "" {
		return ""
	}
	if id, ok := fl.args["id"].(string); ok && len(fl.args) == 1 &&
		(fl.name == "node" || strings.HasPrefix(fl.name, "load") && strings.HasSuffix(fl.name, "FromID")) {
		if obj, ok := f.objects[id]; ok {
			return obj
		}
	}
	if len(fl.args) == 0 {
		return fl.name
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(fl.args)) {
		parts = append(parts, k+":"+f.render(fl.args[k]))
	}
	return fl.name + "(" + strings.Join(parts, ",") + ")"
}

// render writes an argument value canonically, expanding fake IDs.
func (f *fakeEngine) render(v any) string {
	switch v := v.(type) {
	case string:
		if obj, ok := f.objects[v]; ok {
			return obj
		}
		return strconv.Quote(v)
	case enum:
		return string(v)
	case []any:
		var parts []string
		for _, e := range v {
			parts = append(parts, f.render(e))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			parts = append(parts, k+":"+f.render(v[k]))
		}
		return "{" + strings.Join(parts, ",") + "}"
	default:
		return fmt.Sprint(v)
	}
}

func join(prefix, step string) string {
	switch {
	case step == "":
		return prefix
	case prefix == "":
		return step
	}
	return prefix + "." + step
}

// leafPath is a leaf field and its canonical path.
type leafPath struct{ field, path string }

// leaves lists every leaf below sel.
func (f *fakeEngine) leaves(sel []*field, prefix string) []leafPath {
	var out []leafPath
	for _, fl := range sel {
		p := join(prefix, f.step(fl))
		if len(fl.sel) == 0 {
			out = append(out, leafPath{fl.name, p})
			continue
		}
		out = append(out, f.leaves(fl.sel, p)...)
	}
	return out
}

// answer builds the response object for sel, whose parent object is
// prefix. A fragment adds no level to the response.
func (f *fakeEngine) answer(sel []*field, prefix string) (map[string]any, error) {
	obj := map[string]any{}
	for _, fl := range sel {
		key := fl.name
		if fl.alias != "" {
			key = fl.alias
		}
		p := join(prefix, f.step(fl))
		switch {
		case fl.fragment != "":
			sub, err := f.answer(fl.sel, p)
			if err != nil {
				return nil, err
			}
			maps.Copy(obj, sub)
		case len(fl.sel) > 0:
			sub, err := f.answer(fl.sel, p)
			if err != nil {
				return nil, err
			}
			obj[key] = sub
		default:
			v, err := f.leaf(fl, prefix)
			if err != nil {
				return nil, err
			}
			obj[key] = v
		}
	}
	return obj, nil
}

// leaf answers a scalar field of the object at prefix.
func (f *fakeEngine) leaf(fl *field, prefix string) (any, error) {
	switch fl.name {
	case "id", "sync":
		// sync returns the ID of the object it evaluated.
		if id, ok := f.ids[prefix]; ok {
			return id, nil
		}
		id := fmt.Sprintf("id-%d", len(f.ids)+1)
		f.ids[prefix], f.objects[id] = id, prefix
		return id, nil
	case "exitCode":
		return f.exitCode, nil
	case "stdout":
		return f.stdout, nil
	case "stderr":
		return f.stderr, nil
	case "export":
		return fl.args["path"], nil
	}
	return nil, fmt.Errorf("fake engine: unsupported field %s", fl.name)
}

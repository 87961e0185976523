package dagger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
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
//
// Host reads (host.directory and host.file) behave as the engine's: the
// first read of a set of arguments is kept for the session and answers
// every later request with the same arguments, unless the request says
// noCache, which reads the path again. Each read gets its own ID and is
// recorded with a digest of what the path held at that moment (see
// hostReads), so a test can tell which content a container was built on.
// An ID names the object it was minted for, as the engine's handles name
// a result it holds for the session: loading it (node(id:…)) reads
// nothing again, and its own id is that same ID. builtOn tells which host
// reads an object was built on, through every ID its requests used.
type fakeEngine struct {
	// Answers, set before use.
	exitCode       int
	stdout, stderr string
	version        string            // the engine's version; "" answers SDKEngineVersion
	fail           map[string]string // leaf field → GraphQL error message
	block          map[string]bool   // leaf field → wait for the request's context to end
	die            map[string]string // leaf field → how the engine goes away on it (see dies)
	hold           map[string]*hold  // host path → a request that reads it waits for release

	mu       sync.Mutex
	queries  []string            // canonical leaf paths, in arrival order
	raw      []string            // the queries as sent, in arrival order
	objects  map[string]string   // fake ID → canonical chain of the object it names
	ids      map[string]string   // canonical chain → its fake ID (the latest read, for host reads)
	reads    []hostRead          // host reads, in order
	failRead map[string]string   // host path → the error of a request that reads it (setFailRead)
	asked    map[string]int      // host path → requests that read it, answered or not
	deps     map[string][]string // fake ID → the IDs the request that minted it used
	used     []string            // the IDs the request being answered uses
	closed   bool
}

// hold keeps the requests that read a host path waiting until release is
// closed; arrived is closed when the first one comes.
type hold struct {
	arrived, release chan struct{}
	once             sync.Once
}

func newHold() *hold { return &hold{arrived: make(chan struct{}), release: make(chan struct{})} }

// hostRead is one read of a host path by the fake engine.
type hostRead struct {
	path    string
	id      string // the ID of the directory or file it made
	content string // contentDigest of the path when it was read
}

func newFakeEngine() *fakeEngine {
	return &fakeEngine{fail: map[string]string{}, block: map[string]bool{}, die: map[string]string{},
		failRead: map[string]string{}, asked: map[string]int{}, hold: map[string]*hold{},
		objects: map[string]string{}, ids: map[string]string{}, deps: map[string][]string{}}
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

// hostReads returns the reads of path so far, in order.
func (f *fakeEngine) hostReads(path string) []hostRead {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []hostRead
	for _, r := range f.reads {
		if r.path == path {
			out = append(out, r)
		}
	}
	return out
}

// readRequests is the number of requests that read path so far, whether
// they were answered, failed or were given up.
func (f *fakeEngine) readRequests(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked[path]
}

// setFailRead makes every request that reads path fail with msg, or, with
// msg "", read it again.
func (f *fakeEngine) setFailRead(path, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if msg == "" {
		delete(f.failRead, path)
		return
	}
	f.failRead[path] = msg
}

// fakeID matches a fake ID quoted in a query as sent.
var fakeID = regexp.MustCompile(`"(id-[0-9]+)"`)

// builtOn returns the host reads that the objects named in query (a query
// as sent) were built on, through every ID the requests that made them
// used, in the order of the reads.
func (f *fakeEngine) builtOn(query string) []hostRead {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[string]bool{}
	var walk func(id string)
	walk = func(id string) {
		if seen[id] {
			return
		}
		seen[id] = true
		for _, d := range f.deps[id] {
			walk(d)
		}
	}
	for _, m := range fakeID.FindAllStringSubmatch(query, -1) {
		walk(m[1])
	}
	var out []hostRead
	for _, r := range f.reads {
		if seen[r.id] {
			out = append(out, r)
		}
	}
	return out
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
	paths := hostPaths(sel)
	for _, p := range paths {
		f.asked[p]++
	}
	f.mu.Unlock()
	for _, p := range paths {
		if h := f.hold[p]; h != nil {
			h.once.Do(func() { close(h.arrived) })
			select {
			case <-h.release:
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
		}
		f.mu.Lock()
		msg, ok := f.failRead[p]
		f.mu.Unlock()
		if ok {
			return reply(nil, msg)
		}
	}
	for _, l := range leaves {
		name := l.field
		if f.block[name] {
			<-req.Context().Done()
			return nil, req.Context().Err()
		}
		if msg, ok := f.fail[name]; ok {
			return reply(nil, msg)
		}
		if how, ok := f.die[name]; ok {
			return dies(req, how)
		}
	}

	f.mu.Lock()
	f.used = f.usedIDs(sel)
	data, err := f.answer(sel, "", source{})
	f.mu.Unlock()
	if err != nil {
		return reply(nil, err.Error())
	}
	return reply(data, "")
}

// dies answers req as an engine that went away under it does, how:
//   - "502": the session's answer when its engine died (the CLI of a
//     session proxies to the engine), as seen with a real engine killed
//     mid-gate;
//   - "eof": the connection cut short mid-answer;
//   - "refused": a session that no longer listens;
//   - "shutting": the engine's answer to a call it cancels as it stops
//     gracefully (SIGTERM), as seen with a real engine stopped mid-gate.
func dies(req *http.Request, how string) (*http.Response, error) {
	urlErr := func(err error) error { return &url.Error{Op: "Post", URL: req.URL.String(), Err: err} }
	switch how {
	case "502":
		body := `{"data":null,"errors":[{"message":"http do: Post \"http://dagger/query\": unexpected EOF"}]}`
		return &http.Response{
			StatusCode: http.StatusBadGateway,
			Header:     http.Header{"Content-Type": {"application/json"}},
			Body:       io.NopCloser(strings.NewReader(body)),
		}, nil
	case "eof":
		return nil, urlErr(io.ErrUnexpectedEOF)
	case "refused":
		return nil, urlErr(&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)})
	case "shutting":
		return reply(nil, "engine is shutting down")
	}
	return nil, fmt.Errorf("fake engine: no way to die %q", how)
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

// hostPaths lists the host paths the request sel reads.
func hostPaths(sel []*field) []string {
	var out []string
	for _, fl := range sel {
		if fl.name != "host" {
			continue
		}
		for _, r := range fl.sel {
			if p, ok := r.args["path"].(string); ok && (r.name == "directory" || r.name == "file") {
				out = append(out, p)
			}
		}
	}
	return out
}

// usedIDs lists the known fake IDs that sel passes as arguments, at any
// depth. Call with f.mu held.
func (f *fakeEngine) usedIDs(sel []*field) []string {
	var out []string
	var value func(v any)
	value = func(v any) {
		switch v := v.(type) {
		case string:
			if _, ok := f.objects[v]; ok {
				out = append(out, v)
			}
		case []any:
			for _, e := range v {
				value(e)
			}
		case map[string]any:
			for _, e := range v {
				value(e)
			}
		}
	}
	for _, fl := range sel {
		for _, a := range fl.args {
			value(a)
		}
		out = append(out, f.usedIDs(fl.sel)...)
	}
	return out
}

// loadedID is the ID a node(id:…) or load…FromID(id:…) field loads, ""
// for any other field. Call with f.mu held.
func (f *fakeEngine) loadedID(fl *field) string {
	id, ok := fl.args["id"].(string)
	if !ok || len(fl.args) != 1 || !(fl.name == "node" || strings.HasPrefix(fl.name, "load") && strings.HasSuffix(fl.name, "FromID")) {
		return ""
	}
	if _, ok := f.objects[id]; !ok {
		return ""
	}
	return id
}

// step renders f's own part of a canonical chain; "" for fragments. Call
// with f.mu held.
func (f *fakeEngine) step(fl *field) string {
	if fl.fragment != "" {
		return ""
	}
	if id := f.loadedID(fl); id != "" {
		return f.objects[id]
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

// source is how the object a selection applies to was made.
type source struct {
	read   *field // the host.directory or host.file field that reads it, if one does
	loaded string // the ID it was loaded by (node(id:…)), if it was
}

// answer builds the response object for sel, whose parent object is
// prefix and was made as src says. A fragment adds no level to the
// response.
func (f *fakeEngine) answer(sel []*field, prefix string, src source) (map[string]any, error) {
	obj := map[string]any{}
	for _, fl := range sel {
		key := fl.name
		if fl.alias != "" {
			key = fl.alias
		}
		p := join(prefix, f.step(fl))
		switch {
		case fl.fragment != "":
			sub, err := f.answer(fl.sel, p, src)
			if err != nil {
				return nil, err
			}
			maps.Copy(obj, sub)
		case len(fl.sel) > 0:
			var sub source
			if prefix == "host" && (fl.name == "directory" || fl.name == "file") {
				sub.read = fl
			}
			if prefix == "" {
				sub.loaded = f.loadedID(fl)
			}
			subObj, err := f.answer(fl.sel, p, sub)
			if err != nil {
				return nil, err
			}
			obj[key] = subObj
		default:
			v, err := f.leaf(fl, prefix, src)
			if err != nil {
				return nil, err
			}
			obj[key] = v
		}
	}
	return obj, nil
}

// leaf answers a scalar field of the object at prefix, made as src says.
func (f *fakeEngine) leaf(fl *field, prefix string, src source) (any, error) {
	read := src.read
	switch fl.name {
	case "id", "sync":
		// sync returns the ID of the object it evaluated; an object loaded
		// by its ID is that object.
		if src.loaded != "" {
			return src.loaded, nil
		}
		id, ok := f.ids[prefix]
		if ok && (read == nil || read.args["noCache"] != true) {
			return id, nil
		}
		id = fmt.Sprintf("id-%d", len(f.objects)+1)
		f.ids[prefix], f.objects[id] = id, prefix
		f.deps[id] = f.used
		if read != nil {
			path, _ := read.args["path"].(string)
			f.reads = append(f.reads, hostRead{path: path, id: id, content: contentDigest(path)})
		}
		return id, nil
	case "version":
		if f.version == "" {
			return "v" + SDKEngineVersion, nil
		}
		return f.version, nil
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

// contentDigest is a digest of the files under path (or of the file
// path), their names relative to it and their bytes; "absent" when path
// does not exist.
func contentDigest(path string) string {
	h := sha256.New()
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(path, p)
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		return "absent"
	}
	return hex.EncodeToString(h.Sum(nil))
}

package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/history"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/report"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/state"
)

// run is a project's run as one reading of its journal (orchestrator.run
// is the Apply that writes it, another thing): the run's own events, the
// projection of the journal up to its end and the lock's word on whether
// an apply runs it.
type run struct {
	// id is the run shown; latest whether it is the journal's latest (the
	// only one an apply can be running).
	id     string
	latest bool
	// events are the run's own (history.Run.Own): what its timeline,
	// a change's page and the sentinel's page show, never an earlier
	// run's.
	events []journal.Event
	st     *state.State
	live   report.Liveness
}

// read reads p's run id from its journal (the latest when id is "", as
// the ?run= of a request gives it: see runOf); a project that never ran
// has no events and the state before any. An ID the journal has no run
// of is an errNoSuchRun.
func (p *served) read(id string) (*run, error) {
	v, err := history.Read(p.layout.Dir(), id)
	if errors.Is(err, history.ErrNoRun) || errors.As(err, new(*history.UnknownRunError)) {
		return nil, errNoSuchRun{err}
	}
	if err != nil {
		return nil, err
	}
	rn := &run{id: v.Run.ID, latest: v.Latest, st: v.State, live: v.Live}
	if len(v.Runs) > 0 {
		rn.events = v.Run.Own(v.Journal)
	}
	return rn, nil
}

// eventsOf are the events of change among events, in journal order
// (never nil: a change's page lists them).
func eventsOf(events []journal.Event, change string) []journal.Event {
	out := []journal.Event{}
	for _, e := range events {
		if e.Change == change {
			out = append(out, e)
		}
	}
	return out
}

// errNoSuchRun is a ?run= the journal has no run of: a 404.
type errNoSuchRun struct{ error }

// runOf is the run a request asks for: its ?run=, "" for the latest.
func runOf(r *http.Request) string { return r.URL.Query().Get("run") }

// liveness asks the project's lock whether an apply runs.
func (p *served) liveness() (report.Liveness, error) {
	held, pid, err := state.LockHolder(p.layout.Dir())
	return report.Liveness{Held: held, PID: pid}, err
}

// Overview is the run overview page's data: the report of the run, and
// each change's model usage by role (report.RoleName) for the charts.
type Overview struct {
	Project string        `json:"project"`
	Report  report.Report `json:"report"`
	// Usage maps a change to its model calls by role.
	Usage map[string]map[string]state.Usage `json:"usage"`
	// Links are, by change, where its work can be seen (its commit, its
	// pull request), for the changes that have any.
	Links map[string]Links `json:"links"`
	// LastSeq is the last event the projection applied.
	LastSeq int64 `json:"lastSeq"`
}

// overview is the Overview of the run st projects, at the server's now.
func (s *Server) overview(p *served, st *state.State, live report.Liveness) Overview {
	o := Overview{Project: p.Name, Report: report.Build(st, live, s.opts.Now()), Usage: map[string]map[string]state.Usage{}, LastSeq: st.LastSeq, Links: map[string]Links{}}
	for _, c := range o.Report.Changes {
		if l := linksOf(c, p.Forge); l != (Links{}) {
			o.Links[c.Name] = l
		}
	}
	for _, name := range report.Names(st) {
		roles := map[string]state.Usage{}
		for role, u := range st.Changes[name].Usage {
			r := report.RoleName(role)
			t := roles[r]
			roles[r] = state.Usage{Calls: t.Calls + u.Calls, Tokens: t.Tokens.Add(u.Tokens), CostUSD: t.CostUSD + u.CostUSD}
		}
		o.Usage[name] = roles
	}
	return o
}

// ProjectInfo is one project of the dashboard.
type ProjectInfo struct {
	ID   string     `json:"id"`
	Name string     `json:"name"`
	Root string     `json:"root"`
	Run  report.Run `json:"run"`
	// Error is why its journal cannot be read.
	Error string `json:"error,omitempty"`
}

func (s *Server) serveProjects(w http.ResponseWriter, r *http.Request) {
	out := []ProjectInfo{}
	for i := range s.projects {
		p := &s.projects[i]
		info := ProjectInfo{ID: p.id, Name: p.Name, Root: p.Root}
		if rn, err := p.read(""); err != nil {
			info.Error = err.Error()
		} else {
			info.Run = report.Build(rn.st, rn.live, s.opts.Now()).Run
		}
		out = append(out, info)
	}
	writeJSON(w, out)
}

func (s *Server) serveOverview(w http.ResponseWriter, r *http.Request, p *served) {
	rn, err := p.read(runOf(r))
	if err != nil {
		httpError(w, err)
		return
	}
	writeJSON(w, s.overview(p, rn.st, rn.live))
}

// GraphView is the graph page's data: the execution graph of the run's
// latest plan (nil when the project cannot build it; Error says why), and
// where each change stands.
type GraphView struct {
	Graph *graph.Graph `json:"graph"`
	Error string       `json:"error,omitempty"`
	// Changes are the run's changes in plan order, with their status and
	// dependencies: what the page draws without a Graph.
	Changes []report.Change `json:"changes"`
}

func (s *Server) serveGraph(w http.ResponseWriter, r *http.Request, p *served) {
	rn, err := p.read(runOf(r))
	if err != nil {
		httpError(w, err)
		return
	}
	v := GraphView{Changes: report.Build(rn.st, rn.live, s.opts.Now()).Changes}
	g, err := p.planGraph(rn.events)
	if err != nil {
		v.Error = err.Error()
	}
	if g != nil {
		// Build leaves Status to a caller that knows the run.
		gc := *g
		gc.Changes = slices.Clone(g.Changes)
		for i := range gc.Changes {
			if c := rn.st.Changes[gc.Changes[i].Name]; c != nil {
				gc.Changes[i].Status = string(c.Status)
			}
		}
		v.Graph = &gc
	}
	writeJSON(w, v)
}

// planGraph is the execution graph of the plan of the latest PLAN_CREATED
// of events, built once per plan; nil without an error when the project
// has no graph builder or no plan.
func (p *served) planGraph(events []journal.Event) (*graph.Graph, error) {
	var last *journal.Event
	for i := range events {
		if events[i].Type == journal.PlanCreated {
			last = &events[i]
		}
	}
	if p.Graph == nil || last == nil {
		return nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.graphSeq == last.Seq {
		return p.graph, p.graphErr
	}
	p.graphSeq, p.graph, p.graphErr = last.Seq, nil, nil
	d, err := journal.Decode[journal.PlanCreatedData](*last)
	if err == nil && (len(d.Plan) == 0 || string(d.Plan) == "null") {
		err = errors.New("the run's PLAN_CREATED holds no plan")
	}
	var pl *plan.Plan
	if err == nil {
		pl, err = plan.Decode(d.Plan)
	}
	if err == nil {
		p.graph, err = p.Graph(pl)
	}
	if err != nil {
		p.graphErr = fmt.Errorf("the execution graph of the run's plan: %w", err)
	}
	return p.graph, p.graphErr
}

// ChangeView is a change's detail page's data.
type ChangeView struct {
	// Change is the change as the report has it; State as the projection
	// has it (its retry context, worktree, branch, usage by role).
	Change report.Change `json:"change"`
	State  *state.Change `json:"state"`
	Run    report.Run    `json:"run"`
	// Events are the change's events, in journal order.
	Events []journal.Event `json:"events"`
	// Spans are its activities on the time axis.
	Spans []Span `json:"spans"`
	// AgentLog is the log of its latest agent iteration (running or
	// done), relative to the project; "" before the first.
	AgentLog string `json:"agentLog,omitempty"`
	// Rounds are its verify rounds and integration attempts (see Rounds);
	// Links where its work can be seen.
	Rounds []Round `json:"rounds"`
	Links  Links   `json:"links"`
}

func (s *Server) serveChange(w http.ResponseWriter, r *http.Request, p *served) {
	rn, err := p.read(runOf(r))
	if err != nil {
		httpError(w, err)
		return
	}
	name := r.PathValue("change")
	c := rn.st.Changes[name]
	if c == nil {
		http.Error(w, fmt.Sprintf("no change %q in this run", name), http.StatusNotFound)
		return
	}
	rep := report.Build(rn.st, rn.live, s.opts.Now())
	v := ChangeView{State: c, Run: rep.Run, Spans: []Span{}}
	for _, rc := range rep.Changes {
		if rc.Name == name {
			v.Change = rc
		}
	}
	v.Events = eventsOf(rn.events, name)
	for _, e := range v.Events {
		switch e.Type {
		case journal.AgentSessionDecision:
			if d, err := journal.Decode[journal.AgentSessionDecisionData](e); err == nil && d.Log != "" {
				v.AgentLog = d.Log
			}
		case journal.AgentIteration:
			if d, err := journal.Decode[journal.AgentIterationData](e); err == nil && d.Log != "" {
				v.AgentLog = d.Log
			}
		}
	}
	v.Rounds, v.Links = Rounds(v.Events), linksOf(v.Change, p.Forge)
	for _, sp := range Timeline(rn.events, rep.Run.State == report.Running, s.opts.Now()).Spans {
		if sp.Change == name {
			v.Spans = append(v.Spans, sp)
		}
	}
	writeJSON(w, v)
}

func (s *Server) serveTimeline(w http.ResponseWriter, r *http.Request, p *served) {
	rn, err := p.read(runOf(r))
	if err != nil {
		httpError(w, err)
		return
	}
	running := report.Build(rn.st, rn.live, s.opts.Now()).Run.State == report.Running
	tl := Timeline(rn.events, running, s.opts.Now())
	tl.Changes = report.Names(rn.st)
	tl.Bands = bands(rn.events, tl.End)
	writeJSON(w, tl)
}

func (s *Server) serveSentinel(w http.ResponseWriter, r *http.Request, p *served) {
	rn, err := p.read(runOf(r))
	if err != nil {
		httpError(w, err)
		return
	}
	out := []journal.Event{}
	for _, e := range rn.events {
		// The page shows each from its JSON payload (rule, action, step,
		// facts), so a payload that grows needs no change here.
		if e.Type == journal.SentinelAction {
			out = append(out, e)
		}
	}
	writeJSON(w, out)
}

// maxLogChunk bounds the bytes of a log one response carries.
const maxLogChunk = 1 << 20

// LogChunk is a part of a log: Text from Offset, of a log of Size bytes.
type LogChunk struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
	Size   int64  `json:"size"`
	Text   string `json:"text"`
}

// serveLog serves the log ?path= (a slash path relative to the project,
// below .set/logs) from ?offset= (a negative offset counts from its end,
// for its tail).
func (s *Server) serveLog(w http.ResponseWriter, r *http.Request, p *served) {
	file, rel, err := p.logFile(r.URL.Query().Get("path"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	off, _ := strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
	chunk, err := p.readLog(file, rel, off)
	if errors.As(err, new(errNotALog)) {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err != nil {
		httpError(w, err)
		return
	}
	writeJSON(w, chunk)
}

// logFile is the file of the log rel names, which must be below one of
// the folders logFolder allows.
func (p *served) logFile(rel string) (file, clean string, err error) {
	clean = path.Clean(rel)
	if _, ok := p.logFolder(clean); rel == "" || path.IsAbs(clean) || !ok || strings.Contains(rel, "\\") {
		return "", "", errNotALog{fmt.Errorf("not a log of the run: %q (a log is a path below .set/logs/ or a run's baseline logs, .set/runs/<run>/baseline/)", rel)}
	}
	return filepath.Join(p.Root, filepath.FromSlash(clean)), clean, nil
}

// logFolder is the folder (absolute) that the log clean (a cleaned slash
// path relative to the project) must stay below, links followed: the
// changes' and the dashboard's logs, .set/logs, or, for a baseline gate's
// log, its run's baseline folder (rundir.Layout.BaselineLog). ok is false
// for any other path.
func (p *served) logFolder(clean string) (folder string, ok bool) {
	if strings.HasPrefix(clean, ".set/logs/") {
		return p.layout.Logs(""), true
	}
	parts := strings.Split(clean, "/")
	if len(parts) != 5 || parts[0] != ".set" || parts[1] != rundir.RunsDir || parts[2] == ".." {
		return "", false
	}
	abs, rel := p.layout.BaselineLog(parts[2], "gate")
	if path.Dir(rel) != path.Dir(clean) {
		return "", false
	}
	return filepath.Dir(abs), true
}

// errNotALog is a path the log endpoints do not serve: a 400.
type errNotALog struct{ error }

// readLog reads the log file (named rel, from logFile) from off, at most
// maxLogChunk bytes; a negative off starts that many bytes before its
// end. A file that links out of its logFolder (itself or a folder on its
// way) is an errNotALog: what is read is below that folder, wherever its
// links lead.
func (p *served) readLog(file, rel string, off int64) (LogChunk, error) {
	if real, err := filepath.EvalSymlinks(file); err == nil {
		folder, _ := p.logFolder(rel)
		logs, err := filepath.EvalSymlinks(folder)
		if err != nil {
			return LogChunk{}, err
		}
		if r, err := filepath.Rel(logs, real); err != nil || r == ".." || strings.HasPrefix(r, "../") {
			within, _ := filepath.Rel(p.Root, folder)
			return LogChunk{}, errNotALog{fmt.Errorf("not a log of the run: %q links out of %s", rel, filepath.ToSlash(within))}
		}
	}
	f, err := os.Open(file)
	if err != nil {
		return LogChunk{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return LogChunk{}, err
	}
	size := info.Size()
	if off < 0 {
		off = max(size+off, 0)
	}
	off = min(off, size)
	buf := make([]byte, min(size-off, maxLogChunk))
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return LogChunk{}, err
	}
	return LogChunk{Path: rel, Offset: off, Size: size, Text: string(buf[:n])}, nil
}

func writeJSON(w http.ResponseWriter, v any) { writeJSONStatus(w, http.StatusOK, v) }

// writeJSONStatus answers v as JSON with the status code: its headers go
// before the status, which sends them.
func writeJSONStatus(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// httpError answers a request that failed to read the run: a missing file
// is a 404, anything else a 500, with the error's text.
func httpError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, os.ErrNotExist) || errors.As(err, new(errNoSuchRun)) {
		code = http.StatusNotFound
	}
	http.Error(w, err.Error(), code)
}

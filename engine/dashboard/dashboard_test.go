package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/report"
	"github.com/set-engine/set/engine/state"
)

func TestCheckAddr(t *testing.T) {
	tests := []struct {
		addr         string
		allowRemote  bool
		wantLoopback bool
		wantErr      string
	}{
		{"127.0.0.1:7400", false, true, ""},
		{"127.0.0.2:0", false, true, ""},
		{"localhost:7400", false, true, ""},
		{"[::1]:7400", false, true, ""},
		{"0.0.0.0:7400", false, false, "--addr 0.0.0.0:7400 is not a loopback address: whoever reaches it would see the run's changes, logs and retry contexts; pass --allow-remote"},
		{":7400", false, false, "--addr :7400 is not a loopback address"},
		{"192.168.1.5:80", false, false, "--addr 192.168.1.5:80 is not a loopback address"},
		{"example.com:80", false, false, "--addr example.com:80 is not a loopback address"},
		{"0.0.0.0:7400", true, false, ""},
		{"192.168.1.5:80", true, false, ""},
		{"127.0.0.1", false, false, "--addr 127.0.0.1: missing port in address (want HOST:PORT, such as 127.0.0.1:7400)"},
		{"127.0.0.1:http", false, false, `--addr 127.0.0.1:http: the port "http" is not a number from 0 to 65535`},
	}
	for _, tt := range tests {
		loopback, err := CheckAddr(tt.addr, tt.allowRemote)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("CheckAddr(%q, %v): %v", tt.addr, tt.allowRemote, err)
		case tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)):
			t.Errorf("CheckAddr(%q, %v) error = %v, want it to start with %q", tt.addr, tt.allowRemote, err, tt.wantErr)
		case err == nil && loopback != tt.wantLoopback:
			t.Errorf("CheckAddr(%q, %v) loopback = %v, want %v", tt.addr, tt.allowRemote, loopback, tt.wantLoopback)
		}
	}
}

// serve serves a dashboard of f's project on a test server.
func serve(t *testing.T, f *fixture, opts Options) *httptest.Server {
	t.Helper()
	opts.Projects = append(opts.Projects, Project{Root: f.root, Name: "demo"})
	if opts.Now == nil {
		opts.Now = f.clock
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// serveProject serves a dashboard of f's project alone, named demo, as p
// says, on loopback (as setctl dashboard serves by default), and returns
// the Server with its test server.
func serveProject(t *testing.T, f *fixture, p Project) (*Server, *httptest.Server) {
	t.Helper()
	p.Root, p.Name = f.root, "demo"
	s, err := New(Options{Loopback: true, Now: f.clock, Projects: []Project{p}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

// get GETs path of ts and decodes its JSON into v; it returns the status.
func get(t *testing.T, ts *httptest.Server, path string, v any) int {
	t.Helper()
	resp, err := http.Get(ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK && v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	return resp.StatusCode
}

// getOK is the JSON of a GET of path on ts, failing the test unless it
// answers 200.
func getOK[T any](t *testing.T, ts *httptest.Server, path string) T {
	t.Helper()
	var v T
	if code := get(t, ts, path, &v); code != http.StatusOK {
		t.Fatalf("GET %s: %d", path, code)
	}
	return v
}

func TestOverview(t *testing.T) {
	f := newFixture(t)
	f.lock()
	f.start()
	f.toMerged()
	ts := serve(t, f, Options{})

	o := getOK[Overview](t, ts, "/api/p/0/overview")
	if o.Report.Run.State != report.Running {
		t.Errorf("run state = %q, want running (the lock is held)", o.Report.Run.State)
	}
	if len(o.Report.Changes) != 2 || o.Report.Changes[0].Name != "greet" || o.Report.Changes[1].Name != "farewell" {
		t.Fatalf("changes = %+v, want greet then farewell", o.Report.Changes)
	}
	greet := o.Report.Changes[0]
	if greet.Status != "merged" || greet.Retries.Verify != (report.Budgeted{Used: 1, Budget: 2}) || greet.Tokens != (report.Budgeted{Used: 73000, Budget: 200000}) {
		t.Errorf("greet = %+v", greet)
	}
	if u := o.Usage["greet"]["agent"]; u.Calls != 2 || u.Tokens.Total() != 73000 {
		t.Errorf("greet's agent usage = %+v, want 2 calls, 73000 tokens", u)
	}
	if o.Report.Changes[1].Waiting != "its dependency to reach main: greet (merged)" {
		t.Errorf("farewell waits for %q", o.Report.Changes[1].Waiting)
	}

	var projects []ProjectInfo
	get(t, ts, "/api/projects", &projects)
	if len(projects) != 1 || projects[0].Name != "demo" || projects[0].Run.State != report.Running || projects[0].Run.Changes != 2 {
		t.Errorf("projects = %+v", projects)
	}
	if code := get(t, ts, "/api/p/1/overview", nil); code != http.StatusNotFound {
		t.Errorf("an unknown project: %d, want 404", code)
	}
}

// TestOverviewDuringTheBaseline: while a gate judges main before the
// first dispatch, the overview says the run waits for the baseline and
// which gate runs, not that its changes wait for a free slot.
func TestOverviewDuringTheBaseline(t *testing.T) {
	f := newFixture(t)
	f.lock()
	f.add("", journal.PlanCreatedData{Strategy: "static", Changes: []string{"greet", "farewell"}, Requirements: 2, Plan: json.RawMessage(testPlan)})
	f.add("", journal.RunStartedData{PID: os.Getpid(), Changes: []string{"greet", "farewell"}, MaxParallel: 2, MainBranch: "main"})
	f.add("", journal.BaselineGateStartedData{Gate: "test", Tree: "t", Command: []string{"go", "test", "./..."}, Runner: "host", Log: ".set/runs/run-1/baseline/test.log"})
	ts := serve(t, f, Options{})

	o := getOK[Overview](t, ts, "/api/p/0/overview")
	if b := o.Report.Run.Baseline; b == nil || b.Name != "gate:test" || b.Stage != "baseline" || b.Command != "go test ./..." || b.Log != ".set/runs/run-1/baseline/test.log" {
		t.Errorf("run's baseline = %+v, want gate:test", b)
	}
	const want = "the baseline: gate test runs on main before any change is dispatched"
	if w := o.Report.Changes[0].Waiting; w != want {
		t.Errorf("greet waits for %q", w)
	}
	if w := o.Report.Run.Waiting; w != want {
		t.Errorf("the run waits for %q", w)
	}
}

func TestOverviewOfAProjectThatNeverRan(t *testing.T) {
	ts := serve(t, &fixture{root: t.TempDir(), now: testStart}, Options{})
	o := getOK[Overview](t, ts, "/api/p/0/overview")
	if o.Report.Run.State != report.NoRun || len(o.Report.Changes) != 0 {
		t.Errorf("report = %+v, want no run", o.Report)
	}
}

func TestChange(t *testing.T) {
	f := newFixture(t)
	f.start()
	f.toMerged()
	ts := serve(t, f, Options{})

	v := getOK[ChangeView](t, ts, "/api/p/0/change/greet")
	if v.Change.Name != "greet" || v.State.Branch != "set/greet" || v.AgentLog != ".set/logs/greet/agent-2.log" {
		t.Errorf("change = %+v, branch %q, agent log %q", v.Change, v.State.Branch, v.AgentLog)
	}
	if v.Run.State != report.NotRunning {
		t.Errorf("run state = %q, want not running (no lock, no RUN_FINISHED)", v.Run.State)
	}
	for _, e := range v.Events {
		if e.Change != "greet" {
			t.Errorf("event %d of %q in greet's detail", e.Seq, e.Change)
		}
	}
	if len(v.Events) != 25 {
		t.Errorf("%d events, want greet's 25", len(v.Events))
	}
	if code := get(t, ts, "/api/p/0/change/nope", nil); code != http.StatusNotFound {
		t.Errorf("an unknown change: %d, want 404", code)
	}
}

func TestTimeline(t *testing.T) {
	f := newFixture(t)
	f.start()
	events, err := journal.ReadFile(f.layout.Events())
	if err != nil {
		t.Fatal(err)
	}
	now := f.clock().Add(time.Minute)

	// While the run goes, greet's first iteration runs until now.
	tl := Timeline(events, true, now)
	agent := spansOf(tl, "greet", SpanAgent)
	if len(agent) != 1 || !agent[0].Open || !agent[0].End.Equal(now) || agent[0].Label != "iteration 1 (exec)" {
		t.Fatalf("greet's agent spans while running = %+v", agent)
	}
	// Once it is not, it ends, open, at the last event.
	tl = Timeline(events, false, now)
	if agent := spansOf(tl, "greet", SpanAgent); !agent[0].Open || !agent[0].End.Equal(events[len(events)-1].Time) {
		t.Fatalf("greet's agent span of a stopped run = %+v", agent[0])
	}

	f.toMerged()
	f.finish()
	if events, err = journal.ReadFile(f.layout.Events()); err != nil {
		t.Fatal(err)
	}
	tl = Timeline(events, false, now)
	var got []string
	for _, sp := range tl.Spans {
		if sp.Change == "greet" {
			got = append(got, sp.Kind+" "+sp.Label+": "+sp.Result+" "+sp.End.Sub(sp.Start).String())
		}
		if sp.Open {
			t.Errorf("span %+v still open after RUN_FINISHED", sp)
		}
	}
	want := []string{
		"agent iteration 1 (exec): done 2s",
		"llm implement sonnet: ok 1s",
		"gate verify test #1: fail 1s",
		"agent iteration 2 (exec): done 2s",
		"llm implement sonnet: ok 1s",
		"gate verify test #2: pass 1s",
		"queue merge queue: integrating 1s",
		"integrate integration: merged 3s",
		"gate integration test #1: pass 1s",
		"merge main → abcdef0: merged 0s",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("greet's spans:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if run := spansOf(tl, "", SpanLLM); len(run) != 1 || run[0].Label != "plan opus" {
		t.Errorf("the run's own spans = %+v, want the planner's call", run)
	}
	if !tl.Start.Equal(testStart.Add(time.Second)) || !tl.End.Equal(events[len(events)-1].Time) {
		t.Errorf("axis %s – %s", tl.Start, tl.End)
	}
}

func spansOf(tl TimelineView, change, kind string) []Span {
	var out []Span
	for _, sp := range tl.Spans {
		if sp.Change == change && sp.Kind == kind {
			out = append(out, sp)
		}
	}
	return out
}

func TestTimelineEndpoint(t *testing.T) {
	f := newFixture(t)
	f.start()
	f.toMerged()
	ts := serve(t, f, Options{})
	tl := getOK[TimelineView](t, ts, "/api/p/0/timeline")
	if strings.Join(tl.Changes, ",") != "greet,farewell" || len(tl.Spans) == 0 {
		t.Errorf("timeline rows %v, %d spans", tl.Changes, len(tl.Spans))
	}
}

func TestSentinel(t *testing.T) {
	f := newFixture(t)
	f.start()
	f.toMerged()
	ts := serve(t, f, Options{})
	var events []journal.Event
	get(t, ts, "/api/p/0/sentinel", &events)
	if len(events) != 1 || events[0].Change != "greet" {
		t.Fatalf("sentinel events = %+v", events)
	}
	var d map[string]any
	json.Unmarshal(events[0].Data, &d)
	if d["rule"] != "slow_verify" || d["action"] != "warn" || d["step"] != 1.0 {
		t.Errorf("sentinel action = %v", d)
	}
}

func TestGraph(t *testing.T) {
	f := newFixture(t)
	f.start()
	// Without a graph builder the page gets the changes alone.
	ts := serve(t, f, Options{})
	var v GraphView
	get(t, ts, "/api/p/0/graph", &v)
	if v.Graph != nil || v.Error != "" || len(v.Changes) != 2 || v.Changes[1].DependsOn[0] != "greet" {
		t.Errorf("graph view without a builder = %+v", v)
	}

	cfg := &config.Project{
		Name: "demo", MainBranch: "main", Runner: config.Runner{Kind: "host"},
		Gates:       map[string]config.Gate{"test": {Kind: config.KindExec, Mode: config.ModeRun, Run: []string{"go", "test", "./..."}}},
		Stacks:      map[string]config.Stack{"feature": {"test": {}}},
		Integration: config.Stack{"test": {}},
	}
	builds := 0
	s, err := New(Options{Now: f.clock, Projects: []Project{{Root: f.root, Graph: func(p *plan.Plan) (*graph.Graph, error) {
		builds++
		return graph.Build(p, cfg)
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	ts2 := httptest.NewServer(s)
	defer ts2.Close()
	for range 2 {
		v = GraphView{}
		get(t, ts2, "/api/p/0/graph", &v)
	}
	if v.Graph == nil {
		t.Fatalf("no graph: %s", v.Error)
	}
	if builds != 1 {
		t.Errorf("the graph of one plan was built %d times", builds)
	}
	status := map[string]string{}
	for _, c := range v.Graph.Changes {
		status[c.Name] = c.Status
	}
	if status["greet"] != "implementing" || status["farewell"] != "pending" || v.Graph.Changes[1].Level != 1 {
		t.Errorf("graph changes = %+v", v.Graph.Changes)
	}
}

func TestLog(t *testing.T) {
	f := newFixture(t)
	f.start()
	f.toMerged()
	os.WriteFile(filepath.Join(f.root, "secret.txt"), []byte("no"), 0o644)
	ts := serve(t, f, Options{})

	c := getOK[LogChunk](t, ts, "/api/p/0/log?path=.set/logs/greet/verify-test-1.log")
	if c.Offset != 0 || !strings.HasPrefix(c.Text, "--- FAIL: TestGreet") || c.Size != int64(len(c.Text)) {
		t.Errorf("log = %+v", c)
	}
	get(t, ts, "/api/p/0/log?path=.set/logs/greet/verify-test-1.log&offset=-5", &c)
	if c.Text != "FAIL\n" || c.Offset != c.Size-5 {
		t.Errorf("log tail = %+v", c)
	}
	// A baseline gate's log is in its run's folder (the timeline's
	// baseline spans link it); nothing else of that folder is a log.
	abs, rel := f.layout.BaselineLog("run-1", "test")
	os.MkdirAll(filepath.Dir(abs), 0o755)
	os.WriteFile(abs, []byte("ok\n"), 0o644)
	os.WriteFile(f.layout.RunReport("run-1"), []byte("# report\n"), 0o644)
	if c := getOK[LogChunk](t, ts, "/api/p/0/log?path="+rel); c.Text != "ok\n" || c.Path != rel {
		t.Errorf("baseline log %s = %+v", rel, c)
	}
	for _, bad := range []string{"secret.txt", "../secret.txt", ".set/logs/../../secret.txt", "/etc/passwd", ".set/events.jsonl", "",
		".set/runs/run-1/report.md", ".set/runs/run-1/baseline/../report.md", ".set/runs/../events.jsonl", ".set/runs/run-1/other/test.log"} {
		if code := get(t, ts, "/api/p/0/log?path="+bad, nil); code != http.StatusBadRequest {
			t.Errorf("log %q: %d, want 400", bad, code)
		}
	}
	// A link below .set/logs to a file outside it (a log an agent's
	// code replaced, a folder linked elsewhere) is not a log either.
	os.Symlink(filepath.Join(f.root, "secret.txt"), filepath.Join(f.root, ".set", "logs", "greet", "link.log"))
	os.Symlink(f.root, filepath.Join(f.root, ".set", "logs", "root"))
	for _, bad := range []string{".set/logs/greet/link.log", ".set/logs/root/secret.txt"} {
		if code := get(t, ts, "/api/p/0/log?path="+bad, nil); code != http.StatusBadRequest {
			t.Errorf("log %q, a link out of .set/logs: %d, want 400", bad, code)
		}
	}
	if code := get(t, ts, "/api/p/0/log?path=.set/logs/greet/none.log", nil); code != http.StatusNotFound {
		t.Errorf("a missing log: %d, want 404", code)
	}
}

// sseEvent is one Server-Sent Event.
type sseEvent struct{ name, data string }

// readSSE reads the events of an event stream into a channel.
func readSSE(t *testing.T, ctx context.Context, url string) <-chan sseEvent {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET %s: %s, %s", url, resp.Status, resp.Header.Get("Content-Type"))
	}
	out := make(chan sseEvent, 16)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var ev sseEvent
		for sc.Scan() {
			switch line := sc.Text(); {
			case line == "":
				out <- ev
				ev = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return out
}

// next is the next event of ch named name (others are skipped).
func next(t *testing.T, ch <-chan sseEvent, name string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("the stream ended before a %q event", name)
			}
			if ev.name == name {
				return ev.data
			}
		case <-timeout:
			t.Fatalf("no %q event in 10s", name)
		}
	}
}

func TestStreamEmitsNewEvents(t *testing.T) {
	f := newFixture(t)
	f.lock()
	f.start()
	ts := serve(t, f, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := readSSE(t, ctx, ts.URL+"/api/p/0/stream")

	var o Overview
	json.Unmarshal([]byte(next(t, stream, "overview")), &o)
	if o.Report.Changes[0].Status != "implementing" {
		t.Fatalf("first overview: greet is %s", o.Report.Changes[0].Status)
	}
	f.add("greet", journal.AgentIterationData{Iteration: 1, Result: "done", DurationMS: 1000, Commits: 1})
	f.to("greet", "implementing", "verifying")

	var e journal.Event
	json.Unmarshal([]byte(next(t, stream, "journal")), &e)
	if e.Type != journal.AgentIteration || e.Change != "greet" {
		t.Fatalf("journal event = %+v, want greet's AGENT_ITERATION", e)
	}
	for o.LastSeq != e.Seq+1 {
		o = Overview{}
		json.Unmarshal([]byte(next(t, stream, "overview")), &o)
	}
	if o.Report.Changes[0].Status != "verifying" {
		t.Errorf("greet is %s after the stream's events, want verifying", o.Report.Changes[0].Status)
	}
}

func TestLogStream(t *testing.T) {
	f := newFixture(t)
	f.start()
	ts := serve(t, f, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := readSSE(t, ctx, ts.URL+"/api/p/0/log/stream?path=.set/logs/greet/agent-1.log")
	var c LogChunk
	json.Unmarshal([]byte(next(t, stream, "log")), &c)
	if c.Text != "reading the spec\nwriting greet.go\n" {
		t.Fatalf("first chunk = %+v", c)
	}
	log, err := os.OpenFile(filepath.Join(f.root, ".set/logs/greet/agent-1.log"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	log.WriteString("running go test\n")
	log.Close()
	json.Unmarshal([]byte(next(t, stream, "log")), &c)
	if c.Text != "running go test\n" || c.Offset != int64(len("reading the spec\nwriting greet.go\n")) {
		t.Errorf("next chunk = %+v", c)
	}
}

func TestAccessToken(t *testing.T) {
	f := newFixture(t)
	f.start()
	ts := serve(t, f, Options{Token: "s3cret"})
	for _, path := range []string{"/", "/app.js", "/api/projects", "/api/p/0/overview", "/api/p/0/stream", "/api/p/0/projects?token=wrong"} {
		if code := get(t, ts, path, nil); code != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d, want 401", path, code)
		}
	}
	resp, err := http.Get(ts.URL + "/?token=s3cret")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET / with the token: %s", resp.Status)
	}
	// The page's own requests carry the cookie it was given.
	cookies := resp.Cookies()
	if len(cookies) != 1 || cookies[0].Name != tokenCookie || !cookies[0].HttpOnly {
		t.Fatalf("cookies = %+v", cookies)
	}
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/api/p/0/overview", nil)
	req.AddCookie(cookies[0])
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET with the cookie: %s", resp.Status)
	}
}

func TestLoopbackOnly(t *testing.T) {
	f := newFixture(t)
	f.start()
	ts := serve(t, f, Options{Loopback: true})
	if code := get(t, ts, "/api/projects", nil); code != http.StatusOK {
		t.Errorf("GET on 127.0.0.1: %d", code)
	}
	// A page of another site that resolves its own name to 127.0.0.1
	// (DNS rebinding) sends its name as the host.
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/api/projects", nil)
	req.Host = "attacker.example:7400"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET with host %s: %s, want 403", req.Host, resp.Status)
	}
}

func TestAssetsAreServed(t *testing.T) {
	f := newFixture(t)
	ts := serve(t, f, Options{})
	for path, want := range map[string]string{"/": "text/html", "/app.js": "text/javascript", "/app.css": "text/css"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), want) {
			t.Errorf("GET %s: %s, %s", path, resp.Status, resp.Header.Get("Content-Type"))
		}
	}
}

// TestEveryStatusIsDrawn: the page gives every status a colour
// (statusClass) and a stage (stageOf), save the failed ones, which it
// knows by their prefix: a status it does not name is drawn as pending,
// its stage bar as failed.
func TestEveryStatusIsDrawn(t *testing.T) {
	js, err := assets.ReadFile("assets/app.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range []string{"function statusClass(", "function stageOf("} {
		_, body, ok := strings.Cut(string(js), fn)
		body, _, _ = strings.Cut(body, "\n}\n")
		if !ok {
			t.Fatalf("app.js has no %s", fn)
		}
		for _, s := range state.Statuses() {
			if s.Failed() || s == state.Paused || s == state.DepBlocked || (fn == "function statusClass(" && s == state.Pending) {
				continue
			}
			if !strings.Contains(body, `"`+string(s)+`"`) {
				t.Errorf("app.js's %s) does not name the status %s", fn, s)
			}
		}
	}
	for _, ty := range []journal.Type{journal.Pushing, journal.PullRequestOpened, journal.PullRequestFeedback} {
		if !strings.Contains(string(js), `case "`+string(ty)+`"`) {
			t.Errorf("app.js's describe does not say what %s is", ty)
		}
	}
}

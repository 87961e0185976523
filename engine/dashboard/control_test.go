package dashboard

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/control"
	"github.com/set-engine/set/engine/journal"
)

// controlServer is a dashboard of the fixture's project that can start a
// run with apply (a shell script standing in for setctl apply --yes), with
// the access token token ("" for none).
func controlServer(t *testing.T, f *fixture, token, apply string) *Server {
	t.Helper()
	s, err := New(Options{Loopback: token == "", Token: token, Now: f.clock, Projects: []Project{{
		Root: f.root, Name: "demo",
		Plan:  func(context.Context) (string, error) { return "Plan: 1 change\n  greet\n", nil },
		Apply: &Command{Path: "/bin/sh", Args: []string{"sh", "-c", apply}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// post is a state-changing request as the dashboard's page sends it:
// POST, JSON, from its own origin; edit changes it.
func post(path, body string, edit func(*http.Request)) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7400"+path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Origin", "http://127.0.0.1:7400")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	if edit != nil {
		edit(r)
	}
	return r
}

func answer(s *Server, r *http.Request) (int, string) {
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	body, _ := io.ReadAll(w.Result().Body)
	return w.Code, string(body)
}

// TestControlRefusals: every state-changing request that is not a POST
// of JSON from the dashboard's own page, with the access token in its
// header when the dashboard has one, is refused with a 403 that says
// why, and starts nothing; a GET of a state-changing endpoint changes
// nothing either.
func TestControlRefusals(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name  string
		token string
		req   *http.Request
		code  int
		says  string
	}{
		{"PUT", "", func() *http.Request {
			r := post("/api/p/0/start", "{}", nil)
			r.Method = http.MethodPut
			return r
		}(), 403, "only POST changes a run, not PUT"},
		{"DELETE", "", func() *http.Request {
			r := post("/api/p/0/control", `{"action":"stop"}`, nil)
			r.Method = http.MethodDelete
			return r
		}(), 403, "only POST changes a run"},
		{"a cross-site form", "", post("/api/p/0/start", "", func(r *http.Request) {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.Header.Set("Origin", "https://evil.example")
			r.Header.Del("Sec-Fetch-Site")
		}), 403, "a request from https://evil.example changes nothing here"},
		{"a sandboxed page", "", post("/api/p/0/control", `{"action":"stop"}`, func(r *http.Request) {
			r.Header.Set("Origin", "null")
			r.Header.Del("Sec-Fetch-Site")
		}), 403, "a request from null changes nothing here"},
		{"another site's fetch", "", post("/api/p/0/start", "{}", func(r *http.Request) {
			r.Header.Set("Sec-Fetch-Site", "cross-site")
		}), 403, "Sec-Fetch-Site: cross-site"},
		{"another port of localhost", "", post("/api/p/0/start", "{}", func(r *http.Request) {
			r.Header.Set("Origin", "http://127.0.0.1:8080")
			r.Header.Set("Sec-Fetch-Site", "same-site")
		}), 403, "another site (Sec-Fetch-Site: same-site)"},
		{"another site's fetch without an Origin", "", post("/api/p/0/control", `{"action":"stop"}`, func(r *http.Request) {
			r.Header.Del("Origin")
			r.Header.Set("Sec-Fetch-Site", "cross-site")
		}), 403, "Sec-Fetch-Site: cross-site"},
		// A page of another site whose name resolves to 127.0.0.1 (DNS
		// rebinding) is its own origin, but names itself as the host.
		{"a rebinding page's start", "", post("/api/p/0/start", "{}", func(r *http.Request) {
			r.Host = "attacker.example:7400"
			r.Header.Set("Origin", "http://attacker.example:7400")
		}), 403, "answers on a loopback address only"},
		{"no JSON", "", post("/api/p/0/start", "", func(r *http.Request) {
			r.Header.Set("Content-Type", "text/plain")
		}), 403, "sends JSON"},
		{"the cookie without the header", token, post("/api/p/0/start", "{}", func(r *http.Request) {
			r.AddCookie(&http.Cookie{Name: tokenCookie, Value: token})
		}), 403, "needs the access token in its X-Setctl-Token header"},
		{"the token in the URL without the header", token, post("/api/p/0/start?token="+token, "{}", nil), 403, "X-Setctl-Token"},
		{"a wrong token", token, post("/api/p/0/control", `{"action":"stop"}`, func(r *http.Request) {
			r.Header.Set(TokenHeader, strings.Repeat("0", 32))
		}), 403, "X-Setctl-Token"},
		// What passes the checks is refused for what it asks: here no
		// apply runs.
		{"the page's own stop, with its token", token, post("/api/p/0/control", `{"action":"stop"}`, func(r *http.Request) {
			r.Header.Set(TokenHeader, token)
			r.Host = "10.0.0.5:7400"
			r.Header.Set("Origin", "http://10.0.0.5:7400")
		}), 409, "no setctl apply is running in this project: there is nothing to stop"},
		{"a GET of start", "", httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7400/api/p/0/start", nil), 404, ""},
		// A plan may cost model calls: another site's page may not ask.
		{"another site's plan", "", post("/api/p/0/plan", "{}", func(r *http.Request) {
			r.Header.Set("Origin", "https://evil.example")
		}), 403, "a request from https://evil.example changes nothing here"},
		{"a GET of the plan", "", httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7400/api/p/0/plan", nil), 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			s := controlServer(t, f, tc.token, "touch started")
			code, body := answer(s, tc.req)
			if code != tc.code || !strings.Contains(body, tc.says) {
				t.Errorf("%s %s: %d %q, want %d with %q", tc.req.Method, tc.req.URL, code, body, tc.code, tc.says)
			}
			time.Sleep(50 * time.Millisecond)
			if _, err := os.Stat(filepath.Join(f.root, "started")); err == nil {
				t.Error("the refused request started an apply")
			}
		})
	}
}

// TestControlStart: the page's start runs the project's apply in its
// root, its output in the log the answer names, behind a header that
// says who asked; a second start while it runs, or while an apply holds
// the lock, is a 409; a dashboard without Apply (apply --dashboard)
// starts nothing.
func TestControlStart(t *testing.T) {
	f := newFixture(t)
	s := controlServer(t, f, "", `echo "applying in $PWD"; while test ! -e done; do sleep 0.02; done`)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, post("/api/p/0/start", "{}", nil))
	code, body := w.Code, w.Body.String()
	if code != http.StatusAccepted {
		t.Fatalf("start: %d %s", code, body)
	}
	if ct := w.Result().Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("the start's answer is of Content-Type %q, want application/json", ct)
	}
	var started StartView
	if err := json.Unmarshal([]byte(body), &started); err != nil || !strings.HasPrefix(started.Output, ".set/logs/_dashboard/apply-") {
		t.Fatalf("start answered %s (%v)", body, err)
	}
	if code, body := answer(s, post("/api/p/0/start", "{}", nil)); code != http.StatusConflict || !strings.Contains(body, "still runs") {
		t.Errorf("a second start: %d %s", code, body)
	}
	view := func() ControlView {
		_, body := answer(s, httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7400/api/p/0/control", nil))
		var v ControlView
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("control view %s: %v", body, err)
		}
		return v
	}
	if code, body := answer(s, post("/api/p/0/plan", "{}", nil)); code != 200 || !strings.Contains(body, `"text":"Plan: 1 change\n  greet\n"`) {
		t.Errorf("the plan: %d %s", code, body)
	}
	if v := view(); !v.CanStart || !v.Starting || v.Output != started.Output {
		t.Errorf("while it runs: %+v", v)
	}
	os.WriteFile(filepath.Join(f.root, "done"), nil, 0o644)
	deadline := time.Now().Add(10 * time.Second)
	for view().Starting && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if v := view(); v.Starting || v.Exit != "exit status 0" {
		t.Errorf("once it ended: %+v", v)
	}
	out, _ := os.ReadFile(filepath.Join(f.root, filepath.FromSlash(started.Output)))
	for _, want := range []string{"started from the dashboard, asked by dashboard (user " + control.User() + ", 192.0.2.1)", "applying in " + f.root} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the apply's output lacks %q:\n%s", want, out)
		}
	}

	release := f.lock()
	if code, body := answer(s, post("/api/p/0/start", "{}", nil)); code != http.StatusConflict || !strings.Contains(body, "a setctl apply already runs in this project") {
		t.Errorf("a start while an apply holds the lock: %d %s", code, body)
	}
	release()

	going, err := New(Options{Loopback: true, Projects: []Project{{Root: f.root}}})
	if err != nil {
		t.Fatal(err)
	}
	if code, body := answer(going, post("/api/p/0/start", "{}", nil)); code != http.StatusConflict || !strings.Contains(body, "setctl apply --dashboard") {
		t.Errorf("a start under apply --dashboard: %d %s", code, body)
	}
}

// TestControlPause: a pause from the page is setctl pause's request with
// who asked, and the page gets the apply's answer (its CONTROL event).
func TestControlPause(t *testing.T) {
	f := newFixture(t)
	f.lock()
	f.start()
	s := controlServer(t, f, "", "true")
	// The apply: it takes the request and journals what it did. It reads
	// from the control file's end before the page asks.
	r := control.NewReader(f.layout.Control())
	go func() {
		for range 3000 {
			reqs, _ := r.Next()
			for _, req := range reqs {
				f.add("", journal.ControlData{Action: req.Action, Change: req.Change, By: req.By, ID: req.ID, Changes: []string{req.Change}})
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	code, body := answer(s, post("/api/p/0/control", `{"action":"pause","change":"greet"}`, nil))
	var got journal.ControlData
	if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil {
		t.Fatalf("pause: %d %s", code, body)
	}
	if want := "dashboard (user " + control.User() + ", 192.0.2.1)"; got.Action != "pause" || got.By != want || len(got.Changes) != 1 || got.Changes[0] != "greet" {
		t.Errorf("the answer %+v, want greet paused by %q", got, want)
	}
	if code, body := answer(s, post("/api/p/0/control", `{"action":"stop","change":"greet"}`, nil)); code != 400 {
		t.Errorf("a stop of a change: %d %s", code, body)
	}
	if code, body := answer(s, post("/api/p/0/control", `{"action":"rm"}`, nil)); code != 400 {
		t.Errorf("an unknown action: %d %s", code, body)
	}
}

// TestControlStartRunsOnlyApply: a start runs the project's Apply and
// nothing a request names, whatever its body says.
func TestControlStartRunsOnlyApply(t *testing.T) {
	f := newFixture(t)
	s := controlServer(t, f, "", "touch started")
	code, body := answer(s, post("/api/p/0/start", `{"path":"/bin/sh","args":["sh","-c","touch pwned"],"dir":"/tmp"}`, nil))
	if code != http.StatusAccepted {
		t.Fatalf("start: %d %s", code, body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(f.root, "started")); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(f.root, "started")); err != nil {
		t.Errorf("the project's apply did not run in its root: %v", err)
	}
	for _, dir := range []string{f.root, "/tmp"} {
		if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
			t.Errorf("the start ran what its body named (%s/pwned)", dir)
		}
	}
}

// TestControlNotFramed: no page of another site may frame the dashboard
// (clickjacking): in a frame, a click the user meant for the other
// site's page would land on Stop, and the request, sent by the
// dashboard's own page, would pass every check of refuseChange.
func TestControlNotFramed(t *testing.T) {
	f := newFixture(t)
	s := controlServer(t, f, "", "true")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7400/", nil))
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy: %q, want frame-ancestors 'none'", csp)
	}
	if xfo := w.Header().Get("X-Frame-Options"); xfo != "DENY" {
		t.Errorf("X-Frame-Options: %q, want DENY", xfo)
	}
	// Nor does a link to the forge tell it the page's address, which
	// carries the access token off loopback.
	if rp := w.Header().Get("Referrer-Policy"); rp != "no-referrer" {
		t.Errorf("Referrer-Policy: %q, want no-referrer", rp)
	}
}

// TestControlKeepsTheTokenOut: what a request with the access token
// leaves in the run directory (the started apply's log, the control
// file's request and who asked) does not hold the token.
func TestControlKeepsTheTokenOut(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	f := newFixture(t)
	s := controlServer(t, f, token, "env; echo applied")
	withToken := func(r *http.Request) {
		r.Host = "10.0.0.5:7400"
		r.Header.Set("Origin", "http://10.0.0.5:7400")
		r.Header.Set(TokenHeader, token)
	}
	code, body := answer(s, post("/api/p/0/start?token="+token, "{}", withToken))
	if code != http.StatusAccepted {
		t.Fatalf("start: %d %s", code, body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if running, _, _ := s.projects[0].started.status(); !running {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	release := f.lock()
	defer release()
	// The apply reads from the control file's end before the page asks.
	r := control.NewReader(f.layout.Control())
	go func() {
		for range 3000 {
			if reqs, _ := r.Next(); len(reqs) > 0 {
				f.add("", journal.ControlData{Action: reqs[0].Action, By: reqs[0].By, ID: reqs[0].ID})
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	if code, body := answer(s, post("/api/p/0/control", `{"action":"pause"}`, withToken)); code != 200 {
		t.Fatalf("pause: %d %s", code, body)
	}
	filepath.WalkDir(f.layout.Dir(), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if data, _ := os.ReadFile(path); strings.Contains(string(data), token) {
			t.Errorf("%s holds the access token:\n%s", path, data)
		}
		return nil
	})
}

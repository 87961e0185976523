package dashboard

// Control from the page: start a run (after the plan preview), pause and
// resume a change or every change, and stop the run.
//
// Invariants:
//   - A request that changes anything, or spends anything (the plan
//     preview, which may call a model), is a POST (GET and HEAD only read),
//     sends JSON, comes from the dashboard's own page (Origin and
//     Sec-Fetch-Site, when the browser sends them, say so) and, when the
//     dashboard has an access token, carries it in its X-Setctl-Token
//     header: the cookie alone, which a form of another site would carry
//     too, is not enough. Anything else is refused with a 403 before it
//     reaches a handler (see refuseChange). No page of another site may
//     frame the dashboard's (frame-ancestors 'none'), where the user's
//     clicks would reach the controls without their knowing.
//   - Pause, resume and stop are the requests setctl pause and resume
//     make: a line appended to .set/control.jsonl, which the running
//     apply reads and journals as CONTROL with who asked (By). The
//     dashboard changes no state itself.
//   - A run the page starts (start.go) is the project's own `setctl apply
//     --yes` (Project.Apply), run as the user who runs the dashboard, in the
//     project's root, in a session of its own: it outlives the request,
//     the page and the dashboard. Its output goes to
//     .set/logs/_dashboard/apply-<time>.log, which the log endpoint serves.
//     The dashboard starts none while an apply holds the project's lock or
//     one it started still runs.

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"time"

	"github.com/set-engine/set/engine/control"
)

// TokenHeader is the header that carries the access token on a
// state-changing request.
const TokenHeader = "X-Setctl-Token"

// Command is a program the dashboard runs: Path the executable, Args its
// arguments as exec.Cmd takes them (Args[0] the name it runs under).
type Command struct {
	Path string
	Args []string
}

// answerWait bounds how long a pause, resume or stop waits for the
// running apply's CONTROL event.
const answerWait = 30 * time.Second

// routeControl adds the control endpoints to s.
func (s *Server) routeControl() {
	s.mux.HandleFunc("GET /api/p/{project}/control", s.withProject(s.serveControlView))
	// The plan is read by a POST too: a model planner's plan costs model
	// calls, which no page of another site may spend.
	s.mux.HandleFunc("POST /api/p/{project}/plan", s.withProject(s.servePlan))
	s.mux.HandleFunc("POST /api/p/{project}/start", s.withProject(s.serveStart))
	s.mux.HandleFunc("POST /api/p/{project}/control", s.withProject(s.serveControl))
}

// refuseChange says why the state-changing request r (any method but GET
// and HEAD) is refused, or "" when it may go on.
func (s *Server) refuseChange(r *http.Request) string {
	if r.Method != http.MethodPost {
		return fmt.Sprintf("only POST changes a run, not %s", r.Method)
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return fmt.Sprintf("a request from another site (Sec-Fetch-Site: %s) changes nothing here: only the dashboard's own page may", site)
	}
	if origin := r.Header.Get("Origin"); origin != "" && origin != ownOrigin(r) {
		return fmt.Sprintf("a request from %s changes nothing here: only the dashboard's own page (%s) may", origin, ownOrigin(r))
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		return "a request that changes a run sends JSON (Content-Type: application/json)"
	}
	if s.opts.Token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get(TokenHeader)), []byte(s.opts.Token)) != 1 {
		return "a request that changes a run needs the access token in its " + TokenHeader + " header (the dashboard's page sends it)"
	}
	return ""
}

// ownOrigin is the origin of the dashboard as r reached it.
func ownOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// requester is who asks, as a request's By says it: the dashboard, the
// user it runs as and the address the request came from.
func requester(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return fmt.Sprintf("dashboard (user %s, %s)", control.User(), host)
}

// ControlView is what the page's controls need: what it may do, whether
// an apply runs, and the output of the apply it started.
type ControlView struct {
	// CanStart: the page may start a run; false under setctl apply
	// --dashboard, whose run is already going.
	CanStart bool `json:"canStart"`
	// Running: an apply holds the project's lock.
	Running bool `json:"running"`
	// Starting: the apply the dashboard started still runs (it holds the
	// lock only once it planned).
	Starting bool `json:"starting"`
	// Output is the log of the last apply the dashboard started, relative
	// to the project (the log endpoint serves it); Exit how it ended, ""
	// while it runs.
	Output string `json:"output,omitempty"`
	Exit   string `json:"exit,omitempty"`
	// Token is the access token the page sends in TokenHeader; "" when
	// the dashboard has none (loopback).
	Token string `json:"token,omitempty"`
}

func (s *Server) serveControlView(w http.ResponseWriter, r *http.Request, p *served) {
	live, err := p.liveness()
	if err != nil {
		httpError(w, err)
		return
	}
	v := ControlView{CanStart: p.Apply != nil && p.Plan != nil, Running: live.Held, Token: s.opts.Token}
	v.Starting, v.Output, v.Exit = p.started.status()
	writeJSON(w, v)
}

// PlanView is the plan a started run would run, as setctl plan prints it.
type PlanView struct {
	Text  string `json:"text"`
	Error string `json:"error,omitempty"`
}

func (s *Server) servePlan(w http.ResponseWriter, r *http.Request, p *served) {
	if p.Plan == nil {
		http.Error(w, "this dashboard starts no run, so it shows no plan to start", http.StatusNotFound)
		return
	}
	text, err := p.Plan(r.Context())
	v := PlanView{Text: text}
	if err != nil {
		v.Error = err.Error()
	}
	writeJSON(w, v)
}

// StartView answers a start: where the apply's output goes.
type StartView struct {
	Output string `json:"output"`
}

func (s *Server) serveStart(w http.ResponseWriter, r *http.Request, p *served) {
	if p.Apply == nil || p.Plan == nil {
		http.Error(w, "this dashboard serves a run already going (setctl apply --dashboard): it starts none", http.StatusConflict)
		return
	}
	live, err := p.liveness()
	if err != nil {
		httpError(w, err)
		return
	}
	if live.Held {
		http.Error(w, fmt.Sprintf("a setctl apply already runs in this project (PID %d): wait for it to end, or stop it", live.PID), http.StatusConflict)
		return
	}
	rel, err := p.started.start(p, requester(r))
	if errors.Is(err, errStarting) {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	if err != nil {
		httpError(w, err)
		return
	}
	writeJSONStatus(w, http.StatusAccepted, StartView{Output: rel})
}

// ControlRequest is the body of a pause, resume or stop.
type ControlRequest struct {
	Action string `json:"action"`
	// Change is the change to pause or resume; "" for every change. A
	// stop names none.
	Change string `json:"change,omitempty"`
}

func (s *Server) serveControl(w http.ResponseWriter, r *http.Request, p *served) {
	var req ControlRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil {
		http.Error(w, "not a control request: "+err.Error(), http.StatusBadRequest)
		return
	}
	switch {
	case !control.Known(req.Action):
		http.Error(w, fmt.Sprintf("no action %q: pause, resume or stop", req.Action), http.StatusBadRequest)
		return
	case req.Action == control.Stop && req.Change != "":
		http.Error(w, "a stop is for the whole run: it names no change", http.StatusBadRequest)
		return
	}
	rn, err := p.read("")
	if err != nil {
		httpError(w, err)
		return
	}
	if !rn.live.Held {
		http.Error(w, "no setctl apply is running in this project: there is nothing to "+req.Action, http.StatusConflict)
		return
	}
	sent, err := control.Append(p.layout.Control(), control.Request{
		Time: time.Now().UTC(), Action: req.Action, Change: req.Change, By: requester(r),
	})
	if err != nil {
		httpError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), answerWait)
	defer cancel()
	answer, err := control.AwaitAnswer(ctx, p.layout.Events(), rn.st.LastSeq, sent.ID)
	if errors.Is(err, context.DeadlineExceeded) {
		http.Error(w, "the running apply did not answer yet; it takes requests between its steps: the page shows it when it does", http.StatusGatewayTimeout)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusGatewayTimeout)
		return
	}
	writeJSON(w, answer)
}

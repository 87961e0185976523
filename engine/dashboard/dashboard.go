// Package dashboard serves the live web view of one or more projects' runs
// (setctl dashboard, setctl apply --dashboard): the run overview, the
// execution graph, a change's detail with its logs, the activity timeline,
// the sentinel's actions, the token and cost charts, every run the
// journal keeps (any of which every page can show), where every
// requirement stands and the learnings proposed from the runs and how
// the adopted ones stand, over plain net/http with the page's assets
// embedded in the binary.
//
// Invariants:
//   - Every view is read from the project's journal (.set/events.jsonl)
//     through the one projection of it, engine/state, and the report built
//     from it, engine/report; the dashboard keeps no idea of a change's
//     state of its own. A page learns of new events over Server-Sent
//     Events fed by journal.Follow, and reads the projection again.
//   - The dashboard only reads, but for control (control.go): a
//     state-changing request appends a request of setctl pause or resume
//     (or a stop) to .set/control.jsonl, or starts setctl apply; it is a
//     POST from the dashboard's own page, with the access token when one
//     is required.
//   - The requirements page is the one view not read from the journal
//     alone: it is main and the spec as they are now, as the Project's
//     RequirementsFunc reads them (the dashboard loads no CUE); the
//     learnings page is the journal's every run read against the
//     learnings set.cue adopts now, as its LearningsFunc reads them.
//   - Once Stop was called every stream ends with a "stopped" event, so
//     an open page knows the server is gone on purpose.
//   - A file it serves is a log below the project's .set/logs or a
//     run's baseline logs (.set/runs/<run>/baseline), where it is once
//     its links are followed (logFolder); a diff it serves is of two
//     commits the journal names, never of what a request names.
//   - Served on a non-loopback address (only when the caller allows it,
//     see CheckAddr), every request must carry the access token.
package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/rundir"
)

// assets are the page, its script and its style sheet, served as they are
// in the source tree: there is no build step.
//
//go:embed assets
var assets embed.FS

// DefaultAddr is where the dashboard listens unless told otherwise.
const DefaultAddr = "127.0.0.1:7400"

// Project is one project the dashboard shows. It is not a
// project.Project: the dashboard reads run directories, needs of a
// project only where it is and how to draw its plan, and shows the runs
// of a project whose set.cue no longer loads.
type Project struct {
	// Root is the project's root directory: its run directory is
	// Root/.set.
	Root string
	// Name is how the pages name it: the name its set.cue gives it (setctl
	// passes it); the root's base name when empty.
	Name string
	// Graph builds the execution graph of a plan of the project as
	// `setctl plan` draws it (it needs the project's configuration); nil
	// when there is none, and the graph page then draws the changes and
	// their dependencies as the journal gives them.
	Graph func(p *plan.Plan) (*graph.Graph, error)
	// Requirements says where every requirement stands (the requirements
	// page); nil when there is none, and the page says so.
	Requirements RequirementsFunc
	// Learnings reads what setctl learn proposes and how the adopted
	// learnings stand (the learnings page); nil when there is none, and
	// the page says so.
	Learnings LearningsFunc
	// Plan is what `setctl plan` prints for the project now: the plan
	// the page shows before it starts a run (Apply). Apply is the
	// `setctl apply --yes` the page starts. Both nil when the page starts
	// no run (setctl apply --dashboard: its run is going).
	Plan  func(ctx context.Context) (string, error)
	Apply *Command
	// Forge is the project's repository on its forge, whose pages the
	// dashboard links (a change's commit, its pull request); nil when
	// it has none.
	Forge *Forge
}

// Options configure a Server.
type Options struct {
	Projects []Project
	// Token, when set, must come with every request: as the "token"
	// query parameter (the URL the dashboard prints carries it), the
	// cookie the dashboard sets once it was given, or the TokenHeader; a
	// state-changing request must carry it in the TokenHeader (see
	// refuseChange). Required off loopback.
	Token string
	// Loopback: the server listens on a loopback address only, so a
	// request must name a loopback host (which keeps a web page of another
	// site from reaching it through DNS rebinding).
	Loopback bool
	// Now is the clock of the ages the pages show; time.Now when nil.
	Now func() time.Time
}

// Server is the dashboard's HTTP handler.
type Server struct {
	opts     Options
	projects []served
	mux      *http.ServeMux
	stop     stopping
}

// served is a Project the Server serves, with its run directory's layout.
type served struct {
	Project
	id     string
	layout rundir.Layout

	// graph caches the execution graph of the plan of the PLAN_CREATED
	// event of seq graphSeq.
	mu       sync.Mutex
	graphSeq int64
	graph    *graph.Graph
	graphErr error

	// started is the apply the page started (start.go).
	started starter
}

// New is a dashboard of opts.Projects.
func New(opts Options) (*Server, error) {
	if len(opts.Projects) == 0 {
		return nil, errors.New("dashboard: no project to show")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{opts: opts, mux: http.NewServeMux(), stop: stopping{done: make(chan struct{})}}
	for i, p := range opts.Projects {
		root, err := filepath.Abs(p.Root)
		if err != nil {
			return nil, err
		}
		p.Root = root
		if p.Name == "" {
			p.Name = filepath.Base(root)
		}
		s.projects = append(s.projects, served{Project: p, id: strconv.Itoa(i), layout: rundir.New(root)})
	}
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	s.mux.Handle("GET /", http.FileServerFS(static))
	s.mux.HandleFunc("GET /api/projects", s.serveProjects)
	s.mux.HandleFunc("GET /api/p/{project}/overview", s.withProject(s.serveOverview))
	s.mux.HandleFunc("GET /api/p/{project}/graph", s.withProject(s.serveGraph))
	s.mux.HandleFunc("GET /api/p/{project}/change/{change}", s.withProject(s.serveChange))
	s.mux.HandleFunc("GET /api/p/{project}/timeline", s.withProject(s.serveTimeline))
	s.mux.HandleFunc("GET /api/p/{project}/sentinel", s.withProject(s.serveSentinel))
	s.mux.HandleFunc("GET /api/p/{project}/diff", s.withProject(s.serveDiff))
	s.mux.HandleFunc("GET /api/p/{project}/log", s.withProject(s.serveLog))
	s.mux.HandleFunc("GET /api/p/{project}/log/stream", s.withProject(s.serveLogStream))
	s.mux.HandleFunc("GET /api/p/{project}/stream", s.withProject(s.serveStream))
	s.mux.HandleFunc("GET /api/p/{project}/runs", s.withProject(s.serveRuns))
	s.mux.HandleFunc("GET /api/p/{project}/requirements", s.withProject(s.serveRequirements))
	s.mux.HandleFunc("GET /api/p/{project}/learnings", s.withProject(s.serveLearnings))
	s.routeControl()
	return s, nil
}

// tokenCookie holds the access token once a request gave it in the URL,
// so that the page's own requests need not repeat it.
const tokenCookie = "setctl-dashboard-token"

// ServeHTTP serves r, once its host (on loopback) and its token (when
// one is required) are right.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opts.Loopback && !loopbackHost(r.Host) {
		http.Error(w, "setctl dashboard: this dashboard answers on a loopback address only, not "+r.Host, http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if why := s.refuseChange(r); why != "" {
			http.Error(w, "setctl dashboard: "+why, http.StatusForbidden)
			return
		}
	}
	if s.opts.Token != "" {
		given := r.Header.Get(TokenHeader)
		if given == "" {
			given = r.URL.Query().Get("token")
		}
		if given == "" {
			if c, err := r.Cookie(tokenCookie); err == nil {
				given = c.Value
			}
		}
		if subtle.ConstantTimeCompare([]byte(given), []byte(s.opts.Token)) != 1 {
			http.Error(w, "setctl dashboard: this dashboard needs its access token: open the URL `setctl dashboard` printed, with its ?token=", http.StatusUnauthorized)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: s.opts.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	// No other site may frame the page, where a click meant for it would
	// land on the page's controls (clickjacking); no link the page
	// follows tells another site its address, which carries the token.
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "no-referrer")
	s.mux.ServeHTTP(w, r)
}

// loopbackHost reports whether the Host header host names a loopback
// address ("localhost", 127.0.0.0/8, ::1), with or without a port.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckAddr checks the address the dashboard is to listen on, and says
// whether it is a loopback address. Any other address (an interface, a
// host name, or none: every interface) serves the runs to whoever can
// reach it, so it is refused unless allowRemote.
func CheckAddr(addr string, allowRemote bool) (loopback bool, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("--addr %s: %v (want HOST:PORT, such as %s)", addr, errText(err), DefaultAddr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return false, fmt.Errorf("--addr %s: the port %q is not a number from 0 to 65535", addr, port)
	}
	if loopbackHost(host) && host != "" {
		return true, nil
	}
	if !allowRemote {
		return false, fmt.Errorf("--addr %s is not a loopback address: whoever reaches it would see the run's changes, logs and retry contexts; pass --allow-remote to serve it there with an access token, or use 127.0.0.1", addr)
	}
	return false, nil
}

// errText is a net.AddrError's text without the address it repeats.
func errText(err error) string {
	var ae *net.AddrError
	if errors.As(err, &ae) {
		return ae.Err
	}
	return err.Error()
}

// NewToken is a random access token: 128 bits, in hex.
func NewToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// URL is the address a person opens to see the dashboard listening on
// addr (an address from net.Listener.Addr), with its token if it has one.
func URL(addr net.Addr, token string) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		host, port = addr.String(), ""
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost" // a wildcard address answers there too
	}
	u := "http://" + net.JoinHostPort(host, port) + "/"
	if token != "" {
		u += "?token=" + token
	}
	return u
}

// withProject resolves the request's {project} for h; an unknown one is a
// 404.
func (s *Server) withProject(h func(w http.ResponseWriter, r *http.Request, p *served)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		i, err := strconv.Atoi(r.PathValue("project"))
		if err != nil || i < 0 || i >= len(s.projects) {
			http.Error(w, "no project "+strconv.Quote(r.PathValue("project")), http.StatusNotFound)
			return
		}
		h(w, r, &s.projects[i])
	}
}

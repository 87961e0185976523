package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/config/decode"
	"github.com/set-engine/set/engine/dashboard"
	"github.com/set-engine/set/engine/forge/github"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/load"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/shellquote"
)

func dashboardCommand() command {
	return command{
		name:    "dashboard",
		summary: "serve a live web view of the run",
		usage: `Usage: setctl dashboard [--addr HOST:PORT] [--root DIR ...] [--allow-remote]

Dashboard serves a web page that shows the project's run live, as its
journal (.set/events.jsonl) says, while setctl apply runs it or after it
ended:

  Overview      every change with its status, its progress through the
                stages, what runs for it, gates, retries and tokens
                against their budgets, and what it waits for
  Graph         the execution graph setctl plan draws, coloured by where
                each change is
  a change      its timeline; its gates by verify round and integration
                attempt, each with its verdict, what went back to its
                agent, the end of a failing gate's output and the round's
                diff; its commit on main and pull request (on the forge,
                with delivery.forge); and its agent's log as it is written
  Timeline      every agent iteration, gate, model call and merge as a
                labelled span on a time axis, one row per change, each
                round a band; click a span for its detail, a change's
                name to zoom to its time
  Tokens & cost tokens and cost per change and per role, against budgets
  Sentinel      the sentinel's actions (SENTINEL_ACTION events)
  Requirements  every requirement and where it stands on main, as
                setctl plan prints it: implemented (change, commit, the
                tests that name it), new, changed, removed or uncovered
  Runs          every run the journal keeps, newest first (as setctl
                runs lists them); click one to see it on every page
  Learnings     what setctl learn proposes from every kept run, with
                its evidence, and setctl learn --report: how often the
                failure of each adopted learning recurred before and
                after its adoption, and the removals it proposes

The page updates itself as events are journaled (Server-Sent Events); it
needs no reload and no network beyond the dashboard: everything it uses is
served by setctl itself. Several projects are shown with --root once per
project.

The overview also runs the project. Start a run shows the plan as setctl
plan prints it, and Apply runs setctl apply --yes in the project, as the
user who started the dashboard, detached from the page (its output is in
.set/logs/_dashboard/); none starts while an apply runs. Pause and Resume
(a change, or all) are the requests of setctl pause and resume; Stop ends
the run as Ctrl-C does. The apply journals each as a CONTROL event with
who asked ("dashboard (user alice, 127.0.0.1)").

The dashboard listens on 127.0.0.1 (loopback) unless --addr says
otherwise. Another address serves the runs (their logs, retry contexts and
code paths) to whoever can reach it, so it is refused unless
--allow-remote is given; then every request needs the access token in the
URL setctl prints, which is new at each start. A request that changes
anything is a POST of JSON from the dashboard's own page (another site's
is refused, on loopback too) and, with --allow-remote, carries the token
in its X-Setctl-Token header.

setctl apply --dashboard serves the same page beside the run, without
Start (its run is going), and stops it when the run ends: the open page
then says so and keeps what it shows, and setctl dashboard opens it
again.

Ctrl-C stops it.

Examples:
  setctl dashboard
  setctl dashboard --addr 127.0.0.1:8080
  setctl dashboard --root ~/src/shop --root ~/src/billing
  setctl dashboard --addr 0.0.0.0:7400 --allow-remote
  setctl apply --yes --dashboard
`,
		run: runDashboard,
	}
}

func runDashboard(e *env, args []string) int {
	c := dashboardCommand()
	fs := c.flagSet(e)
	addr := fs.String("addr", dashboard.DefaultAddr, "the address to listen on: a loopback address, or any with --allow-remote")
	roots := fs.StringArray("root", nil, "a project to show, by its directory; repeat for several (default: the project of the working directory)")
	allowRemote := fs.Bool("allow-remote", false, "allow a non-loopback --addr, with an access token required on every request")
	if code, done := c.parse(e, fs, args); done {
		return code
	}
	projects, err := dashboardProjects(e.dir, *roots)
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	if err := withControl(projects, e.environ); err != nil {
		return e.errorf(c.name, "%v", err)
	}
	d, err := serveDashboard(projects, *addr, *allowRemote)
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	if d.token != "" {
		fmt.Fprintf(e.stderr, "setctl %s: warning: %s is not a loopback address: whoever can reach it and has the URL below (its access token) sees the runs; keep the URL to yourself\n", c.name, *addr)
	}
	fmt.Fprintf(e.stdout, "Dashboard of %s on %s (Ctrl-C stops it)\n", projectNames(projects), d.url)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	select {
	case <-ctx.Done():
	case err := <-d.done:
		return e.errorf(c.name, "%v", err)
	}
	d.stop("This dashboard stopped: its `setctl dashboard` ended. Run `setctl dashboard` again to reopen it.")
	return exitOK
}

// dashboardProjects are the projects of the directories roots (relative to
// dir), or the project dir is in when there is none; each is found as vet
// finds it (load.FindRoot), and named once.
func dashboardProjects(dir string, roots []string) ([]dashboard.Project, error) {
	if len(roots) == 0 {
		root, err := load.FindRoot(dir)
		if err != nil {
			return nil, err
		}
		return []dashboard.Project{dashboardProject(root, "")}, nil
	}
	var projects []dashboard.Project
	var seen []string
	for _, r := range roots {
		root, err := load.FindRoot(resolveDir(dir, r))
		if err != nil {
			return nil, fmt.Errorf("--root %s: %v", r, err)
		}
		if slices.Contains(seen, root) {
			continue
		}
		seen = append(seen, root)
		projects = append(projects, dashboardProject(root, ""))
	}
	return projects, nil
}

// dashboardProject is the project at root as the dashboard shows it,
// named name, or, when name is "", by its set.cue's project name (its
// directory's name when set.cue does not load now, for the dashboard
// shows the runs of such a project too, or names none), with the forge
// its set.cue delivers to, whose pages the dashboard links.
func dashboardProject(root, name string) dashboard.Project {
	cfg, _, err := decode.Load(root, load.Options{})
	if err != nil {
		cfg = nil
	}
	if name == "" {
		name = filepath.Base(root)
		if cfg != nil && cfg.Name != "" {
			name = cfg.Name
		}
	}
	return dashboard.Project{Root: root, Name: name, Graph: planGraph(root), Requirements: dashboardRequirements(root), Learnings: dashboardLearnings(root), Forge: dashboardForge(root, cfg)}
}

// withControl lets the page of each of projects start a run: it shows
// what setctl plan prints for the project, then runs this executable's
// setctl apply --yes in the project's root. (Under apply --dashboard the
// run is already going: its page starts none.)
func withControl(projects []dashboard.Project, environ []string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("the page could not start runs: %v", err)
	}
	for i := range projects {
		projects[i].Plan = planPreview(projects[i].Root, environ)
		// Args[0] is the name it runs under, as a shell would give it.
		projects[i].Apply = &dashboard.Command{Path: exe, Args: []string{"setctl", "apply", "--yes"}}
	}
	return nil
}

// planPreview is what setctl plan prints for the project at root now, its
// warnings and errors included; an error when it exits with a failure.
func planPreview(root string, environ []string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		var out syncBuffer
		code := Main([]string{"-C", root, "plan"}, Process{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Environ: environ})
		if code != exitOK {
			return out.String(), fmt.Errorf("setctl plan exited with status %d", code)
		}
		return out.String(), nil
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes (stdout and
// stderr of one command).
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// dashboardForge is the repository of delivery.forge as the dashboard
// links it: nil without a forge (or a set.cue that loads), or when its
// pages cannot be told (a repository the remote's URL does not name, an
// API URL of no known form).
func dashboardForge(root string, cfg *config.Project) *dashboard.Forge {
	if cfg == nil || cfg.Delivery.Forge == nil || cfg.Delivery.Forge.Kind != "github" {
		return nil
	}
	f := cfg.Delivery.Forge
	repo := f.Repository
	if repo == "" {
		var ok bool
		if repo, ok = github.RepositoryOf(git.RemoteURL(context.Background(), root, cfg.Delivery.Remote)); !ok {
			return nil
		}
	}
	web, ok := github.WebURL(f.APIURL, repo)
	if !ok {
		return nil
	}
	return &dashboard.Forge{Repository: web}
}

// planGraph builds the execution graph of a plan of the project at root,
// with its set.cue as it is now, as setctl plan does.
func planGraph(root string) func(*plan.Plan) (*graph.Graph, error) {
	return func(p *plan.Plan) (*graph.Graph, error) {
		cfg, _, err := decode.Load(root, load.Options{})
		if err != nil {
			return nil, fmt.Errorf("set.cue does not load (`setctl vet` says why): %v", err)
		}
		return graph.Build(p, cfg)
	}
}

func projectNames(projects []dashboard.Project) string {
	if len(projects) == 1 {
		return fmt.Sprintf("%s (%s)", projects[0].Name, projects[0].Root)
	}
	return fmt.Sprintf("%d projects", len(projects))
}

// servedDashboard is a dashboard serving in the background.
type servedDashboard struct {
	url   string
	token string
	h     *dashboard.Server
	srv   *http.Server
	// done receives the error that stopped the server early.
	done chan error
}

// stop stops the server: every open page's stream gets its last event,
// which says reason (the page keeps what it shows and says it), then the
// listener closes and the connections with it.
func (d *servedDashboard) stop(reason string) {
	d.h.Stop(reason)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if d.srv.Shutdown(ctx) != nil {
		d.srv.Close() // the streams do not end by themselves
	}
}

// serveDashboard serves the dashboard of projects on addr (checked with
// dashboard.CheckAddr) in the background. Off loopback it makes an access
// token, which the URL carries.
func serveDashboard(projects []dashboard.Project, addr string, allowRemote bool) (*servedDashboard, error) {
	loopback, err := dashboard.CheckAddr(addr, allowRemote)
	if err != nil {
		return nil, err
	}
	opts := dashboard.Options{Projects: projects, Loopback: loopback}
	if !loopback {
		if opts.Token, err = dashboard.NewToken(); err != nil {
			return nil, err
		}
	}
	h, err := dashboard.New(opts)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	d := &servedDashboard{
		url: dashboard.URL(ln.Addr(), opts.Token), token: opts.Token, h: h,
		srv:  &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		done: make(chan error, 1),
	}
	go func() {
		if err := d.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			d.done <- err
		}
	}()
	return d, nil
}

// startApplyDashboard serves the dashboard of the project at root, named
// name in its set.cue, beside its apply (apply --dashboard), saying where
// on w; a dashboard that cannot start is a warning, not a reason to stop
// the run. It returns the function that stops it once the run is over:
// the open pages say the run ended, and so does w's last line, with
// where the dashboard was and the command that reopens it.
func startApplyDashboard(root, name, addr string, w io.Writer) func() {
	d, err := serveDashboard([]dashboard.Project{dashboardProject(root, name)}, addr, false)
	if err != nil {
		fmt.Fprintf(w, "setctl apply: warning: no dashboard: %v; the run goes on without it\n", err)
		return func() {}
	}
	fmt.Fprintf(w, "Dashboard on %s\n", d.url)
	reopen := reopenDashboard(root)
	return func() {
		d.stop("The run ended; this dashboard stopped with its `setctl apply`. `" + reopen + "` reopens it, with every run the journal keeps.")
		fmt.Fprintf(w, "The dashboard on %s stopped with the run; `%s` reopens it.\n", d.url, reopen)
	}
}

// reopenDashboard is the command that opens the dashboard of the project
// at root again from the working directory: setctl dashboard, with -C
// when the working directory is not in the project.
func reopenDashboard(root string) string {
	wd, err := os.Getwd()
	if err == nil {
		if found, err := load.FindRoot(wd); err == nil && found == root {
			return "setctl dashboard"
		}
	}
	dir := root
	if err == nil {
		if rel, err := filepath.Rel(wd, root); err == nil {
			dir = rel
		}
	}
	return "setctl -C " + shellquote.Word(dir) + " dashboard"
}

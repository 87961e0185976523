package dagger

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"dagger.io/dagger"
	"dagger.io/dagger/engineconn"

	"github.com/set-engine/set/engine/runner"
)

// SDKEngineVersion is the engine version the Dagger SDK that set is built
// with expects (the SDK's own version, without the "v").
const SDKEngineVersion = engineconn.CLIVersion

// Engine is how set reaches a Dagger engine, chosen as the Go SDK chooses
// it: a `dagger run` session (DAGGER_SESSION_PORT and DAGGER_SESSION_TOKEN)
// first, else a dagger CLI (_EXPERIMENTAL_DAGGER_CLI_BIN, or, unlike the
// SDK, `dagger` on PATH) that opens a session, whose engine is
// _EXPERIMENTAL_DAGGER_RUNNER_HOST or, unset, one the CLI starts in Docker.
// set starts and owns that CLI session itself (see session); it never
// lets the SDK start or download a CLI.
type Engine struct {
	// Via is "session" or "cli".
	Via string
	// Address is what answers: the session's 127.0.0.1:port, or the
	// runner host.
	Address string
	// CLI is the dagger binary (Via "cli").
	CLI string
	// RunnerHost is _EXPERIMENTAL_DAGGER_RUNNER_HOST, "" for the CLI's
	// default engine.
	RunnerHost string
	// EngineVersion is what the engine said its version is ("v0.21.9");
	// Preflight sets it.
	EngineVersion string
	// CLIVersion is the version `dagger version` printed ("v0.21.9"); ""
	// when it printed none, and for a `dagger run` session.
	CLIVersion string

	// port and token reach a `dagger run` session (Via "session").
	port  int
	token string
}

func (e *Engine) String() string {
	if e.Via == "session" {
		return "the `dagger run` session at " + e.Address
	}
	host := e.RunnerHost
	if host == "" {
		host = "the engine the dagger CLI starts in Docker"
	}
	return fmt.Sprintf("%s via %s", host, e.CLI)
}

// Versions says which versions answered: "engine v0.21.9, CLI v0.21.9".
func (e *Engine) Versions() string {
	s := "engine " + e.EngineVersion
	switch {
	case e.Via == "session":
	case e.CLIVersion == "":
		s += ", CLI of unknown version"
	default:
		s += ", CLI " + e.CLIVersion
	}
	return s
}

// Warnings are the version mismatches Preflight found: an engine other
// than the one set's SDK expects, and a CLI other than the engine.
func (e *Engine) Warnings() []string {
	var out []string
	if e.EngineVersion != "" && !sameVersion(e.EngineVersion, SDKEngineVersion) {
		out = append(out, fmt.Sprintf("the engine is %s but set's Dagger SDK expects v%s: gates may fail where their APIs differ; run an engine of v%s",
			e.EngineVersion, SDKEngineVersion, SDKEngineVersion))
	}
	if e.CLIVersion != "" && e.EngineVersion != "" && !sameVersion(e.CLIVersion, e.EngineVersion) {
		out = append(out, fmt.Sprintf("the dagger CLI is %s but the engine %s: use the CLI of the engine's version", e.CLIVersion, e.EngineVersion))
	}
	return out
}

// sameVersion compares versions with or without their leading "v".
func sameVersion(a, b string) bool {
	return strings.TrimPrefix(a, "v") == strings.TrimPrefix(b, "v")
}

// ProbeTimeout bounds Preflight: finding the CLI, checking the runner
// host, opening a session and asking the engine its version. With the
// grace a session CLI then gets to end (SIGTERM, SIGKILL 2 s later),
// Preflight answers within 10 s whatever the address does.
const ProbeTimeout = 7 * time.Second

// PreflightError says what Preflight tried and how to fix it.
type PreflightError struct {
	Tried string
	Fix   string
	Err   error
}

// Error says what was tried, why it failed and how to fix it, without
// the terminal escapes a CLI or a command it quotes may have written.
func (e *PreflightError) Error() string {
	msg := "no Dagger engine: " + e.Tried
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return runner.StripEscapes(msg + "\n  fix: " + e.Fix + "\n  or run the gates on the host: runner: kind: \"host\"")
}

func (e *PreflightError) Unwrap() error { return e.Err }

// Preflight finds the engine the SDK would use and proves, within
// ProbeTimeout, that it is a Dagger engine: it opens a session with it
// (a session set owns, for a CLI) and asks the engine its version. The
// PreflightError of an address that accepts connections tells one that
// does not answer in time (a busy or stopped engine: "did not answer
// within") from one that answers as something else ("is not a Dagger
// engine"). getenv reads the environment (os.Getenv in production).
func Preflight(ctx context.Context, getenv func(string) string) (*Engine, error) {
	return preflight(ctx, getenv, ProbeTimeout)
}

// preflight is Preflight within timeout.
func preflight(ctx context.Context, getenv func(string) string, timeout time.Duration) (*Engine, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	e, err := findEngine(ctx, getenv, timeout)
	if err != nil {
		return nil, err
	}
	if e.Via == "cli" {
		e.CLIVersion = cliVersion(ctx, e.CLI)
	}
	if err := e.probe(ctx, timeout); err != nil {
		return nil, err
	}
	return e, nil
}

// findEngine finds the engine and checks what can be checked before a
// session: the session's variables, the CLI, the runner host's form and,
// where a connection or a command can tell, that something answers there.
func findEngine(ctx context.Context, getenv func(string) string, timeout time.Duration) (*Engine, error) {
	if port := getenv("DAGGER_SESSION_PORT"); port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n <= 0 || n > 65535 {
			return nil, &PreflightError{Tried: fmt.Sprintf("DAGGER_SESSION_PORT=%q is not a port", port), Fix: "run set under `dagger run`, which sets it"}
		}
		if getenv("DAGGER_SESSION_TOKEN") == "" {
			return nil, &PreflightError{Tried: "DAGGER_SESSION_PORT is set without DAGGER_SESSION_TOKEN", Fix: "run set under `dagger run`, which sets both"}
		}
		e := &Engine{Via: "session", Address: net.JoinHostPort("127.0.0.1", port), port: n, token: getenv("DAGGER_SESSION_TOKEN")}
		if err := dial(ctx, "tcp", e.Address); err != nil {
			return nil, &PreflightError{Tried: e.String() + " (DAGGER_SESSION_PORT)", Fix: "run set inside a live `dagger run`, or unset DAGGER_SESSION_PORT", Err: err}
		}
		return e, nil
	}

	cli := getenv("_EXPERIMENTAL_DAGGER_CLI_BIN")
	source := "_EXPERIMENTAL_DAGGER_CLI_BIN"
	if cli == "" {
		cli, source = "dagger", "PATH"
	}
	bin, err := exec.LookPath(cli)
	if err != nil {
		return nil, &PreflightError{
			Tried: fmt.Sprintf("no dagger CLI (looked for %q in %s)", cli, source),
			Fix:   "install the dagger CLI and put it on PATH or in _EXPERIMENTAL_DAGGER_CLI_BIN (set does not download one)",
		}
	}
	e := &Engine{Via: "cli", CLI: bin, RunnerHost: getenv("_EXPERIMENTAL_DAGGER_RUNNER_HOST")}
	if err := checkRunnerHost(ctx, e.RunnerHost, timeout); err != nil {
		return nil, err
	}
	e.Address = e.RunnerHost
	return e, nil
}

// probe opens a session with the engine within ctx and asks its version.
func (e *Engine) probe(ctx context.Context, timeout time.Duration) error {
	deadline, _ := ctx.Deadline()
	conn, err := e.open(ctx, io.Discard, time.Until(deadline), sessionCloseGrace)
	if err != nil {
		return e.probeError(ctx, err, timeout)
	}
	defer conn.Close()
	client, err := dagger.Connect(ctx, dagger.WithConn(conn))
	if err != nil {
		return e.probeError(ctx, err, timeout)
	}
	v, err := client.Version(ctx)
	if err == nil && v == "" {
		err = errors.New("it gave an empty version")
	}
	if err != nil {
		tried, fix := "the session the dagger CLI opened with "+e.engineName(), e.fix()
		if e.Via == "session" {
			tried, fix = e.String()+" (DAGGER_SESSION_PORT)", "run set inside a live `dagger run`, or unset DAGGER_SESSION_PORT"
		}
		if ctx.Err() != nil {
			// It answers no question: busy or stopped, not proven to be
			// something else.
			if e.Via != "session" {
				fix = silentFix(e.engineName())
			}
			return &PreflightError{Tried: tried, Fix: fix,
				Err: fmt.Errorf("it did not answer a version query within %s (it may be a busy or stopped engine)", timeout)}
		}
		return &PreflightError{Tried: tried, Fix: fix, Err: fmt.Errorf("not a Dagger engine: %w", err)}
	}
	e.EngineVersion = v
	return nil
}

// probeError is the PreflightError of a session that did not open.
func (e *Engine) probeError(ctx context.Context, err error, timeout time.Duration) error {
	var late *sessionTimeoutError
	if errors.As(err, &late) || ctx.Err() != nil {
		said := ""
		if late != nil {
			said = late.said
		}
		// For tcp:// and unix://, checkRunnerHost saw the engine answer
		// as one; the session is what it does not answer.
		err = fmt.Errorf("the dagger CLI opened no session with it within %s%s", timeout, said)
		fix := e.fix()
		if e.RunnerHost != "" {
			fix = silentFix(e.RunnerHost)
		}
		return &PreflightError{Tried: silentTried(e.engineName(), timeout), Fix: fix, Err: err}
	}
	return &PreflightError{Tried: "a session with " + e.engineName() + " through " + e.CLI, Fix: e.fix(), Err: err}
}

// engineName names the engine a CLI session reaches.
func (e *Engine) engineName() string {
	if e.RunnerHost == "" {
		return "the engine the dagger CLI starts in Docker"
	}
	return e.RunnerHost
}

// fix says how to get an engine that answers a CLI session.
func (e *Engine) fix() string {
	if e.RunnerHost == "" {
		return "start the engine first (`dagger core version` starts it in Docker and prints its version), or point _EXPERIMENTAL_DAGGER_RUNNER_HOST at a running engine"
	}
	return "point _EXPERIMENTAL_DAGGER_RUNNER_HOST at a running Dagger engine (`dagger core version` prints its version)"
}

// open connects to the engine: to a `dagger run` session's API, or to a
// new session of the CLI that set owns (see startSession: start bounds
// its opening, closeGrace its end). Closing the connection ends a session
// set owns; log gets the CLI's progress output.
func (e *Engine) open(ctx context.Context, log io.Writer, start, closeGrace time.Duration) (*sessionConn, error) {
	if e.Via == "session" {
		return newSessionConn(e.port, e.token, nil), nil
	}
	s, err := startSession(ctx, sessionOptions{cli: e.CLI, runnerHost: e.RunnerHost, log: log, start: start, closeGrace: closeGrace})
	if err != nil {
		return nil, err
	}
	return s.conn(), nil
}

// versionPattern finds a version in the CLI's `dagger version` line
// ("dagger v0.21.9 (registry.dagger.io/engine:v0.21.9) linux/amd64").
var versionPattern = regexp.MustCompile(`\bv?\d+\.\d+\.\d+\S*`)

// cliVersion is the version the CLI reports, "" when it reports none
// within a few seconds.
func cliVersion(ctx context.Context, cli string) string {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, "version")
	cmd.Env = append(os.Environ(), cliEnv()...)
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(runner.StripEscapes(string(out)), "\n")
	v := versionPattern.FindString(line)
	if v != "" && !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	return v
}

// checkRunnerHost checks that the engine named by a runner host answers
// where a connection or a command can tell: for tcp:// and unix://, that
// it answers a connection as a Dagger engine does (see checkListener).
func checkRunnerHost(ctx context.Context, host string, timeout time.Duration) error {
	if host == "" {
		return checkCommand(ctx, "docker", []string{"info", "--format", "{{.ServerVersion}}"}, timeout,
			"_EXPERIMENTAL_DAGGER_RUNNER_HOST is unset, so the dagger CLI would start an engine with Docker",
			"start Docker, or point _EXPERIMENTAL_DAGGER_RUNNER_HOST at a running engine (tcp://host:1234, unix:///run/dagger/engine.sock, kube-pod://…)")
	}
	u, err := url.Parse(host)
	if err != nil || u.Scheme == "" {
		return &PreflightError{Tried: fmt.Sprintf("_EXPERIMENTAL_DAGGER_RUNNER_HOST=%q is not a URL", host), Fix: "use tcp://host:port, unix:///path, docker-container://name, kube-pod://name"}
	}
	switch u.Scheme {
	case "tcp":
		return checkListener(ctx, host, "tcp", u.Host, timeout)
	case "unix":
		return checkListener(ctx, host, "unix", u.Path, timeout)
	case "docker-container", "docker-image":
		return checkCommand(ctx, "docker", []string{"info", "--format", "{{.ServerVersion}}"}, timeout,
			"the engine "+host+" runs in Docker", "start Docker, or point _EXPERIMENTAL_DAGGER_RUNNER_HOST at a running engine")
	case "podman-container", "podman-image":
		return checkCommand(ctx, "podman", []string{"info"}, timeout, "the engine "+host+" runs in Podman", "start Podman, or point _EXPERIMENTAL_DAGGER_RUNNER_HOST at a running engine")
	case "kube-pod":
		args := []string{"get", "pod", u.Host}
		if ns := u.Query().Get("namespace"); ns != "" {
			args = append(args, "--namespace", ns)
		}
		return checkCommand(ctx, "kubectl", args, timeout, "the engine "+host+" in Kubernetes", "check that the pod exists and kubectl can reach the cluster")
	default:
		return &PreflightError{Tried: fmt.Sprintf("_EXPERIMENTAL_DAGGER_RUNNER_HOST=%q has an unknown scheme %q", host, u.Scheme), Fix: "use tcp://, unix://, docker-container://, kube-pod://"}
	}
}

// checkListener checks that the engine at host (a tcp:// or unix:// runner
// host, reached at addr on network) accepts a connection and answers it
// as a Dagger engine does (see greet), within ctx.
func checkListener(ctx context.Context, host, network, addr string, timeout time.Duration) error {
	err := greet(ctx, network, addr)
	var notEngine *notEngineError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errSilent):
		return &PreflightError{Tried: silentTried(host+" accepts connections but", timeout), Fix: silentFix(host)}
	case errors.As(err, &notEngine):
		return &PreflightError{Tried: host + " accepts connections but is not a Dagger engine", Err: err,
			Fix: "point _EXPERIMENTAL_DAGGER_RUNNER_HOST at a Dagger engine's address (`dagger core version` prints its version)"}
	}
	return &PreflightError{Tried: "the engine at " + host, Fix: "start the engine at " + host + ", or fix _EXPERIMENTAL_DAGGER_RUNNER_HOST", Err: err}
}

// silentFix says what to do about an engine at host that did not answer.
func silentFix(host string) string {
	return "check that the engine at " + host + " runs and is neither paused nor overloaded (`dagger core version` asks it its version), " +
		"or point _EXPERIMENTAL_DAGGER_RUNNER_HOST at another engine"
}

func dial(ctx context.Context, network, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return err
	}
	return c.Close()
}

// checkCommand runs a probe command; it must exist and succeed in time.
func checkCommand(ctx context.Context, name string, args []string, timeout time.Duration, tried, fix string) error {
	bin, err := exec.LookPath(name)
	if err != nil {
		return &PreflightError{Tried: tried + ", and " + name + " is not installed", Fix: fix}
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("%s %s did not answer within %s", name, strings.Join(args, " "), timeout)
		} else if msg := strings.TrimSpace(string(out)); msg != "" {
			first, _, _ := strings.Cut(msg, "\n")
			err = fmt.Errorf("%s %s: %s", name, strings.Join(args, " "), first)
		}
		return &PreflightError{Tried: tried, Fix: fix, Err: err}
	}
	return nil
}

// Connector returns the connect function of New for engine e: it opens
// the run's session (one set owns, for a CLI, within SessionStartTimeout)
// with the CLI's progress output going to logOutput. Closing the client it
// returns ends that session within seconds.
func Connector(e *Engine, logOutput io.Writer) func(ctx context.Context) (*dagger.Client, error) {
	return connector(e, logOutput, SessionStartTimeout, sessionCloseGrace)
}

// connector is Connector with the session's timeouts.
func connector(e *Engine, logOutput io.Writer, start, closeGrace time.Duration) func(ctx context.Context) (*dagger.Client, error) {
	return func(ctx context.Context) (*dagger.Client, error) {
		conn, err := e.open(ctx, logOutput, start, closeGrace)
		if err != nil {
			return nil, fmt.Errorf("opening a session with %s: %w", e, err)
		}
		c, err := dagger.Connect(ctx, dagger.WithConn(conn))
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("connecting to %s: %w", e, err)
		}
		return c, nil
	}
}

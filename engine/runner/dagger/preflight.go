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
	"strings"
	"time"

	"dagger.io/dagger"
	"dagger.io/dagger/engineconn"
)

// Engine is how set reaches a Dagger engine, chosen exactly as the Go SDK
// chooses it: a `dagger run` session (DAGGER_SESSION_PORT and
// DAGGER_SESSION_TOKEN) first, then a dagger CLI that starts a session
// (_EXPERIMENTAL_DAGGER_CLI_BIN, which set also fills in from a `dagger`
// on PATH), whose engine is _EXPERIMENTAL_DAGGER_RUNNER_HOST or, unset, an
// engine the CLI starts in Docker. set never lets the SDK download a CLI.
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

// PreflightTimeout bounds every check Preflight makes.
const PreflightTimeout = 4 * time.Second

// PreflightError says what Preflight tried and how to fix it.
type PreflightError struct {
	Tried string
	Fix   string
	Err   error
}

func (e *PreflightError) Error() string {
	msg := "no Dagger engine: " + e.Tried
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg + "\n  fix: " + e.Fix + "\n  or run the gates on the host: runner: kind: \"host\""
}

func (e *PreflightError) Unwrap() error { return e.Err }

// Preflight finds the engine the SDK would use and checks, within
// PreflightTimeout, that it answers and that a CLI is there to open a
// session with it. getenv reads the environment (os.Getenv in production).
func Preflight(ctx context.Context, getenv func(string) string) (*Engine, error) {
	ctx, cancel := context.WithTimeout(ctx, PreflightTimeout)
	defer cancel()
	if port := getenv("DAGGER_SESSION_PORT"); port != "" {
		addr := net.JoinHostPort("127.0.0.1", port)
		if getenv("DAGGER_SESSION_TOKEN") == "" {
			return nil, &PreflightError{Tried: "DAGGER_SESSION_PORT is set without DAGGER_SESSION_TOKEN", Fix: "run set under `dagger run`, which sets both"}
		}
		if err := dial(ctx, "tcp", addr); err != nil {
			return nil, &PreflightError{Tried: "the `dagger run` session at " + addr + " (DAGGER_SESSION_PORT)", Fix: "run set inside a live `dagger run`, or unset DAGGER_SESSION_PORT", Err: err}
		}
		return &Engine{Via: "session", Address: addr}, nil
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
	if err := checkRunnerHost(ctx, e.RunnerHost); err != nil {
		return nil, err
	}
	e.Address = e.RunnerHost
	return e, nil
}

// checkRunnerHost checks that the engine named by a runner host answers.
func checkRunnerHost(ctx context.Context, host string) error {
	if host == "" {
		return checkCommand(ctx, "docker", []string{"info", "--format", "{{.ServerVersion}}"},
			"_EXPERIMENTAL_DAGGER_RUNNER_HOST is unset, so the dagger CLI would start an engine with Docker",
			"start Docker, or point _EXPERIMENTAL_DAGGER_RUNNER_HOST at a running engine (tcp://host:1234, unix:///run/dagger/engine.sock, kube-pod://…)")
	}
	u, err := url.Parse(host)
	if err != nil || u.Scheme == "" {
		return &PreflightError{Tried: fmt.Sprintf("_EXPERIMENTAL_DAGGER_RUNNER_HOST=%q is not a URL", host), Fix: "use tcp://host:port, unix:///path, docker-container://name, kube-pod://name"}
	}
	fixRemote := "start the engine at " + host + ", or fix _EXPERIMENTAL_DAGGER_RUNNER_HOST"
	switch u.Scheme {
	case "tcp":
		if err := dial(ctx, "tcp", u.Host); err != nil {
			return &PreflightError{Tried: "the engine at " + host, Fix: fixRemote, Err: err}
		}
	case "unix":
		if err := dial(ctx, "unix", u.Path); err != nil {
			return &PreflightError{Tried: "the engine at " + host, Fix: fixRemote, Err: err}
		}
	case "docker-container", "docker-image":
		return checkCommand(ctx, "docker", []string{"info", "--format", "{{.ServerVersion}}"},
			"the engine "+host+" runs in Docker", "start Docker, or point _EXPERIMENTAL_DAGGER_RUNNER_HOST at a running engine")
	case "podman-container", "podman-image":
		return checkCommand(ctx, "podman", []string{"info"}, "the engine "+host+" runs in Podman", "start Podman, or point _EXPERIMENTAL_DAGGER_RUNNER_HOST at a running engine")
	case "kube-pod":
		args := []string{"get", "pod", u.Host}
		if ns := u.Query().Get("namespace"); ns != "" {
			args = append(args, "--namespace", ns)
		}
		return checkCommand(ctx, "kubectl", args, "the engine "+host+" in Kubernetes", "check that the pod exists and kubectl can reach the cluster")
	default:
		return &PreflightError{Tried: fmt.Sprintf("_EXPERIMENTAL_DAGGER_RUNNER_HOST=%q has an unknown scheme %q", host, u.Scheme), Fix: "use tcp://, unix://, docker-container://, kube-pod://"}
	}
	return nil
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
func checkCommand(ctx context.Context, name string, args []string, tried, fix string) error {
	bin, err := exec.LookPath(name)
	if err != nil {
		return &PreflightError{Tried: tried + ", and " + name + " is not installed", Fix: fix}
	}
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("%s %s did not answer within %s", name, strings.Join(args, " "), PreflightTimeout)
		} else if msg := strings.TrimSpace(string(out)); msg != "" {
			first, _, _ := strings.Cut(msg, "\n")
			err = fmt.Errorf("%s %s: %s", name, strings.Join(args, " "), first)
		}
		return &PreflightError{Tried: tried, Fix: fix, Err: err}
	}
	return nil
}

// Connector returns the connect function of New for engine e: it opens
// one SDK session, with the engine's progress output going to logOutput.
// The SDK reads the CLI to use only from _EXPERIMENTAL_DAGGER_CLI_BIN, so a
// CLI that Preflight found on PATH is handed over through that variable.
func Connector(e *Engine, logOutput io.Writer) func(ctx context.Context) (*dagger.Client, error) {
	return func(ctx context.Context) (*dagger.Client, error) {
		if e.Via == "cli" && os.Getenv("_EXPERIMENTAL_DAGGER_CLI_BIN") == "" {
			if err := os.Setenv("_EXPERIMENTAL_DAGGER_CLI_BIN", e.CLI); err != nil {
				return nil, err
			}
		}
		opts := []dagger.ClientOpt{dagger.WithLogOutput(logOutput)}
		if e.RunnerHost != "" {
			opts = append(opts, dagger.WithRunnerHost(e.RunnerHost))
		}
		c, err := dagger.Connect(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("connecting to %s: %w", e, err)
		}
		return c, nil
	}
}

// SDKEngineVersion is the engine version the Dagger SDK that set is built
// with expects (the SDK's own version, without the "v").
const SDKEngineVersion = engineconn.CLIVersion

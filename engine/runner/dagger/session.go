package dagger

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"dagger.io/dagger/engineconn"

	"github.com/set-engine/set/engine/proc"
	"github.com/set-engine/set/engine/runner"
)

// SessionStartTimeout bounds how long the dagger CLI may take to open the
// session of a run. Preflight has just proved the engine, so a CLI that
// takes longer is stuck, not busy.
const SessionStartTimeout = time.Minute

// sessionCloseGrace is how long Close lets the dagger CLI end its session
// by itself, once its stdin is closed, before its process group is killed
// (SIGTERM, then SIGKILL after proc's grace).
const sessionCloseGrace = 2 * time.Second

// sessionReapTimeout bounds the wait for a killed session's process group
// to be reaped: past it, Close and a failed start return anyway.
const sessionReapTimeout = 5 * time.Second

// session is a `dagger session` process that set started and owns, as the
// Go SDK would start it (the same arguments and labels) but on set's
// terms: a deadline for the line that gives its port and token, its own
// process group (through proc.Run), recorded in the PID directory of the
// context it was started with (proc.WithPIDDir) so that a run restarted
// after a crash ends it like a leftover agent or gate, and a Close that
// returns within seconds whatever the CLI or the engine does.
//
// The CLI ends the session when its stdin closes (the SDK relies on this
// too); set holds the write end of that pipe until Close.
type session struct {
	port  int
	token string

	stdin, stdinR *os.File           // the CLI's stdin: set's write end, the CLI's read end
	stderr        *runner.Tail       // the end of the CLI's stderr, for errors
	kill          context.CancelFunc // ends proc.Run's context: SIGTERM to the group, SIGKILL after a grace
	done          chan struct{}      // closed once the CLI has exited and been waited for
	outcome       proc.Outcome       // written before done is closed
	runErr        error              // written before done is closed
	closeGrace    time.Duration

	closeOnce sync.Once
	closeErr  error
}

// sessionOptions say which CLI opens the session and how long it may take.
type sessionOptions struct {
	cli        string
	runnerHost string    // _EXPERIMENTAL_DAGGER_RUNNER_HOST for the CLI; "" leaves the environment's
	log        io.Writer // gets the CLI's stderr (its progress output); nil discards it
	start      time.Duration
	closeGrace time.Duration
}

// cliEnv is what every dagger CLI set runs gets beside set's environment
// (later values win): plain output without colour. The CLI colours even
// its plain progress (which a session writes to the Dagger log) unless
// NO_COLOR is set, and DAGGER_PROGRESS set to "tty" or "report" in set's
// environment would ask for a terminal it does not have, or for nothing
// until the session ends.
func cliEnv() []string { return []string{"NO_COLOR=1", "DAGGER_PROGRESS=plain"} }

// sessionArgv is the command the Go SDK (v0.21.9) runs for a session
// without a workdir or workspace: `dagger session` with its labels.
func sessionArgv(cli string) []string {
	return []string{cli, "session",
		"--label", "dagger.io/sdk.name:go",
		"--label", "dagger.io/sdk.version:" + SDKEngineVersion}
}

// startSession starts the CLI's session and returns once the CLI printed
// its port and token. It fails when the CLI cannot start, exits first,
// prints something else, or says nothing within o.start, and when ctx
// ends; the CLI's process group is then killed and reaped before it
// returns. The session's life is not bound to ctx: Close ends it.
func startSession(ctx context.Context, o sessionOptions) (*session, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting the dagger CLI: %w", err)
	}
	pctx, kill := context.WithCancel(context.WithoutCancel(ctx))
	s := &session{stdin: w, stdinR: r, stderr: runner.NewTail(4 << 10), kill: kill,
		done: make(chan struct{}), closeGrace: o.closeGrace}
	stdout := &firstLine{line: make(chan []byte, 1)}
	var stderr io.Writer = s.stderr
	if o.log != nil {
		stderr = io.MultiWriter(o.log, s.stderr)
	}
	// The log and the errors that quote the CLI are read as text: no
	// terminal escapes, whatever the CLI writes.
	stderr = runner.NewEscapeStripper(stderr)
	env := append(os.Environ(), cliEnv()...)
	if o.runnerHost != "" {
		// The engine is the one named, never the session of a `dagger
		// run` around set.
		env = slices.DeleteFunc(env, func(kv string) bool {
			return strings.HasPrefix(kv, "DAGGER_SESSION_PORT=") || strings.HasPrefix(kv, "DAGGER_SESSION_TOKEN=")
		})
		env = append(env, "_EXPERIMENTAL_DAGGER_RUNNER_HOST="+o.runnerHost)
	}
	go func() {
		s.outcome, s.runErr = proc.Run(pctx, proc.Spec{Argv: sessionArgv(o.cli), Env: env, Stdin: r, Stdout: stdout, Stderr: stderr})
		close(s.done)
	}()

	timer := time.NewTimer(o.start)
	defer timer.Stop()
	select {
	case line := <-stdout.line:
		var p engineconn.ConnectParams
		if err := json.Unmarshal(line, &p); err != nil || p.Port <= 0 || p.Port > 65535 || p.SessionToken == "" {
			s.end(0)
			return nil, fmt.Errorf("the dagger CLI printed %q instead of its session's port and token", bytes.TrimSpace(line))
		}
		s.port, s.token = p.Port, p.SessionToken
		return s, nil
	case <-s.done:
		s.end(0)
		if s.runErr != nil {
			return nil, s.runErr
		}
		return nil, fmt.Errorf("the dagger CLI exited with status %d before opening a session%s", s.outcome.ExitCode, s.said())
	case <-timer.C:
		s.end(0)
		return nil, &sessionTimeoutError{after: o.start, said: s.said()}
	case <-ctx.Done():
		s.end(0)
		return nil, context.Cause(ctx)
	}
}

// sessionTimeoutError is a CLI that printed no session line in time.
type sessionTimeoutError struct {
	after time.Duration
	said  string
}

func (e *sessionTimeoutError) Error() string {
	return fmt.Sprintf("the dagger CLI opened no session within %s%s", e.after, e.said)
}

// said is ": " and the last line the CLI wrote to stderr, or "".
func (s *session) said() string {
	lines := strings.Split(strings.TrimSpace(string(s.stderr.Bytes())), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
		return ": " + last
	}
	return ""
}

// end ends the session: it closes the CLI's stdin, gives the CLI grace to
// exit by itself, then kills its process group and waits, at most
// sessionReapTimeout, for it to be reaped. It reports whether the CLI had
// to be killed and whether it was reaped.
func (s *session) end(grace time.Duration) (killed, reaped bool) {
	s.stdin.Close()
	if grace > 0 {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-s.done:
		case <-t.C:
		}
	}
	select {
	case <-s.done:
	default:
		killed = true
	}
	s.kill()
	reap := time.NewTimer(sessionReapTimeout)
	defer reap.Stop()
	select {
	case <-s.done:
		reaped = true
		s.stdinR.Close()
	case <-reap.C:
	}
	return killed, reaped
}

// Close ends the session (see end) and returns within closeGrace plus
// sessionReapTimeout. It is an error when the CLI did not end the session
// when asked and had to be killed, or could not be reaped.
func (s *session) Close() error {
	s.closeOnce.Do(func() {
		killed, reaped := s.end(s.closeGrace)
		switch {
		case !reaped:
			s.closeErr = fmt.Errorf("the dagger session's processes were still running %s after SIGKILL", sessionReapTimeout)
		case killed:
			s.closeErr = fmt.Errorf("the dagger session did not end within %s of its stdin closing, so its processes were killed", s.closeGrace)
		}
	})
	return s.closeErr
}

// conn is a connection to the session's API; closing it ends the session.
func (s *session) conn() *sessionConn {
	c := newSessionConn(s.port, s.token, s.Close)
	c.ended = s.ended
	return c
}

// sessionEndWait is how long a request that failed on the session's
// connection waits for the CLI to exit, to tell which went first: a CLI
// that dies closes its listener a moment before it is reaped.
const sessionEndWait = time.Second

// ended waits up to sessionEndWait for the CLI to exit, and says how it
// ended; nil when it still runs.
func (s *session) ended() *sessionEndedError {
	t := time.NewTimer(sessionEndWait)
	defer t.Stop()
	select {
	case <-s.done:
	case <-t.C:
		return nil
	}
	e := &sessionEndedError{status: s.outcome.ExitCode, said: s.said()}
	if s.runErr != nil {
		e.said = ": " + s.runErr.Error()
	}
	return e
}

// sessionEndedError is a request to a session whose CLI had exited: the
// engine went away with it, or killed it.
type sessionEndedError struct {
	status int
	said   string // ": " and the CLI's last line on stderr, or ""
	err    error  // what the request itself failed with
}

func (e *sessionEndedError) Error() string {
	return fmt.Sprintf("the dagger CLI of its session exited with status %d%s", e.status, e.said)
}

func (e *sessionEndedError) Unwrap() error { return e.err }

// firstLine is the CLI's stdout: it hands the first line to line and
// discards everything after it. A first line longer than maxSessionLine
// is cut there (it is no session line). One goroutine writes to it.
type firstLine struct {
	buf  []byte
	sent bool
	line chan []byte // buffered, 1
}

const maxSessionLine = 64 << 10

func (w *firstLine) Write(p []byte) (int, error) {
	if w.sent {
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	i := bytes.IndexByte(w.buf, '\n')
	if i < 0 && len(w.buf) < maxSessionLine {
		return len(p), nil
	}
	if i < 0 {
		i = maxSessionLine
	}
	w.line <- w.buf[:i]
	w.sent, w.buf = true, nil
	return len(p), nil
}

// sessionConn is an engineconn.EngineConn to a session's GraphQL API on
// 127.0.0.1, authenticated by the session's token, as the SDK's own
// connection does. Closing it calls end (nil for a session set does not
// own, such as the one of `dagger run`).
type sessionConn struct {
	client    *http.Client
	transport *http.Transport
	host      string
	end       func() error
	// ended says how the session's CLI ended, nil while it runs (and
	// for a session set does not own).
	ended func() *sessionEndedError
}

var _ engineconn.EngineConn = (*sessionConn)(nil)

func newSessionConn(port int, token string, end func() error) *sessionConn {
	// No proxy: the session listens on this machine's loopback.
	tr := &http.Transport{Proxy: nil, ForceAttemptHTTP2: false}
	return &sessionConn{
		client:    &http.Client{Transport: basicAuth{token: token, next: tr}},
		transport: tr,
		host:      net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		end:       end,
	}
}

// Do sends req to the session. A request that fails because the
// session's CLI has exited says so (sessionEndedError), wrapping what
// it failed with.
func (c *sessionConn) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.client.Do(req)
	if err != nil && c.ended != nil && req.Context().Err() == nil {
		if e := c.ended(); e != nil {
			e.err = err
			return nil, e
		}
	}
	return resp, err
}

func (c *sessionConn) Host() string { return c.host }

func (c *sessionConn) Close() error {
	c.transport.CloseIdleConnections()
	if c.end == nil {
		return nil
	}
	return c.end()
}

// basicAuth sends the session token as the basic-auth user, as the SDK.
type basicAuth struct {
	token string
	next  http.RoundTripper
}

func (a basicAuth) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.SetBasicAuth(a.token, "")
	return a.next.RoundTrip(req)
}

package dagger

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"dagger.io/dagger"

	"github.com/set-engine/set/engine/proc"
	"github.com/set-engine/set/engine/runner"
)

// notLong bounds the calls that must not wait on the SDK's 300 s timers:
// far above what they take (a few seconds at most), far below 300 s.
const notLong = 30 * time.Second

// fakeCLI is a dagger CLI made of a shell script. `dagger version` prints
// a version line as the real CLI does; `dagger session` records in dir its
// arguments (args), the runner host it was given (runnerhost) and its PID
// (cli.pid), then runs the test's shell code, which records the PIDs of
// what it starts in the background in dir too (child.pid). A PID file
// appears whole (written aside, then renamed), or not at all when the
// script was killed first.
type fakeCLI struct{ bin, dir string }

func newFakeCLI(t *testing.T, session string) *fakeCLI {
	t.Helper()
	dir := t.TempDir()
	script := fmt.Sprintf(`#!/bin/sh
case "$1" in
version) echo "dagger v%s (registry.dagger.io/engine:v%s) linux/amd64"; exit 0 ;;
session) ;;
*) echo "fake dagger: no command $1" >&2; exit 2 ;;
esac
D=%q
echo "$*" > "$D/args"
echo "${_EXPERIMENTAL_DAGGER_RUNNER_HOST-}" > "$D/runnerhost"
echo "${DAGGER_SESSION_PORT-}${DAGGER_SESSION_TOKEN-}" > "$D/outersession"
echo $$ > "$D/cli.tmp" && mv "$D/cli.tmp" "$D/cli.pid"
%s
`, SDKEngineVersion, SDKEngineVersion, dir, session)
	bin := filepath.Join(dir, "dagger")
	// Written with no process forked meanwhile: a child forked while the
	// file is open for writing holds it open until it execs, and running
	// the file then fails with "text file busy" (the tests run at once).
	syscall.ForkLock.Lock()
	err := os.WriteFile(bin, []byte(script), 0o755)
	syscall.ForkLock.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	return &fakeCLI{bin: bin, dir: dir}
}

// Shell code for fake sessions.
const (
	// hang starts a child and waits for it: a CLI waiting on an engine.
	hang = `sleep 300 & echo $! > "$D/child.tmp" && mv "$D/child.tmp" "$D/child.pid"; wait`
	// ignoreTERM makes the script and its children ignore SIGTERM.
	ignoreTERM = `trap '' TERM`
	// untilStdinCloses is a well-behaved session: it ends with its stdin.
	untilStdinCloses = `cat > /dev/null; exit 0`
)

// sessionLine prints the line of a session listening on port.
func sessionLine(port int, token string) string {
	return fmt.Sprintf(`echo '{"port":%d,"session_token":"%s"}'`, port, token)
}

func (c *fakeCLI) file(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, name))
	if err != nil {
		t.Fatalf("the fake CLI wrote no %s: %v", name, err)
	}
	return strings.TrimSpace(string(b))
}

// pids are the PIDs the fake CLI recorded (itself and its children).
func (c *fakeCLI) pids(t *testing.T) []int {
	t.Helper()
	var out []int
	for _, name := range []string{"cli.pid", "child.pid"} {
		b, err := os.ReadFile(filepath.Join(c.dir, name))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, pid)
	}
	if len(out) == 0 {
		t.Fatal("the fake CLI recorded no PID: it never ran")
	}
	return out
}

// noneLeft fails t unless every process the fake CLI recorded is gone. A
// killed process is gone at once; the loop only waits for the kernel to
// finish the job.
func (c *fakeCLI) noneLeft(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range c.pids(t) {
		for alive(pid) {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("process %d of the fake dagger session is still running", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// has reports whether the fake CLI wrote the file name.
func (c *fakeCLI) has(name string) bool {
	_, err := os.Stat(filepath.Join(c.dir, name))
	return err == nil
}

// cancelWhen calls cancel once cond holds, or after notLong (then the
// test fails).
func cancelWhen(t *testing.T, cancel context.CancelFunc, cond func() bool) {
	defer cancel()
	for deadline := time.Now().Add(notLong); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("the condition to cancel on never held")
			return
		}
	}
}

// alive reports whether process pid exists and is not a zombie (a killed
// child of the script is reparented to PID 1, which need not reap it).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		_, noProc := os.Stat("/proc/self")
		return noProc != nil
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

// serve answers the fake engine's GraphQL over HTTP on 127.0.0.1, as the
// API of a session does, for requests whose basic-auth user is token. It
// returns the port.
func (f *fakeEngine) serve(t *testing.T, token string) int {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, _, ok := r.BasicAuth(); !ok || user != token {
			http.Error(w, "wrong session token", http.StatusUnauthorized)
			return
		}
		resp, err := f.Do(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port
}

// plainListener accepts connections on 127.0.0.1 and never answers, as
// a port of something that is not a Dagger engine. It returns the port.
func plainListener(t *testing.T) int {
	return listener(t, func(net.Conn) bool { return true })
}

// listener accepts connections on 127.0.0.1 and hands each to accept,
// which keeps it open until the test ends when it returns true and closes
// it at once otherwise. It returns the port.
func listener(t *testing.T, accept func(net.Conn) (keep bool)) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				<-done
				return
			}
			if !accept(c) {
				c.Close()
				continue
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() { l.Close(); close(done) })
	return l.Addr().(*net.TCPAddr).Port
}

// engineListener is an HTTP server on 127.0.0.1 that speaks HTTP/1 and
// HTTP/2 without TLS, as a Dagger engine's API listener does (it answers
// greet as an engine); it answers every request 404. It returns the port.
func engineListener(t *testing.T) int {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port
}

// answeringListener accepts connections on 127.0.0.1, writes answer on
// each and keeps it open ("" closes it at once), as something that is not
// a Dagger engine may. It returns the port.
func answeringListener(t *testing.T, answer string) int {
	return listener(t, func(c net.Conn) bool {
		if answer == "" {
			return false
		}
		c.Write([]byte(answer))
		return true
	})
}

func testSession(cli string, start time.Duration) sessionOptions {
	return sessionOptions{cli: cli, runnerHost: "tcp://engine.test:1234", start: start, closeGrace: 200 * time.Millisecond}
}

// TestSessionOpens: the CLI is started as the SDK starts it, with the
// runner host; the session's API answers on its port with its token; and
// a CLI that ends its session when its stdin closes is let go by itself.
func TestSessionOpens(t *testing.T) {
	t.Setenv("DAGGER_SESSION_PORT", "4242") // a `dagger run` around set
	t.Setenv("DAGGER_SESSION_TOKEN", "outer")
	engine := newFakeEngine()
	cli := newFakeCLI(t, sessionLine(engine.serve(t, "s3cret"), "s3cret")+"\n"+untilStdinCloses)
	var log strings.Builder
	o := testSession(cli.bin, notLong)
	o.log = &log
	s, err := startSession(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cli.file(t, "args"), "session --label dagger.io/sdk.name:go --label dagger.io/sdk.version:"+SDKEngineVersion; got != want {
		t.Errorf("args %q, want %q", got, want)
	}
	if got := cli.file(t, "runnerhost"); got != "tcp://engine.test:1234" {
		t.Errorf("runner host %q", got)
	}
	if got := cli.file(t, "outersession"); got != "" {
		t.Errorf("the CLI of a named engine was given the session of `dagger run`: %q", got)
	}
	client, err := dagger.Connect(context.Background(), dagger.WithConn(s.conn()))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := client.Version(context.Background()); err != nil || v != "v"+SDKEngineVersion {
		t.Errorf("Version = %q, %v", v, err)
	}
	if err := client.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if s.outcome.ExitCode != 0 || s.outcome.Canceled {
		t.Errorf("the CLI did not end by itself: %+v", s.outcome)
	}
	cli.noneLeft(t)
}

// TestSessionNeverOpens: a CLI that never prints its session line is
// killed at the deadline, with whatever it runs.
func TestSessionNeverOpens(t *testing.T) {
	t.Parallel()
	cli := newFakeCLI(t, `echo "connecting to the engine…" >&2`+"\n"+hang)
	start := time.Now()
	_, err := startSession(context.Background(), testSession(cli.bin, 2*time.Second))
	var late *sessionTimeoutError
	if !errors.As(err, &late) || err.Error() != "the dagger CLI opened no session within 2s: connecting to the engine…" {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if d := time.Since(start); d > notLong {
		t.Errorf("returned after %v", d)
	}
	cli.noneLeft(t)
}

// TestSessionIgnoresSIGTERM: a CLI that ignores SIGTERM, before or after
// its session opened, is killed all the same.
func TestSessionIgnoresSIGTERM(t *testing.T) {
	t.Parallel()
	t.Run("before the session line", func(t *testing.T) {
		t.Parallel()
		cli := newFakeCLI(t, ignoreTERM+"\n"+hang)
		if _, err := startSession(context.Background(), testSession(cli.bin, time.Second)); err == nil {
			t.Fatal("no error")
		}
		cli.noneLeft(t)
	})
	t.Run("after it", func(t *testing.T) {
		t.Parallel()
		cli := newFakeCLI(t, ignoreTERM+"\n"+sessionLine(plainListener(t), "tok")+"\n"+hang)
		s, err := startSession(context.Background(), testSession(cli.bin, notLong))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := s.Close(); err == nil || !strings.Contains(err.Error(), "did not end within 200ms of its stdin closing") {
			t.Errorf("Close = %v", err)
		}
		if d := time.Since(start); d > notLong {
			t.Errorf("Close took %v", d)
		}
		cli.noneLeft(t)
	})
}

// TestSessionHangsAfterLine: a CLI that opened its session but does not
// end it when asked is killed by Close.
func TestSessionHangsAfterLine(t *testing.T) {
	t.Parallel()
	cli := newFakeCLI(t, sessionLine(plainListener(t), "tok")+"\n"+hang)
	s, err := startSession(context.Background(), testSession(cli.bin, notLong))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err == nil {
		t.Error("Close of a session that had to be killed: no error")
	}
	if err := s.Close(); err == nil {
		t.Error("second Close forgot the first's error")
	}
	cli.noneLeft(t)
}

func TestSessionFails(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ session, want string }{
		"exits":    {`echo "tcp://engine.test:1234: connection refused" >&2; exit 1`, "the dagger CLI exited with status 1 before opening a session: tcp://engine.test:1234: connection refused"},
		"bad line": {`echo "Welcome to Dagger"; ` + hang, `the dagger CLI printed "Welcome to Dagger" instead of its session's port and token`},
		"no token": {`echo '{"port":1234}'; ` + hang, `the dagger CLI printed "{\"port\":1234}" instead of its session's port and token`},
	} {
		t.Run(name, func(t *testing.T) {
			cli := newFakeCLI(t, tc.session)
			_, err := startSession(context.Background(), testSession(cli.bin, notLong))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v\nwant %s", err, tc.want)
			}
			cli.noneLeft(t)
		})
	}
	_, err := startSession(context.Background(), testSession(filepath.Join(t.TempDir(), "dagger"), notLong))
	if !errors.Is(err, proc.ErrStart) {
		t.Errorf("missing CLI: err = %v, want proc.ErrStart", err)
	}
}

// TestSessionCancel: a context that ends while the session opens (the
// run's SIGTERM) stops the start and the CLI.
func TestSessionCancel(t *testing.T) {
	t.Parallel()
	cli := newFakeCLI(t, ignoreTERM+"\n"+hang)
	ctx, cancel := context.WithCancel(context.Background())
	go cancelWhen(t, cancel, func() bool { return cli.has("child.pid") })
	if _, err := startSession(ctx, testSession(cli.bin, notLong)); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	cli.noneLeft(t)
}

// TestSessionRecordedForOrphans: while it runs, the session's process
// group has a PID file in the run's PID directory, as agents and gates
// do, so that a run restarted after a crash ends it; Close removes it.
func TestSessionRecordedForOrphans(t *testing.T) {
	t.Parallel()
	pids := t.TempDir()
	cli := newFakeCLI(t, sessionLine(plainListener(t), "tok")+"\n"+untilStdinCloses)
	s, err := startSession(proc.WithPIDDir(context.Background(), pids), testSession(cli.bin, notLong))
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(pids)
	if len(entries) != 1 || entries[0].Name() != cli.file(t, "cli.pid") {
		t.Errorf("PID files %v, want one named %s", entries, cli.file(t, "cli.pid"))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(pids); len(entries) != 0 {
		t.Errorf("PID files left after Close: %v", entries)
	}
}

// TestRunnerSessionDeadline: a gate on a CLI that never opens its session
// is a run error once the session's deadline passes, and nothing of the
// CLI is left.
func TestRunnerSessionDeadline(t *testing.T) {
	t.Parallel()
	cli := newFakeCLI(t, hang)
	e := &Engine{Via: "cli", CLI: cli.bin, RunnerHost: "tcp://engine.test:1234"}
	r := New(goCfg(), "/p", "fake", connector(e, io.Discard, time.Second, 200*time.Millisecond))
	defer r.(io.Closer).Close()
	start := time.Now()
	_, err := r.Exec(context.Background(), runner.Exec{Argv: []string{"true"}, Dir: "/wt"})
	if err == nil || !strings.Contains(err.Error(), "opened no session within 1s") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > notLong {
		t.Errorf("Exec returned after %v", d)
	}
	cli.noneLeft(t)
}

// TestRunnerStopsWithTheRun: the run is stopped (its context ends, as on
// SIGTERM) once a gate waits on the engine, over a session whose CLI
// ignores both its stdin closing and SIGTERM: the gate returns, Close
// returns, and nothing of the CLI is left.
func TestRunnerStopsWithTheRun(t *testing.T) {
	t.Parallel()
	engine := newFakeEngine()
	engine.block["sync"] = true
	cli := newFakeCLI(t, ignoreTERM+"\n"+sessionLine(engine.serve(t, "tok"), "tok")+"\n"+hang)
	e := &Engine{Via: "cli", CLI: cli.bin}
	r := New(goCfg(), "/p", "fake", connector(e, io.Discard, notLong, 200*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	go cancelWhen(t, cancel, func() bool {
		return slices.ContainsFunc(engine.recorded(), func(q string) bool { return strings.HasSuffix(q, ".sync") })
	})
	start := time.Now()
	if _, err := r.Exec(ctx, runner.Exec{Argv: []string{"go", "test"}, Dir: t.TempDir()}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Exec = %v, want context.Canceled", err)
	}
	if err := r.(io.Closer).Close(); err == nil {
		t.Error("Close of a session that had to be killed: no error")
	}
	if d := time.Since(start); d > notLong {
		t.Errorf("stopping took %v", d)
	}
	if !slices.ContainsFunc(engine.recorded(), func(q string) bool { return strings.HasSuffix(q, ".sync") }) {
		t.Errorf("the gate never reached the engine through the session: %q", engine.recorded())
	}
	cli.noneLeft(t)
}

// TestRunnerSessionCLIExits: a session whose CLI exits under the run (the
// engine went away and the CLI with it) makes the next gate an engine
// fault that says how the CLI ended, in its own words.
func TestRunnerSessionCLIExits(t *testing.T) {
	t.Parallel()
	// A port nobody listens on: the CLI's API is gone with it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cli := newFakeCLI(t, sessionLine(port, "tok")+"\necho 'Error: lost the connection to the engine' >&2; exit 1")
	e := &Engine{Via: "cli", CLI: cli.bin}
	r := New(goCfg(), "/p", "tcp://engine.test:1234", connector(e, io.Discard, notLong, 200*time.Millisecond))
	defer r.(io.Closer).Close()
	_, err = r.Exec(context.Background(), runner.Exec{Argv: []string{"go", "test"}, Dir: t.TempDir()})
	want := "the Dagger engine tcp://engine.test:1234 went away during the gate: the dagger CLI of its session exited with status 1: Error: lost the connection to the engine\n"
	if !IsEngineFault(err) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Exec = %v\nwant an EngineFault starting %q", err, want)
	}
	cli.noneLeft(t)
}

// colouredProgress is shell code that writes progress as the dagger CLI
// does when NO_COLOR is unset: coloured, with an OSC hyperlink, split
// across writes. It records what it was given for colour and progress.
const colouredProgress = `echo "NO_COLOR=${NO_COLOR-} DAGGER_PROGRESS=${DAGGER_PROGRESS-}" > "$D/colour"
printf '1   : connect \033[32mDONE\033[0m \033[90m[0.1s]\033[0m\n' >&2
printf '2   : \033]8;;https://dagger.cloud/trace\033\\trace\033]8;;\033\\ \033[3' >&2
printf '1mERROR\033[0m\n' >&2`

// TestSessionPlainText: the CLI is asked for plain progress without
// colour, even when set's environment asks for a terminal's; what it
// writes in colour all the same reaches the log, and the errors that
// quote it, without a terminal escape.
func TestSessionPlainText(t *testing.T) {
	t.Setenv("DAGGER_PROGRESS", "tty")
	t.Setenv("NO_COLOR", "")
	engine := newFakeEngine()
	cli := newFakeCLI(t, colouredProgress+"\n"+sessionLine(engine.serve(t, "tok"), "tok")+"\n"+untilStdinCloses)
	var log strings.Builder
	o := testSession(cli.bin, notLong)
	o.log = &log
	s, err := startSession(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := cli.file(t, "colour"); got != "NO_COLOR=1 DAGGER_PROGRESS=plain" {
		t.Errorf("the CLI got %q", got)
	}
	if want := "1   : connect DONE [0.1s]\n2   : trace ERROR\n"; log.String() != want {
		t.Errorf("log %q, want %q", log.String(), want)
	}

	cli = newFakeCLI(t, colouredProgress+"\nexit 1")
	_, err = startSession(context.Background(), testSession(cli.bin, notLong))
	if want := "the dagger CLI exited with status 1 before opening a session: 2   : trace ERROR"; err == nil || err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
}

// TestEngineErrorWithEscapes: an engine error written for a terminal
// reaches set without its escapes, and is still the engine's error.
func TestEngineErrorWithEscapes(t *testing.T) {
	fx := newFixture(t, goCfg(), "/p")
	fx.engine.fail["sync"] = "\x1b[31mpull access denied\x1b[0m for golang"
	_, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"go"}, Dir: "/wt"})
	if err == nil || strings.ContainsRune(err.Error(), 0x1b) || !strings.Contains(err.Error(), "pull access denied for golang") {
		t.Errorf("err = %q", err)
	}
}

// TestRunnerLogPlain: the run's session writes its progress to the
// Dagger log as plain lines, whatever colour the CLI writes it in.
func TestRunnerLogPlain(t *testing.T) {
	t.Parallel()
	engine := newFakeEngine()
	cli := newFakeCLI(t, colouredProgress+"\n"+sessionLine(engine.serve(t, "tok"), "tok")+"\n"+untilStdinCloses)
	var log lockedBuffer
	r := New(goCfg(), "/p", "fake", connector(&Engine{Via: "cli", CLI: cli.bin}, &log, notLong, 200*time.Millisecond))
	if _, err := r.Exec(context.Background(), runner.Exec{Argv: []string{"go", "test"}, Dir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if err := r.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	if want := "1   : connect DONE [0.1s]\n2   : trace ERROR\n"; log.String() != want {
		t.Errorf("log %q, want %q", log.String(), want)
	}
}

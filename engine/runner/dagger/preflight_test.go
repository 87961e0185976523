package dagger

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// onPath puts the fake CLI on PATH as dagger.
func (c *fakeCLI) onPath(t *testing.T) {
	t.Setenv("PATH", c.dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func TestPreflightNoCLI(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Preflight(context.Background(), envOf(nil))
	var pe *PreflightError
	if !errors.As(err, &pe) {
		t.Fatalf("Preflight = %v, want a PreflightError", err)
	}
	for _, want := range []string{`no dagger CLI (looked for "dagger" in PATH)`, "set does not download one", `runner: kind: "host"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q:\n%s", want, err)
		}
	}
}

func TestPreflightEngineDoesNotAnswer(t *testing.T) {
	newFakeCLI(t, hang).onPath(t)
	// A port nobody listens on: take one, then close it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = Preflight(context.Background(), envOf(map[string]string{"_EXPERIMENTAL_DAGGER_RUNNER_HOST": "tcp://" + addr}))
	if err == nil || !strings.Contains(err.Error(), "no Dagger engine: the engine at tcp://"+addr) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Preflight = %v", err)
	}
}

// TestPreflightEngineAnswers: an engine is one that opens a session and
// says its version; the CLI's version is reported too.
func TestPreflightEngineAnswers(t *testing.T) {
	engine := newFakeEngine()
	cli := newFakeCLI(t, sessionLine(engine.serve(t, "tok"), "tok")+"\n"+untilStdinCloses)
	cli.onPath(t)
	host := "tcp://127.0.0.1:" + strconv.Itoa(engineListener(t))
	e, err := preflight(context.Background(), envOf(map[string]string{"_EXPERIMENTAL_DAGGER_RUNNER_HOST": host}), notLong)
	if err != nil {
		t.Fatal(err)
	}
	if e.Via != "cli" || e.CLI != cli.bin || e.RunnerHost != host || e.Address != host {
		t.Errorf("engine = %+v", e)
	}
	v := "v" + SDKEngineVersion
	if e.EngineVersion != v || e.CLIVersion != v || e.Versions() != "engine "+v+", CLI "+v || len(e.Warnings()) != 0 {
		t.Errorf("versions: %q; warnings %q", e.Versions(), e.Warnings())
	}
	if got := cli.file(t, "runnerhost"); got != host {
		t.Errorf("the session got runner host %q, want %q", got, host)
	}
	if !contains(engine.recorded(), "version") {
		t.Errorf("the engine was not asked its version: %q", engine.recorded())
	}
	cli.noneLeft(t)
}

func TestPreflightVersionMismatch(t *testing.T) {
	engine := newFakeEngine()
	engine.version = "v0.21.8"
	newFakeCLI(t, sessionLine(engine.serve(t, "tok"), "tok")+"\n"+untilStdinCloses).onPath(t)
	host := "tcp://127.0.0.1:" + strconv.Itoa(engineListener(t))
	e, err := preflight(context.Background(), envOf(map[string]string{"_EXPERIMENTAL_DAGGER_RUNNER_HOST": host}), notLong)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"the engine is v0.21.8 but set's Dagger SDK expects v" + SDKEngineVersion + ": gates may fail where their APIs differ; run an engine of v" + SDKEngineVersion,
		"the dagger CLI is v" + SDKEngineVersion + " but the engine v0.21.8: use the CLI of the engine's version",
	}
	if got := e.Warnings(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPreflightSilentEngine: an engine that accepts connections but does
// not answer within the deadline is said to be silent, maybe busy or
// stopped, not to be something else: whether it says nothing at all (a
// paused engine: the CLI is not even started), answers the greeting but
// opens no session (the CLI waits on it for ever, as the real one does),
// or opens a session that answers no query. Each waits out its 2 s, at
// once: the CLI is named in the environment given, not on PATH.
func TestPreflightSilentEngine(t *testing.T) {
	t.Parallel()
	fix := "\n  fix: check that the engine at {host} runs and is neither paused nor overloaded (`dagger core version` asks it its version), " +
		"or point _EXPERIMENTAL_DAGGER_RUNNER_HOST at another engine\n  or run the gates on the host: runner: kind: \"host\""
	for _, tc := range []struct {
		name    string
		port    func(t *testing.T) int
		session func(t *testing.T) string
		want    string
	}{
		{"says nothing", plainListener, nil,
			"no Dagger engine: {host} accepts connections but did not answer within 2s (it may be a busy or stopped engine)"},
		{"opens no session", engineListener, func(*testing.T) string { return hang },
			"no Dagger engine: {host} did not answer within 2s (it may be a busy or stopped engine): the dagger CLI opened no session with it within 2s"},
		{"answers no query", engineListener, func(t *testing.T) string { return sessionLine(plainListener(t), "tok") + "\n" + untilStdinCloses },
			"no Dagger engine: the session the dagger CLI opened with {host}: it did not answer a version query within 2s (it may be a busy or stopped engine)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			host := "tcp://127.0.0.1:" + strconv.Itoa(tc.port(t))
			session := "touch \"$D/started\"; exit 1"
			if tc.session != nil {
				session = tc.session(t)
			}
			cli := newFakeCLI(t, session)
			start := time.Now()
			_, err := preflight(context.Background(), envOf(map[string]string{"_EXPERIMENTAL_DAGGER_RUNNER_HOST": host, "_EXPERIMENTAL_DAGGER_CLI_BIN": cli.bin}), 2*time.Second)
			want := strings.ReplaceAll(tc.want+fix, "{host}", host)
			if err == nil || err.Error() != want {
				t.Errorf("err = %v\nwant %s", err, want)
			}
			if d := time.Since(start); d > notLong {
				t.Errorf("took %v", d)
			}
			if tc.session == nil {
				if cli.has("cli.pid") {
					t.Error("a session was started with an engine that does not answer")
				}
				return
			}
			cli.noneLeft(t)
		})
	}
}

// TestPreflightNotAnEngine: an address that answers, but not as a Dagger
// engine, is said to be something else, at once, quoting what it said.
func TestPreflightNotAnEngine(t *testing.T) {
	web := httptest.NewServer(http.NotFoundHandler())
	defer web.Close()
	for _, tc := range []struct {
		name, addr, said string
	}{
		{"an HTTP/1 server", web.Listener.Addr().String(), `it answered "HTTP/1.1 404 Not Found"`},
		{"a banner", "127.0.0.1:" + strconv.Itoa(answeringListener(t, "SSH-2.0-OpenSSH_9.6\r\n")), `it answered "SSH-2.0-OpenSSH_9.6"`},
		{"garbage", "127.0.0.1:" + strconv.Itoa(answeringListener(t, "\x15\x03\x01\x00\x02\x02\x46")), `it answered "......F"`},
		{"a hang-up", "127.0.0.1:" + strconv.Itoa(answeringListener(t, "")), "it closed the connection without answering"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cli := newFakeCLI(t, hang)
			cli.onPath(t)
			host := "tcp://" + tc.addr
			start := time.Now()
			_, err := preflight(context.Background(), envOf(map[string]string{"_EXPERIMENTAL_DAGGER_RUNNER_HOST": host}), notLong)
			want := "no Dagger engine: " + host + " accepts connections but is not a Dagger engine: " + tc.said + "\n" +
				"  fix: point _EXPERIMENTAL_DAGGER_RUNNER_HOST at a Dagger engine's address (`dagger core version` prints its version)\n" +
				"  or run the gates on the host: runner: kind: \"host\""
			if err == nil || err.Error() != want {
				t.Errorf("err = %v\nwant %s", err, want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v: an answer needs no deadline", d)
			}
			if cli.has("cli.pid") {
				t.Error("a session was started with something that is no engine")
			}
		})
	}
}

func TestPreflightSession(t *testing.T) {
	t.Parallel()
	engine := newFakeEngine()
	port := engine.serve(t, "tok")
	env := map[string]string{"DAGGER_SESSION_PORT": strconv.Itoa(port), "DAGGER_SESSION_TOKEN": "tok"}
	e, err := preflight(context.Background(), envOf(env), notLong)
	if err != nil || e.Via != "session" || e.Address != "127.0.0.1:"+strconv.Itoa(port) || e.Versions() != "engine v"+SDKEngineVersion {
		t.Fatalf("Preflight = %+v, %v", e, err)
	}

	env["DAGGER_SESSION_TOKEN"] = "wrong"
	if _, err := preflight(context.Background(), envOf(env), notLong); err == nil || !strings.Contains(err.Error(), "not a Dagger engine") {
		t.Errorf("a wrong token: %v", err)
	}

	plain := strconv.Itoa(plainListener(t))
	env = map[string]string{"DAGGER_SESSION_PORT": plain, "DAGGER_SESSION_TOKEN": "tok"}
	_, err = preflight(context.Background(), envOf(env), time.Second)
	if err == nil || !strings.Contains(err.Error(), "no Dagger engine: the `dagger run` session at 127.0.0.1:"+plain+" (DAGGER_SESSION_PORT): it did not answer a version query within 1s (it may be a busy or stopped engine)") {
		t.Errorf("a plain listener: %v", err)
	}

	delete(env, "DAGGER_SESSION_TOKEN")
	if _, err := Preflight(context.Background(), envOf(env)); err == nil || !strings.Contains(err.Error(), "without DAGGER_SESSION_TOKEN") {
		t.Errorf("Preflight without a token = %v", err)
	}
}

func TestPreflightRunnerHosts(t *testing.T) {
	cli := newFakeCLI(t, hang)
	t.Setenv("PATH", cli.dir) // no docker, kubectl or podman
	for host, want := range map[string]string{
		"":                         "_EXPERIMENTAL_DAGGER_RUNNER_HOST is unset, so the dagger CLI would start an engine with Docker, and docker is not installed",
		"docker-container://eng":   "runs in Docker, and docker is not installed",
		"kube-pod://dagger-engine": "in Kubernetes, and kubectl is not installed",
		"unix:///no/such.sock":     "the engine at unix:///no/such.sock",
		"ftp://x":                  `unknown scheme "ftp"`,
		"engine-without-scheme":    "is not a URL",
	} {
		_, err := Preflight(context.Background(), envOf(map[string]string{"_EXPERIMENTAL_DAGGER_RUNNER_HOST": host}))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("runner host %q: error = %v, want %q", host, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(cli.dir, "cli.pid")); err == nil {
		t.Error("a session was started although the runner host was refused")
	}
}

// TestPreflightUnixSocket: a unix:// runner host is greeted as a tcp://
// one: a web server on the socket is no engine, a socket that says
// nothing is a silent engine.
func TestPreflightUnixSocket(t *testing.T) {
	newFakeCLI(t, hang).onPath(t)
	dir, err := os.MkdirTemp("", "sock") // short: a socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)

	web := httptest.NewUnstartedServer(http.NotFoundHandler())
	l, err := net.Listen("unix", filepath.Join(dir, "web.sock"))
	if err != nil {
		t.Fatal(err)
	}
	web.Listener = l
	web.Start()
	defer web.Close()
	host := "unix://" + filepath.Join(dir, "web.sock")
	_, err = preflight(context.Background(), envOf(map[string]string{"_EXPERIMENTAL_DAGGER_RUNNER_HOST": host}), notLong)
	if want := "no Dagger engine: " + host + ` accepts connections but is not a Dagger engine: it answered "HTTP/1.1 404 Not Found"`; err == nil || !strings.HasPrefix(err.Error(), want+"\n") {
		t.Errorf("a web server: %v\nwant %s", err, want)
	}

	silent, err := net.Listen("unix", filepath.Join(dir, "engine.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	host = "unix://" + filepath.Join(dir, "engine.sock")
	// A short timeout: the test runs alone (onPath sets PATH) and waits it out.
	_, err = preflight(context.Background(), envOf(map[string]string{"_EXPERIMENTAL_DAGGER_RUNNER_HOST": host}), 200*time.Millisecond)
	if want := "no Dagger engine: " + host + " accepts connections but did not answer within 200ms (it may be a busy or stopped engine)"; err == nil || !strings.HasPrefix(err.Error(), want+"\n") {
		t.Errorf("a silent socket: %v\nwant %s", err, want)
	}
}

package dagger

import (
	"context"
	"errors"
	"net"
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
	host := "tcp://127.0.0.1:" + strconv.Itoa(plainListener(t))
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
	host := "tcp://127.0.0.1:" + strconv.Itoa(plainListener(t))
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

// TestPreflightPlainListener: an address that accepts connections but is
// not a Dagger engine fails at the deadline, whether the CLI waits on it
// for ever (as the real CLI does) or opens a session that does not answer.
func TestPreflightPlainListener(t *testing.T) {
	host := "tcp://127.0.0.1:" + strconv.Itoa(plainListener(t))
	env := envOf(map[string]string{"_EXPERIMENTAL_DAGGER_RUNNER_HOST": host})
	t.Run("the CLI waits", func(t *testing.T) {
		cli := newFakeCLI(t, hang)
		cli.onPath(t)
		start := time.Now()
		_, err := preflight(context.Background(), env, 2*time.Second)
		want := "no Dagger engine: " + host + " accepts connections but is not a Dagger engine: the dagger CLI opened no session with it within 2s\n" +
			"  fix: point _EXPERIMENTAL_DAGGER_RUNNER_HOST at a running Dagger engine (`dagger core version` prints its version)\n" +
			"  or run the gates on the host: runner: kind: \"host\""
		if err == nil || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
		if d := time.Since(start); d > notLong {
			t.Errorf("took %v", d)
		}
		cli.noneLeft(t)
	})
	t.Run("the session does not answer", func(t *testing.T) {
		cli := newFakeCLI(t, sessionLine(plainListener(t), "tok")+"\n"+untilStdinCloses)
		cli.onPath(t)
		_, err := preflight(context.Background(), env, 2*time.Second)
		if err == nil || !strings.Contains(err.Error(), "no Dagger engine: the session the dagger CLI opened with "+host+": not a Dagger engine: no answer to a version query within 2s") {
			t.Errorf("err = %v", err)
		}
		cli.noneLeft(t)
	})
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
	if err == nil || !strings.Contains(err.Error(), "no Dagger engine: the `dagger run` session at 127.0.0.1:"+plain+" (DAGGER_SESSION_PORT): not a Dagger engine: no answer to a version query within 1s") {
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

package dagger

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/runner"
)

// closedPort is a port on 127.0.0.1 that nobody listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// TestPoolEngines: each host is proved as the environment's engine is,
// through the dagger CLI, with the host as its runner host and never the
// environment's own engine or `dagger run` session; one that does not
// answer starts down, and the gates run on the one that does.
func TestPoolEngines(t *testing.T) {
	engine := newFakeEngine()
	cli := newFakeCLI(t, sessionLine(engine.serve(t, "tok"), "tok")+"\n"+untilStdinCloses)
	cli.onPath(t)
	up := "tcp://127.0.0.1:" + strconv.Itoa(engineListener(t))
	down := "tcp://127.0.0.1:" + strconv.Itoa(closedPort(t))
	getenv := envOf(map[string]string{
		"_EXPERIMENTAL_DAGGER_RUNNER_HOST": "tcp://the-environments-engine:1234",
		"DAGGER_SESSION_PORT":              "1",
		"DAGGER_SESSION_TOKEN":             "not-ours",
	})
	log := &lockedBuffer{}
	hosts := map[string]config.DaggerHost{up: {Parallelism: 3}, down: {Parallelism: 1}}
	engines, err := PoolEngines(context.Background(), hosts, getenv, log)
	if err != nil {
		t.Fatal(err)
	}
	if len(engines) != 2 {
		t.Fatalf("engines %+v", engines)
	}
	byName := map[string]PoolEngine{}
	for _, e := range engines {
		byName[e.Name] = e
	}
	if e := byName[up]; e.Down != nil || e.Parallelism != 3 || e.Connect == nil {
		t.Errorf("%s: %+v, want up with parallelism 3", up, e)
	}
	if e := byName[down]; e.Down == nil || !strings.Contains(e.Down.Error(), "connection refused") || e.Parallelism != 1 {
		t.Errorf("%s: %+v, want down, refused", down, e)
	}
	if got := cli.file(t, "runnerhost"); got != up {
		t.Errorf("the CLI's session got runner host %q, want %q", got, up)
	}
	v := "v" + SDKEngineVersion
	for _, want := range []string{
		"setctl: " + up + " answers: engine " + v + ", CLI " + v + "; it runs up to 3 gates at once\n",
		"setctl: " + down + " does not answer, so it takes no gate until it does: no Dagger engine: the engine at " + down + ": dial tcp",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}

	p := NewPool(goCfg(), "/p", engines, log)
	res, err := p.Exec(context.Background(), runner.Exec{Argv: []string{"go", "vet"}, Dir: t.TempDir()})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("gate: %+v, %v", res, err)
	}
	if !strings.Contains(log.String(), " → "+up+"\n") {
		t.Errorf("the log does not say the gate ran on %s:\n%s", up, log)
	}
	if err := p.(interface{ Close() error }).Close(); err != nil {
		t.Fatal(err)
	}
	cli.noneLeft(t)

	// No engine answers: an error naming each.
	other := "tcp://127.0.0.1:" + strconv.Itoa(closedPort(t))
	_, err = PoolEngines(context.Background(), map[string]config.DaggerHost{down: {Parallelism: 1}, other: {Parallelism: 1}}, getenv, log)
	if err == nil {
		t.Fatal("no error with no engine answering")
	}
	for _, want := range []string{"none of the Dagger engines of runner.dagger.hosts answers:\n  ", "\n  " + down + ": no Dagger engine", "\n  " + other + ": no Dagger engine"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%s", want, err)
		}
	}
}

// TestHostPreflightFix: the fix of an engine of runner.dagger.hosts that
// is no engine points at runner.dagger.hosts, and says how to ask that
// engine its version: `dagger core version` alone would ask the
// environment's engine.
func TestHostPreflightFix(t *testing.T) {
	newFakeCLI(t, untilStdinCloses).onPath(t)
	host := "tcp://127.0.0.1:" + strconv.Itoa(answeringListener(t, "HTTP/1.1 400 Bad Request\r\n\r\n"))
	_, err := hostPreflight(context.Background(), HostEnv(envOf(map[string]string{}), host))
	var pe *PreflightError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a PreflightError", err)
	}
	want := "point runner.dagger.hosts at a Dagger engine's address (`_EXPERIMENTAL_DAGGER_RUNNER_HOST=" + host + " dagger core version` prints its version)"
	if pe.Fix != want {
		t.Errorf("fix %q\nwant %q", pe.Fix, want)
	}
}

package project

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/runner/dagger"
)

// With runner.dagger.hosts, Runners proves each engine (not the
// environment's) and runs the gates on those that answer; the Dagger log
// names each engine, with its versions and parallelism, or why it does
// not answer.
func TestRunnersDaggerHosts(t *testing.T) {
	v := "v" + dagger.SDKEngineVersion
	// An engine's listener, as Preflight greets it: HTTP/1 and HTTP/2
	// without TLS.
	engine := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"data":{"version":%q}}`, v)
	}))
	engine.Config.Protocols = new(http.Protocols)
	engine.Config.Protocols.SetHTTP1(true)
	engine.Config.Protocols.SetUnencryptedHTTP2(true)
	engine.Start()
	defer engine.Close()
	up, down := "tcp://"+engine.Listener.Addr().String(), "tcp://127.0.0.1:9"
	// `dagger session` opens a session whose API is the fake engine.
	cli := filepath.Join(t.TempDir(), "dagger")
	script := fmt.Sprintf("#!/bin/sh\ntest \"$1\" = version && { echo 'dagger %s (fake) linux/amd64'; exit 0; }\necho '{\"port\":%d,\"session_token\":\"tok\"}'\ncat > /dev/null\n",
		v, engine.Listener.Addr().(*net.TCPAddr).Port)
	if err := os.WriteFile(cli, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"_EXPERIMENTAL_DAGGER_CLI_BIN": cli, "_EXPERIMENTAL_DAGGER_RUNNER_HOST": "tcp://the-environments-engine:1234"}

	dir := writeProject(t, fmt.Sprintf("\trunner: kind: \"dagger\"\n\trunner: dagger: from: \"golang:1.26\"\n\trunner: dagger: hosts: %q: parallelism: 3\n\trunner: dagger: hosts: %q: {}\n", up, down))
	pr, ds := Prepare(context.Background(), dir, Options{})
	if len(ds) != 0 {
		t.Fatalf("diagnostics: %v", ds)
	}
	runners, closeAll, err := pr.Runners(context.Background(), pr.Graph, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if r := runners[config.RunnerDagger]; r == nil || r.Name() != dagger.Name {
		t.Fatalf("runners %v: no dagger runner", runners)
	}
	closeAll()
	log, err := os.ReadFile(rundir.New(pr.Root).DaggerLog())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"setctl: " + up + " answers: engine " + v + ", CLI " + v + "; it runs up to 3 gates at once\n",
		"setctl: " + down + " does not answer, so it takes no gate until it does: no Dagger engine: the engine at " + down + ": dial tcp 127.0.0.1:9: connect: connection refused; fix: start the engine at " + down + ", or fix runner.dagger.hosts;",
	} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the Dagger log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(string(log), "the-environments-engine") {
		t.Errorf("the environment's engine was tried:\n%s", log)
	}
}

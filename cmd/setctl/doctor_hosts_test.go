package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/runner/dagger"
	"github.com/set-engine/set/internal/gittest"
)

// TestDoctorDaggerHosts: doctor proves every engine of runner.dagger.hosts
// and reports each; one that does not answer is a warning while another
// does, since the run's gates go to the one that answers.
func TestDoctorDaggerHosts(t *testing.T) {
	v := "v" + dagger.SDKEngineVersion
	engine := engineServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"data":{"version":%q}}`, v)
	}))
	up := "tcp://" + engine.Listener.Addr().String()
	down := "tcp://127.0.0.1:9"

	dir := t.TempDir()
	bin := filepath.Join(t.TempDir(), "dagger")
	port := engine.Listener.Addr().(*net.TCPAddr).Port
	files := map[string]string{
		// `dagger session` opens a session whose API is the fake engine.
		bin: fmt.Sprintf("#!/bin/sh\ntest \"$1\" = version && { echo 'dagger %s (fake) linux/amd64'; exit 0; }\necho '{\"port\":%d,\"session_token\":\"tok\"}'\ncat > /dev/null\n", v, port),
		filepath.Join(dir, "cue.mod", "module.cue"): "module: \"example.com/dg@v0\"\nlanguage: version: \"v0.17.0\"\ndeps: \"github.com/set-engine/set@v0\": v: \"v0.1.0\"\n",
		filepath.Join(dir, "set.cue"): fmt.Sprintf(`package dg

import "github.com/set-engine/set/profiles/golang"

project: golang.#Project & {
	name: "dg"
	spec: ["docs/spec.md"]
	agent: {adapter: "exec", argv: ["true"]}
	runner: kind: "dagger"
	runner: dagger: from: "golang:1.26"
	runner: dagger: hosts: %q: parallelism: 3
	runner: dagger: hosts: %q: {}
}
`, up, down),
		filepath.Join(dir, "docs", "spec.md"): "# Spec\n\n### REQ-DG-01: Something\n#### Scenario: it\n- **WHEN** it runs\n- **THEN** it works\n",
	}
	for path, data := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	t.Setenv("CUE_REGISTRY", "none")
	gittest.Hermetic(t, "")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "skeleton"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	t.Setenv("_EXPERIMENTAL_DAGGER_CLI_BIN", bin)
	t.Setenv("_EXPERIMENTAL_DAGGER_RUNNER_HOST", "tcp://the-environments-engine:1234")

	var stdout, stderr strings.Builder
	code := Main([]string{"-C", dir, "doctor"}, testProcess(&stdout, &stderr))
	if code != exitOK {
		t.Errorf("exit %d, want %d; stderr: %s", code, exitOK, stderr.String())
	}
	want := "ok    runner   dagger: " + up + " answers: engine " + v + ", CLI " + v + "; up to 3 gates at once\n" +
		"warn  runner   dagger: " + down + " does not answer, so its gates go to the others until it does: no Dagger engine: the engine at " + down +
		": dial tcp 127.0.0.1:9: connect: connection refused; fix: start the engine at " + down + ", or fix runner.dagger.hosts; or run the gates on the host: runner: kind: \"host\"\n"
	if !strings.Contains(stdout.String(), "\n"+want) || !strings.HasSuffix(stdout.String(), "This project can run here.\n") {
		t.Errorf("stdout:\n%s\nwant the lines\n%s", stdout.String(), want)
	}
}

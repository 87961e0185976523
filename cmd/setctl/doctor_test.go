package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/runner/dagger"
	"github.com/set-engine/set/internal/gittest"
)

// TestDoctorUsageProbeTimeout: doctor's help gives the time an engine
// has to answer as Preflight allows it.
func TestDoctorUsageProbeTimeout(t *testing.T) {
	want := fmt.Sprintf("says its version within %d s", int(dagger.ProbeTimeout/time.Second))
	if usage := strings.Join(strings.Fields(doctorCommand().usage), " "); !strings.Contains(usage, want) {
		t.Errorf("doctor's usage lacks %q", want)
	}
}

// TestDoctorPlainListener: a runner host that accepts connections but
// does not answer them (a paused or overloaded engine does that) fails
// the doctor, saying it did not answer and may be busy or stopped, once
// the session probe's 7 s deadline passes, not after the SDK's 300 s.
func TestDoctorPlainListener(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the 7 s deadline of the session probe")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() { // accept, never answer
		var conns []net.Conn
		for {
			c, err := l.Accept()
			if err != nil {
				for _, c := range conns {
					c.Close()
				}
				return
			}
			conns = append(conns, c)
		}
	}()
	host := "tcp://" + l.Addr().String()
	dir := daggerProject(t, "sleep 300 & wait", host, "")

	start := time.Now()
	var stdout, stderr strings.Builder
	code := Main([]string{"-C", dir, "doctor"}, testProcess(&stdout, &stderr))
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("doctor took %v", d)
	}
	if code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	want := "FAIL  runner   dagger: no Dagger engine: " + host + " accepts connections but did not answer within 7s (it may be a busy or stopped engine); " +
		"fix: check that the engine at " + host + " runs and is neither paused nor overloaded (`dagger core version` asks it its version), or point _EXPERIMENTAL_DAGGER_RUNNER_HOST at another engine; " +
		"or run the gates on the host: runner: kind: \"host\"\n"
	if !strings.Contains(stdout.String(), "\n"+want) || !strings.HasSuffix(stdout.String(), "This project cannot run here: 1 problem.\n") {
		t.Errorf("stdout:\n%s\nwant the line\n%s", stdout.String(), want)
	}
}

// TestDoctorNotAnEngine: a runner host that answers, but as something
// else (here a web server), fails the doctor at once, saying it is not a
// Dagger engine and what it answered.
func TestDoctorNotAnEngine(t *testing.T) {
	web := httptest.NewServer(http.NotFoundHandler())
	defer web.Close()
	host := "tcp://" + web.Listener.Addr().String()
	dir := daggerProject(t, "sleep 300 & wait", host, "")
	var stdout, stderr strings.Builder
	if code := Main([]string{"-C", dir, "doctor"}, testProcess(&stdout, &stderr)); code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	want := "FAIL  runner   dagger: no Dagger engine: " + host + " accepts connections but is not a Dagger engine: it answered \"HTTP/1.1 404 Not Found\"; " +
		"fix: point _EXPERIMENTAL_DAGGER_RUNNER_HOST at a Dagger engine's address (`dagger core version` prints its version); " +
		"or run the gates on the host: runner: kind: \"host\"\n"
	if !strings.Contains(stdout.String(), "\n"+want) {
		t.Errorf("stdout:\n%s\nwant the line\n%s", stdout.String(), want)
	}
}

// engineServer is a Dagger engine's listener on 127.0.0.1, as doctor
// greets it (HTTP/1 and HTTP/2 without TLS), answering with h. It is
// closed when t ends.
func engineServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// TestDaggerMessagesWithoutEscapes: a dagger CLI that writes in colour
// (as it does unless NO_COLOR is set) reaches doctor, its JSON and
// apply's error without a terminal escape, in its own words.
func TestDaggerMessagesWithoutEscapes(t *testing.T) {
	engine := engineServer(t, http.NotFoundHandler())
	session := `printf '1   : connect \033[31mERROR\033[0m \033[90m[0.1s]\033[0m\n' >&2
printf '\033[1;31mError:\033[0m the engine \033]8;;https://dagger.io\033\\went away\033]8;;\033\\\n' >&2
exit 1`
	dir := daggerProject(t, session, "tcp://"+engine.Listener.Addr().String(), "")
	said := "the dagger CLI exited with status 1 before opening a session: Error: the engine went away"
	for _, args := range [][]string{{"doctor"}, {"doctor", "--json"}, {"apply", "--yes"}, {"apply", "--yes", "--json"}} {
		var stdout, stderr strings.Builder
		if code := Main(append([]string{"-C", dir}, args...), testProcess(&stdout, &stderr)); code != exitError {
			t.Errorf("%v: exit %d, want %d", args, code, exitError)
		}
		out := stdout.String() + stderr.String()
		if strings.ContainsRune(out, 0x1b) || strings.Contains(out, `\u001b`) {
			t.Errorf("%v: a terminal escape in\n%q", args, out)
		}
		if !strings.Contains(out, said) {
			t.Errorf("%v: the CLI's words are missing from\n%s", args, out)
		}
	}
}

// daggerProject is a committed project whose gates run on the dagger
// runner, with _EXPERIMENTAL_DAGGER_RUNNER_HOST set to host and a dagger
// CLI whose `dagger version` answers v0.21.9 and whose `dagger session`
// runs the shell code session; runner is CUE added to the project
// (more of runner.dagger, say).
func daggerProject(t *testing.T, session, host, runner string) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(t.TempDir(), "dagger")
	files := map[string]string{
		bin: "#!/bin/sh\ntest \"$1\" = version && { echo 'dagger v0.21.9 (fake) linux/amd64'; exit 0; }\n" + session + "\n",
		filepath.Join(dir, "cue.mod", "module.cue"): "module: \"example.com/dg@v0\"\nlanguage: version: \"v0.17.0\"\ndeps: \"github.com/set-engine/set@v0\": v: \"v0.1.0\"\n",
		filepath.Join(dir, "set.cue"): `package dg

import "github.com/set-engine/set/profiles/golang"

project: golang.#Project & {
	name: "dg"
	spec: ["docs/spec.md"]
	agent: {adapter: "exec", argv: ["true"]}
	runner: kind: "dagger"
	runner: dagger: from: "golang:1.26"
` + runner + `}
`,
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
	t.Setenv("_EXPERIMENTAL_DAGGER_RUNNER_HOST", host)
	return dir
}

// TestRaceCheckLooksWhereTheContainerLooks: the C compiler a -race gate
// needs is looked for in each directory of the runner's PATH, in the
// rootfs or in the mount that covers the directory (the longest), under
// the runner's CC when it sets one; a symbolic link to it counts.
func TestRaceCheckLooksWhereTheContainerLooks(t *testing.T) {
	root := t.TempDir()
	for _, dir := range []string{"rootfs/usr/bin", "tools/bin", "cc/bin"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "cc", "bin", "clang"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/opt/nowhere/gcc-12", filepath.Join(root, "tools", "bin", "gcc")); err != nil {
		t.Fatal(err)
	}
	race := map[string]config.Gate{"test": {Kind: config.KindExec, Run: []string{"sh", "-c", "go test -race ./..."}}}
	for _, tt := range []struct {
		name   string
		dagger config.DaggerRunner
		gates  map[string]config.Gate
		warns  bool
	}{
		{"no gcc in the rootfs", config.DaggerRunner{Rootfs: "rootfs"}, race, true},
		{"gcc in a mount on PATH", config.DaggerRunner{Rootfs: "rootfs", Env: map[string]string{"PATH": "/usr/bin:/opt/tools/bin"},
			Mounts: map[string]config.Mount{"/opt": {Source: "cc"}, "/opt/tools": {Source: "tools"}}}, race, false},
		{"the mount not on PATH", config.DaggerRunner{Rootfs: "rootfs", Env: map[string]string{"PATH": "/usr/bin"},
			Mounts: map[string]config.Mount{"/opt/tools": {Source: "tools"}}}, race, true},
		{"CC by its path", config.DaggerRunner{Rootfs: "rootfs", Env: map[string]string{"CC": "/opt/bin/clang -O2"},
			Mounts: map[string]config.Mount{"/opt": {Source: "cc"}}}, race, false},
		{"-race in GOFLAGS", config.DaggerRunner{Rootfs: "rootfs", Env: map[string]string{"GOFLAGS": "-buildvcs=false -race"}},
			map[string]config.Gate{"test": {Kind: config.KindExec, Run: []string{"go", "test", "./..."}}}, true},
		{"the gate turns cgo back on", config.DaggerRunner{Rootfs: "rootfs", Env: map[string]string{"CGO_ENABLED": "0", "CC": "/opt/bin/clang"},
			Mounts: map[string]config.Mount{"/opt": {Source: "cc"}}},
			map[string]config.Gate{"test": {Kind: config.KindExec, Run: []string{"go", "test", "-race"}, Env: map[string]string{"CGO_ENABLED": "1"}}}, false},
		{"the gate turns cgo off", config.DaggerRunner{Rootfs: "rootfs", Env: map[string]string{"CC": "/opt/bin/clang"},
			Mounts: map[string]config.Mount{"/opt": {Source: "cc"}}},
			map[string]config.Gate{"test": {Kind: config.KindExec, Run: []string{"go", "test", "-race"}, Env: map[string]string{"CGO_ENABLED": "0"}}}, true},
		{"the gate's GOFLAGS replaces the runner's -race", config.DaggerRunner{Rootfs: "rootfs", Env: map[string]string{"GOFLAGS": "-race"}},
			map[string]config.Gate{"test": {Kind: config.KindExec, Run: []string{"go", "test"}, Env: map[string]string{"GOFLAGS": "-v"}}}, false},
		{"no -race", config.DaggerRunner{Rootfs: "rootfs"},
			map[string]config.Gate{"test": {Kind: config.KindExec, Run: []string{"go", "test", "-racy", "./..."}}}, false},
		{"no rootfs", config.DaggerRunner{Rootfs: "missing"}, race, false},
	} {
		d := tt.dagger
		ws := &workspace{root: root, cfg: &config.Project{Gates: tt.gates, Runner: config.Runner{Kind: config.RunnerDagger, Dagger: &d}}}
		if ch, warns := raceCheck(ws); warns != tt.warns || warns && ch.Status != statusWarn {
			t.Errorf("%s: %+v, %v", tt.name, ch, warns)
		}
	}
}

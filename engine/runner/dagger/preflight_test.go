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
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// fakeCLI puts an executable named dagger in a temp dir on PATH.
func fakeCLI(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "dagger")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return bin
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
	fakeCLI(t)
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

func TestPreflightEngineAnswers(t *testing.T) {
	bin := fakeCLI(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	host := "tcp://" + l.Addr().String()
	e, err := Preflight(context.Background(), envOf(map[string]string{"_EXPERIMENTAL_DAGGER_RUNNER_HOST": host}))
	if err != nil {
		t.Fatal(err)
	}
	if e.Via != "cli" || e.CLI != bin || e.RunnerHost != host {
		t.Errorf("engine = %+v", e)
	}
}

func TestPreflightSession(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	env := map[string]string{"DAGGER_SESSION_PORT": strconv.Itoa(port), "DAGGER_SESSION_TOKEN": "tok"}
	e, err := Preflight(context.Background(), envOf(env))
	if err != nil || e.Via != "session" {
		t.Fatalf("Preflight = %+v, %v", e, err)
	}
	delete(env, "DAGGER_SESSION_TOKEN")
	if _, err := Preflight(context.Background(), envOf(env)); err == nil || !strings.Contains(err.Error(), "without DAGGER_SESSION_TOKEN") {
		t.Errorf("Preflight without a token = %v", err)
	}
}

func TestPreflightRunnerHosts(t *testing.T) {
	fakeCLI(t)
	t.Setenv("PATH", filepath.Dir(mustLook(t, "dagger"))) // no docker, kubectl or podman
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
}

func mustLook(t *testing.T, name string) string {
	t.Helper()
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if p := filepath.Join(dir, name); fileExists(p) {
			return p
		}
	}
	t.Fatalf("%s not on PATH", name)
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Package gittest makes the git that tests run hermetic: it reads no
// system configuration and a global configuration of the test's own, and
// commits as a fixed identity, whatever the machine's user has set up.
package gittest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Hermetic sets, for the rest of t, an empty-but-for-globalConfig global
// git configuration of t's own, no system configuration, and the identity
// "test <test@example.com>" for authors and committers. It returns the
// path of the global configuration file, which `git config --global`
// writes. Like t.Setenv, it cannot be used in a parallel test: Env gives
// such a test the same settings to pass to the commands it runs.
func Hermetic(t testing.TB, globalConfig string) string {
	t.Helper()
	global, env := hermetic(t, globalConfig)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return global
}

// Env is the environment entries (KEY=VALUE) that Hermetic sets, with
// t's own global configuration file holding globalConfig, for a test
// that gives its commands an environment of their own rather than
// changing the process's (a parallel test). They go after the process's
// entries, which they override.
func Env(t testing.TB, globalConfig string) []string {
	t.Helper()
	_, env := hermetic(t, globalConfig)
	return env
}

// Process makes git hermetic for the whole test process, as Hermetic does
// for one test, so that a package's tests can run in parallel (t.Setenv,
// which Hermetic uses, cannot be used in a parallel test): its TestMain
// calls Process before m.Run, and the function returned after. Every
// test of the package then shares one global configuration, holding
// globalConfig, which no test may write; a test that needs one of its
// own calls Hermetic and does not run in parallel.
func Process(globalConfig string) (cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "gittest")
	if err != nil {
		return nil, err
	}
	global := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(global, []byte(globalConfig), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	for _, kv := range envFor(global) {
		k, v, _ := strings.Cut(kv, "=")
		if err := os.Setenv(k, v); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	return func() { os.RemoveAll(dir) }, nil
}

// Main is the TestMain of a package whose tests run git in parallel: it
// runs m with git hermetic for the whole process (see Process), holding
// globalConfig, and exits with m's code.
func Main(m *testing.M, globalConfig string) {
	cleanup, err := Process(globalConfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// hermetic writes t's global configuration file and returns its path and
// the environment entries that make git hermetic with it.
func hermetic(t testing.TB, globalConfig string) (global string, env []string) {
	t.Helper()
	global = filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, []byte(globalConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	return global, envFor(global)
}

// envFor is the environment entries that make git hermetic with the
// global configuration file global.
func envFor(global string) []string {
	return []string{
		"GIT_CONFIG_GLOBAL=" + global,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=test",
		"GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=test",
		"GIT_COMMITTER_EMAIL=test@example.com",
	}
}

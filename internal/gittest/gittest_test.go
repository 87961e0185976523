package gittest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestEnv: git run with Env's entries reads the global configuration
// given and commits as the fixed identity, whatever the process's
// environment says.
func TestEnv(t *testing.T) {
	t.Parallel()
	env := Env(t, "[user]\n\tname = from-global\n")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Env = append(append(os.Environ(), "GIT_AUTHOR_NAME=process", "GIT_CONFIG_GLOBAL=/nonexistent"), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := git("config", "--global", "--get", "user.name"); got != "from-global" {
		t.Errorf("global user.name = %q, want from-global", got)
	}
	for _, v := range []string{"GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"} {
		if got := git("var", v); !strings.HasPrefix(got, "test <test@example.com> ") {
			t.Errorf("git var %s = %q, want test <test@example.com> first", v, got)
		}
	}
}

// TestHermetic: Hermetic sets in the process what Env gives, with the
// global configuration file it returns.
func TestHermetic(t *testing.T) {
	global := Hermetic(t, "")
	if got := os.Getenv("GIT_CONFIG_GLOBAL"); got != global {
		t.Errorf("GIT_CONFIG_GLOBAL = %q, want %q", got, global)
	}
	for _, kv := range Env(t, "") {
		k, v, _ := strings.Cut(kv, "=")
		if k == "GIT_CONFIG_GLOBAL" {
			continue // each call has a file of its own
		}
		if got := os.Getenv(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}

// TestProcess: after Process, git run with the process's environment reads
// the global configuration given and commits as the fixed identity; the
// configuration is gone after cleanup.
func TestProcess(t *testing.T) {
	for _, k := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"} {
		t.Setenv(k, "process") // restored after the test, whatever Process sets
	}
	cleanup, err := Process("[user]\n\tname = from-global\n")
	if err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := git("config", "--global", "--get", "user.name"); got != "from-global" {
		t.Errorf("global user.name = %q, want from-global", got)
	}
	if got := git("var", "GIT_COMMITTER_IDENT"); !strings.HasPrefix(got, "test <test@example.com> ") {
		t.Errorf("git var GIT_COMMITTER_IDENT = %q, want test <test@example.com> first", got)
	}
	global := os.Getenv("GIT_CONFIG_GLOBAL")
	cleanup()
	if _, err := os.Stat(global); !os.IsNotExist(err) {
		t.Errorf("the global configuration %s is still there after cleanup (stat: %v)", global, err)
	}
}

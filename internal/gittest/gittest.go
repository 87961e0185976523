// Package gittest makes the git that tests run hermetic: it reads no
// system configuration and a global configuration of the test's own, and
// commits as a fixed identity, whatever the machine's user has set up.
package gittest

import (
	"os"
	"path/filepath"
	"testing"
)

// Hermetic sets, for the rest of t, an empty-but-for-globalConfig global
// git configuration of t's own, no system configuration, and the identity
// "test <test@example.com>" for authors and committers. It returns the
// path of the global configuration file, which `git config --global`
// writes.
func Hermetic(t testing.TB, globalConfig string) string {
	t.Helper()
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, []byte(globalConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_AUTHOR_NAME", "test")
	t.Setenv("GIT_AUTHOR_EMAIL", "test@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "test")
	t.Setenv("GIT_COMMITTER_EMAIL", "test@example.com")
	return global
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/mod/modregistrytest"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"setctl": func() { os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI scripts of testdata/script. Each script gets its
// own CUE cache, HOME and git identity, and no registry; a script whose
// archive holds a _registry directory gets a registry on 127.0.0.1 serving
// the modules in it (one directory per module version, named as
// modregistrytest.New describes: example.com_acme_profiles_v0.1.0) as
// CUE_REGISTRY.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("..", "..", "testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("CUE_CACHE_DIR", filepath.Join(env.WorkDir, ".cue-cache"))
			env.Setenv("CUE_REGISTRY", "none")
			env.Setenv("NO_COLOR", "1")
			env.Setenv("GIT_AUTHOR_NAME", "set test")
			env.Setenv("GIT_AUTHOR_EMAIL", "test@example.com")
			env.Setenv("GIT_COMMITTER_NAME", "set test")
			env.Setenv("GIT_COMMITTER_EMAIL", "test@example.com")
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(env.WorkDir, ".gitconfig"))
			// Gates run the go tool: share the build cache, never the network.
			env.Setenv("GOCACHE", goEnv("GOCACHE"))
			env.Setenv("GOMODCACHE", goEnv("GOMODCACHE"))
			env.Setenv("GOPROXY", "off")
			env.Setenv("GOFLAGS", "-buildvcs=false")
			env.Setenv("GOTOOLCHAIN", "local")
			if modules := filepath.Join(env.WorkDir, "_registry"); dirExists(modules) {
				reg, err := modregistrytest.New(os.DirFS(modules), "")
				if err != nil {
					return err
				}
				env.Defer(reg.Close)
				env.Setenv("CUE_REGISTRY", reg.Host()+"+insecure")
			}
			return os.WriteFile(filepath.Join(env.WorkDir, ".gitconfig"), []byte("[init]\n\tdefaultBranch = main\n"), 0o644)
		},
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
	})
}

// TestOwnProjectsVet: this repository's own set.cue and the bundled
// examples must pass `setctl vet`.
func TestOwnProjectsVet(t *testing.T) {
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	t.Setenv("CUE_REGISTRY", "none")
	for _, dir := range []string{"../..", "../../examples/linkshort"} {
		var stdout, stderr strings.Builder
		if code := Main([]string{"-C", dir, "vet"}, &stdout, &stderr); code != exitOK {
			t.Errorf("setctl -C %s vet exited %d:\n%s", dir, code, stderr.String())
		}
	}
}

func dirExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// goEnv is a value of `go env`, for the scripts' gates.
func goEnv(key string) string {
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

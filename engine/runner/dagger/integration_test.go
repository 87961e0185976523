package dagger

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/runner"
	"github.com/set-engine/set/engine/runner/host"
)

// The live suite runs the runner against a real Dagger engine, through
// the session set owns, as setctl apply does. It needs
//
//   - _EXPERIMENTAL_DAGGER_RUNNER_HOST: the engine's address (tcp://…,
//     unix://…, docker-container://…, …), answering;
//   - SET_TEST_DAGGER_ROOTFS: a directory holding a Debian root file system
//     (debootstrap), readable by the user running the tests, of the host's
//     architecture: the gates run on it with the host's Go toolchain
//     mounted read-only at /usr/local/go;
//   - a dagger CLI: _EXPERIMENTAL_DAGGER_CLI_BIN, or `dagger` on PATH.
//
// Without them it skips. It shares one session among its subtests, as a
// run shares one among its gates. Run it with
//
//	_EXPERIMENTAL_DAGGER_RUNNER_HOST=tcp://127.0.0.1:1234 \
//	_EXPERIMENTAL_DAGGER_CLI_BIN=/path/to/dagger \
//	SET_TEST_DAGGER_ROOTFS=/path/to/debian-rootfs \
//	go test ./engine/runner/dagger/ -run TestLive -v -count=1
const liveSkip = "live Dagger suite: set _EXPERIMENTAL_DAGGER_RUNNER_HOST to a reachable engine and SET_TEST_DAGGER_ROOTFS to a Debian rootfs directory"

// liveEngine checks the suite's prerequisites, skipping t when one is
// missing, and returns the engine as Preflight found and proved it.
func liveEngine(t *testing.T) (e *Engine, rootfs string) {
	t.Helper()
	engine := os.Getenv("_EXPERIMENTAL_DAGGER_RUNNER_HOST")
	rootfs = os.Getenv("SET_TEST_DAGGER_ROOTFS")
	if engine == "" || rootfs == "" {
		t.Skip(liveSkip)
	}
	if fi, err := os.Stat(rootfs); err != nil || !fi.IsDir() {
		t.Skipf("%s (%s is not a directory)", liveSkip, rootfs)
	}
	cli := cmp.Or(os.Getenv("_EXPERIMENTAL_DAGGER_CLI_BIN"), "dagger")
	if _, err := exec.LookPath(cli); err != nil {
		t.Skipf("%s (and a dagger CLI: set _EXPERIMENTAL_DAGGER_CLI_BIN or put dagger on PATH)", liveSkip)
	}
	u, err := url.Parse(engine)
	if err != nil {
		t.Skipf("%s (%v)", liveSkip, err)
	}
	reachable := true
	switch u.Scheme {
	case "tcp", "unix":
		addr := u.Host
		if u.Scheme == "unix" {
			addr = u.Path
		}
		c, err := net.DialTimeout(u.Scheme, addr, 2*time.Second)
		if err != nil {
			t.Skipf("%s (%v)", liveSkip, err)
		}
		c.Close()
	default:
		reachable = false // only a session can tell
	}
	e, err = Preflight(context.Background(), os.Getenv)
	switch {
	case err != nil && !reachable:
		t.Skipf("%s (%v)", liveSkip, err)
	case err != nil:
		t.Fatalf("Preflight of a reachable engine: %v", err)
	}
	return e, rootfs
}

func goroot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func TestLive(t *testing.T) {
	eng, rootfs := liveEngine(t)
	t.Logf("engine: %s answers: %s", eng, eng.Versions())
	for _, w := range eng.Warnings() {
		t.Logf("warning: %s", w)
	}
	t.Setenv("SET_LIVE_HOST_ONLY", "host-secret")
	readOnly, writable := t.TempDir(), t.TempDir()
	for _, dir := range []string{readOnly, writable} {
		if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte("from the host\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	var salt [6]byte
	rand.Read(salt[:])
	probeCache := "set-live-probe-" + hex.EncodeToString(salt[:])
	cfg := &config.DaggerRunner{
		Rootfs:  rootfs,
		Workdir: "/src",
		Env: map[string]string{
			"PATH":        "/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			"HOME":        "/root",
			"GOCACHE":     "/cache/go-build",
			"GOMODCACHE":  "/cache/gomod",
			"GOTOOLCHAIN": "local",
			"GOPROXY":     "off",
			"CGO_ENABLED": "0",
			"FROM_CONFIG": "config",
			"OVERRIDDEN":  "config",
		},
		Caches: map[string]string{
			"/cache/go-build": "set-live-go-build",
			"/cache/gomod":    "set-live-gomod",
			"/cache/probe":    probeCache,
		},
		Mounts: map[string]config.Mount{
			"/usr/local/go": {Source: goroot(t), ReadOnly: true},
			"/mnt/ro":       {Source: readOnly, ReadOnly: true},
			"/mnt/rw":       {Source: writable, ReadOnly: false},
		},
		Exclude: map[string]bool{"node_modules": true, "*.log": true},
	}
	r := New(cfg, t.TempDir(), eng.String(), Connector(eng, io.Discard))
	t.Cleanup(func() {
		// A real CLI ends its session when asked: no kill, no error.
		start := time.Now()
		if err := r.(io.Closer).Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("Close took %v", d)
		}
	})
	ctx := context.Background()
	sh := func(script string) []string { return []string{"sh", "-c", script} }

	t.Run("exit codes and output", func(t *testing.T) {
		for _, code := range []int{0, 3} {
			var log bytes.Buffer
			res, err := r.Exec(ctx, runner.Exec{
				Argv: sh("echo to-stdout; echo to-stderr >&2; exit " + string(rune('0'+code))),
				Dir:  t.TempDir(),
				Log:  &log,
			})
			if err != nil {
				t.Fatalf("exit %d: %v", code, err)
			}
			if res.ExitCode != code || res.TimedOut || res.Base != "rootfs "+rootfs {
				t.Errorf("exit %d: result %+v", code, res)
			}
			if got, want := string(res.Output), "to-stdout\nto-stderr\n"; got != want {
				t.Errorf("exit %d: output %q, want %q", code, got, want)
			}
			if got, want := log.String(), "--- stdout\nto-stdout\n--- stderr\nto-stderr\n"; got != want {
				t.Errorf("exit %d: log %q, want %q", code, got, want)
			}
		}
	})

	t.Run("env", func(t *testing.T) {
		res, err := r.Exec(ctx, runner.Exec{
			Argv: []string{"env"},
			Dir:  t.TempDir(),
			Vars: map[string]string{"GATE_VAR": "gate", "OVERRIDDEN": "gate"},
		})
		if err != nil {
			t.Fatal(err)
		}
		env := "\n" + string(res.Output)
		for _, want := range []string{"\nFROM_CONFIG=config\n", "\nGATE_VAR=gate\n", "\nOVERRIDDEN=gate\n"} {
			if !strings.Contains(env, want) {
				t.Errorf("env lacks %q:%s", strings.TrimSpace(want), env)
			}
		}
		if strings.Contains(env, "SET_LIVE_HOST_ONLY") || strings.Contains(env, "host-secret") {
			t.Errorf("the host environment reached the container:%s", env)
		}
	})

	t.Run("timeout", func(t *testing.T) {
		start := time.Now()
		res, err := r.Exec(ctx, runner.Exec{Argv: []string{"sleep", "30"}, Dir: t.TempDir(), Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if !res.TimedOut || res.ExitCode != -1 {
			t.Errorf("result %+v, want timed out", res)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("returned after %v", d)
		}
	})

	t.Run("cache volume", func(t *testing.T) {
		token := hex.EncodeToString(salt[:]) + "-token"
		if res, err := r.Exec(ctx, runner.Exec{Argv: sh("echo " + token + " > /cache/probe/token"), Dir: t.TempDir()}); err != nil || res.ExitCode != 0 {
			t.Fatalf("writer: %+v, %v", res, err)
		}
		res, err := r.Exec(ctx, runner.Exec{Argv: []string{"cat", "/cache/probe/token"}, Dir: t.TempDir()})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("reader: %+v, %v", res, err)
		}
		if got := strings.TrimSpace(string(res.Output)); got != token {
			t.Errorf("read %q from the cache, want %q", got, token)
		}
	})

	t.Run("export", func(t *testing.T) {
		wt := t.TempDir()
		if err := os.WriteFile(filepath.Join(wt, "gen.txt"), []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := r.Exec(ctx, runner.Exec{
			Argv:   sh("test \"$(cat gen.txt)\" = old && echo new > gen.txt && mkdir -p sub/dir && echo deep > sub/dir/x.txt"),
			Dir:    wt,
			Export: []string{"gen.txt", "sub/dir/x.txt"},
		})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%+v, %v", res, err)
		}
		for p, want := range map[string]string{"gen.txt": "new\n", "sub/dir/x.txt": "deep\n"} {
			if b, err := os.ReadFile(filepath.Join(wt, p)); err != nil || string(b) != want {
				t.Errorf("%s: %q, %v; want %q", p, b, err, want)
			}
		}
		_, err = r.Exec(ctx, runner.Exec{Argv: []string{"true"}, Dir: wt, Export: []string{"missing.txt"}})
		if err == nil || !strings.Contains(err.Error(), "missing.txt") {
			t.Errorf("missing export: err = %v", err)
		}
	})

	t.Run("exclude", func(t *testing.T) {
		wt := t.TempDir()
		for p, data := range map[string]string{
			".git":                    "gitdir: /elsewhere/.git/worktrees/x\n", // a worktree's .git is a file
			".set/state.json":         "{}\n",
			"node_modules/m/index.js": "x\n",
			"build.log":               "x\n",
			"kept.txt":                "kept\n",
			"sub/kept.go":             "package sub\n",
		} {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(wt, p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(wt, p), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		res, err := r.Exec(ctx, runner.Exec{Argv: sh("find . -mindepth 1 | LC_ALL=C sort"), Dir: wt})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%+v, %v", res, err)
		}
		if got, want := string(res.Output), "./kept.txt\n./sub\n./sub/kept.go\n"; got != want {
			t.Errorf("the container's worktree holds\n%s\nwant\n%s", got, want)
		}
	})

	t.Run("read-only and writable mounts", func(t *testing.T) {
		res, err := r.Exec(ctx, runner.Exec{Argv: sh("cat /mnt/ro/in.txt && ! touch /mnt/ro/new 2>/dev/null && test ! -e /mnt/ro/new && echo ro-refused"), Dir: t.TempDir()})
		if err != nil || res.ExitCode != 0 || string(res.Output) != "from the host\nro-refused\n" {
			t.Errorf("read-only mount: %+v (output %q), %v", res, res.Output, err)
		}
		res, err = r.Exec(ctx, runner.Exec{Argv: sh("cat /mnt/rw/in.txt && echo changed > /mnt/rw/in.txt && echo new > /mnt/rw/new && cat /mnt/rw/in.txt /mnt/rw/new"), Dir: t.TempDir()})
		if err != nil || res.ExitCode != 0 || string(res.Output) != "from the host\nchanged\nnew\n" {
			t.Errorf("writable mount: %+v (output %q), %v", res, res.Output, err)
		}
		// Neither mount writes back to the host.
		if b, err := os.ReadFile(filepath.Join(writable, "in.txt")); err != nil || string(b) != "from the host\n" {
			t.Errorf("the host's file after the gate: %q, %v", b, err)
		}
		for _, dir := range []string{readOnly, writable} {
			if _, err := os.Stat(filepath.Join(dir, "new")); !os.IsNotExist(err) {
				t.Errorf("a file the gate wrote reached the host's %s: %v", dir, err)
			}
		}
		// The run reads the writable mount once, and a later gate starts
		// from that read, not from what an earlier gate wrote into its own
		// snapshot.
		res, err = r.Exec(ctx, runner.Exec{Argv: sh("cat /mnt/rw/in.txt && test ! -e /mnt/rw/new && echo no-new"), Dir: t.TempDir()})
		if err != nil || res.ExitCode != 0 || string(res.Output) != "from the host\nno-new\n" {
			t.Errorf("writable mount after a gate wrote into it: %+v (output %q), %v", res, res.Output, err)
		}
	})

	t.Run("base and mounts read once per run", func(t *testing.T) {
		in := filepath.Join(readOnly, "in.txt")
		if err := os.WriteFile(in, []byte("changed on the host\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(in, []byte("from the host\n"), 0o644)
		cat := runner.Exec{Argv: sh("cat /mnt/ro/in.txt"), Dir: t.TempDir()}
		res, err := r.Exec(ctx, cat)
		if err != nil || string(res.Output) != "from the host\n" {
			t.Errorf("a gate of the run after the host changed the mount: %+v (output %q), %v; want the run's read", res, res.Output, err)
		}
		next := New(cfg, t.TempDir(), eng.String(), Connector(eng, io.Discard))
		defer next.(io.Closer).Close()
		res, err = next.Exec(ctx, cat)
		if err != nil || string(res.Output) != "changed on the host\n" {
			t.Errorf("the next run's gate: %+v (output %q), %v; want the changed mount", res, res.Output, err)
		}
	})

	t.Run("golang profile gates match the host", func(t *testing.T) {
		tree := filepath.Join(t.TempDir(), "linkshort")
		if err := os.CopyFS(tree, os.DirFS(filepath.Join("..", "..", "..", "examples", "linkshort"))); err != nil {
			t.Fatal(err)
		}
		gates := []struct {
			name string
			argv []string
		}{{"build", []string{"go", "build", "./..."}}, {"test", []string{"go", "test", "./..."}}}
		verdicts := func(stage string, want map[string]bool) {
			t.Helper()
			for _, g := range gates {
				e := runner.Exec{Argv: g.argv, Dir: tree, Timeout: 10 * time.Minute}
				hres, err := host.New().Exec(ctx, e)
				if err != nil {
					t.Fatalf("%s %s on the host: %v", stage, g.name, err)
				}
				dres, err := r.Exec(ctx, e)
				if err != nil {
					t.Fatalf("%s %s on dagger: %v", stage, g.name, err)
				}
				hpass, dpass := hres.ExitCode == 0 && !hres.TimedOut, dres.ExitCode == 0 && !dres.TimedOut
				if hpass != want[g.name] || dpass != want[g.name] {
					t.Errorf("%s %s: host passed %v, dagger passed %v, want %v\nhost:\n%s\ndagger:\n%s",
						stage, g.name, hpass, dpass, want[g.name], hres.Output, dres.Output)
				}
			}
		}
		verdicts("as is", map[string]bool{"build": true, "test": true})

		failing := "package main\n\nimport \"testing\"\n\nfunc TestLiveDeliberateFailure(t *testing.T) {\n\tt.Fatal(\"deliberate failure\")\n}\n"
		if err := os.WriteFile(filepath.Join(tree, "zz_live_fail_test.go"), []byte(failing), 0o644); err != nil {
			t.Fatal(err)
		}
		verdicts("with a failing test", map[string]bool{"build": true, "test": false})
	})
}

// TestLiveHosts runs gates on a pool of real engines, as setctl apply
// does with runner.dagger.hosts. It needs
//
//   - SET_TEST_DAGGER_HOSTS: two or more runner-host URLs, separated by
//     spaces, of engines that answer;
//   - SET_TEST_DAGGER_ROOTFS and a dagger CLI, as TestLive.
//
// Without them it skips. Eight gates of a second each run at once on
// engines of parallelism 2, alongside an engine that never answers (a
// closed port): every gate passes, each engine that answers runs some,
// and none goes to the one that does not. Run it with
//
//	SET_TEST_DAGGER_HOSTS="tcp://10.0.0.1:1234 tcp://10.0.0.2:1234" \
//	_EXPERIMENTAL_DAGGER_CLI_BIN=/path/to/dagger \
//	SET_TEST_DAGGER_ROOTFS=/path/to/debian-rootfs \
//	go test ./engine/runner/dagger/ -run TestLiveHosts -v -count=1
func TestLiveHosts(t *testing.T) {
	const skip = "live Dagger hosts: set SET_TEST_DAGGER_HOSTS to two or more engines' URLs, space-separated, SET_TEST_DAGGER_ROOTFS to a Debian rootfs directory, and have a dagger CLI"
	urls := strings.Fields(os.Getenv("SET_TEST_DAGGER_HOSTS"))
	rootfs := os.Getenv("SET_TEST_DAGGER_ROOTFS")
	if len(urls) < 2 || rootfs == "" {
		t.Skip(skip)
	}
	if _, err := exec.LookPath(cmp.Or(os.Getenv("_EXPERIMENTAL_DAGGER_CLI_BIN"), "dagger")); err != nil {
		t.Skip(skip)
	}
	hosts := map[string]config.DaggerHost{}
	for _, u := range urls {
		hosts[u] = config.DaggerHost{Parallelism: 2}
	}
	for _, pr := range PreflightHosts(context.Background(), urls, os.Getenv) {
		if pr.Err != nil {
			t.Skipf("%s (%s: %v)", skip, pr.Host, pr.Err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "tcp://" + l.Addr().String()
	l.Close()
	hosts[dead] = config.DaggerHost{Parallelism: 2}

	log := &lockedBuffer{}
	engines, err := PoolEngines(context.Background(), hosts, os.Getenv, log)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.DaggerRunner{Rootfs: rootfs, Workdir: "/src",
		Env: map[string]string{"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}}
	p := NewPool(cfg, t.TempDir(), engines, log)
	defer func() {
		if err := p.(io.Closer).Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		t.Logf("the Dagger log:\n%s", log)
	}()

	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			res, err := p.Exec(context.Background(), runner.Exec{
				Argv: []string{"sh", "-c", "sleep 1; echo gate " + strconv.Itoa(i)},
				Dir:  t.TempDir(),
			})
			if err == nil && (res.ExitCode != 0 || strings.TrimSpace(string(res.Output)) != "gate "+strconv.Itoa(i)) {
				err = fmt.Errorf("result %+v", res)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("gate %d: %v", i, err)
		}
	}
	for _, u := range urls {
		if !strings.Contains(log.String(), " → "+u+"\n") {
			t.Errorf("no gate ran on %s", u)
		}
	}
	if strings.Contains(log.String(), " → "+dead+"\n") {
		t.Errorf("a gate went to %s, which never answered", dead)
	}
}

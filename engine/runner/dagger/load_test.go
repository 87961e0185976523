package dagger

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/runner"
)

// baseProject is a project root holding a worktree, a rootfs, an OCI
// tarball and two mount sources, each with a file.
func baseProject(t *testing.T) (root, wt string) {
	t.Helper()
	root = t.TempDir()
	for _, dir := range []string{"wt", "rootfs", "goroot", "scratch"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, dir, "f"), []byte(dir+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "img.tar"), []byte("tarball\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, filepath.Join(root, "wt")
}

// baseCfg is a runner with base kind ("rootfs" or "tarball") and a
// read-only and a writable mount.
func baseCfg(kind string) *config.DaggerRunner {
	cfg := &config.DaggerRunner{Workdir: "/src", Mounts: map[string]config.Mount{
		"/usr/local/go": {Source: "goroot", ReadOnly: true},
		"/scratch":      {Source: "scratch", ReadOnly: false},
	}}
	if kind == "tarball" {
		cfg.Tarball = "img.tar"
	} else {
		cfg.Rootfs = "rootfs"
	}
	return cfg
}

// countReads checks how often each host path was read.
func countReads(t *testing.T, f *fakeEngine, want map[string]int) {
	t.Helper()
	for p, n := range want {
		if got := len(f.hostReads(p)); got != n {
			t.Errorf("%s read %d times, want %d: %+v", p, got, n, f.hostReads(p))
		}
	}
}

// TestBaseReadOncePerRun: N gates of a run read the base and each mount
// (read-only or writable) once and the worktree N times, and every gate is
// built on the base's and the mounts' one read and on its own read of the
// worktree.
func TestBaseReadOncePerRun(t *testing.T) {
	const gates = 5
	for _, kind := range []string{"rootfs", "tarball"} {
		t.Run(kind, func(t *testing.T) {
			root, wt := baseProject(t)
			base := filepath.Join(root, "rootfs")
			if kind == "tarball" {
				base = filepath.Join(root, "img.tar")
			}
			fx := newFixture(t, baseCfg(kind), root)
			var queries []string
			for range gates {
				queries = append(queries, fx.gateQuery(t, wt))
			}
			goroot, scratch := filepath.Join(root, "goroot"), filepath.Join(root, "scratch")
			countReads(t, fx.engine, map[string]int{base: 1, goroot: 1, scratch: 1, wt: gates})
			wtReads := fx.engine.hostReads(wt)
			for i, q := range queries {
				on := fx.engine.builtOn(q)
				want := []hostRead{fx.engine.hostReads(base)[0], fx.engine.hostReads(goroot)[0], fx.engine.hostReads(scratch)[0], wtReads[i]}
				for _, w := range want {
					if len(readsOf(on, w.path)) != 1 || readsOf(on, w.path)[0] != w {
						t.Errorf("gate %d is built on %+v, want %+v", i+1, on, want)
						break
					}
				}
			}
		})
	}
}

// TestBaseLoadSharedByConcurrentGates: gates that start together while
// the base is being read wait for that one read instead of reading again.
func TestBaseLoadSharedByConcurrentGates(t *testing.T) {
	const gates = 4
	root, wt := baseProject(t)
	rootfs := filepath.Join(root, "rootfs")
	fx := newFixture(t, baseCfg("rootfs"), root)
	h := newHold()
	fx.engine.hold[rootfs] = h

	var wg sync.WaitGroup
	for range gates {
		wg.Go(func() {
			if _, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"true"}, Dir: wt}); err != nil {
				t.Error(err)
			}
		})
	}
	<-h.arrived
	// Give the other gates time to come to the load under way; a gate
	// that came after it ended would find it kept, so the count below
	// holds either way, and this makes the test about the wait.
	time.Sleep(50 * time.Millisecond)
	close(h.release)
	wg.Wait()
	countReads(t, fx.engine, map[string]int{rootfs: 1, filepath.Join(root, "goroot"): 1, filepath.Join(root, "scratch"): 1, wt: gates})
	if n := fx.engine.readRequests(rootfs); n != 1 {
		t.Errorf("%d requests read the rootfs, want 1", n)
	}
}

// TestBaseLoadOutlivesItsGate: the gate that started the base's load is
// cancelled while the base is read; it stops waiting (a run error), and
// the load goes on for the next gate, which reads nothing again. That
// gate waits for the load past its own timeout, since the engine still
// answers: the time a load takes is the run's, never the gate's.
func TestBaseLoadOutlivesItsGate(t *testing.T) {
	root, wt := baseProject(t)
	rootfs := filepath.Join(root, "rootfs")
	fx := newFixture(t, baseCfg("rootfs"), root)
	fx.runner.(*daggerRunner).loadPatience = 20 * time.Millisecond
	h := newHold()
	fx.engine.hold[rootfs] = h

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := fx.runner.Exec(ctx, runner.Exec{Argv: []string{"true"}, Dir: wt}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled gate: err = %v, want context.Canceled", err)
	}
	time.AfterFunc(200*time.Millisecond, func() { close(h.release) })
	res, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"true"}, Dir: wt, Timeout: 50 * time.Millisecond})
	if err != nil || res.TimedOut || res.ExitCode != 0 {
		t.Fatalf("gate whose base loads for longer than its timeout: %+v, %v; want it to run once the base is loaded", res, err)
	}
	countReads(t, fx.engine, map[string]int{rootfs: 1})
	if n := fx.engine.readRequests(rootfs); n != 1 {
		t.Errorf("%d requests read the rootfs, want the one the first gate started", n)
	}
}

// TestBaseLoadEngineStopsAnswering: a gate waiting for the run's load of
// its base, on an engine that then answers no version query either, ends
// with an EngineFault naming the engine, not a timeout sent to the agent.
func TestBaseLoadEngineStopsAnswering(t *testing.T) {
	root, wt := baseProject(t)
	fx := newFixture(t, baseCfg("rootfs"), root)
	r := fx.runner.(*daggerRunner)
	r.loadPatience, r.healthTimeout = 20*time.Millisecond, 50*time.Millisecond
	h := newHold()
	defer close(h.release)
	fx.engine.hold[filepath.Join(root, "rootfs")] = h
	fx.engine.block["version"] = true
	res, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"true"}, Dir: wt, Timeout: time.Minute})
	var fault *EngineFault
	if !errors.As(err, &fault) || fault.What != "stopped answering while it loaded the run's base" {
		t.Fatalf("err = %v, want an EngineFault", err)
	}
	if res.TimedOut {
		t.Errorf("result %+v: an engine fault is no gate timeout", res)
	}
}

// TestBaseLoadFailureNotKept: a load that fails is the error of the gates
// that needed it, and the next gate loads again instead of getting the
// same error for the rest of the run.
func TestBaseLoadFailureNotKept(t *testing.T) {
	for _, what := range []string{"rootfs", "goroot"} {
		t.Run(what, func(t *testing.T) {
			root, wt := baseProject(t)
			path := filepath.Join(root, what)
			fx := newFixture(t, baseCfg("rootfs"), root)
			fx.engine.setFailRead(path, "lstat "+path+": no such file or directory")
			_, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"go", "vet"}, Dir: wt})
			if err == nil || !strings.Contains(err.Error(), "no such file or directory") || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want the engine's error naming %s", err, path)
			}
			if what == "goroot" && !strings.Contains(err.Error(), "/usr/local/go") {
				t.Errorf("err = %v, want it to name the mount", err)
			}
			fx.engine.setFailRead(path, "")
			if res, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"go", "vet"}, Dir: wt}); err != nil || res.ExitCode != 0 {
				t.Fatalf("gate after the failed load: %+v, %v", res, err)
			}
			countReads(t, fx.engine, map[string]int{path: 1})
		})
	}
}

package dagger

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dagger.io/dagger"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/runner"
)

// BenchmarkGate runs b.N gates of one run (one runner, one session of the
// fake engine) on a rootfs base with a read-only and a writable mount, and
// reports what each gate costs the engine: host reads of the worktree and
// of the base and mounts, and GraphQL requests. The fake's host read
// hashes every file of the path, so ns/op also grows with what is read
// (a stand-in for the engine's file sync, which this cannot measure).
// Over the bundled example's ~43 gates (issue 28 §4):
//
//	go test ./engine/runner/dagger/ -run '^$' -bench BenchmarkGate -benchtime 43x
//
// When every gate read the base and the mounts again (31e178b) it reported
// 3 base reads, 1 worktree read and 8 requests per gate, 19–27 ms/op; with
// them read once per run, 0.07 base reads (3 in all), 1 worktree read and
// 7.09 requests per gate, 1.7–3.6 ms/op (2 cores, load 9).
//
// On a live engine (v0.21.8 on a 2-core machine, a 518 MB rootfs and the
// host's GOROOT mounted), the bundled example's 43 verify and integration
// gates took 86.5 s and 109.6 s in containers before (141 host reads a
// run, 140.8 s of them summed over the gates) and 40.6 s and 45.1 s after
// (49 host reads, 9.4 s), against 41.4 s and 36.4 s on the host. The
// whole example took 100.9 s and 100.7 s there against 48.2 s and 47.0 s
// on the host, because that engine pruned its cache after every session
// (Dagger's default budget on a disk 87 % full; docs/dagger.md), so each
// run's 4 baseline gates compiled the standard library again (54–57 s).
// On an engine with a gc budget in engine.json on the same machine, warm,
// it took 40.4 s and 36.1 s (baseline 5.4 s and 2.7 s, the 43 gates 27.1 s
// and 25.0 s) against 53.6 s and 75.1 s on the host runner (load 5–7).
func BenchmarkGate(b *testing.B) {
	root := b.TempDir()
	tree := func(dir string, files, size int) {
		b.Helper()
		for i := range files {
			p := filepath.Join(root, dir, fmt.Sprintf("d%02d", i%16), fmt.Sprintf("f%04d", i))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(strings.Repeat("x", size)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	tree("rootfs", 400, 4096)
	tree("goroot", 400, 4096)
	tree("scratch", 10, 100)
	tree("wt", 20, 1024)
	wt := filepath.Join(root, "wt")
	cfg := &config.DaggerRunner{
		Rootfs:  "rootfs",
		Workdir: "/src",
		Mounts: map[string]config.Mount{
			"/usr/local/go": {Source: "goroot", ReadOnly: true},
			"/scratch":      {Source: "scratch", ReadOnly: false},
		},
	}
	engine := newFakeEngine()
	r := New(cfg, root, "fake", func(ctx context.Context) (*dagger.Client, error) {
		return dagger.Connect(ctx, dagger.WithConn(engine))
	})
	b.Cleanup(func() { r.(interface{ Close() error }).Close() })

	b.ResetTimer()
	for b.Loop() {
		if _, err := r.Exec(context.Background(), runner.Exec{Argv: []string{"go", "test", "./..."}, Dir: wt}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()

	n := float64(b.N)
	engine.mu.Lock()
	var worktree, base int
	for _, rd := range engine.reads {
		if rd.path == wt {
			worktree++
		} else {
			base++
		}
	}
	requests := len(engine.raw)
	engine.mu.Unlock()
	b.ReportMetric(float64(worktree)/n, "worktree-reads/gate")
	b.ReportMetric(float64(base)/n, "base-reads/gate")
	b.ReportMetric(float64(requests)/n, "requests/gate")
}

package dagger

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"dagger.io/dagger"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/runner"
)

// fixture is a runner wired to a fake engine.
type fixture struct {
	engine *fakeEngine
	runner runner.Runner
	dials  atomic.Int32 // connect calls
}

func newFixture(t *testing.T, cfg *config.DaggerRunner, root string) *fixture {
	t.Helper()
	fx := &fixture{engine: newFakeEngine()}
	fx.runner = New(cfg, root, "fake", func(ctx context.Context) (*dagger.Client, error) {
		fx.dials.Add(1)
		return dagger.Connect(ctx, dagger.WithConn(fx.engine))
	})
	t.Cleanup(func() { fx.runner.(interface{ Close() error }).Close() })
	return fx
}

// syncQuery is the recorded query that ran the first gate's pipeline.
func (fx *fixture) syncQuery(t *testing.T) string {
	t.Helper()
	for _, q := range fx.engine.recorded() {
		if strings.HasSuffix(q, ".sync") && strings.Contains(q, ".withExec(") {
			return q
		}
	}
	t.Fatalf("no sync query in %q", fx.engine.recorded())
	return ""
}

func goCfg() *config.DaggerRunner {
	return &config.DaggerRunner{From: "golang:1.26", Workdir: "/src"}
}

func TestName(t *testing.T) {
	if got := New(goCfg(), "/p", "fake", nil).Name(); got != "dagger" {
		t.Errorf("Name() = %q", got)
	}
}

// TestTranslation: the config and the Exec become exactly this pipeline,
// in this order, with maps applied in sorted order and nothing from the
// host environment.
func TestTranslation(t *testing.T) {
	t.Setenv("SET_HOST_ONLY_SECRET", "leaked-host-value")
	wt := t.TempDir()
	cfg := &config.DaggerRunner{
		From:    "golang:1.26",
		Workdir: "/src",
		Exclude: map[string]bool{"node_modules": true, "*.log": true},
		Caches:  map[string]string{"/root/.cache/go-build": "gobuild", "/go/pkg/mod": "gomod"},
		Mounts: map[string]config.Mount{
			"/opt/tools": {Source: "tools", ReadOnly: true},
			"/scratch":   {Source: "/abs/scratch", ReadOnly: false},
		},
		Env: map[string]string{"CGO_ENABLED": "0", "MODE": "config"},
	}
	fx := newFixture(t, cfg, "/project")
	_, err := fx.runner.Exec(context.Background(), runner.Exec{
		Argv: []string{"go", "test", "-run", `Test "quoted"`, "./..."},
		Dir:  wt,
		Vars: map[string]string{"MODE": "gate", "GATE": "test"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `container.from(address:"golang:1.26")` +
		`.withMountedDirectory(path:"/src",source:host.directory(exclude:[".git",".set","*.log","node_modules"],noCache:true,path:` + strconv.Quote(wt) + `))` +
		`.withWorkdir(path:"/src")` +
		`.withEnvVariable(name:"CGO_ENABLED",value:"0")` +
		`.withEnvVariable(name:"GATE",value:"test")` +
		`.withEnvVariable(name:"MODE",value:"gate")` +
		`.withMountedCache(cache:cacheVolume(key:"gomod"),path:"/go/pkg/mod")` +
		`.withMountedCache(cache:cacheVolume(key:"gobuild"),path:"/root/.cache/go-build")` +
		`.withMountedDirectory(path:"/opt/tools",readOnly:true,source:host.directory(noCache:true,path:"/project/tools"))` +
		`.withMountedDirectory(path:"/scratch",source:host.directory(noCache:true,path:"/abs/scratch"))` +
		`.withExec(args:["go","test","-run","Test \"quoted\"","./..."],expect:ANY)` +
		`.sync`
	if got := fx.syncQuery(t); got != want {
		t.Errorf("pipeline\n got %s\nwant %s", got, want)
	}
	// Host directories and cache volumes travel as IDs resolved beforehand.
	for _, q := range fx.engine.sent() {
		if strings.Contains(q, "withExec(") && (strings.Contains(q, "host{") || strings.Contains(q, "cacheVolume(")) {
			t.Errorf("objects inlined instead of passed by ID: %s", q)
		}
	}
	for _, q := range append(fx.engine.recorded(), fx.engine.sent()...) {
		if strings.Contains(q, "SET_HOST_ONLY_SECRET") || strings.Contains(q, "leaked-host-value") {
			t.Errorf("host environment reached the engine: %s", q)
		}
	}
}

// TestBases: each kind of base, with relative host paths resolved against
// the project root.
func TestBases(t *testing.T) {
	for _, tc := range []struct {
		cfg  config.DaggerRunner
		want string
		base string
	}{
		{config.DaggerRunner{From: "debian:13"}, `container.from(address:"debian:13")`, "from debian:13"},
		{config.DaggerRunner{Rootfs: "images/debian"}, `container.withRootfs(directory:host.directory(noCache:true,path:"/project/images/debian"))`, "rootfs images/debian"},
		{config.DaggerRunner{Rootfs: "/srv/rootfs"}, `container.withRootfs(directory:host.directory(noCache:true,path:"/srv/rootfs"))`, "rootfs /srv/rootfs"},
		{config.DaggerRunner{Tarball: "img.tar"}, `container.import(source:host.file(noCache:true,path:"/project/img.tar"))`, "tarball img.tar"},
	} {
		tc.cfg.Workdir = "/w"
		fx := newFixture(t, &tc.cfg, "/project")
		res, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"true"}, Dir: "/wt"})
		if err != nil {
			t.Fatalf("%s: %v", tc.base, err)
		}
		want := tc.want + `.withMountedDirectory(path:"/w",source:host.directory(exclude:[".git",".set"],noCache:true,path:"/wt"))` +
			`.withWorkdir(path:"/w").withExec(args:["true"],expect:ANY).sync`
		if got := fx.syncQuery(t); got != want {
			t.Errorf("%s:\n got %s\nwant %s", tc.base, got, want)
		}
		if res.Base != tc.base {
			t.Errorf("Base = %q, want %q", res.Base, tc.base)
		}
	}
}

// gateQuery runs a gate on dir and returns the query, as sent, that ran
// its pipeline.
func (fx *fixture) gateQuery(t *testing.T, dir string) string {
	t.Helper()
	if _, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"go", "test"}, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	sent := fx.engine.sent()
	for i := len(sent) - 1; i >= 0; i-- {
		if strings.Contains(sent[i], "withExec(") && strings.Contains(sent[i], "sync") {
			return sent[i]
		}
	}
	t.Fatalf("no pipeline in %q", sent)
	return ""
}

// readsOf keeps the reads of path.
func readsOf(reads []hostRead, path string) []hostRead {
	var out []hostRead
	for _, r := range reads {
		if r.path == path {
			out = append(out, r)
		}
	}
	return out
}

// TestHostReadsFollowContent: a gate after the worktree changed runs on
// what the worktree holds now, not on what the engine read for an earlier
// gate of the session: the second gate is sent a new read of the path,
// holding the new content. The rootfs, the tarball and a mount are read
// once per run: the second gate of the run is built on the run's one read,
// and the next run (a new session) reads the path again and holds what it
// holds then.
func TestHostReadsFollowContent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     config.DaggerRunner
		changed string // the host path the test changes between the gates
		perGate bool   // read for every gate, not once per run
	}{
		{"worktree", config.DaggerRunner{From: "golang:1.26"}, "wt", true},
		{"rootfs", config.DaggerRunner{Rootfs: "rootfs"}, "rootfs", false},
		{"tarball", config.DaggerRunner{Tarball: "img.tar"}, "img.tar", false},
		{"mount", config.DaggerRunner{From: "golang:1.26", Mounts: map[string]config.Mount{"/opt/tools": {Source: "tools", ReadOnly: true}}}, "tools", false},
		{"writable mount", config.DaggerRunner{From: "golang:1.26", Mounts: map[string]config.Mount{"/opt/tools": {Source: "tools", ReadOnly: false}}}, "tools", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, dir := range []string{"wt", "rootfs", "tools"} {
				if err := os.Mkdir(filepath.Join(root, dir), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			wt := filepath.Join(root, "wt")
			changed := filepath.Join(root, tc.changed)
			write := func(content string) {
				p := changed
				if fi, err := os.Stat(p); err == nil && fi.IsDir() {
					p = filepath.Join(p, "main.go")
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("first\n")
			tc.cfg.Workdir = "/src"
			fx := newFixture(t, &tc.cfg, root)
			first := fx.gateQuery(t, wt)
			write("second\n")
			second := fx.gateQuery(t, wt)

			reads := fx.engine.hostReads(changed)
			if !tc.perGate {
				if len(reads) != 1 {
					t.Fatalf("%s read %d times in a run of two gates, want 1: %+v", changed, len(reads), reads)
				}
				for i, q := range []string{first, second} {
					if on := readsOf(fx.engine.builtOn(q), changed); len(on) != 1 || on[0] != reads[0] {
						t.Errorf("gate %d is built on %+v, want the run's read %+v:\n%s", i+1, on, reads[0], q)
					}
				}
				// The next run reads it again and sees the change.
				next := newFixture(t, &tc.cfg, root)
				q := next.gateQuery(t, wt)
				again := next.engine.hostReads(changed)
				if len(again) != 1 || again[0].content == reads[0].content || again[0].content != contentDigest(changed) {
					t.Fatalf("the next run's reads of %s do not hold the changed content: %+v (the first run's: %+v)", changed, again, reads)
				}
				if on := readsOf(next.engine.builtOn(q), changed); len(on) != 1 || on[0] != again[0] {
					t.Errorf("the next run's gate is built on %+v, want %+v:\n%s", on, again[0], q)
				}
				return
			}
			if len(reads) != 2 {
				t.Fatalf("%s read %d times for two gates, want 2: %+v", changed, len(reads), reads)
			}
			if reads[0].content == reads[1].content || reads[1].content != contentDigest(changed) {
				t.Errorf("the second read does not hold the changed content: %+v", reads)
			}
			if !strings.Contains(second, strconv.Quote(reads[1].id)) || strings.Contains(second, strconv.Quote(reads[0].id)) {
				t.Errorf("the second gate is not built on the second read (%s):\n%s", reads[1].id, second)
			}
			if on := readsOf(fx.engine.builtOn(second), changed); len(on) != 1 || on[0] != reads[1] {
				t.Errorf("the second gate is built on %+v, want %+v", on, reads[1])
			}
		})
	}
}

// TestResult: exit codes, both streams, the log and the base. The exit
// code and the streams are read from the synced container.
func TestResult(t *testing.T) {
	for _, code := range []int{0, 3} {
		fx := newFixture(t, goCfg(), "/p")
		fx.engine.exitCode, fx.engine.stdout, fx.engine.stderr = code, "built\nok", "warning: x\n"
		var log bytes.Buffer
		res, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"go", "test"}, Dir: "/wt", Log: &log})
		if err != nil {
			t.Fatalf("exit %d: %v", code, err)
		}
		if res.ExitCode != code || res.TimedOut || res.Base != "from golang:1.26" {
			t.Errorf("exit %d: result %+v", code, res)
		}
		if got, want := string(res.Output), "built\nok\nwarning: x\n"; got != want {
			t.Errorf("exit %d: output %q, want %q", code, got, want)
		}
		if got, want := log.String(), "--- stdout\nbuilt\nok\n--- stderr\nwarning: x\n"; got != want {
			t.Errorf("exit %d: log %q, want %q", code, got, want)
		}
		pipeline := strings.TrimSuffix(fx.syncQuery(t), ".sync")
		for _, leaf := range []string{"exitCode", "stdout", "stderr"} {
			if !contains(fx.engine.recorded(), pipeline+"."+leaf) {
				t.Errorf("exit %d: %s not read from the synced container: %q", code, leaf, fx.engine.recorded())
			}
		}
		// The reads load the synced container by its ID instead of sending
		// the pipeline again: one evaluation, then three small queries.
		loads := 0
		for _, q := range fx.engine.sent() {
			if strings.HasPrefix(q, "{node(id:") || strings.HasPrefix(q, "{loadContainerFromID(id:") {
				loads++
			}
		}
		if loads != 3 {
			t.Errorf("exit %d: %d reads by ID, want 3: %q", code, loads, fx.engine.sent())
		}
	}
}

func TestOutputTailBounded(t *testing.T) {
	fx := newFixture(t, goCfg(), "/p")
	fx.engine.stdout = strings.Repeat("o", runner.OutputCap)
	fx.engine.stderr = "the end\n"
	res, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"x"}, Dir: "/wt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Output) != runner.OutputCap || !bytes.HasSuffix(res.Output, []byte("o\nthe end\n")) {
		t.Errorf("output: %d bytes ending %q", len(res.Output), res.Output[len(res.Output)-12:])
	}
}

// TestEngineError: an error from the API is a run error, not a result.
func TestEngineError(t *testing.T) {
	fx := newFixture(t, goCfg(), "/p")
	fx.engine.fail["sync"] = "pull access denied for golang"
	res, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"go"}, Dir: "/wt"})
	if err == nil || !strings.Contains(err.Error(), "pull access denied") {
		t.Fatalf("err = %v, want the engine's error", err)
	}
	if IsEngineFault(err) || !strings.HasPrefix(err.Error(), "dagger runner: go: ") {
		t.Errorf("err = %q: an engine that answers with an error is no engine fault", err)
	}
	if res.TimedOut || res.ExitCode != -1 {
		t.Errorf("result %+v", res)
	}
}

// TestTimeout: an expired gate timeout is a gate failure with a nil error.
func TestTimeout(t *testing.T) {
	fx := newFixture(t, goCfg(), "/p")
	fx.engine.block["sync"] = true
	start := time.Now()
	res, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"sleep", "30"}, Dir: "/wt", Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode != -1 {
		t.Errorf("result %+v, want timed out with exit -1", res)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestEngineStopsAnswering: a gate that times out on an engine that then
// does not answer a version query either is the engine's fault, a run
// error naming the engine, not the gate's timeout.
func TestEngineStopsAnswering(t *testing.T) {
	fx := newFixture(t, goCfg(), "/p")
	fx.runner.(*daggerRunner).healthTimeout = 100 * time.Millisecond
	fx.engine.block["sync"] = true
	fx.engine.block["version"] = true
	res, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"go", "build"}, Dir: "/wt", Timeout: 100 * time.Millisecond})
	var fault *EngineFault
	if !errors.As(err, &fault) {
		t.Fatalf("err = %v, want an EngineFault", err)
	}
	want := "the Dagger engine fake stopped answering during the gate: it did not answer a version query within 100ms\n" +
		"  fix: check that the engine runs and answers (`dagger core version` asks it its version), " +
		"then run `setctl apply` again: the run resumes and runs the gate again, without spending a retry"
	if err.Error() != want {
		t.Errorf("err = %q\nwant  %q", err, want)
	}
	if res.TimedOut {
		t.Errorf("result %+v: an engine fault is no gate timeout", res)
	}
}

// TestEngineGoesAway: an engine that goes away under a gate (its session
// answering 502, the connection cut short or refused, the engine saying
// it is shutting down), while the gate
// runs or while its files are exported, is the engine's fault: a run
// error that says so, names the engine and says what to do, without the
// "dagger runner: go:" of the engine's other errors.
func TestEngineGoesAway(t *testing.T) {
	fix := "\n  fix: check that the engine runs and answers (`dagger core version` asks it its version), " +
		"then run `setctl apply` again: the run resumes and runs the gate again, without spending a retry"
	for _, tc := range []struct{ field, how, want string }{
		{"sync", "502", "the Dagger engine fake went away during the gate: its session answered 502 Bad Gateway (unexpected EOF)"},
		{"sync", "eof", "the Dagger engine fake went away during the gate: the connection to its session was cut short (unexpected EOF)"},
		{"stdout", "refused", "the Dagger engine fake went away during the gate: the connection to its session failed: connection refused"},
		{"export", "eof", "the Dagger engine fake went away during the gate: the connection to its session was cut short (unexpected EOF)"},
		{"sync", "shutting", "the Dagger engine fake went away during the gate: it is shutting down"},
	} {
		t.Run(tc.field+" "+tc.how, func(t *testing.T) {
			fx := newFixture(t, goCfg(), "/p")
			fx.engine.die[tc.field] = tc.how
			res, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"go", "generate"}, Dir: t.TempDir(), Export: []string{"go.sum"}})
			var fault *EngineFault
			if !errors.As(err, &fault) {
				t.Fatalf("err = %v, want an EngineFault", err)
			}
			if err.Error() != tc.want+fix {
				t.Errorf("err = %q\nwant  %q", err, tc.want+fix)
			}
			if res.TimedOut || res.ExitCode != -1 {
				t.Errorf("result %+v: an engine fault is no result of the gate", res)
			}
		})
	}
}

// TestCancel: a cancelled parent context is a run error.
func TestCancel(t *testing.T) {
	fx := newFixture(t, goCfg(), "/p")
	fx.engine.block["sync"] = true
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	res, err := fx.runner.Exec(ctx, runner.Exec{Argv: []string{"sleep", "30"}, Dir: "/wt", Timeout: time.Minute})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res.TimedOut {
		t.Errorf("result %+v", res)
	}
}

// TestCancelWhileAskingTheEngine: a run cancelled while the engine is
// asked its version after a gate timed out (Ctrl-C) ends at once with the
// cancellation, not after the health timeout with an EngineFault blaming
// an engine that was never given the time to answer.
func TestCancelWhileAskingTheEngine(t *testing.T) {
	fx := newFixture(t, goCfg(), "/p")
	fx.runner.(*daggerRunner).healthTimeout = time.Minute
	fx.engine.block["sync"] = true
	fx.engine.block["version"] = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for !slices.ContainsFunc(fx.engine.sent(), func(q string) bool { return strings.Contains(q, "version") }) {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	_, err := fx.runner.Exec(ctx, runner.Exec{Argv: []string{"go", "build"}, Dir: "/wt", Timeout: 50 * time.Millisecond})
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Exec took %v after the cancel", d)
	}
	if !errors.Is(err, context.Canceled) || IsEngineFault(err) {
		t.Errorf("err = %v, want the cancellation and no engine fault", err)
	}
}

// TestConnectFailure: one connection attempt; its error is every Exec's.
func TestConnectFailure(t *testing.T) {
	noEngine := errors.New("no engine at tcp://10.0.0.1:1234")
	var dials atomic.Int32
	r := New(goCfg(), "/p", "fake", func(context.Context) (*dagger.Client, error) {
		dials.Add(1)
		return nil, noEngine
	})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := r.Exec(context.Background(), runner.Exec{Argv: []string{"true"}, Dir: "/wt"}); !errors.Is(err, noEngine) {
				t.Errorf("err = %v, want %v", err, noEngine)
			}
		})
	}
	wg.Wait()
	if _, err := r.Exec(context.Background(), runner.Exec{Argv: []string{"true"}, Dir: "/wt"}); !errors.Is(err, noEngine) {
		t.Errorf("later err = %v", err)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("connect called %d times, want 1", n)
	}
}

// TestConnectOnce: the session is opened on the first Exec and shared.
func TestConnectOnce(t *testing.T) {
	fx := newFixture(t, goCfg(), "/p")
	if n := fx.dials.Load(); n != 0 {
		t.Fatalf("connected before the first Exec")
	}
	for range 3 {
		if _, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"true"}, Dir: "/wt"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := fx.dials.Load(); n != 1 {
		t.Errorf("connect called %d times, want 1", n)
	}
}

// TestSessionOutlivesFirstExec: the session's context is not the first
// Exec's, so cancelling that Exec neither aborts the connection nor ends
// the session the later gates use.
func TestSessionOutlivesFirstExec(t *testing.T) {
	engine := newFakeEngine()
	release := make(chan struct{})
	var sessionCtx context.Context
	r := New(goCfg(), "/p", "fake", func(ctx context.Context) (*dagger.Client, error) {
		sessionCtx = ctx
		<-release
		return dagger.Connect(ctx, dagger.WithConn(engine))
	})
	defer r.(interface{ Close() error }).Close()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := r.Exec(ctx, runner.Exec{Argv: []string{"true"}, Dir: "/wt"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("first Exec: err = %v, want its deadline", err)
	}
	close(release)
	res, err := r.Exec(context.Background(), runner.Exec{Argv: []string{"true"}, Dir: "/wt"})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("second Exec: %+v, %v", res, err)
	}
	if sessionCtx.Err() != nil {
		t.Errorf("the session's context ended with the first Exec: %v", sessionCtx.Err())
	}
}

func TestClose(t *testing.T) {
	fx := newFixture(t, goCfg(), "/p")
	closer := fx.runner.(interface{ Close() error })
	if _, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"true"}, Dir: "/wt"}); err != nil {
		t.Fatal(err)
	}
	if err := closer.Close(); err != nil {
		t.Fatal(err)
	}
	if !fx.engine.closed {
		t.Error("the engine connection is still open")
	}
	if err := closer.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"true"}, Dir: "/wt"}); err == nil {
		t.Error("Exec after Close succeeded")
	}

	unused := newFixture(t, goCfg(), "/p")
	if err := unused.runner.(interface{ Close() error }).Close(); err != nil || unused.dials.Load() != 0 {
		t.Errorf("Close of an unconnected runner: err %v, %d dials", err, unused.dials.Load())
	}
}

// TestExport: each file is exported from the container's workdir after the
// exec to the same path in the worktree, whose parent directories exist
// beforehand. The fake cannot write the bytes (the engine does, through the
// session); the live suite checks them.
func TestExport(t *testing.T) {
	wt := t.TempDir()
	fx := newFixture(t, goCfg(), "/p")
	fx.engine.exitCode = 1
	res, err := fx.runner.Exec(context.Background(), runner.Exec{
		Argv:   []string{"go", "mod", "tidy"},
		Dir:    wt,
		Export: []string{"go.sum", filepath.Join("gen", "api", "types.go")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 1 {
		t.Errorf("result %+v", res)
	}
	pipeline := strings.TrimSuffix(fx.syncQuery(t), ".sync")
	for _, want := range []string{
		pipeline + `.file(path:"/src/go.sum").export(path:` + strconv.Quote(filepath.Join(wt, "go.sum")) + `)`,
		pipeline + `.file(path:"/src/gen/api/types.go").export(path:` + strconv.Quote(filepath.Join(wt, "gen", "api", "types.go")) + `)`,
	} {
		if !contains(fx.engine.recorded(), want) {
			t.Errorf("no query %s\nin %q", want, fx.engine.recorded())
		}
	}
	if fi, err := os.Stat(filepath.Join(wt, "gen", "api")); err != nil || !fi.IsDir() {
		t.Errorf("parent directory not created: %v", err)
	}
}

func TestExportErrors(t *testing.T) {
	fx := newFixture(t, goCfg(), "/p")
	fx.engine.fail["export"] = "lstat /src/go.sum: no such file or directory"
	_, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"true"}, Dir: t.TempDir(), Export: []string{"go.sum"}})
	if err == nil || !strings.Contains(err.Error(), "export go.sum") {
		t.Errorf("missing file: err = %v, want one naming go.sum", err)
	}

	for _, p := range []string{"../outside", "/etc/passwd"} {
		fx := newFixture(t, goCfg(), "/p")
		_, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"true"}, Dir: "/wt", Export: []string{p}})
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("export %q: err = %v", p, err)
		}
		if fx.dials.Load() != 0 {
			t.Errorf("export %q: connected before rejecting it", p)
		}
	}
}

func TestBadConfig(t *testing.T) {
	for name, cfg := range map[string]*config.DaggerRunner{
		"no base":          {Workdir: "/src"},
		"two bases":        {From: "x", Rootfs: "y", Workdir: "/src"},
		"relative workdir": {From: "x", Workdir: "src"},
	} {
		fx := newFixture(t, cfg, "/p")
		if _, err := fx.runner.Exec(context.Background(), runner.Exec{Argv: []string{"true"}, Dir: "/wt"}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	fx := newFixture(t, goCfg(), "/p")
	if _, err := fx.runner.Exec(context.Background(), runner.Exec{Dir: "/wt"}); err == nil {
		t.Error("empty argv: no error")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

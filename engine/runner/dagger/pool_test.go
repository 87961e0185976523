package dagger

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"dagger.io/dagger"

	"github.com/set-engine/set/engine/runner"
)

// poolConn is one engine of a test pool: a fakeEngine that a test can
// take down (every request fails at once, as to an engine that went away)
// and whose gates it can hold (a sync waits until hold is closed or its
// request ends). It counts the syncs, that is the gates, running on it
// and the most that ran at once.
type poolConn struct {
	*fakeEngine
	name    string
	dead    atomic.Bool
	hold    chan struct{} // nil: syncs do not wait; set before use
	arrived chan string   // gets name for every sync that arrives

	mu            sync.Mutex
	running, most int
	syncs         int
	closes        atomic.Int32 // sessions closed (clients closed over this connection)
}

func (c *poolConn) Close() error {
	c.closes.Add(1)
	return c.fakeEngine.Close()
}

func newPoolConn(name string, arrived chan string) *poolConn {
	return &poolConn{fakeEngine: newFakeEngine(), name: name, arrived: arrived}
}

func (c *poolConn) Do(req *http.Request) (*http.Response, error) {
	if c.dead.Load() {
		return nil, errors.New("dial tcp: connection refused")
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	if !bytes.Contains(body, []byte("{sync}")) {
		return c.fakeEngine.Do(req)
	}
	c.mu.Lock()
	c.running++
	c.syncs++
	c.most = max(c.most, c.running)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.running--
		c.mu.Unlock()
	}()
	c.arrived <- c.name
	if c.hold != nil {
		select {
		case <-c.hold:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	if c.dead.Load() {
		return nil, errors.New("unexpected EOF")
	}
	return c.fakeEngine.Do(req)
}

// counts returns the gates running now, the most at once and all so far.
func (c *poolConn) counts() (running, most, syncs int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running, c.most, c.syncs
}

func (c *poolConn) connect(ctx context.Context) (*dagger.Client, error) {
	return dagger.Connect(ctx, dagger.WithConn(c))
}

// lockedBuffer is a log that gates write to at once; wrote, when not
// nil, gets a value (if it has room) after each write.
type lockedBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{}
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	defer func() {
		select {
		case l.wrote <- struct{}{}:
		default:
		}
	}()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// poolFixture is a pool of two fake engines, tcp://a and tcp://b, with
// no health timer: a test asks for health checks with checkAll.
type poolFixture struct {
	a, b    *poolConn
	arrived chan string
	pool    *pool
	log     *lockedBuffer
}

func newPoolFixture(t *testing.T, parA, parB int, configure func(fx *poolFixture)) *poolFixture {
	t.Helper()
	fx := &poolFixture{arrived: make(chan string, 100), log: &lockedBuffer{}}
	fx.a, fx.b = newPoolConn("tcp://a", fx.arrived), newPoolConn("tcp://b", fx.arrived)
	engines := []PoolEngine{
		{Name: "tcp://a", Parallelism: parA, Connect: fx.a.connect},
		{Name: "tcp://b", Parallelism: parB, Connect: fx.b.connect},
	}
	if configure != nil {
		configure(fx)
	}
	fx.pool = newPool(goCfg(), "/p", engines, fx.log, 0, 100*time.Millisecond)
	t.Cleanup(func() { fx.pool.Close() })
	return fx
}

// gates runs n gates at once and returns their errors, failing t on a
// gate that did not pass.
func (fx *poolFixture) gates(t *testing.T, n int) []error {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res, err := fx.pool.Exec(context.Background(), runner.Exec{Argv: []string{"go", "test"}, Dir: "/wt/change", Timeout: time.Minute})
			if err == nil && res.ExitCode != 0 {
				err = errors.New("exit code not 0")
			}
			errs[i] = err
		})
	}
	wg.Wait()
	return errs
}

// await waits for n syncs to arrive and counts them by engine.
func (fx *poolFixture) await(t *testing.T, n int) map[string]int {
	t.Helper()
	got := map[string]int{}
	timeout := time.After(10 * time.Second)
	for range n {
		select {
		case name := <-fx.arrived:
			got[name]++
		case <-timeout:
			t.Fatalf("only %v of %d gates reached an engine", got, n)
		}
	}
	return got
}

func noErrors(t *testing.T, errs []error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Errorf("gate %d: %v", i, err)
		}
	}
}

// TestPoolSpreadsGates: gates one after the other take turns on two idle
// engines, and gates at once fill both.
func TestPoolSpreadsGates(t *testing.T) {
	fx := newPoolFixture(t, 4, 4, nil)
	for range 6 {
		noErrors(t, fx.gates(t, 1))
	}
	if got := fx.await(t, 6); got["tcp://a"] != 3 || got["tcp://b"] != 3 {
		t.Errorf("gates one after another ran %v, want 3 on each engine", got)
	}

	fx.a.hold, fx.b.hold = make(chan struct{}), make(chan struct{})
	done := make(chan []error)
	go func() { done <- fx.gates(t, 4) }()
	if got := fx.await(t, 4); got["tcp://a"] != 2 || got["tcp://b"] != 2 {
		t.Errorf("4 gates at once ran %v, want 2 on each engine", got)
	}
	close(fx.a.hold)
	close(fx.b.hold)
	noErrors(t, <-done)
	log := fx.log.String()
	for _, line := range []string{"setctl: go test (in change) → tcp://a\n", "setctl: go test (in change) → tcp://b\n"} {
		if !strings.Contains(log, line) {
			t.Errorf("log lacks %q:\n%s", line, log)
		}
	}
}

// TestPoolParallelism: an engine never runs more gates at once than its
// parallelism; the other gates wait for a slot, and then all pass.
func TestPoolParallelism(t *testing.T) {
	fx := newPoolFixture(t, 1, 2, func(fx *poolFixture) {
		fx.a.hold, fx.b.hold = make(chan struct{}), make(chan struct{})
	})
	done := make(chan []error)
	go func() { done <- fx.gates(t, 7) }()
	if got := fx.await(t, 3); got["tcp://a"] != 1 || got["tcp://b"] != 2 {
		t.Errorf("with every slot taken the engines run %v, want 1 on tcp://a and 2 on tcp://b", got)
	}
	fx.pool.mu.Lock()
	waiting := 0
	for _, en := range fx.pool.engines {
		waiting += len(en.gates)
	}
	fx.pool.mu.Unlock()
	if waiting != 3 {
		t.Errorf("%d gates hold a slot, want 3", waiting)
	}
	close(fx.a.hold)
	close(fx.b.hold)
	noErrors(t, <-done)
	_, mostA, syncsA := fx.a.counts()
	_, mostB, syncsB := fx.b.counts()
	if mostA > 1 || mostB > 2 {
		t.Errorf("at most %d at once on tcp://a (parallelism 1) and %d on tcp://b (parallelism 2)", mostA, mostB)
	}
	if syncsA+syncsB != 7 {
		t.Errorf("%d gates ran, want 7", syncsA+syncsB)
	}
}

// TestPoolEngineFailsHealthCheck: an engine that does not answer its
// health check mid-run loses the gates running on it to the other
// engine, where they pass; it takes no gate until it answers again, then
// takes gates again.
func TestPoolEngineFailsHealthCheck(t *testing.T) {
	fx := newPoolFixture(t, 2, 2, func(fx *poolFixture) {
		fx.a.hold, fx.b.hold = make(chan struct{}), make(chan struct{})
	})
	done := make(chan []error)
	go func() { done <- fx.gates(t, 4) }()
	if got := fx.await(t, 4); got["tcp://a"] != 2 {
		t.Fatalf("gates ran %v, want 2 on each engine", got)
	}
	fx.a.dead.Store(true)
	close(fx.b.hold)
	fx.pool.checkAll(context.Background())
	noErrors(t, <-done)
	_, _, syncsA := fx.a.counts()
	if syncsA != 2 {
		t.Errorf("tcp://a got %d gates, want the 2 it held", syncsA)
	}
	// Its session ended with its last gate (a stopping engine waits for
	// its sessions to end): no gate runs on it, and it comes back, if it
	// does, on a new one.
	if n := fx.a.closes.Load(); n != 1 {
		t.Errorf("tcp://a's session closed %d times once its gates moved, want 1", n)
	}
	log := fx.log.String()
	for _, want := range []string{
		"setctl: tcp://a is down: it did not answer its health check: dial tcp: connection refused; its gates go to the other engines until it answers one\n",
		"setctl: go test (in change) stopped on tcp://a, which did not answer its health check: dial tcp: connection refused; it runs again on tcp://b\n",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}

	// While down, tcp://a takes nothing, and a check that fails again
	// keeps it down.
	fx.pool.checkAll(context.Background())
	noErrors(t, fx.gates(t, 3))
	if _, _, n := fx.a.counts(); n != syncsA {
		t.Errorf("tcp://a ran %d gates while down", n-syncsA)
	}

	// Once it answers, it takes gates again.
	fx.a.dead.Store(false)
	close(fx.a.hold)
	fx.pool.checkAll(context.Background())
	noErrors(t, fx.gates(t, 2))
	if _, _, n := fx.a.counts(); n == syncsA {
		t.Errorf("tcp://a took no gate after it answered again")
	}
	if !strings.Contains(fx.log.String(), "setctl: tcp://a answers again: it takes gates\n") {
		t.Errorf("log does not say tcp://a came back:\n%s", fx.log.String())
	}
}

// TestPoolGateMovesOnEngineFault: a gate whose engine stops answering
// under it (its timeout expires and the engine answers no version query)
// runs again on the other engine, and passes there.
func TestPoolGateMovesOnEngineFault(t *testing.T) {
	fx := newPoolFixture(t, 1, 1, func(fx *poolFixture) {
		fx.a.block["sync"], fx.a.block["version"] = true, true
	})
	res, err := fx.pool.Exec(context.Background(), runner.Exec{Argv: []string{"go", "build"}, Dir: "/wt/change", Timeout: 100 * time.Millisecond})
	if err != nil || res.ExitCode != 0 || res.TimedOut {
		t.Fatalf("gate: %+v, %v; want it passed on tcp://b", res, err)
	}
	if got := fx.await(t, 2); got["tcp://a"] != 1 || got["tcp://b"] != 1 {
		t.Errorf("the gate ran %v, want once on each engine", got)
	}
	want := "setctl: go build (in change) stopped on tcp://a, which stopped answering during the gate: it did not answer a version query within 100ms; it runs again on tcp://b\n"
	if !strings.Contains(fx.log.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, fx.log.String())
	}
}

// TestPoolNoEngineLeft: a gate that every engine failed under, and a gate
// that finds every engine down after asking them again, are run errors
// naming every engine, never verdicts.
func TestPoolNoEngineLeft(t *testing.T) {
	t.Run("every engine fails under the gate", func(t *testing.T) {
		fx := newPoolFixture(t, 1, 1, func(fx *poolFixture) {
			for _, c := range []*poolConn{fx.a, fx.b} {
				c.block["sync"], c.block["version"] = true, true
			}
		})
		_, err := fx.pool.Exec(context.Background(), runner.Exec{Argv: []string{"go", "build"}, Dir: "/wt/change", Timeout: 100 * time.Millisecond})
		want := "no Dagger engine is left to run the gate on:" +
			"\n  the Dagger engine tcp://a stopped answering during the gate: it did not answer a version query within 100ms" +
			"\n  the Dagger engine tcp://b stopped answering during the gate: it did not answer a version query within 100ms" +
			"\n  fix: check that the engines of runner.dagger.hosts run and answer " +
			"(`_EXPERIMENTAL_DAGGER_RUNNER_HOST=URL dagger core version` asks the one at URL its version), or remove those that are gone, " +
			"then run `setctl apply` again: the run resumes and runs the gate again, without spending a retry"
		if err == nil || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
		if !IsEngineFault(err) {
			t.Errorf("%T is not an engine fault", err)
		}
		for _, line := range []string{
			"setctl: go build (in change) stopped on tcp://a, which stopped answering during the gate: it did not answer a version query within 100ms; it runs again on tcp://b\n",
			"setctl: go build (in change) stopped on tcp://b, which stopped answering during the gate: it did not answer a version query within 100ms; no engine is left for it\n",
		} {
			if !strings.Contains(fx.log.String(), line) {
				t.Errorf("log lacks %q:\n%s", line, fx.log)
			}
		}
	})
	t.Run("every engine down", func(t *testing.T) {
		fx := newPoolFixture(t, 1, 1, nil)
		fx.a.dead.Store(true)
		fx.b.dead.Store(true)
		fx.pool.checkAll(context.Background())
		_, err := fx.pool.Exec(context.Background(), runner.Exec{Argv: []string{"go", "build"}, Dir: "/wt/change"})
		var none *NoEngineError
		if !errors.As(err, &none) {
			t.Fatalf("err = %v, want a NoEngineError", err)
		}
		if len(none.Faults) != 2 {
			t.Fatalf("faults %v, want one per engine", none.Faults)
		}
		for i, name := range []string{"tcp://a", "tcp://b"} {
			f := none.Faults[i]
			if f.Engine != name || f.What != "still does not answer" || !strings.Contains(f.Error(), "connection refused") {
				t.Errorf("fault %d = %v, want %s still not answering (asked again before giving up)", i, f, name)
			}
		}
		if _, _, n := fx.a.counts(); n != 0 {
			t.Errorf("a gate reached a down engine")
		}
	})
}

// TestPoolEngineDownAtStart: an engine that did not answer before the run
// takes no gate until a health check finds it answers.
func TestPoolEngineDownAtStart(t *testing.T) {
	arrived := make(chan string, 100)
	a, b := newPoolConn("tcp://a", arrived), newPoolConn("tcp://b", arrived)
	p := newPool(goCfg(), "/p", []PoolEngine{
		{Name: "tcp://a", Parallelism: 4, Connect: a.connect, Down: errors.New("connection refused")},
		{Name: "tcp://b", Parallelism: 4, Connect: b.connect},
	}, nil, 0, 100*time.Millisecond)
	defer p.Close()
	fx := &poolFixture{a: a, b: b, arrived: arrived, pool: p, log: &lockedBuffer{}}
	noErrors(t, fx.gates(t, 2))
	if got := fx.await(t, 2); got["tcp://b"] != 2 {
		t.Errorf("gates ran %v, want both on tcp://b", got)
	}
	p.checkAll(context.Background())
	noErrors(t, fx.gates(t, 1))
	if got := fx.await(t, 1); got["tcp://a"] != 1 {
		t.Errorf("after tcp://a answered, the next gate ran on %v, want tcp://a", got)
	}
}

// TestPoolHealthTimer: with a period, the pool checks its engines by
// itself while gates run, and Close stops it.
func TestPoolHealthTimer(t *testing.T) {
	arrived := make(chan string, 100)
	a := newPoolConn("tcp://a", arrived)
	log := &lockedBuffer{wrote: make(chan struct{}, 1)}
	p := newPool(goCfg(), "/p", []PoolEngine{{Name: "tcp://a", Parallelism: 1, Connect: a.connect}}, log, time.Millisecond, 100*time.Millisecond)
	if _, err := p.Exec(context.Background(), runner.Exec{Argv: []string{"true"}, Dir: "/wt/change"}); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(10 * time.Second)
	logs := func(want string) {
		t.Helper()
		for !strings.Contains(log.String(), want) {
			select {
			case <-log.wrote:
			case <-timeout:
				t.Fatalf("the log never said %q:\n%s", want, log.String())
			}
		}
	}
	a.dead.Store(true)
	logs("setctl: tcp://a is down")
	a.dead.Store(false)
	logs("setctl: tcp://a answers again")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Exec(context.Background(), runner.Exec{Argv: []string{"true"}, Dir: "/wt/change"}); !errors.Is(err, errClosed) {
		t.Errorf("Exec after Close: %v", err)
	}
}

// TestPoolCloseDuringHealthCheck: Close ends a health check that waits
// for a silent engine's version at once, not after the health timeout.
func TestPoolCloseDuringHealthCheck(t *testing.T) {
	a := newPoolConn("tcp://a", make(chan string, 100))
	a.block["version"] = true
	p := newPool(goCfg(), "/p", []PoolEngine{{Name: "tcp://a", Parallelism: 1, Connect: a.connect}}, nil, 0, time.Minute)
	checked := make(chan struct{})
	go func() {
		p.checkAll(context.Background())
		close(checked)
	}()
	for !slices.ContainsFunc(a.sent(), func(q string) bool { return strings.Contains(q, "version") }) {
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Close took %v: it waited for the health check's timeout", d)
	}
	select {
	case <-checked:
	case <-time.After(10 * time.Second):
		t.Fatal("the health check outlived Close")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if down := p.engines[0].down; down != nil {
		t.Errorf("a check cut short by Close marked the engine down: %v", down)
	}
}

// TestPoolLogHasNoEscapes: the Dagger log's lines about an engine that
// failed hold no terminal escape, whatever the engine's error held.
func TestPoolLogHasNoEscapes(t *testing.T) {
	fx := newPoolFixture(t, 1, 1, nil)
	fx.pool.engines[0].Connect = func(context.Context) (*dagger.Client, error) {
		return nil, errors.New("\x1b[31mconnection refused\x1b[0m")
	}
	fx.pool.engines[0].sess = fx.pool.newSession(fx.pool.engines[0])
	noErrors(t, fx.gates(t, 1))
	log := fx.log.String()
	if strings.ContainsAny(log, "\x1b\x07") {
		t.Errorf("the log holds terminal escapes:\n%q", log)
	}
	if !strings.Contains(log, "setctl: tcp://a is down: it could not be reached: dagger runner: connecting to the engine: connection refused;") {
		t.Errorf("the log does not say why tcp://a is down:\n%s", log)
	}
}

// TestGateNameClipsWholeCharacters: a long command is clipped in the log
// between characters, never inside one, so the log stays valid UTF-8.
func TestGateNameClipsWholeCharacters(t *testing.T) {
	got := gateName(runner.Exec{Argv: []string{"go", "test", "-run", strings.Repeat("é", 70)}, Dir: "/wt/change"})
	want := "go test -run " + strings.Repeat("é", 44) + "... (in change)"
	if got != want {
		t.Errorf("gateName = %q, want %q", got, want)
	}
}

// TestPoolHealthCheckSessionSlow: an engine whose session does not open
// within its time fails its health check saying so, not with a bare
// "context deadline exceeded".
func TestPoolHealthCheckSessionSlow(t *testing.T) {
	fx := newPoolFixture(t, 1, 1, nil)
	fx.pool.sessionStart = 50 * time.Millisecond
	fx.pool.engines[0].Connect = func(ctx context.Context) (*dagger.Client, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	fx.pool.engines[0].sess = fx.pool.newSession(fx.pool.engines[0])
	fx.pool.checkAll(context.Background())
	want := "setctl: tcp://a is down: it did not answer its health check: its session did not open within 50ms; its gates go to the other engines until it answers one\n"
	if !strings.Contains(fx.log.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, fx.log)
	}
}

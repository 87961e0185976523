package dagger

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"dagger.io/dagger"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/runner"
)

// HealthEvery is how often a pool asks each of its engines its version
// while gates run: an engine that stopped answering loses its gates to
// the others within HealthEvery plus HealthTimeout, not at their
// timeouts, and an engine that failed is tried again as often.
const HealthEvery = 30 * time.Second

// PoolEngine is one engine of NewPool.
type PoolEngine struct {
	// Name names the engine in the log and in errors: its runner-host URL.
	Name string
	// Parallelism is how many gates run on the engine at once; below 1
	// counts as 1.
	Parallelism int
	// Connect opens a new session with the engine (see New). The pool
	// calls it again, for a new session, when the engine failed and is
	// asked whether it answers again.
	Connect func(ctx context.Context) (*dagger.Client, error)
	// Down, when not nil, is why the engine did not answer before the
	// run: it takes no gate until a health check finds it answers.
	Down error
}

// NewPool returns a runner that runs gates on several Dagger engines, each
// through its own session, as New runs them on one. Its invariants:
//
//   - A gate goes to the engine that answers and runs the fewest gates
//     for its parallelism (the one that has run fewer gates, on a tie;
//     then the first); while every such engine runs its parallelism's
//     worth, the gate waits.
//   - An engine is down from the moment a gate fails under it (an
//     EngineFault, or its session cannot be opened) or it does not answer
//     a health check (its version, within HealthTimeout), until a health
//     check on a new session finds it answers. A down engine takes no
//     gate, and the gates running on it are stopped.
//   - A gate an engine failed under runs again, from the start, on another
//     engine; it runs at most once per engine (a gate that takes down
//     every engine it meets does not go round them for ever).
//   - A gate that finds no engine left (every one down, after being asked
//     again, or already failed under it) returns a *NoEngineError, an
//     engine fault naming every engine: a run error, never a verdict.
//
// From the first gate on, every engine, down or not, is asked whether it
// answers every HealthEvery. log gets a line for each gate
// (which engine it went to), each engine that goes down or comes back,
// and each gate that moves. The returned runner is an io.Closer; whoever
// created it must call Close, which ends every session.
func NewPool(cfg *config.DaggerRunner, root string, engines []PoolEngine, log io.Writer) runner.Runner {
	return newPool(cfg, root, engines, log, HealthEvery, HealthTimeout)
}

// newPool is NewPool with its timing: every is the health check's period
// (0: no timer, the caller calls checkAll), timeout its deadline.
func newPool(cfg *config.DaggerRunner, root string, engines []PoolEngine, log io.Writer, every, timeout time.Duration) *pool {
	if cfg == nil {
		cfg = &config.DaggerRunner{}
	}
	if log == nil {
		log = io.Discard
	}
	ctx, stop := context.WithCancel(context.Background())
	p := &pool{cfg: cfg, root: root, log: log, healthEvery: every, healthTimeout: timeout, sessionStart: SessionStartTimeout,
		ctx: ctx, stop: stop, changed: make(chan struct{})}
	for _, e := range engines {
		en := &poolEngine{PoolEngine: e, gates: map[*gateRun]bool{}}
		en.Parallelism = max(en.Parallelism, 1)
		en.sess = p.newSession(en)
		if e.Down != nil {
			en.down = &EngineFault{Engine: e.Name, What: "did not answer before the run", Err: e.Down}
		}
		p.engines = append(p.engines, en)
	}
	return p
}

// pool is the runner NewPool returns.
type pool struct {
	cfg           *config.DaggerRunner
	root          string
	healthEvery   time.Duration
	healthTimeout time.Duration
	// sessionStart bounds a health check's wait for its session to open
	// (SessionStartTimeout; shorter in tests).
	sessionStart time.Duration

	logMu sync.Mutex
	log   io.Writer

	// ctx ends with Close: health checks and the timer stop with it. It
	// carries the values of the first Exec's context once the timer starts
	// (see start), so that sessions a check opens are recorded as a
	// gate's are.
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup // health checks and the timer

	mu      sync.Mutex
	engines []*poolEngine
	started bool // the timer runs
	closed  bool
	// changed is closed, and replaced, whenever a gate may find an engine
	// it did not find before: a gate ended, a check ended.
	changed chan struct{}
}

// poolEngine is one engine and what the pool knows of it; every field
// after PoolEngine is guarded by pool.mu.
type poolEngine struct {
	PoolEngine
	sess     *poolSession
	down     *EngineFault      // why it takes no gate; nil while it answers
	checking bool              // a health check of it runs
	gates    map[*gateRun]bool // the gates running on it
	ran      int               // gates started on it
}

// poolSession is one session with an engine, and the gates running on it.
// An engine's session is replaced when the engine comes back after
// failing; the old one is closed once its last gate has ended.
type poolSession struct {
	r       *daggerRunner
	gates   int
	retired bool
}

// gateRun is one gate on one engine.
type gateRun struct {
	engine *poolEngine
	sess   *poolSession
	ctx    context.Context
	cancel context.CancelCauseFunc // stops the gate when its engine goes down
}

// NoEngineError is a gate that found no engine left to run on: every
// engine of the pool is down or failed under the gate. Like an
// EngineFault (IsEngineFault holds), it is a run error.
type NoEngineError struct {
	// Faults says, for every engine, what it did.
	Faults []*EngineFault
}

func (e *NoEngineError) Error() string {
	var b strings.Builder
	b.WriteString("no Dagger engine is left to run the gate on:")
	for _, f := range e.Faults {
		b.WriteString("\n  " + f.cause())
	}
	b.WriteString("\n  fix: " + noEngineFix)
	return b.String()
}

// noEngineFix is what to do when no engine of a pool is left: the engines
// are runner.dagger.hosts', which `dagger core version` alone does not ask.
const noEngineFix = "check that the engines of runner.dagger.hosts run and answer " +
	"(`_EXPERIMENTAL_DAGGER_RUNNER_HOST=URL dagger core version` asks the one at URL its version), or remove those that are gone, " +
	"then run `setctl apply` again: the run resumes and runs the gate again, without spending a retry"

func (e *NoEngineError) Unwrap() []error {
	out := make([]error, len(e.Faults))
	for i, f := range e.Faults {
		out[i] = f
	}
	return out
}

var _ io.Closer = (*pool)(nil)

func (*pool) Name() string { return Name }

func (p *pool) newSession(en *poolEngine) *poolSession {
	r := New(p.cfg, p.root, en.Name, en.Connect).(*daggerRunner)
	r.healthTimeout = p.healthTimeout
	return &poolSession{r: r}
}

// logf writes a line to the log, without terminal escapes (an engine's
// error may hold them).
func (p *pool) logf(format string, args ...any) {
	line := runner.StripEscapes(fmt.Sprintf("setctl: "+format+"\n", args...))
	p.logMu.Lock()
	defer p.logMu.Unlock()
	io.WriteString(p.log, line)
}

// notify wakes the gates waiting for an engine. Call with p.mu held.
func (p *pool) notify() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// Exec runs e on an engine of the pool (see NewPool for which), as a
// daggerRunner runs it, and on another when that engine fails under it.
func (p *pool) Exec(ctx context.Context, e runner.Exec) (runner.ExecResult, error) {
	res := runner.ExecResult{ExitCode: -1, Base: p.cfg.Base()}
	if len(e.Argv) == 0 {
		return res, errors.New("dagger runner: empty argv")
	}
	p.start(ctx)
	failed := map[*poolEngine]*EngineFault{} // engines that failed under this gate
	stopped := ""                            // how the gate's last engine failed under it, for the log
	for {
		g, err := p.acquire(ctx, failed)
		var none *NoEngineError
		switch {
		case err != nil && stopped != "" && errors.As(err, &none):
			p.logf("%s; no engine is left for it", stopped)
		case err != nil && stopped != "":
			p.logf("%s; it does not run again: %v", stopped, err)
		case stopped != "":
			p.logf("%s; it runs again on %s", stopped, g.engine.Name)
		}
		if err != nil {
			return res, err
		}
		p.logf("%s → %s", gateName(e), g.engine.Name)
		res, err = p.run(ctx, g, e)
		var fault *EngineFault
		if err == nil || ctx.Err() != nil || !errors.As(err, &fault) {
			p.release(g)
			return res, err
		}
		// Down before the slot is free, so that no gate takes it first.
		failed[g.engine] = fault
		p.down(g.engine, g.sess, fault)
		p.release(g)
		stopped = fmt.Sprintf("%s stopped on %s, which %s", gateName(e), g.engine.Name, fault.reason())
	}
}

// run runs e on g's session. A gate stopped because its engine went down
// returns that engine's fault; so does a session that cannot be opened.
func (p *pool) run(ctx context.Context, g *gateRun, e runner.Exec) (runner.ExecResult, error) {
	res := runner.ExecResult{ExitCode: -1, Base: p.cfg.Base()}
	if _, err := g.sess.r.session(g.ctx); err != nil {
		if f := faultOf(g.ctx); f != nil {
			return res, f
		}
		if ctx.Err() != nil {
			return res, err
		}
		return res, &EngineFault{Engine: g.engine.Name, What: "could not be reached", Err: err}
	}
	res, err := g.sess.r.Exec(g.ctx, e)
	if f := faultOf(g.ctx); err != nil && f != nil {
		return res, f
	}
	return res, err
}

// faultOf is the EngineFault that stopped ctx, nil if none did.
func faultOf(ctx context.Context) *EngineFault {
	var f *EngineFault
	if errors.As(context.Cause(ctx), &f) {
		return f
	}
	return nil
}

// acquire waits for an engine the gate can run on and reserves a slot
// on it. failed are the engines that failed under the gate already; they
// are not tried again. When no other engine answers, every down one is
// asked again, once, before the gate gives up.
func (p *pool) acquire(ctx context.Context, failed map[*poolEngine]*EngineFault) (*gateRun, error) {
	asked := false
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, errClosed
		}
		var best *poolEngine
		wait := false // an engine may yet take the gate: it is busy or being checked
		for _, en := range p.engines {
			switch {
			case failed[en] != nil, en.down != nil && !en.checking:
			case en.checking || len(en.gates) >= en.Parallelism:
				wait = true
			case best == nil || en.before(best):
				best = en
			}
		}
		if best != nil {
			g := &gateRun{engine: best, sess: best.sess}
			g.ctx, g.cancel = context.WithCancelCause(ctx)
			best.gates[g] = true
			best.ran++
			best.sess.gates++
			p.mu.Unlock()
			return g, nil
		}
		if !wait {
			if asked {
				err := p.noEngine(failed)
				p.mu.Unlock()
				return nil, err
			}
			asked = true
			for _, en := range p.engines {
				if failed[en] == nil && en.down != nil {
					p.check(ctx, en)
				}
			}
			p.mu.Unlock()
			continue
		}
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("dagger runner: waiting for an engine: %w", context.Cause(ctx))
		}
	}
}

// before reports whether en should take a gate before o: it runs fewer
// gates for its parallelism, or as many and has run fewer. Call with
// pool.mu held.
func (en *poolEngine) before(o *poolEngine) bool {
	a, b := len(en.gates)*o.Parallelism, len(o.gates)*en.Parallelism
	if a != b {
		return a < b
	}
	return en.ran < o.ran
}

// noEngine is the error of a gate that found no engine left. Call with
// p.mu held.
func (p *pool) noEngine(failed map[*poolEngine]*EngineFault) error {
	var faults []*EngineFault
	for _, en := range p.engines {
		switch {
		case failed[en] != nil:
			faults = append(faults, failed[en])
		case en.down != nil:
			faults = append(faults, en.down)
		}
	}
	return &NoEngineError{Faults: faults}
}

// release ends g's hold on its engine and session.
func (p *pool) release(g *gateRun) {
	g.cancel(nil)
	p.mu.Lock()
	delete(g.engine.gates, g)
	g.sess.gates--
	closeIt := g.sess.retired && g.sess.gates == 0
	p.notify()
	p.mu.Unlock()
	if closeIt {
		p.closeSession(g.engine, g.sess)
	}
}

// down marks en down for fault, unless the session the fault happened on
// is no longer en's (en came back since), stops the gates running on it
// so that they run again elsewhere, and retires the session: it ends as
// soon as no gate runs on it (now, or as the last stopped gate leaves),
// since an engine that comes back does so on a new session. An engine
// that is stopping (SIGTERM) waits for its sessions to end before it
// exits, so a session kept open would hold it until the run ends.
func (p *pool) down(en *poolEngine, sess *poolSession, fault *EngineFault) {
	p.mu.Lock()
	if en.sess != sess || en.down != nil {
		p.mu.Unlock()
		return
	}
	en.down = fault
	for g := range en.gates {
		g.cancel(fault)
	}
	sess.retired = true
	closeIt := sess.gates == 0
	p.notify()
	p.logf("%s is down: it %s; its gates go to the other engines until it answers one", en.Name, fault.reason())
	p.mu.Unlock()
	if closeIt {
		p.closeSession(en, sess)
	}
}

// start starts the health checks' timer, once, with ctx's values.
func (p *pool) start(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started || p.closed || p.healthEvery <= 0 {
		return
	}
	p.started = true
	p.wg.Go(func() {
		t := time.NewTicker(p.healthEvery)
		defer t.Stop()
		for {
			select {
			case <-p.ctx.Done():
				return
			case <-t.C:
				p.checkAll(ctx)
			}
		}
	})
}

// checkAll asks every engine not being asked already whether it answers,
// and returns once they have all said.
func (p *pool) checkAll(ctx context.Context) {
	p.mu.Lock()
	var checks []chan struct{}
	for _, en := range p.engines {
		if !en.checking && !p.closed {
			checks = append(checks, p.check(ctx, en))
		}
	}
	p.mu.Unlock()
	for _, done := range checks {
		<-done
	}
}

// check starts a health check of en, which no check is running on, and
// returns a channel closed when it has ended. An engine that answers is
// asked on its session; a down engine on a new one, which replaces the
// old when the engine answers. ctx gives the check its values (the
// session's PID directory), not its end: the check ends within its
// timeouts, or at Close. Call with p.mu held.
func (p *pool) check(ctx context.Context, en *poolEngine) chan struct{} {
	en.checking = true
	sess, wasDown := en.sess, en.down != nil
	if wasDown {
		sess = p.newSession(en)
	}
	done := make(chan struct{})
	p.notify()
	p.wg.Go(func() {
		defer close(done)
		cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		defer cancel()
		stop := context.AfterFunc(p.ctx, cancel)
		defer stop()
		err := p.answers(cctx, sess.r)

		p.mu.Lock()
		en.checking = false
		p.notify()
		switch {
		case p.ctx.Err() != nil:
			// Close cut the check short: it says nothing of the engine.
			p.mu.Unlock()
			if wasDown {
				p.closeSession(en, sess)
			}
		case err == nil && wasDown:
			old := en.sess
			en.sess, en.down = sess, nil
			old.retired = true
			closeOld := old.gates == 0
			p.mu.Unlock()
			p.logf("%s answers again: it takes gates", en.Name)
			if closeOld {
				p.closeSession(en, old)
			}
		case err == nil:
			p.mu.Unlock()
		case wasDown:
			en.down = &EngineFault{Engine: en.Name, What: "still does not answer", Err: err}
			p.mu.Unlock()
			p.closeSession(en, sess)
		default:
			p.mu.Unlock()
			p.down(en, sess, &EngineFault{Engine: en.Name, What: "did not answer its health check", Err: err})
		}
	})
	return done
}

// answers opens r's session, or waits for it, within p.sessionStart and
// asks the engine its version within the health timeout; ctx ending
// (Close) cuts either short.
func (p *pool) answers(ctx context.Context, r *daggerRunner) error {
	sctx, cancel := context.WithTimeout(ctx, p.sessionStart)
	defer cancel()
	client, err := r.session(sctx)
	switch {
	case err != nil && ctx.Err() == nil && sctx.Err() != nil:
		return fmt.Errorf("its session did not open within %s", p.sessionStart)
	case err != nil:
		return err
	}
	return answers(ctx, client, p.healthTimeout)
}

// closeSession closes a session no gate uses any more, logging a failure.
func (p *pool) closeSession(en *poolEngine, s *poolSession) {
	if err := s.r.Close(); err != nil {
		p.logf("closing the Dagger session with %s: %v", en.Name, err)
	}
}

// Close stops the health checks and ends every session. It is safe to
// call more than once; every Exec after it fails.
func (p *pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.notify()
	p.mu.Unlock()
	p.stop()
	p.wg.Wait()
	var errs []error
	for _, en := range p.engines {
		if err := en.sess.r.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing the Dagger session with %s: %w", en.Name, err))
		}
	}
	return errors.Join(errs...)
}

// gateName names a gate in the log: its command, clipped, and the
// worktree it runs in (the change's name).
func gateName(e runner.Exec) string {
	cmd := strings.Join(e.Argv, " ")
	if r := []rune(cmd); len(r) > 60 {
		cmd = string(r[:57]) + "..."
	}
	return fmt.Sprintf("%s (in %s)", cmd, filepath.Base(e.Dir))
}

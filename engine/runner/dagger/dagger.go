// Package dagger runs gate commands in containers of one Dagger engine
// session. Every gate of a run shares the session; each gate gets a fresh
// container built from the configured base with the change's worktree
// mounted at the workdir. The worktree is read from the host for every
// gate, a rootfs or tarball base and the mounts once per run. The
// container sees only the runner's configured environment and the gate's
// own variables, never the host's. NewPool spreads the gates over several
// engines, a session with each.
//
// The package is named after the runner; it imports the Dagger SDK
// (dagger.io/dagger) under the same name, so inside this package
// dagger.Client is the SDK's client.
package dagger

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"dagger.io/dagger"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/runner"
)

// Name is the dagger runner's name.
const Name = "dagger"

// alwaysExcluded are the worktree paths that never enter a container: the
// git metadata and the engine's own run state.
var alwaysExcluded = []string{".git", rundir.Name}

// loadPatience is how long a gate waits for the run's load of the base
// or a mount before it asks the engine whether it still answers; it waits
// on while it does.
const loadPatience = 30 * time.Second

// errTimedOut is the cause of a gate's context when its timeout expires; it
// tells a timeout (a gate failure) from a cancellation (a run error).
var errTimedOut = errors.New("gate timed out")

// errClosed is returned by Exec after Close.
var errClosed = errors.New("dagger runner: closed")

// New returns a runner that runs gates in containers of one Dagger engine
// session, shared by all gates (the client is safe for concurrent use).
// root is the project root: relative rootfs, tarball and mount sources
// resolve against it.
//
// connect is called at most once, on the first Exec; its outcome is kept, so
// a failed connection is the run error of every Exec. The session outlives
// the Exec that opened it: connect gets a context that carries that Exec's
// values (such as proc's PID directory) but not its cancellation, and
// Close ends it by closing the client (for Connector's, within seconds).
// engine names the engine connect reaches, for the EngineFault of a gate
// it failed under. The returned runner is an io.Closer; whoever created
// it must call Close. A nil cfg gives a runner whose every Exec fails for
// want of a base.
func New(cfg *config.DaggerRunner, root, engine string, connect func(ctx context.Context) (*dagger.Client, error)) runner.Runner {
	if cfg == nil {
		cfg = &config.DaggerRunner{}
	}
	return &daggerRunner{cfg: cfg, root: root, engine: engine, connect: connect, done: make(chan struct{}),
		healthTimeout: HealthTimeout, loadPatience: loadPatience}
}

// daggerRunner is the runner.Runner a config.DaggerRunner configures.
type daggerRunner struct {
	cfg     *config.DaggerRunner
	root    string
	engine  string // names the engine, for EngineFault
	connect func(ctx context.Context) (*dagger.Client, error)
	// healthTimeout bounds the version query that follows a timed-out
	// gate (HealthTimeout; shorter in tests).
	healthTimeout time.Duration
	// loadPatience is how long a gate waits for a load of the run
	// before it asks the engine whether it still answers (loadPatience;
	// shorter in tests).
	loadPatience time.Duration

	mu      sync.Mutex
	started bool               // the connection attempt has begun
	closed  bool               // Close was called
	cancel  context.CancelFunc // ends the session's context; set once started

	// sctx is the session's context, set once started: the connection
	// and the loads of the base and the mounts run on it.
	sctx context.Context

	// done is closed when the connection attempt has ended; client and err
	// are written before and only read after.
	done   chan struct{}
	client *dagger.Client
	err    error

	// base is the rootfs or tarball base, and mounts the mounts' source
	// directories by host path, each read from the host once per run
	// (see build).
	base   onceLoads[*dagger.Container]
	mounts onceLoads[*dagger.Directory]
}

var _ io.Closer = (*daggerRunner)(nil)

func (*daggerRunner) Name() string { return Name }

// session returns the shared client, starting the connection on first use.
// The wait is bounded by ctx; the attempt itself is not, so a later Exec
// can still use a connection an earlier, cancelled one started.
func (r *daggerRunner) session(ctx context.Context) (*dagger.Client, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, errClosed
	}
	if !r.started {
		r.started = true
		sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		r.sctx, r.cancel = sctx, cancel
		go func() {
			c, err := r.connect(sctx)
			switch {
			case err != nil:
				err = fmt.Errorf("dagger runner: connecting to the engine: %w", err)
			case c == nil:
				err = errors.New("dagger runner: connecting to the engine: no client")
			}
			r.client, r.err = c, err
			close(r.done)
		}()
	}
	r.mu.Unlock()
	select {
	case <-r.done:
		return r.client, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("dagger runner: waiting for the engine: %w", context.Cause(ctx))
	}
}

// Close ends the engine session: it aborts a connection still being made
// and closes the client if there is one. It is safe to call more than once;
// every Exec after it fails.
func (r *daggerRunner) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	started := r.started
	r.mu.Unlock()
	if !started {
		return nil
	}
	defer r.cancel()
	select {
	case <-r.done:
	default:
		r.cancel()
		<-r.done
	}
	if r.client == nil {
		return nil
	}
	return r.client.Close()
}

// Exec runs e.Argv in a fresh container (see build for what it holds).
//
// The result maps the engine's answer as follows:
//   - ExitCode is the command's own, zero or not (the exec expects any exit
//     code, so a failing command is a result, never an error).
//   - Output is the tail (runner.OutputCap) of stdout followed by stderr:
//     Dagger buffers the two streams apart, so the order in which the
//     command interleaved them is lost. e.Log gets both streams in full,
//     each under a header line.
//   - Base is the configured base (config.DaggerRunner.Base).
//
// e.Timeout bounds everything after the connection (building the container,
// the command, reading its output, exporting files); connecting to the
// engine is the runner's business: the wait is bounded by ctx, the
// connection by connect (Connector gives the CLI SessionStartTimeout to
// open its session). When the timeout expires the engine is asked its
// version (within healthTimeout): if it answers, the result has TimedOut
// set, ExitCode -1 and a nil error (the gate's own timeout); if not, the
// error is an *EngineFault, since a gate cannot be blamed for an engine
// that stopped answering under it. An engine that went away under the
// gate (the session's connection refused, reset or cut short, the
// session answering 502, 503 or 504, its CLI exited) is an *EngineFault
// too.
// Any other failure of the engine or the SDK, a cancelled ctx, or a file of
// e.Export that cannot be copied back is a returned error. No error
// holds a terminal escape, whatever the engine or the CLI wrote.
func (r *daggerRunner) Exec(ctx context.Context, e runner.Exec) (runner.ExecResult, error) {
	res, err := r.exec(ctx, e)
	return res, plainError(err)
}

// exec is Exec, with the errors as the engine and the SDK gave them.
func (r *daggerRunner) exec(ctx context.Context, e runner.Exec) (runner.ExecResult, error) {
	res := runner.ExecResult{ExitCode: -1, Base: r.cfg.Base()}
	if err := r.check(e); err != nil {
		return res, err
	}
	client, err := r.session(ctx)
	if err != nil {
		return res, err
	}

	start := time.Now()
	l, err := r.load(ctx, client)
	if err != nil {
		res.Duration = time.Since(start)
		switch {
		case IsEngineFault(err):
			return res, err
		case ctx.Err() != nil:
			return res, fmt.Errorf("dagger runner: %s: %w", e.Argv[0], context.Cause(ctx))
		}
		return res, r.failed(e, err)
	}
	gctx, cancel := ctx, context.CancelFunc(func() {})
	if e.Timeout > 0 {
		gctx, cancel = context.WithTimeoutCause(ctx, e.Timeout, errTimedOut)
	}
	defer cancel()
	out, err := r.run(gctx, client, e, l)
	res.Duration = time.Since(start)
	switch {
	case err == nil:
	case errors.Is(context.Cause(gctx), errTimedOut):
		return r.timedOut(ctx, client, e, res)
	case ctx.Err() != nil:
		return res, fmt.Errorf("dagger runner: %s: %w", e.Argv[0], context.Cause(ctx))
	default:
		return res, r.failed(e, err)
	}

	res.ExitCode = out.exitCode
	res.Output = combinedTail(out.stdout, out.stderr)
	var logErr error
	if e.Log != nil {
		logErr = writeLog(e.Log, out.stdout, out.stderr)
	}
	err = r.export(gctx, out.ctr, e)
	res.Duration = time.Since(start)
	if err != nil {
		if errors.Is(context.Cause(gctx), errTimedOut) {
			res.ExitCode = -1
			return r.timedOut(ctx, client, e, res)
		}
		if cause := wentAway(err); cause != nil {
			res.ExitCode = -1
			return res, r.goneFault(cause)
		}
		return res, err
	}
	if logErr != nil {
		return res, fmt.Errorf("writing the log of %s: %w", e.Argv[0], logErr)
	}
	return res, nil
}

// timedOut is the outcome of a gate whose timeout expired: its own
// timeout when the engine still answers, an EngineFault when it does not,
// and ctx's cause, as for any gate, when ctx ends while the engine is
// asked.
func (r *daggerRunner) timedOut(ctx context.Context, client *dagger.Client, e runner.Exec, res runner.ExecResult) (runner.ExecResult, error) {
	if err := answers(ctx, client, r.healthTimeout); err != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("dagger runner: %s: %w", e.Argv[0], context.Cause(ctx))
		}
		return res, &EngineFault{Engine: r.engine, What: "stopped answering during the gate", Err: err}
	}
	res.TimedOut = true
	return res, nil
}

// failed is the error of a gate the engine could not run: an
// EngineFault when the engine went away under it, else the engine's
// error, naming the command.
func (r *daggerRunner) failed(e runner.Exec, err error) error {
	if cause := wentAway(err); cause != nil {
		return r.goneFault(cause)
	}
	return fmt.Errorf("dagger runner: %s: %w", e.Argv[0], err)
}

// goneFault is the EngineFault of an engine that went away under a gate,
// for cause (see the function wentAway).
func (r *daggerRunner) goneFault(cause error) error {
	return &EngineFault{Engine: r.engine, What: "went away during the gate", Err: cause}
}

// check rejects what no engine could run, before connecting.
func (r *daggerRunner) check(e runner.Exec) error {
	if len(e.Argv) == 0 {
		return errors.New("dagger runner: empty argv")
	}
	bases := 0
	for _, s := range []string{r.cfg.From, r.cfg.Rootfs, r.cfg.Tarball} {
		if s != "" {
			bases++
		}
	}
	if bases != 1 {
		return errors.New("dagger runner: exactly one of from, rootfs and tarball must be set")
	}
	if !path.IsAbs(r.workdir()) {
		return fmt.Errorf("dagger runner: workdir %q is not an absolute path", r.cfg.Workdir)
	}
	for _, p := range e.Export {
		if !filepath.IsLocal(p) {
			return fmt.Errorf("dagger runner: export %q: not a relative path inside the worktree", p)
		}
	}
	return nil
}

// workdir is where the worktree is mounted: the configured one, or the
// schema's default when the config was built without it.
func (r *daggerRunner) workdir() string {
	if r.cfg.Workdir == "" {
		return "/src"
	}
	return r.cfg.Workdir
}

// hostPath resolves a host path of the config against the project root
// (config.DaggerRunner.HostPath).
func (r *daggerRunner) hostPath(p string) string { return r.cfg.HostPath(r.root, p) }

// execOutput is what the engine reported about one exec.
type execOutput struct {
	ctr            *dagger.Container // the container after the exec
	exitCode       int
	stdout, stderr string
}

// load returns what the gate builds on that the run loads once: the base
// and the mounts, loaded by the first gate that needs them and waited for
// by waitLoad, before the gate's timeout starts (the time a load takes is
// the run's, not the gate's). ctx bounds the wait, not the loads.
//
// Every host path (the worktree, a rootfs, a tarball, a mount) is read with
// noCache, so that the engine's cache is decided by content, never by
// path. Without noCache the engine keeps host.directory and host.file for
// the whole session by their arguments, that is by path: every gate of a
// run after the first on the same worktree (the retry after the agent
// fixed the code, the integration stack after main was merged in) would
// run on the first upload. With noCache the engine reads the path again
// each time (the call gets a random cache input) and addresses the result
// by a digest of its content: an unchanged path gives the same digest, so
// the engine's cache still serves the containers and execs built on it,
// and a changed one gives a new digest, so they run again. A digest
// computed here would have to read every file of a rootfs to decide the
// same thing.
//
// The worktree is read that way for every gate: it is what changes
// between gates. The base and the mounts are read that way once per run
// (r.base, r.mounts; see onceLoads): the first gate that needs one loads
// it (the rootfs or tarball as a synced base container, a mount's source
// as a synced directory) and every later gate builds on that object. The
// engine gives the SDK an ID for it that names the result it holds for
// the session, not the call that made it, so using it again reads
// nothing from the host; the engine's cache still knows the result by its
// content digest. Reading a large rootfs or GOROOT again cost every gate
// hundreds of milliseconds even when all else was cached. So a gate sees
// the base and the mounts as they were when the run first needed them;
// a base changed during a run is seen by the next run (a new session),
// which reads it again. Writable mounts (readOnly: false) are shared too:
// a gate writes into its own snapshot of the mount, never into the loaded
// directory, so every gate starts from the same content. A from base
// reads nothing from the host; the engine resolves the image reference
// as it always did.
func (r *daggerRunner) load(ctx context.Context, client *dagger.Client) (loaded, error) {
	// Every load starts before the first wait, so that the base and the
	// mounts a run has not loaded yet load together.
	var base *onceLoad[*dagger.Container]
	switch {
	case r.cfg.Rootfs != "":
		p := r.hostPath(r.cfg.Rootfs)
		base = r.startBase("rootfs "+p, func() *dagger.Container {
			return client.Container().WithRootfs(client.Host().Directory(p, dagger.HostDirectoryOpts{NoCache: true}))
		})
	case r.cfg.Tarball != "":
		p := r.hostPath(r.cfg.Tarball)
		base = r.startBase("tarball "+p, func() *dagger.Container {
			return client.Container().Import(client.Host().File(p, dagger.HostFileOpts{NoCache: true}))
		})
	}
	mountPaths := slices.Sorted(maps.Keys(r.cfg.Mounts))
	mounts := make([]*onceLoad[*dagger.Directory], len(mountPaths))
	for i, p := range mountPaths {
		src := r.hostPath(r.cfg.Mounts[p].Source)
		mounts[i] = r.mounts.start(r.sctx, src, func(ctx context.Context) (*dagger.Directory, error) {
			dir, err := client.Host().Directory(src, dagger.HostDirectoryOpts{NoCache: true}).Sync(ctx)
			if err != nil {
				return nil, fmt.Errorf("loading %s, the source of the mount %s: %w", src, p, err)
			}
			return dir, nil
		})
	}

	var l loaded
	if base != nil {
		ctr, err := waitLoad(ctx, r, client, base)
		if err != nil {
			return loaded{}, err
		}
		l.base = ctr
	}
	l.mounts = make([]*dagger.Directory, len(mounts))
	for i, m := range mounts {
		dir, err := waitLoad(ctx, r, client, m)
		if err != nil {
			return loaded{}, err
		}
		l.mounts[i] = dir
	}
	return l, nil
}

// startBase starts the run's load of its base (what, e.g. "rootfs
// /srv/rootfs", names it in an error), the container ctr makes, unless it
// is loaded or under way (see onceLoads).
func (r *daggerRunner) startBase(what string, ctr func() *dagger.Container) *onceLoad[*dagger.Container] {
	return r.base.start(r.sctx, "", func(ctx context.Context) (*dagger.Container, error) {
		synced, err := ctr().Sync(ctx)
		if err != nil {
			return nil, fmt.Errorf("loading the %s: %w", what, err)
		}
		return synced, nil
	})
}

// loaded is what a gate builds on that the run loads once: the base
// container (nil for a from base) and the mounts' directories, in the
// sorted order of their container paths.
type loaded struct {
	base   *dagger.Container
	mounts []*dagger.Directory
}

// waitLoad waits for a load of the run however long it takes while the
// engine answers: a large rootfs sent to a cold engine can take longer
// than a gate's timeout, and that time is the run's, never the gate's.
// Every loadPatience without an outcome the engine is asked its version;
// one that does not answer is an EngineFault.
func waitLoad[T any](ctx context.Context, r *daggerRunner, client *dagger.Client, a *onceLoad[T]) (T, error) {
	for {
		pctx, cancel := context.WithTimeoutCause(ctx, r.loadPatience, errStillLoading)
		v, err := a.wait(pctx)
		cancel()
		if !errors.Is(err, errStillLoading) || ctx.Err() != nil {
			return v, err
		}
		if err := answers(ctx, client, r.healthTimeout); err != nil {
			var zero T
			if ctx.Err() != nil {
				return zero, context.Cause(ctx)
			}
			return zero, &EngineFault{Engine: r.engine, What: "stopped answering while it loaded the run's base", Err: err}
		}
	}
}

// errStillLoading ends one round of waitLoad's patience.
var errStillLoading = errors.New("the load is still under way")

// build returns the container a gate runs in, in this order: the base
// (as loaded, l); the worktree (minus .git, .set and cfg.Exclude) mounted
// at the workdir, which is also the working directory; cfg.Env overlaid
// by e.Vars; the cache volumes; the extra mounts (caches and mounts come
// after the worktree so that one may sit inside it); then the command,
// expecting any exit code. Maps are applied in sorted key order, so the
// same gate always yields the same query and the engine can reuse its
// cache. See load for what is read from the host, and when.
func (r *daggerRunner) build(client *dagger.Client, e runner.Exec, l loaded) *dagger.Container {
	ctr := client.Container()
	if l.base == nil {
		ctr = ctr.From(r.cfg.From)
	} else {
		ctr = l.base
	}

	// A mounted (not copied) worktree: the exec's writes to it stay in the
	// container's snapshot, where export reads them back.
	exclude := append(slices.Clone(alwaysExcluded), r.cfg.Excluded()...)
	wd := r.workdir()
	ctr = ctr.
		WithMountedDirectory(wd, client.Host().Directory(e.Dir, dagger.HostDirectoryOpts{Exclude: exclude, NoCache: true})).
		WithWorkdir(wd)

	env := maps.Clone(r.cfg.Env)
	if env == nil {
		env = map[string]string{}
	}
	maps.Copy(env, e.Vars)
	for _, k := range slices.Sorted(maps.Keys(env)) {
		ctr = ctr.WithEnvVariable(k, env[k])
	}
	for _, p := range slices.Sorted(maps.Keys(r.cfg.Caches)) {
		ctr = ctr.WithMountedCache(p, client.CacheVolume(r.cfg.Caches[p]))
	}
	// Dagger mounts a snapshot of the host directory, so no mount ever
	// writes to the host. readOnly: true makes the mount read-only in the
	// container too; readOnly: false lets the gate write into its own
	// snapshot, and those writes are dropped with the container.
	for i, p := range slices.Sorted(maps.Keys(r.cfg.Mounts)) {
		ctr = ctr.WithMountedDirectory(p, l.mounts[i], dagger.ContainerWithMountedDirectoryOpts{ReadOnly: r.cfg.Mounts[p].ReadOnly})
	}
	return ctr.WithExec(e.Argv, dagger.ContainerWithExecOpts{Expect: dagger.ReturnTypeAny})
}

// run evaluates the container and reads back how the exec ended: one query
// that runs everything (Sync), then three small reads of the synced
// container, issued together.
func (r *daggerRunner) run(ctx context.Context, client *dagger.Client, e runner.Exec, l loaded) (execOutput, error) {
	synced, err := r.build(client, e, l).Sync(ctx)
	if err != nil {
		return execOutput{}, err
	}
	out := execOutput{ctr: synced}
	var wg sync.WaitGroup
	var codeErr, stdoutErr, stderrErr error
	wg.Go(func() { out.exitCode, codeErr = synced.ExitCode(ctx) })
	wg.Go(func() { out.stdout, stdoutErr = synced.Stdout(ctx) })
	wg.Go(func() { out.stderr, stderrErr = synced.Stderr(ctx) })
	wg.Wait()
	if err := errors.Join(codeErr, stdoutErr, stderrErr); err != nil {
		return execOutput{}, err
	}
	return out, nil
}

// export copies each of e.Export from the container's workdir, as the exec
// left it, to the same path under e.Dir, creating parent directories. The
// engine writes the file through the session to the host.
func (r *daggerRunner) export(ctx context.Context, ctr *dagger.Container, e runner.Exec) error {
	for _, p := range e.Export {
		dst := filepath.Join(e.Dir, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("dagger runner: export %s: %w", p, err)
		}
		src := path.Join(r.workdir(), filepath.ToSlash(p))
		if _, err := ctr.File(src).Export(ctx, dst); err != nil {
			return fmt.Errorf("dagger runner: export %s (%s in the container): %w", p, src, err)
		}
	}
	return nil
}

// combinedTail is the last runner.OutputCap bytes of stdout then stderr,
// with a newline between them when stdout does not end in one.
func combinedTail(stdout, stderr string) []byte {
	tail := runner.NewTail(runner.OutputCap)
	tail.Write([]byte(stdout))
	if stdout != "" && stderr != "" && !strings.HasSuffix(stdout, "\n") {
		tail.Write([]byte("\n"))
	}
	tail.Write([]byte(stderr))
	return tail.Bytes()
}

// writeLog writes both streams in full, each under a header line and ending
// in a newline.
func writeLog(w io.Writer, stdout, stderr string) error {
	var b strings.Builder
	for _, s := range []struct{ name, text string }{{"stdout", stdout}, {"stderr", stderr}} {
		b.WriteString("--- " + s.name + "\n")
		b.WriteString(s.text)
		if s.text != "" && !strings.HasSuffix(s.text, "\n") {
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

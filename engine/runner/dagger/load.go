package dagger

import (
	"context"
	"sync"
)

// onceLoads holds objects a run loads into the engine once and every later
// gate of the run reuses: the base and the mounts (see build). Each is
// loaded by a function of the session, under a key (a mount's host
// source path). What it holds names results of one engine session (the
// engine's IDs are handles into the session), so one onceLoads serves one
// session and dies with it; a new run, or another engine, loads again.
//
// Invariants:
//   - For each key, at most one load is under way at a time; every gate
//     that needs the key while it is under way waits for that load (gates
//     that start together share one read of the host).
//   - A load runs on the session's context, never on the context of the
//     gate that started it: a gate that is cancelled or times out stops
//     waiting, and the load goes on for the gates after it. So the error of
//     a load is the engine's or the host's (a missing source, an engine
//     that went away) or the session's end, never a gate's cancellation.
//     A gate waits for a load before its own timeout starts, as long as
//     the engine answers (see waitLoad): a load that never ends on an
//     engine that stopped answering is an EngineFault.
//   - Only a load that succeeded is kept, for the rest of the session. A
//     load that failed is forgotten as it ends: the gates that waited for
//     it get its error, and the next gate that needs the key loads it
//     again, as every gate did before loads were kept.
//
// The zero value is ready to use.
type onceLoads[T any] struct {
	mu    sync.Mutex
	loads map[string]*onceLoad[T]
}

// onceLoad is one attempt at loading a key. val and err are written before
// done is closed and only read after.
type onceLoad[T any] struct {
	done chan struct{}
	val  T
	err  error
}

// start returns the attempt for key: the kept one, the one under way, or a
// new one that runs load on sctx (the session's context).
func (l *onceLoads[T]) start(sctx context.Context, key string, load func(context.Context) (T, error)) *onceLoad[T] {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a := l.loads[key]; a != nil {
		return a
	}
	if l.loads == nil {
		l.loads = map[string]*onceLoad[T]{}
	}
	a := &onceLoad[T]{done: make(chan struct{})}
	l.loads[key] = a
	go func() {
		val, err := load(sctx)
		if err != nil {
			// Forgotten before done is closed: a gate that comes after
			// the failure starts a new attempt instead of getting it.
			l.mu.Lock()
			delete(l.loads, key)
			l.mu.Unlock()
		}
		a.val, a.err = val, err
		close(a.done)
	}()
	return a
}

// wait returns the outcome of the attempt, or the cause of ctx (the
// gate's) if it ends first; the attempt goes on either way.
func (a *onceLoad[T]) wait(ctx context.Context) (T, error) {
	select {
	case <-a.done:
		return a.val, a.err
	case <-ctx.Done():
		var zero T
		return zero, context.Cause(ctx)
	}
}

package dagger

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"dagger.io/dagger"
	"github.com/Khan/genqlient/graphql"

	"github.com/set-engine/set/engine/runner"
)

// HealthTimeout bounds the question that tells an engine that is slow
// from one that is gone: its version, asked after a gate timed out on it.
// An engine that answers a version query at all answers it in
// milliseconds; one that does not within this is paused, overloaded or
// unreachable.
const HealthTimeout = 10 * time.Second

// EngineFault is an engine that failed under a gate: it stopped answering
// or went away while the gate ran. It is never the gate's verdict (the
// change did nothing wrong, so no agent is told and no retry is spent):
// it is a run error, and a runner with other engines runs the gate on one
// of them instead.
type EngineFault struct {
	// Engine names the engine as the run reaches it (Engine.String).
	Engine string
	// What says what happened, for a person: "stopped answering during
	// the gate", "went away during the gate".
	What string
	// Err is what the SDK or the health check said.
	Err error
}

// Error says what happened to which engine on its first line (cause), and
// what to do on a "fix:" line: the gate never ended, so a resumed run
// runs it again (no retry was spent on it). It holds no terminal escape.
func (e *EngineFault) Error() string { return e.cause() + "\n  fix: " + engineFaultFix }

// cause is the first line of Error: which engine did what.
func (e *EngineFault) cause() string {
	return "the Dagger engine " + e.Engine + " " + e.reason()
}

// reason is what happened, without the engine's name, and without
// terminal escapes.
func (e *EngineFault) reason() string {
	if e.Err == nil {
		return e.What
	}
	return runner.StripEscapes(e.What + ": " + e.Err.Error())
}

// engineFaultFix is what to do about an engine that failed under a gate.
const engineFaultFix = "check that the engine runs and answers (`dagger core version` asks it its version), " +
	"then run `setctl apply` again: the run resumes and runs the gate again, without spending a retry"

func (e *EngineFault) Unwrap() error { return e.Err }

// IsEngineFault reports whether err is, or wraps, an EngineFault.
func IsEngineFault(err error) bool {
	var f *EngineFault
	return errors.As(err, &f)
}

// answers asks the engine of client its version within timeout: nil when
// it answers, the reason when it does not. A question that ctx cut short
// says nothing of the engine: its error wraps ctx's cause, and the caller
// tells it by ctx.Err() (a cancelled run does not wait for a silent
// engine, nor blame it).
func answers(ctx context.Context, client *dagger.Client, timeout time.Duration) error {
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := client.Version(qctx)
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("asking the engine its version: %w", context.Cause(ctx))
	case qctx.Err() != nil:
		return fmt.Errorf("it did not answer a version query within %s", timeout)
	case err != nil:
		return err
	case v == "":
		return errors.New("it answered a version query with an empty version")
	}
	return nil
}

// causeError is a short cause, for a person, of the error it wraps.
type causeError struct {
	cause string
	err   error
}

func (e *causeError) Error() string { return e.cause }
func (e *causeError) Unwrap() error { return e.err }

// wentAway tells an engine that went away under a request from any other
// failure: the connection to the session refused, reset or cut short (the
// session CLI is gone, see sessionEndedError), the session answering
// 502, 503 or 504 because the engine behind it is gone, or the engine
// answering that it is shutting down (engineShuttingDown). It returns a
// short cause for a person, and nil for any other error (an image that
// cannot be pulled, a path that does not exist: the engine answered).
func wentAway(err error) error {
	if err == nil {
		return nil
	}
	var ended *sessionEndedError
	if errors.As(err, &ended) {
		return &causeError{ended.Error(), err}
	}
	var gqlErr interface {
		error
		Extensions() map[string]any
	}
	if errors.As(err, &gqlErr) && gqlErr.Error() == engineShuttingDown {
		return &causeError{"it is shutting down", err}
	}
	var httpErr *graphql.HTTPError
	if errors.As(err, &httpErr) {
		switch httpErr.StatusCode {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			cause := fmt.Sprintf("its session answered %d %s", httpErr.StatusCode, http.StatusText(httpErr.StatusCode))
			if len(httpErr.Response.Errors) > 0 {
				cause += " (" + lastCause(httpErr.Response.Errors[0].Message) + ")"
			}
			return &causeError{cause, err}
		}
		return nil
	}
	for _, errno := range []syscall.Errno{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EPIPE, syscall.ECONNABORTED} {
		if errors.Is(err, errno) {
			return &causeError{"the connection to its session failed: " + errno.Error(), err}
		}
	}
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &causeError{"the connection to its session was cut short (unexpected EOF)", err}
	case errors.Is(err, io.EOF):
		return &causeError{"the connection to its session closed (EOF)", err}
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return &causeError{"the connection to its session failed: " + lastCause(opErr.Error()), err}
	}
	return nil
}

// engineShuttingDown is the whole message of the GraphQL error an engine
// answers a call with when it cancels the call because it is stopping
// (SIGTERM: a graceful stop, an upgrade, its node draining); the SDK
// gives it as an error with Extensions whose text is that message.
const engineShuttingDown = "engine is shutting down"

// plainError is err with a text free of terminal escapes (see
// runner.StripEscapes): err itself when its text has none, else an error
// that wraps it.
func plainError(err error) error {
	if err == nil {
		return nil
	}
	if msg := err.Error(); runner.StripEscapes(msg) != msg {
		return &causeError{runner.StripEscapes(msg), err}
	}
	return err
}

// lastCause is the innermost cause of an error text whose causes are
// joined by ": " ("http do: Post \"http://dagger/query\": unexpected EOF"
// gives "unexpected EOF").
func lastCause(msg string) string {
	msg = strings.TrimSpace(msg)
	if i := strings.LastIndex(msg, ": "); i >= 0 && i+2 < len(msg) {
		return msg[i+2:]
	}
	return msg
}

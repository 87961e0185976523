package dagger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"dagger.io/dagger"
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

func (e *EngineFault) Error() string {
	msg := fmt.Sprintf("the Dagger engine %s %s", e.Engine, e.What)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *EngineFault) Unwrap() error { return e.Err }

// IsEngineFault reports whether err is, or wraps, an EngineFault.
func IsEngineFault(err error) bool {
	var f *EngineFault
	return errors.As(err, &f)
}

// answers asks the engine of client its version within timeout: nil when
// it answers, the reason when it does not.
func answers(ctx context.Context, client *dagger.Client, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	v, err := client.Version(ctx)
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("it did not answer a version query within %s", timeout)
	case err != nil:
		return err
	case v == "":
		return errors.New("it answered a version query with an empty version")
	}
	return nil
}

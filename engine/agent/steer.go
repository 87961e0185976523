package agent

import (
	"context"
	"fmt"
	"time"
)

// Steering is how the sentinel steers the loop of one change. The loop
// tells it what the agent does (an iteration starts and ends, output, the
// command it runs); the sentinel stops an iteration by cancelling its
// context with a *Stop as the cause, or leaves a Stop for the loop to take
// at the next iteration boundary.
type Steering interface {
	// Iteration returns the context iteration n of the agent runs on,
	// derived from ctx, and the function the loop calls once the agent's
	// process has ended. (How it ended, the sentinel reads from the
	// iteration's AGENT_ITERATION.)
	Iteration(ctx context.Context, n int) (context.Context, func())
	// Take returns the stop decided since it was last taken, nil if none.
	Take() *Stop
	// Output records that the agent wrote output.
	Output()
	// Command records the command line the agent runs now ("" when it
	// runs none).
	Command(line string)
}

// Stop is what the sentinel decided for a change: a sentinel action that
// ends or interrupts its agent's work.
type Stop struct {
	// Action is "restart" (the next iteration resumes the session, after
	// Backoff), "redispatch" (a fresh session on a fresh worktree),
	// "fail" (the change fails as Fails) or "pause".
	Action  string
	Rule    string
	Fails   string
	Backoff time.Duration
	// Reason says why, for the change's status and the next prompt.
	Reason string
}

func (s *Stop) Error() string {
	return fmt.Sprintf("stopped by the sentinel (%s): %s", s.Action, s.Reason)
}

// StopOf is the sentinel's stop that ended ctx, nil when none did.
func StopOf(ctx context.Context) *Stop {
	s, _ := context.Cause(ctx).(*Stop)
	return s
}

// unsteered is the steering of a loop nobody supervises.
type unsteered struct{}

func (unsteered) Iteration(ctx context.Context, _ int) (context.Context, func()) {
	return ctx, func() {}
}
func (unsteered) Take() *Stop    { return nil }
func (unsteered) Output()        {}
func (unsteered) Command(string) {}

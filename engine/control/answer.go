package control

import (
	"context"
	"errors"

	"github.com/set-engine/set/engine/journal"
)

// AwaitAnswer waits until the journal at events holds, after sequence
// number from, the CONTROL event in which the running apply answers
// request id, and returns what it did. When ctx ends first, the error
// wraps ctx's (context.DeadlineExceeded for a wait that ran out): the
// requester says where to look instead, as the apply takes requests only
// between its steps.
func AwaitAnswer(ctx context.Context, events string, from int64, id string) (journal.ControlData, error) {
	var answer journal.ControlData
	errAnswered := errors.New("answered")
	err := journal.Follow(ctx, events, from, func(ev journal.Event) error {
		if ev.Type != journal.Control {
			return nil
		}
		if d, err := journal.Decode[journal.ControlData](ev); err == nil && d.ID == id {
			answer = d
			return errAnswered
		}
		return nil
	})
	if errors.Is(err, errAnswered) {
		return answer, nil
	}
	return answer, err
}

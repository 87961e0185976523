package learn

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/markdown"
)

// Siblings are the gate episodes of run so far that changes other than
// change fixed (a later round of theirs passed the gate), of the gates
// in gates (the change's verify stack): what the run's other changes,
// at work beside it or done, learned that it may meet too. One episode per signature, newest
// first, at most max (max < 1: all).
//
// A signature's episode is the first one fixed: a closed episode never
// changes and no later event fixes one earlier, so once Siblings gives
// an episode for a signature, it gives the same one for every longer
// journal of the run. A prompt that handed it on can be made again,
// the same, after the run resumes.
//
// Siblings reads events the way Episodes does, so a journal holding the
// events of the types SiblingEvent names alone gives the same episodes as
// the whole journal; events of other runs are ignored. It reads them with
// no failures patterns (Episodes' patterns nil): the failures the run's
// VERIFY_GATEs recorded were named by the patterns its gates run with,
// which are the ones the changes beside them run with too.
func Siblings(events []journal.Event, run, change string, gates []string, max int) []Episode {
	var out []Episode
	for _, ep := range Episodes(events, nil) {
		if ep.Kind == EpisodeGate && ep.Run == run && ep.Change != change && ep.FixedSeq != 0 && slices.Contains(gates, ep.Gate) {
			out = append(out, ep)
		}
	}
	slices.SortStableFunc(out, func(a, b Episode) int {
		return cmp.Or(cmp.Compare(a.FixedSeq, b.FixedSeq), cmp.Compare(a.Seq, b.Seq))
	})
	seen := map[string]bool{}
	out = slices.DeleteFunc(out, func(ep Episode) bool {
		dup := seen[ep.Signature]
		seen[ep.Signature] = true
		return dup
	})
	slices.Reverse(out)
	if max > 0 && len(out) > max {
		out = out[:max]
	}
	return out
}

// SiblingEvent reports whether Siblings reads events of type t: the ones
// Episodes opens, counts and closes a gate episode by. A caller that
// keeps a run's events for Siblings (the orchestrator, per prompt) may
// keep these alone.
func SiblingEvent(t journal.Type) bool {
	switch t {
	case journal.VerifyGate, journal.MergeQueued, journal.Merged, journal.RetryScheduled, journal.AgentIteration, journal.Dispatch, journal.StateChange,
		journal.BaselineAccepted:
		return true
	}
	return false
}

// maxNoteLine bounds the failure's line a sibling note quotes, in bytes.
const maxNoteLine = 240

// SiblingNote is the line a prompt shows for a sibling's gate episode:
// the change, the gate and its stage, the failure's own line (at most
// maxNoteLine bytes) and the round that passed. Its length is bounded
// (maxNoteLine and the names), which the orchestrator's bound on a
// prompt's notes relies on.
func SiblingNote(ep Episode) string {
	line := CutLine(strings.TrimSpace(ep.Line), maxNoteLine)
	passed := "later"
	if ep.Fixed > 0 {
		passed = fmt.Sprintf("in round %d", ep.Fixed)
	}
	return fmt.Sprintf("%s: the %s gate %s failed in round %d with %s, and passed %s.", ep.Change, ep.Stage, ep.Gate, ep.Round, markdown.Code(line), passed)
}

package orchestrator

import (
	"github.com/set-engine/set/engine/agent"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/learn"
)

// The bounds of what one prompt hands on of the run's other changes: a few
// short notes, not a second retry context.
const (
	maxSiblings     = 5
	maxSiblingBytes = 2048
)

// handOnReads reports whether handOn reads events of e's kind: the
// recorder keeps those of the run (recorder.learned). BASELINE_ACCEPTED,
// which learn.Siblings reads, is an event of no change.
func handOnReads(e journal.Event) bool {
	return e.Change != "" && e.Type == journal.AgentSessionDecision || learn.SiblingEvent(e.Type)
}

// seed keeps the events of run that handOn reads, of a journal read
// before the recorder recorded any: a resumed run's, so that what its
// prompts hand on is derived from the whole run, as an uninterrupted
// run's is.
func (r *recorder) seed(events []journal.Event, run string) {
	var kept []journal.Event
	for _, e := range events {
		if e.Run == run && handOnReads(e) {
			kept = append(kept, e)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.learned = append(kept, r.learned...)
}

// siblings is what iteration n of change, whose verify stack is gates,
// hands on of the run's other changes (agent.LoopInput.Siblings), from the
// events the recorder kept: no journal is read per prompt.
func (r *recorder) siblings(change string, n int, gates []string) []agent.SiblingNote {
	r.mu.Lock()
	events := r.learned[:len(r.learned):len(r.learned)] // appended to, never changed
	run := r.st.Run
	r.mu.Unlock()
	return handOn(events, run, change, n, gates)
}

// handOn is what iteration n of change hands on of what the other
// changes of run learned (at work beside it, or merged before it
// started): their fixed gate episodes of the gates of
// its stack (learn.Siblings), newest first, at most maxSiblings notes of
// maxSiblingBytes in all, but none an earlier iteration of the change in
// this run handed on already (its AGENT_SESSION_DECISION's siblings).
//
// It is derived from the journal alone, as the retry context is: an
// iteration that was opened (its AGENT_SESSION_DECISION recorded) and
// did not end before the run stopped hands on exactly what it handed on
// then, in that order, when the resumed run does it again; learn.Siblings
// gives the same episode for a signature on every longer journal, so its
// note is the same too, and the prompt is the one the agent had.
func handOn(events []journal.Event, run, change string, n int, gates []string) []agent.SiblingNote {
	handed := map[string]bool{}
	var again []string
	opened := false
	for _, e := range events {
		if e.Change != change || e.Type != journal.AgentSessionDecision {
			continue
		}
		d, err := journal.Decode[journal.AgentSessionDecisionData](e)
		if err != nil {
			continue
		}
		switch {
		case d.Iteration < n:
			for _, s := range d.Siblings {
				handed[s] = true
			}
		case d.Iteration == n:
			again, opened = d.Siblings, true // the last one opened
		}
	}
	episodes := learn.Siblings(events, run, change, gates, 0)
	var out []agent.SiblingNote
	if opened {
		bySignature := map[string]learn.Episode{}
		for _, ep := range episodes {
			bySignature[ep.Signature] = ep
		}
		for _, s := range again {
			if ep, ok := bySignature[s]; ok {
				out = append(out, agent.SiblingNote{Signature: s, Note: learn.SiblingNote(ep)})
			}
		}
		return out
	}
	size := 0
	for _, ep := range episodes {
		if handed[ep.Signature] {
			continue
		}
		note := learn.SiblingNote(ep)
		if len(out) == maxSiblings || size+len(note) > maxSiblingBytes {
			break
		}
		size += len(note)
		out = append(out, agent.SiblingNote{Signature: ep.Signature, Note: note})
	}
	return out
}

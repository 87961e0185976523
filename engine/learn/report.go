package learn

import (
	"fmt"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/history"
	"github.com/set-engine/set/engine/journal"
)

// Standing is where one adopted learning stands, as setctl learn
// --report and the dashboard's Learnings page show it: how often the
// failure it answers (its signature) recurred before and after the run
// that adopted it, and whether its removal is proposed.
//
// Invariants: a learning is adopted in the first run whose RUN_STARTED
// names it (journal.RunStartedData.Learnings), and every episode of its
// signature counts exactly once, in Before when its run came before that
// run (or no run adopted it yet) and in After otherwise. Nothing here
// removes a learning: Remove proposes it, a person's commit does it.
type Standing struct {
	// Name, Kind and Signature are the learning's, as set.cue has them.
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Signature string `json:"signature,omitempty"`
	// Measured is false for a learning without a signature: it is
	// enforced, but what it answers cannot be counted, and the rest of
	// its Standing is zero.
	Measured bool `json:"measured"`
	// Adopted is the ID of the run that adopted it, "" when no kept run
	// names it yet (it was committed after the latest run, or the run
	// that adopted it was pruned).
	Adopted string `json:"adopted,omitempty"`
	// Before and After count its signature's episodes in the runs before
	// the adopting run, and in that run and those after it.
	Before Recurrence `json:"before"`
	After  Recurrence `json:"after"`
	// RunsSince counts the runs since its adoption, the adopting run
	// included; Quiet those of them since its signature last recurred
	// (all of them when it has not recurred since).
	RunsSince int `json:"runsSince"`
	Quiet     int `json:"quiet"`
	// LastSeen is the run of its signature's latest episode, "" when it
	// has none in the kept runs.
	LastSeen string `json:"lastSeen,omitempty"`
	// Remove is why its removal is proposed, "" when it is not: its
	// signature matched no episode of the kept runs (there is one at
	// least), or has not recurred in the project's learn.expireAfter
	// runs since its adoption.
	Remove string `json:"remove,omitempty"`
}

// Recurrence counts the episodes of one signature in some runs: the
// runs and the changes (a change of a run counts once) they happened in,
// the retries they cost and the tokens of the agent iterations spent on
// them (Episode.Retries and Episode.Tokens summed).
type Recurrence struct {
	Episodes int   `json:"episodes"`
	Runs     int   `json:"runs"`
	Changes  int   `json:"changes"`
	Retries  int   `json:"retries"`
	Tokens   int64 `json:"tokens"`
}

// Report is the Standing of each of adopted (config.Project.Adopted,
// in that order) against the runs of events (a journal, in Seq order)
// and their episodes eps (Episodes of the same events). expireAfter is
// learn.expireAfter: the runs since its adoption a learning's signature
// may not recur before its removal is proposed (at least 1, as the
// schema has it). An episode of a run the journal does not hold counts
// nowhere.
func Report(events []journal.Event, eps []Episode, adopted []config.NamedLearning, expireAfter int) ([]Standing, error) {
	expireAfter = max(expireAfter, 1)
	runs := history.Runs(events)
	index := make(map[string]int, len(runs))
	for i, r := range runs {
		index[r.ID] = i
	}
	// adoptedAt is the index of the first run that enforced each
	// learning.
	adoptedAt := map[string]int{}
	for i, r := range runs {
		for _, e := range r.Own(events) {
			if e.Type != journal.RunStarted {
				continue
			}
			d, err := journal.Decode[journal.RunStartedData](e)
			if err != nil {
				return nil, fmt.Errorf("event %d: %w", e.Seq, err)
			}
			for _, name := range d.Learnings {
				if _, ok := adoptedAt[name]; !ok {
					adoptedAt[name] = i
				}
			}
		}
	}
	bySignature := map[string][]Episode{}
	for _, ep := range eps {
		if _, ok := index[ep.Run]; ok {
			bySignature[ep.Signature] = append(bySignature[ep.Signature], ep)
		}
	}
	out := make([]Standing, 0, len(adopted))
	for _, l := range adopted {
		s := Standing{Name: l.Name, Kind: l.Kind, Signature: l.Signature, Measured: l.Signature != ""}
		if !s.Measured {
			out = append(out, s)
			continue
		}
		at, ok := adoptedAt[l.Name]
		if !ok {
			at = len(runs) // every kept run came before it
		} else {
			s.Adopted = runs[at].ID
			s.RunsSince = len(runs) - at
		}
		var before, after counter
		last := -1
		for _, ep := range bySignature[l.Signature] {
			i := index[ep.Run]
			if i < at {
				before.add(ep)
			} else {
				after.add(ep)
			}
			last = max(last, i)
		}
		s.Before, s.After = before.Recurrence, after.Recurrence
		if last >= 0 {
			s.LastSeen = runs[last].ID
		}
		s.Quiet = s.RunsSince
		if last >= at {
			s.Quiet = len(runs) - 1 - last
		}
		switch {
		case last < 0 && len(runs) > 0:
			// (A journal without runs measures nothing.)
			s.Remove = "its signature matched no failure of the kept runs"
		case ok && s.Quiet >= expireAfter:
			s.Remove = fmt.Sprintf("its failure has not recurred in %s since %s", english.Plural(s.Quiet, "run"), quietSince(s, runs, last))
		}
		out = append(out, s)
	}
	return out, nil
}

// quietSince names what s's quiet runs followed: its adoption when its
// signature has not recurred since, else the run it last recurred in.
func quietSince(s Standing, runs []history.Run, last int) string {
	if s.After.Episodes == 0 {
		return "its adoption in " + s.Adopted
	}
	return "it last did, in " + runs[last].ID
}

// counter adds episodes up into a Recurrence, each run and each change
// of a run once.
type counter struct {
	Recurrence
	runs    map[string]bool
	changes map[[2]string]bool
}

func (c *counter) add(ep Episode) {
	if c.runs == nil {
		c.runs, c.changes = map[string]bool{}, map[[2]string]bool{}
	}
	c.Episodes++
	c.Retries += ep.Retries
	c.Tokens += ep.Tokens
	if !c.runs[ep.Run] {
		c.runs[ep.Run] = true
		c.Runs++
	}
	if k := [2]string{ep.Run, ep.Change}; !c.changes[k] {
		c.changes[k] = true
		c.Changes++
	}
}

package dashboard

import (
	"errors"
	"net/http"
	"os"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/learn"
)

// LearningsFunc reads a project's learnings as setctl learn does, from
// events, the project's whole journal (every run it keeps): what setctl
// learn proposes, and setctl learn --report's standing of each learning
// the project's set.cue adopts now. The caller must not change events.
//
// It is called on every refresh of the learnings page (one a burst of
// events): the project's configuration it needs it reads from a cache
// while set.cue's files are as they were.
type LearningsFunc func(events []journal.Event) (Learnings, error)

// Learnings is what a LearningsFunc reads.
type Learnings struct {
	// Proposals are setctl learn's, in its order; Report is setctl learn
	// --report's, one Standing per adopted learning, ordered by name.
	Proposals []learn.Proposal `json:"proposals"`
	Report    []learn.Standing `json:"report"`
	// Threshold and ExpireAfter are the project's learn settings they
	// were read with (project.learn).
	Threshold   int `json:"threshold"`
	ExpireAfter int `json:"expireAfter"`
}

// LearningsView is the learnings page's data: every run's, whatever run
// the page shows. Proposals and Report are never nil; Error says why
// they are empty (the project cannot be read now, or the dashboard was
// given no LearningsFunc).
type LearningsView struct {
	Learnings
	Error string `json:"error,omitempty"`
}

// serveLearnings serves the LearningsView of the project's journal as it
// is now.
func (s *Server) serveLearnings(w http.ResponseWriter, r *http.Request, p *served) {
	v := LearningsView{Learnings: Learnings{Proposals: []learn.Proposal{}, Report: []learn.Standing{}}}
	if p.Learnings == nil {
		v.Error = "this dashboard cannot read the project's learnings: `setctl learn` and `setctl learn --report` show them"
		writeJSON(w, v)
		return
	}
	events, err := journal.ReadFile(p.layout.Events())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		httpError(w, err)
		return
	}
	l, err := p.Learnings(events)
	if err != nil {
		v.Error = err.Error()
		writeJSON(w, v)
		return
	}
	if l.Proposals != nil {
		v.Proposals = l.Proposals
	}
	if l.Report != nil {
		v.Report = l.Report
	}
	v.Threshold, v.ExpireAfter = l.Threshold, l.ExpireAfter
	writeJSON(w, v)
}

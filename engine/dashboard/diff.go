package dashboard

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/set-engine/set/engine/git"
)

// maxDiff bounds the bytes of a diff one response carries.
const maxDiff = 1 << 20

// Diff is what one round of a change committed: the git diff From..To.
type Diff struct {
	Change  string `json:"change"`
	Stage   string `json:"stage"`
	Attempt int    `json:"attempt"`
	From    string `json:"from"`
	To      string `json:"to"`
	// Text is the patch, at most maxDiff bytes of it; Truncated says it
	// was cut there.
	Text      string `json:"text"`
	Truncated bool   `json:"truncated,omitempty"`
}

// serveDiff serves the diff of the round ?round= (a verify round's
// attempt, or with ?stage=integration an integration attempt's) of the
// change ?change= of the run ?run=: what its agent iterations committed
// (from the head the round before judged, or the branch's base, to the
// head its gates judged), or, for the integration attempt main took,
// the change's commit on main. A round whose ends the journal does not
// name has no diff (404).
func (s *Server) serveDiff(w http.ResponseWriter, r *http.Request, p *served) {
	rn, err := p.read(runOf(r))
	if err != nil {
		httpError(w, err)
		return
	}
	q := r.URL.Query()
	change, stage := q.Get("change"), q.Get("stage")
	if stage == "" {
		stage = StageVerify
	}
	attempt, err := strconv.Atoi(q.Get("round"))
	if err != nil || change == "" || (stage != StageVerify && stage != StageIntegration) {
		http.Error(w, "want ?change=CHANGE&round=N (a verify round's attempt; with &stage=integration an integration attempt's)", http.StatusBadRequest)
		return
	}
	if rn.st.Changes[change] == nil {
		http.Error(w, fmt.Sprintf("no change %q in this run", change), http.StatusNotFound)
		return
	}
	var round *Round
	for _, rd := range Rounds(eventsOf(rn.events, change)) {
		if rd.Stage == stage && rd.Attempt == attempt {
			round = &rd
		}
	}
	switch {
	case round == nil:
		http.Error(w, fmt.Sprintf("%s has no %s round %d in this run", change, stage, attempt), http.StatusNotFound)
		return
	case !round.HasDiff():
		http.Error(w, fmt.Sprintf("the journal names no commits of %s's %s round %d", change, stage, attempt), http.StatusNotFound)
		return
	}
	text, err := git.CommitDiff(r.Context(), p.Root, round.From, round.To)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	d := Diff{Change: change, Stage: stage, Attempt: attempt, From: round.From, To: round.To, Text: text}
	if len(d.Text) > maxDiff {
		cut := strings.LastIndexByte(d.Text[:maxDiff], '\n')
		d.Text, d.Truncated = d.Text[:cut+1], true
	}
	writeJSON(w, d)
}

package dashboard

import (
	"errors"
	"net/http"
	"os"
	"slices"

	"github.com/set-engine/set/engine/history"
	"github.com/set-engine/set/engine/journal"
)

// RunsView is the Runs page's data: every run the project's journal
// keeps, newest first, as history.Summaries has them. A run's
// Usage.Calls is 0 when it journaled no model call (exec agents report
// no tokens): the page says "not reported" rather than 0.
type RunsView struct {
	Runs []history.Summary `json:"runs"`
	// Latest is the ID of the journal's latest run: the one the stream
	// follows and the pages show without ?run=; "" before any run.
	Latest string `json:"latest"`
}

func (s *Server) serveRuns(w http.ResponseWriter, r *http.Request, p *served) {
	events, err := journal.ReadFile(p.layout.Events())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		httpError(w, err)
		return
	}
	live, err := p.liveness()
	if err != nil {
		httpError(w, err)
		return
	}
	runs, err := history.Summaries(events, live, s.opts.Now())
	if err != nil {
		httpError(w, err)
		return
	}
	v := RunsView{Runs: runs}
	if n := len(runs); n > 0 {
		v.Latest = runs[n-1].ID
	}
	slices.Reverse(v.Runs)
	writeJSON(w, v)
}

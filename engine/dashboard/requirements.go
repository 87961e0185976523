package dashboard

import (
	"net/http"

	"github.com/set-engine/set/engine/coverage"
	"github.com/set-engine/set/engine/spec"
	"github.com/set-engine/set/engine/state"
)

// RequirementsFunc says where every requirement of a project's spec, as
// the spec is now, stands on its main branch now: the rows `setctl plan`
// prints under "Requirements:". st is the latest run's projection (the
// state before any run when there is none): its changes' statuses say
// why pending work is pending. The caller must not change st.
//
// It is called on every refresh of the requirements page (one a burst of
// events, and every RefreshInterval while a run goes): it must answer
// from a cache while main and the project's inputs are as they were.
type RequirementsFunc func(st *state.State) ([]coverage.Row, error)

// RequirementsView is the requirements page's data.
type RequirementsView struct {
	// Rows are the requirements in the spec's order, then the removed
	// ones; Error says why there are none (the project cannot be read now,
	// or the dashboard was given no RequirementsFunc).
	Rows  []RequirementRow `json:"rows"`
	Error string           `json:"error,omitempty"`
	// Counts counts the rows by Status, "uncovered" included.
	Counts map[string]int `json:"counts"`
	// Note is what setctl plan says under the table of uncovered
	// requirements; "" when there are none.
	Note string `json:"note,omitempty"`
}

// RequirementRow is one requirement: its coverage.Row, its Status as the
// page shows it and where it stands in words, as setctl plan says it.
type RequirementRow struct {
	coverage.Row
	// Status is the Row's, or "uncovered" when its change failed for
	// good (coverage.Row.Uncovered).
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// Uncovered is the status a requirement shows when no change is at work
// on it any more: its change failed for good, or was blocked by one that
// did.
const Uncovered = "uncovered"

// serveRequirements serves the RequirementsView of main now, with the
// statuses of the latest run: a requirement is where main has it whatever
// run the page shows.
func (s *Server) serveRequirements(w http.ResponseWriter, r *http.Request, p *served) {
	v := RequirementsView{Rows: []RequirementRow{}, Counts: map[string]int{}}
	if p.Requirements == nil {
		v.Error = "this dashboard cannot read the project's spec: `setctl plan` shows where every requirement stands"
		writeJSON(w, v)
		return
	}
	rn, err := p.read("")
	if err != nil {
		httpError(w, err)
		return
	}
	rows, err := p.Requirements(rn.st)
	if err != nil {
		v.Error = err.Error()
		writeJSON(w, v)
		return
	}
	for _, row := range rows {
		status := string(row.Status)
		if row.Uncovered && row.Status != spec.Implemented {
			status = Uncovered
		}
		v.Rows = append(v.Rows, RequirementRow{Row: row, Status: status, Detail: row.Detail()})
		v.Counts[status]++
	}
	v.Note = coverage.UncoveredNote(rows)
	writeJSON(w, v)
}

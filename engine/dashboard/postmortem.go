package dashboard

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/report"
)

// Forge is a project's repository on its code forge, for links to its
// pages: cmd/setctl reads it from set.cue's delivery.forge (the
// dashboard loads no CUE). Its pages follow GitHub's layout, the one
// forge set knows.
type Forge struct {
	// Repository is the repository's web page, without a trailing slash:
	// https://github.com/owner/name.
	Repository string
}

// CommitURL is the page of the commit sha.
func (f *Forge) CommitURL(sha string) string { return f.Repository + "/commit/" + sha }

// PullRequestURL is the page of the pull request number.
func (f *Forge) PullRequestURL(number int) string {
	return f.Repository + "/pull/" + strconv.Itoa(number)
}

// Links are where a change's work can be seen: its commit on main, once
// merged, and its pull request, once it has one, on the forge when the
// project has one.
type Links struct {
	Commit    string `json:"commit,omitempty"`
	CommitURL string `json:"commitUrl,omitempty"`
	// PullRequest is the number of its pull request; 0 without one.
	PullRequest    int    `json:"pullRequest,omitempty"`
	PullRequestURL string `json:"pullRequestUrl,omitempty"`
}

// linksOf are the Links of the change c of a report, on the forge f
// (nil without one).
func linksOf(c report.Change, f *Forge) Links {
	l := Links{Commit: c.Commit}
	if pr := c.PullRequest; pr != nil {
		l.PullRequest, l.PullRequestURL = pr.Number, pr.URL
	}
	if f != nil && f.Repository != "" {
		if l.Commit != "" {
			l.CommitURL = f.CommitURL(l.Commit)
		}
		if l.PullRequest != 0 && l.PullRequestURL == "" {
			l.PullRequestURL = f.PullRequestURL(l.PullRequest)
		}
	}
	return l
}

// eventsOf are the events of change among events, in journal order.
func eventsOf(events []journal.Event, change string) []journal.Event {
	var out []journal.Event
	for _, e := range events {
		if e.Change == change {
			out = append(out, e)
		}
	}
	return out
}

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

// Band is a round of a change on the timeline: the span of time from its
// first agent iteration to its verdict and what went back to the agent,
// which the page draws behind the round's spans.
type Band struct {
	Change     string    `json:"change"`
	Stage      string    `json:"stage"`
	Attempt    int       `json:"attempt"`
	Iterations []int     `json:"iterations,omitempty"`
	Verdict    string    `json:"verdict"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
}

// bands are the rounds of every change of events (a run's journal), as
// the timeline draws them; a round still running ends at end.
func bands(events []journal.Event, end time.Time) []Band {
	byChange := map[string][]journal.Event{}
	var order []string
	for _, e := range events {
		if e.Change == "" {
			continue
		}
		if _, ok := byChange[e.Change]; !ok {
			order = append(order, e.Change)
		}
		byChange[e.Change] = append(byChange[e.Change], e)
	}
	out := []Band{}
	for _, c := range order {
		for _, r := range Rounds(byChange[c]) {
			b := Band{Change: c, Stage: r.Stage, Attempt: r.Attempt, Iterations: r.Iterations, Verdict: r.Verdict, Start: r.Start, End: r.End}
			if r.Verdict == "running" && end.After(b.End) {
				b.End = end
			}
			out = append(out, b)
		}
	}
	return out
}

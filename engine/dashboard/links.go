package dashboard

import (
	"strconv"

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

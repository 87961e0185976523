// Package forge is what set asks of a code forge in pull-request delivery
// (project.delivery.mode "pull-request"): open a pull request for a
// change's tested candidate, post its gates as commit statuses, hand it
// to the forge's merge (merge queue or auto-merge), and read back what
// became of it. The forge, not set, moves the remote's main in this mode.
//
// A Forge holds no state of the run: what set has seen of a pull request
// (which reviews and checks it already sent back to the agent) is the
// journal's, so that a resumed run neither misses nor repeats one.
// Implementations: forge/github (GitHub and GitHub Enterprise Server).
package forge

import (
	"context"
	"fmt"
	"time"
)

// Forge is one project's repository on a forge, reached with a token.
// Every method is safe for concurrent use. A refused token (401, 403 not
// for a rate limit) or an unknown repository is a *ConfigError; a rate
// limit is waited out (within the context), never an error of the change.
type Forge interface {
	// Reach asks the forge for the project's repository with the token,
	// as a run does before any work: nil when the token sees it and may
	// push to it, a *ConfigError when the forge refuses the token, does
	// not show the repository, or shows it read-only.
	Reach(ctx context.Context) error

	// Open opens a pull request from the branch pr.Head into pr.Base, or,
	// when one from pr.Head is open already (a resumed run, or a change
	// sent back and tested again), returns that one with its title and
	// body updated. Open never opens a second pull request for one head.
	Open(ctx context.Context, pr NewPullRequest) (PullRequest, error)

	// SetStatus posts a commit status on the commit sha, the candidate's.
	SetStatus(ctx context.Context, sha string, s Status) error

	// RequestMerge hands pr, whose head must still be the commit head, to
	// the forge's merge: the merge queue of its base branch when it has
	// one (enqueued with head as the expected head), else auto-merge with
	// method ("squash", "merge" or "rebase"). message is the commit
	// message the merge is to make on the base branch, where the forge
	// lets the request say it (auto-merge, a merge now; a merge queue
	// writes its own): the candidate's, whose trailer credits the change
	// on main. It returns what the forge says after the request, read
	// back: arming auto-merge is not a merge, and an enqueue may be
	// refused.
	RequestMerge(ctx context.Context, pr PullRequest, head, method, message string) (MergeRequest, error)

	// Look reads what became of pr: its state, its head, whether it is
	// in the merge queue, every review that requested changes and every
	// failed check of its head and of its merge-queue commits. Polling
	// with Look is cheap: it uses conditional requests, and a pull
	// request unchanged since the last Look costs no rate limit.
	Look(ctx context.Context, pr PullRequest) (Look, error)
}

// NewPullRequest is a pull request to open.
type NewPullRequest struct {
	// Head is the branch set pushed (set/<change>); Base is the main.
	Head, Base string
	Title      string
	// Body is markdown: the change's requirements and scenarios, the gates
	// it passed with their durations, and where the run is.
	Body string
}

// PullRequest is an open pull request set knows.
type PullRequest struct {
	// Number is the forge's number of the pull request (#Number).
	Number int `json:"number"`
	// ID is the forge's global id (GitHub's node id), for its GraphQL API.
	ID string `json:"id"`
	// URL is the pull request's page.
	URL string `json:"url"`
	// Head is the head commit when it was opened or last updated.
	Head string `json:"head"`
}

// StatusState is a commit status's state.
type StatusState string

// The states of a commit status.
const (
	StatusPending StatusState = "pending"
	StatusSuccess StatusState = "success"
	StatusFailure StatusState = "failure"
	StatusError   StatusState = "error"
)

// Status is a commit status: one gate's verdict on the candidate, which
// branch protection can require by its Context.
type Status struct {
	// Context names it: "set/<gate>".
	Context     string
	State       StatusState
	Description string
	// TargetURL may be empty.
	TargetURL string
}

// MergeWay is how the forge merges a pull request set handed to it.
type MergeWay string

// The ways a pull request is merged.
const (
	// MergeQueued: it is in its base branch's merge queue.
	MergeQueued MergeWay = "merge-queue"
	// MergeAuto: auto-merge is armed; the forge merges once the required
	// checks and reviews pass.
	MergeAuto MergeWay = "auto-merge"
)

// MergeRequest is what the forge said of a merge request, read back.
type MergeRequest struct {
	Way MergeWay `json:"way"`
	// QueueState is the merge queue entry's state (GitHub's QUEUED,
	// AWAITING_CHECKS, MERGEABLE, UNMERGEABLE, LOCKED), when Way is
	// MergeQueued.
	QueueState string `json:"queueState,omitempty"`
	// Position is the entry's place in the queue (1 is next).
	Position int `json:"position,omitempty"`
}

// State is a pull request's state.
type State string

// The states of a pull request.
const (
	Open   State = "open"
	Merged State = "merged"
	Closed State = "closed" // closed without being merged
)

// Look is what became of a pull request.
type Look struct {
	State State
	// Head is the pull request's head commit now.
	Head string
	// MergeCommit is, once Merged, the commit the forge made on the base
	// branch (a squash, merge or rebased commit: not the candidate).
	MergeCommit string
	// Queued: it is in the merge queue now.
	Queued bool
	// Conflicts: the pull request cannot be merged into its base as it
	// is: the base moved, and its changes conflict with the new one
	// (GitHub's mergeable false). No one's mistake but time's: set
	// integrates the change again onto the new base.
	Conflicts bool
	// ClosedBy and Words say, once Closed, who closed it and the last
	// words a reviewer left on it before (a review or a comment).
	ClosedBy, Words string
	// ChangesRequested is every review that requested changes, oldest
	// first (the caller keeps which it has seen, by ID).
	ChangesRequested []Review
	// FailedChecks is every check run or commit status that failed on
	// the head or on a merge-queue commit made for it, oldest first (the
	// caller keeps which it has seen, by ID). set's own statuses are not
	// among them.
	FailedChecks []Check
}

// Review is a review that requested changes.
type Review struct {
	// ID is the forge's id of the review, unique in the repository.
	ID     string
	Author string
	Body   string
	// Commit is the commit reviewed.
	Commit   string
	At       time.Time
	Comments []ReviewComment
}

// ReviewComment is a review's comment on a line.
type ReviewComment struct {
	Path string
	Line int
	Body string
}

// Check is a failed check run or commit status.
type Check struct {
	// ID is unique in the repository (a check run's id, or a status's).
	ID   string
	Name string
	// Commit is the commit it ran on: the head, or a merge-queue commit.
	Commit string
	// Conclusion is the forge's ("failure", "timed_out", "error", ...).
	Conclusion string
	// Output is what the check printed: its title, summary and text.
	Output string
	URL    string
}

// ConfigError is a forge that refuses set for its configuration: a token
// refused (401, 403 not for a rate limit), a repository it cannot see, an
// API URL that is not the forge's. Never a retry: the run stops with it.
type ConfigError struct {
	// Forge names it (the API URL) and Repository the project on it.
	Forge, Repository string
	// Status is the HTTP status, 0 when there was no answer.
	Status int
	// Message is the forge's own words.
	Message string
	// Fix says what to change, naming set.cue's field or the variable.
	Fix string
}

func (e *ConfigError) Error() string {
	s := fmt.Sprintf("the forge %s refused %s", e.Forge, e.Repository)
	if e.Status != 0 {
		s += fmt.Sprintf(" (%d)", e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/set-engine/set/engine/forge"
)

// The REST shapes read and written here (API version 2022-11-28), under
// /repos/{owner}/{repo}:
//
//	GET  /pulls?head={owner}:{branch}&state=open  [pull]
//	POST /pulls {title, head, base, body}         201 pull; 422 "A pull request already exists for …"
//	GET|PATCH /pulls/{n} {title, body, base}      pull
//	  pull: {number, node_id, html_url, state "open"|"closed", merged,
//	         merge_commit_sha, auto_merge, head {ref, sha}, base {ref}}
//	GET  /pulls/{n}/reviews                       [{id, user {login}, body, state, commit_id, submitted_at}]
//	GET  /pulls/{n}/reviews/{id}/comments         [{path, line, original_line, body}]
//	GET  /issues/{n}                              {closed_by {login}}
//	GET  /issues/{n}/comments                     [{user {login}, body, created_at}]
//	POST /statuses/{sha} {state, context, description, target_url}  201
//	GET  /commits/{sha}/status                    {statuses [{id, context, state, description, target_url}]}
//	GET  /commits/{sha}/check-runs                {total_count, check_runs [{id, name, head_sha,
//	                                               status, conclusion, html_url, completed_at,
//	                                               output {title, summary, text}}]}
//
// Lists come 100 a page, the next page in the Link header.

type user struct {
	Login string `json:"login"`
}

type pullJSON struct {
	Number         int    `json:"number"`
	NodeID         string `json:"node_id"`
	HTMLURL        string `json:"html_url"`
	State          string `json:"state"`
	Title          string `json:"title"`
	Body           string `json:"body"`
	Merged         bool   `json:"merged"`
	MergeCommitSHA string `json:"merge_commit_sha"`
	// Mergeable is null while GitHub computes it; false with
	// MergeableState "dirty" when the head conflicts with the base.
	Mergeable      *bool  `json:"mergeable"`
	MergeableState string `json:"mergeable_state"`
	// AutoMerge is not null while auto-merge is armed.
	AutoMerge *struct {
		MergeMethod string `json:"merge_method"`
	} `json:"auto_merge"`
	Head struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
	} `json:"base"`
}

func (p pullJSON) pullRequest() forge.PullRequest {
	return forge.PullRequest{Number: p.Number, ID: p.NodeID, URL: p.HTMLURL, Head: p.Head.SHA}
}

// Open opens a pull request from pr.Head into pr.Base, or updates the
// one open from pr.Head already: it asks for that one first, and a
// creation GitHub refuses because one exists (a race with another run)
// is answered by it too.
func (c *Client) Open(ctx context.Context, pr forge.NewPullRequest) (forge.PullRequest, error) {
	out, err := c.open(ctx, pr)
	return out, c.scrub(err)
}

func (c *Client) open(ctx context.Context, pr forge.NewPullRequest) (forge.PullRequest, error) {
	if p, found, err := c.openFrom(ctx, pr.Head); err != nil || found {
		if err != nil {
			return forge.PullRequest{}, err
		}
		return c.update(ctx, p, pr)
	}
	resp, err := c.do(ctx, http.MethodPost, c.repoURL("/pulls"), map[string]string{"title": pr.Title, "head": pr.Head, "base": pr.Base, "body": pr.Body})
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusUnprocessableEntity && slices.ContainsFunc(ae.Errors, func(e string) bool {
		return strings.Contains(e, "already exists")
	}) {
		p, found, err := c.openFrom(ctx, pr.Head)
		if err != nil {
			return forge.PullRequest{}, err
		}
		if !found {
			return forge.PullRequest{}, fmt.Errorf("GitHub says a pull request from %s exists, and lists none open: %w", pr.Head, ae)
		}
		return c.update(ctx, p, pr)
	}
	if err != nil {
		return forge.PullRequest{}, err
	}
	var p pullJSON
	if err := decode(resp, &p); err != nil {
		return forge.PullRequest{}, err
	}
	return p.pullRequest(), nil
}

// openFrom is the pull request open from the branch head, if any.
func (c *Client) openFrom(ctx context.Context, head string) (pullJSON, bool, error) {
	var list []pullJSON
	q := url.Values{"head": {c.owner + ":" + head}, "state": {"open"}}
	if err := getAll(ctx, c, "/pulls?"+q.Encode(), &list); err != nil {
		return pullJSON{}, false, err
	}
	for _, p := range list {
		if p.Head.Ref == head && p.State == "open" {
			return p, true, nil
		}
	}
	return pullJSON{}, false, nil
}

// update gives an open pull request pr's title, body and base, when
// they differ.
func (c *Client) update(ctx context.Context, p pullJSON, pr forge.NewPullRequest) (forge.PullRequest, error) {
	patch := map[string]string{}
	if p.Title != pr.Title {
		patch["title"] = pr.Title
	}
	if p.Body != pr.Body {
		patch["body"] = pr.Body
	}
	if pr.Base != "" && p.Base.Ref != pr.Base {
		patch["base"] = pr.Base
	}
	if len(patch) == 0 {
		return p.pullRequest(), nil
	}
	resp, err := c.do(ctx, http.MethodPatch, c.repoURL("/pulls/"+strconv.Itoa(p.Number)), patch)
	if err != nil {
		return forge.PullRequest{}, err
	}
	var updated pullJSON
	if err := decode(resp, &updated); err != nil {
		return forge.PullRequest{}, err
	}
	return updated.pullRequest(), nil
}

// maxDescription is the longest description GitHub takes in a commit
// status, in characters.
const maxDescription = 140

// SetStatus posts a commit status on sha; a description GitHub would
// refuse as too long is cut to its 140 characters.
func (c *Client) SetStatus(ctx context.Context, sha string, s forge.Status) error {
	desc := s.Description
	if r := []rune(desc); len(r) > maxDescription {
		desc = string(r[:maxDescription-1]) + "…"
	}
	in := map[string]string{"state": string(s.State), "context": s.Context, "description": desc}
	if s.TargetURL != "" {
		in["target_url"] = s.TargetURL
	}
	_, err := c.do(ctx, http.MethodPost, c.repoURL("/statuses/"+url.PathEscape(sha)), in)
	return c.scrub(err)
}

// The GraphQL operations of the merge, every argument a variable.
const (
	// pullMergeQuery reads a pull request's merge state. mergeQueueEntry
	// {state position headCommit}: MergeQueueEntryState is QUEUED,
	// AWAITING_CHECKS, MERGEABLE, UNMERGEABLE or LOCKED; headCommit is the
	// merge group commit the queue tests. autoMergeRequest is null unless
	// auto-merge is armed.
	pullMergeQuery = `query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      id state headRefOid baseRefName
      mergeQueueEntry { state position headCommit { oid } }
      autoMergeRequest { enabledAt mergeMethod }
    }
  }
}`
	// mergeQueueQuery is null when branch has no merge queue.
	mergeQueueQuery = `query($owner: String!, $name: String!, $branch: String!) {
  repository(owner: $owner, name: $name) { mergeQueue(branch: $branch) { id } }
}`
	// enqueueMutation adds a pull request to its base's merge queue,
	// refused when its head is not expectedHeadOid.
	enqueueMutation = `mutation($input: EnqueuePullRequestInput!) {
  enqueuePullRequest(input: $input) { mergeQueueEntry { state position } }
}`
	// autoMergeMutation arms auto-merge (mergeMethod MERGE, SQUASH or
	// REBASE), refused when the head is not expectedHeadOid.
	autoMergeMutation = `mutation($input: EnablePullRequestAutoMergeInput!) {
  enablePullRequestAutoMerge(input: $input) { pullRequest { autoMergeRequest { enabledAt } } }
}`
	// mergeMutation merges a pull request now, refused when the head is
	// not expectedHeadOid or branch protection does not let it merge.
	mergeMutation = `mutation($input: MergePullRequestInput!) {
  mergePullRequest(input: $input) { pullRequest { state } }
}`
	// queueLookQuery reads whether a pull request is in the merge queue,
	// with which merge group commit, and the merge group commits of its
	// removals from it (RemovedFromMergeQueueEvent.beforeCommit: the
	// commit the queue tested when it took the pull request out).
	queueLookQuery = `query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      mergeQueueEntry { state position headCommit { oid } }
      timelineItems(last: 50, itemTypes: [REMOVED_FROM_MERGE_QUEUE_EVENT]) {
        nodes { __typename ... on RemovedFromMergeQueueEvent { id createdAt reason beforeCommit { oid } } }
      }
    }
  }
}`
)

type oidJSON struct {
	OID string `json:"oid"`
}

type entryJSON struct {
	State      string   `json:"state"`
	Position   int      `json:"position"`
	HeadCommit *oidJSON `json:"headCommit"`
}

type pullMerge struct {
	Repository struct {
		PullRequest *struct {
			ID               string     `json:"id"`
			State            string     `json:"state"` // OPEN, CLOSED, MERGED
			HeadRefOid       string     `json:"headRefOid"`
			BaseRefName      string     `json:"baseRefName"`
			MergeQueueEntry  *entryJSON `json:"mergeQueueEntry"`
			AutoMergeRequest *struct {
				EnabledAt string `json:"enabledAt"`
			} `json:"autoMergeRequest"`
		} `json:"pullRequest"`
	} `json:"repository"`
}

func (c *Client) readMerge(ctx context.Context, number int) (pullMerge, error) {
	var out pullMerge
	err := c.graphql(ctx, pullMergeQuery, map[string]any{"owner": c.owner, "name": c.name, "number": number}, &out)
	if err == nil && out.Repository.PullRequest == nil {
		err = fmt.Errorf("GitHub shows no pull request #%d in %s/%s", number, c.owner, c.name)
	}
	return out, err
}

// mergeMethods are GraphQL's PullRequestMergeMethod of set's mergeMethod.
var mergeMethods = map[string]string{"squash": "SQUASH", "merge": "MERGE", "rebase": "REBASE"}

// RequestMerge hands pr to its base branch's merge queue when it has one
// (enqueuePullRequest; refused until the checks the branch requires
// passed, when it arms auto-merge instead, GitHub's "merge when ready",
// which queues it once they pass), else arms auto-merge
// (enablePullRequestAutoMerge), or merges it (mergePullRequest) when
// GitHub refuses to arm auto-merge because it may merge now, all with
// head as the expected head, and reads the pull request back:
// what it returns is what GitHub shows after the request. A request
// GitHub took without the pull request being queued, armed or merged
// after it is an error. A pull request queued or armed already is left
// as it is.
func (c *Client) RequestMerge(ctx context.Context, pr forge.PullRequest, head, method, message string) (forge.MergeRequest, error) {
	out, err := c.requestMerge(ctx, pr, head, method, message)
	return out, c.scrub(err)
}

func (c *Client) requestMerge(ctx context.Context, pr forge.PullRequest, head, method, message string) (forge.MergeRequest, error) {
	// Whatever comes of the request, the merge queue's view of pr is
	// read again at the next Look: an enqueue need not change the pull
	// request's REST answer, whose ETag keeps that view.
	defer c.forgetQueueVersion(pr.Number)
	gqlMethod, ok := mergeMethods[method]
	if !ok {
		return forge.MergeRequest{}, fmt.Errorf("merge method %q: GitHub merges by squash, merge or rebase", method)
	}
	before, err := c.readMerge(ctx, pr.Number)
	if err != nil {
		return forge.MergeRequest{}, err
	}
	p := before.Repository.PullRequest
	switch {
	case p.State != "OPEN":
		return forge.MergeRequest{}, fmt.Errorf("pull request #%d is %s: not handed to GitHub's merge", pr.Number, strings.ToLower(p.State))
	case p.HeadRefOid != head:
		return forge.MergeRequest{}, fmt.Errorf("pull request #%d's head is %s, not %s, the commit set tested: not handed to GitHub's merge", pr.Number, p.HeadRefOid, head)
	case p.MergeQueueEntry != nil:
		return forge.MergeRequest{Way: forge.MergeQueued, QueueState: p.MergeQueueEntry.State, Position: p.MergeQueueEntry.Position}, nil
	case p.AutoMergeRequest != nil:
		return forge.MergeRequest{Way: forge.MergeAuto}, nil
	}
	var queue struct {
		Repository struct {
			MergeQueue *struct {
				ID string `json:"id"`
			} `json:"mergeQueue"`
		} `json:"repository"`
	}
	if err := c.graphql(ctx, mergeQueueQuery, map[string]any{"owner": c.owner, "name": c.name, "branch": p.BaseRefName}, &queue); err != nil {
		return forge.MergeRequest{}, err
	}
	way := forge.MergeAuto
	if queue.Repository.MergeQueue != nil {
		way = forge.MergeQueued
		err = c.graphql(ctx, enqueueMutation, map[string]any{"input": map[string]any{"pullRequestId": p.ID, "expectedHeadOid": head}}, nil)
		var refused *APIError
		if errors.As(err, &refused) {
			// GitHub queues a pull request once the checks its
			// branch requires passed; before, "merge when ready"
			// arms auto-merge, which queues it when they do (the
			// queue has its own merge method).
			if after, rerr := c.readMerge(ctx, pr.Number); rerr == nil && !taken(after) {
				if aerr := c.graphql(ctx, autoMergeMutation, map[string]any{"input": map[string]any{"pullRequestId": p.ID, "expectedHeadOid": head}}, nil); aerr == nil {
					way, err = forge.MergeAuto, nil
				} else {
					err = fmt.Errorf("%w; and to arm auto-merge: %w", err, aerr)
				}
			}
		}
	} else {
		input := map[string]any{"pullRequestId": p.ID, "expectedHeadOid": head, "mergeMethod": gqlMethod}
		// The commit GitHub makes says what message says (its subject
		// the headline), not GitHub's default of the repository's
		// settings, which may drop the trailer that credits the change.
		if headline, body, _ := strings.Cut(strings.TrimSpace(message), "\n"); headline != "" {
			input["commitHeadline"], input["commitBody"] = headline, strings.TrimSpace(body)
		}
		err = c.graphql(ctx, autoMergeMutation, map[string]any{"input": input}, nil)
		if mergeableNow(err) {
			// GitHub arms auto-merge only on a pull request that has
			// something to wait for; one it would merge now is merged.
			err = c.graphql(ctx, mergeMutation, map[string]any{"input": input}, nil)
		}
	}
	if msg := autoMergeNotAllowed(err); msg != "" {
		return forge.MergeRequest{}, c.configError(http.StatusUnprocessableEntity, msg,
			"allow auto-merge in "+c.owner+"/"+c.name+"'s settings, or require a merge queue on "+p.BaseRefName+", or set project.delivery.forge.autoMerge to false")
	}
	var refused *APIError
	if err != nil && !errors.As(err, &refused) {
		return forge.MergeRequest{}, fmt.Errorf("GitHub refused to %s pull request #%d: %w", wayVerb(way), pr.Number, err)
	}

	// Read back, after a refusal too: a mutation sent again after an
	// answer lost on the way (GitHub's 5xx, a broken connection) is
	// refused for what the first did, and someone else may have queued
	// or armed it meanwhile.
	after, rerr := c.readMerge(ctx, pr.Number)
	if rerr != nil {
		if refused != nil {
			return forge.MergeRequest{}, fmt.Errorf("GitHub refused to %s pull request #%d: %w", wayVerb(way), pr.Number, err)
		}
		return forge.MergeRequest{}, fmt.Errorf("pull request #%d handed to %s, and not read back: %w", pr.Number, way, rerr)
	}
	p = after.Repository.PullRequest
	switch {
	case p.MergeQueueEntry != nil:
		return forge.MergeRequest{Way: forge.MergeQueued, QueueState: p.MergeQueueEntry.State, Position: p.MergeQueueEntry.Position}, nil
	case p.AutoMergeRequest != nil:
		return forge.MergeRequest{Way: forge.MergeAuto}, nil
	case p.State == "MERGED":
		return forge.MergeRequest{Way: way}, nil // merged at once: Look says so
	case refused != nil:
		return forge.MergeRequest{}, fmt.Errorf("GitHub refused to %s pull request #%d: %w", wayVerb(way), pr.Number, err)
	}
	return forge.MergeRequest{}, fmt.Errorf("GitHub took the request to %s pull request #%d, and then shows it %s, neither in the merge queue nor with auto-merge armed: it is not being merged",
		wayVerb(way), pr.Number, strings.ToLower(p.State))
}

// mergeableNow reports whether err is GitHub refusing to arm auto-merge
// because the pull request may be merged now: nothing it requires is
// pending ("clean status"; "unstable status" when only checks it does
// not require failed), or its branch has no protection to wait for.
func mergeableNow(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) {
		return false
	}
	return slices.ContainsFunc(ae.Errors, func(e string) bool {
		return strings.Contains(e, "is in clean status") || strings.Contains(e, "is in unstable status") ||
			strings.Contains(e, "Protected branch rules not configured")
	})
}

// autoMergeNotAllowed is GitHub's words when err is its refusal to arm
// auto-merge in a repository whose settings do not allow it (the same
// for every pull request: a configuration error), else "".
func autoMergeNotAllowed(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		for _, e := range ae.Errors {
			if strings.Contains(e, "Auto merge is not allowed") {
				return e
			}
		}
	}
	return ""
}

// taken reports whether GitHub shows a pull request queued, armed or
// merged.
func taken(m pullMerge) bool {
	p := m.Repository.PullRequest
	return p != nil && (p.MergeQueueEntry != nil || p.AutoMergeRequest != nil || p.State == "MERGED")
}

func wayVerb(way forge.MergeWay) string {
	if way == forge.MergeQueued {
		return "enqueue"
	}
	return "arm auto-merge of"
}

type reviewJSON struct {
	ID          int64     `json:"id"`
	User        *user     `json:"user"`
	Body        string    `json:"body"`
	State       string    `json:"state"`
	CommitID    string    `json:"commit_id"`
	SubmittedAt time.Time `json:"submitted_at"`
}

type reviewCommentJSON struct {
	Path         string `json:"path"`
	Line         *int   `json:"line"`
	OriginalLine *int   `json:"original_line"`
	Body         string `json:"body"`
}

type issueCommentJSON struct {
	User      *user     `json:"user"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"created_at"`
}

type issueJSON struct {
	ClosedBy *user `json:"closed_by"`
}

func (u *user) login() string {
	if u == nil {
		return ""
	}
	return u.Login
}

// queueLook is what the merge queue says of a pull request.
type queueLook struct {
	queued bool
	// commits are the merge group commits made for it, oldest first:
	// its entries' seen by this client, and the one of each removal.
	commits []string
	// etag is the pull request's ETag when the queue was read.
	etag string
}

// Look reads what became of pr. Its requests are conditional: a pull
// request unchanged since the last Look is answered by 304s, free of
// rate limit. The merge queue (GraphQL, which has no conditional
// requests) is read again only when the pull request changed, it was in
// the queue at the last Look, or auto-merge is armed on it (which may
// queue it without changing it): then a Look costs one GraphQL point.
func (c *Client) Look(ctx context.Context, pr forge.PullRequest) (forge.Look, error) {
	out, err := c.look(ctx, pr)
	return out, c.scrub(err)
}

func (c *Client) look(ctx context.Context, pr forge.PullRequest) (forge.Look, error) {
	n := strconv.Itoa(pr.Number)
	var p pullJSON
	resp, err := c.get(ctx, "/pulls/"+n, &p)
	if err != nil {
		return forge.Look{}, err
	}
	look := forge.Look{State: forge.Open, Head: p.Head.SHA}
	look.Conflicts = p.MergeableState == "dirty" || (p.Mergeable != nil && !*p.Mergeable)
	switch {
	case p.Merged:
		look.State, look.MergeCommit = forge.Merged, p.MergeCommitSHA
	case p.State == "closed":
		look.State = forge.Closed
	}

	var reviews []reviewJSON
	if err := getAll(ctx, c, "/pulls/"+n+"/reviews", &reviews); err != nil {
		return forge.Look{}, err
	}
	// A request for changes its reviewer followed with an approval is
	// answered (GitHub lists reviews oldest first): it is no longer
	// theirs to send back. Their requests after it still count.
	approved := map[string]int{}
	for i, r := range reviews {
		if r.State == "APPROVED" {
			approved[r.User.login()] = i + 1
		}
	}
	for i, r := range reviews {
		if r.State != "CHANGES_REQUESTED" || i+1 < approved[r.User.login()] {
			continue
		}
		review := forge.Review{ID: strconv.FormatInt(r.ID, 10), Author: r.User.login(), Body: r.Body, Commit: r.CommitID, At: r.SubmittedAt}
		var comments []reviewCommentJSON
		if err := getAll(ctx, c, "/pulls/"+n+"/reviews/"+strconv.FormatInt(r.ID, 10)+"/comments", &comments); err != nil {
			return forge.Look{}, err
		}
		for _, cm := range comments {
			line := 0
			if cm.Line != nil {
				line = *cm.Line
			} else if cm.OriginalLine != nil {
				line = *cm.OriginalLine
			}
			review.Comments = append(review.Comments, forge.ReviewComment{Path: cm.Path, Line: line, Body: cm.Body})
		}
		look.ChangesRequested = append(look.ChangesRequested, review)
	}

	if look.State == forge.Closed {
		if err := c.lookClosed(ctx, n, reviews, &look); err != nil {
			return forge.Look{}, err
		}
	}
	if look.State != forge.Open {
		return look, nil
	}

	queue, err := c.lookQueue(ctx, pr.Number, resp, p.AutoMerge != nil)
	if err != nil {
		return forge.Look{}, err
	}
	look.Queued = queue.queued
	seen := map[string]bool{}
	var failed []timedCheck
	for _, sha := range append([]string{look.Head}, queue.commits...) {
		if sha == "" || seen[sha] {
			continue
		}
		seen[sha] = true
		f, err := c.failedChecks(ctx, sha)
		var ae *APIError
		if sha != look.Head && errors.As(err, &ae) && (ae.Status == http.StatusNotFound || ae.Status == http.StatusUnprocessableEntity) {
			// A merge group commit GitHub no longer knows (its
			// gh-readonly-queue branch is gone, the commit
			// collected) has no checks to read: every later Look
			// would fail on it else.
			continue
		}
		if err != nil {
			return forge.Look{}, err
		}
		failed = append(failed, f...)
	}
	slices.SortStableFunc(failed, func(a, b timedCheck) int { return a.at.Compare(b.at) })
	for _, f := range failed {
		look.FailedChecks = append(look.FailedChecks, f.Check)
	}
	return look, nil
}

// lookClosed fills who closed a pull request and the last words left on
// it: its newest review with a body, or comment, whichever came last.
func (c *Client) lookClosed(ctx context.Context, n string, reviews []reviewJSON, look *forge.Look) error {
	var issue issueJSON
	if _, err := c.get(ctx, "/issues/"+n, &issue); err != nil {
		return err
	}
	look.ClosedBy = issue.ClosedBy.login()
	var comments []issueCommentJSON
	if err := getAll(ctx, c, "/issues/"+n+"/comments", &comments); err != nil {
		return err
	}
	var last time.Time
	for _, r := range reviews {
		if r.Body != "" && !r.SubmittedAt.Before(last) {
			last, look.Words = r.SubmittedAt, r.Body
		}
	}
	for _, cm := range comments {
		if cm.Body != "" && !cm.CreatedAt.Before(last) {
			last, look.Words = cm.CreatedAt, cm.Body
		}
	}
	return nil
}

// lookQueue reads the merge queue's view of pull request number, unless
// the version of it just read (pull) is the one it was read with last,
// it was not queued then, and it is not armed (auto-merge armed on a
// branch with a queue queues it without its REST answer changing).
func (c *Client) lookQueue(ctx context.Context, number int, pull *response, armed bool) (queueLook, error) {
	etag := pull.header.Get("ETag")
	c.mu.Lock()
	last, ok := c.queue[number]
	c.mu.Unlock()
	if ok && etag != "" && last.etag == etag && !last.queued && !armed {
		return last, nil
	}
	var out struct {
		Repository struct {
			PullRequest *struct {
				MergeQueueEntry *entryJSON `json:"mergeQueueEntry"`
				TimelineItems   struct {
					Nodes []struct {
						Typename     string   `json:"__typename"`
						BeforeCommit *oidJSON `json:"beforeCommit"`
					} `json:"nodes"`
				} `json:"timelineItems"`
			} `json:"pullRequest"`
		} `json:"repository"`
	}
	if err := c.graphql(ctx, queueLookQuery, map[string]any{"owner": c.owner, "name": c.name, "number": number}, &out); err != nil {
		return queueLook{}, err
	}
	q := queueLook{etag: etag, commits: slices.Clone(last.commits)}
	add := func(sha string) {
		if !slices.Contains(q.commits, sha) {
			q.commits = append(q.commits, sha)
		}
	}
	if p := out.Repository.PullRequest; p != nil {
		for _, e := range p.TimelineItems.Nodes {
			if e.Typename == "RemovedFromMergeQueueEvent" && e.BeforeCommit != nil {
				add(e.BeforeCommit.OID)
			}
		}
		if e := p.MergeQueueEntry; e != nil {
			q.queued = true
			if e.HeadCommit != nil {
				add(e.HeadCommit.OID)
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, sha := range c.queue[number].commits { // a concurrent Look's
		add(sha)
	}
	c.queue[number] = q
	return q, nil
}

// forgetQueueVersion makes the next Look of pull request number read
// the merge queue again, keeping the merge group commits seen.
func (c *Client) forgetQueueVersion(number int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if q, ok := c.queue[number]; ok {
		q.etag = ""
		c.queue[number] = q
	}
}

type checkRunJSON struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	HeadSHA     string    `json:"head_sha"`
	Status      string    `json:"status"`
	Conclusion  string    `json:"conclusion"`
	HTMLURL     string    `json:"html_url"`
	DetailsURL  string    `json:"details_url"`
	CompletedAt time.Time `json:"completed_at"`
	Output      struct {
		Title   string `json:"title"`
		Summary string `json:"summary"`
		Text    string `json:"text"`
	} `json:"output"`
}

type combinedJSON struct {
	Statuses []struct {
		ID          int64     `json:"id"`
		Context     string    `json:"context"`
		State       string    `json:"state"`
		Description string    `json:"description"`
		TargetURL   string    `json:"target_url"`
		UpdatedAt   time.Time `json:"updated_at"`
	} `json:"statuses"`
}

// failedConclusions are the conclusions of a check run that failed.
var failedConclusions = map[string]bool{"failure": true, "timed_out": true, "cancelled": true, "startup_failure": true}

// ownContext reports whether a status context is set's own (set/<gate>).
func ownContext(name string) bool { return strings.HasPrefix(name, "set/") }

// timedCheck is a failed check and when it ended.
type timedCheck struct {
	forge.Check
	at time.Time
}

// failedChecks is every check run and newest status of a context that
// failed on sha, but set's own.
func (c *Client) failedChecks(ctx context.Context, sha string) ([]timedCheck, error) {
	var out []timedCheck
	u := c.repoURL("/commits/" + url.PathEscape(sha) + "/check-runs?per_page=100")
	for u != "" {
		resp, err := c.do(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		var page struct {
			CheckRuns []checkRunJSON `json:"check_runs"`
		}
		if err := decode(resp, &page); err != nil {
			return nil, err
		}
		for _, r := range page.CheckRuns {
			if r.Status != "completed" || !failedConclusions[r.Conclusion] || ownContext(r.Name) {
				continue
			}
			var output []string
			for _, s := range []string{r.Output.Title, r.Output.Summary, r.Output.Text} {
				if s != "" {
					output = append(output, s)
				}
			}
			link := r.HTMLURL
			if link == "" {
				link = r.DetailsURL
			}
			out = append(out, timedCheck{forge.Check{ID: "check-run:" + strconv.FormatInt(r.ID, 10), Name: r.Name, Commit: sha,
				Conclusion: r.Conclusion, Output: strings.Join(output, "\n"), URL: link}, r.CompletedAt})
		}
		if u, err = c.nextPage(resp); err != nil {
			return nil, err
		}
	}
	var combined combinedJSON
	if _, err := c.get(ctx, "/commits/"+url.PathEscape(sha)+"/status?per_page=100", &combined); err != nil {
		return nil, err
	}
	for _, s := range combined.Statuses {
		if (s.State != "failure" && s.State != "error") || ownContext(s.Context) {
			continue
		}
		out = append(out, timedCheck{forge.Check{ID: "status:" + strconv.FormatInt(s.ID, 10), Name: s.Context, Commit: sha,
			Conclusion: s.State, Output: s.Description, URL: s.TargetURL}, s.UpdatedAt})
	}
	return out, nil
}

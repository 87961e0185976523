package githubtest

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/set-engine/set/engine/git"
)

// The GraphQL operations (POST /graphql, {"query", "variables"}), every
// argument passed as a variable:
//
//	repository(owner: $owner, name: $name) {
//	  mergeQueue(branch: $branch) { id url }            null: no queue
//	  pullRequest(number: $number) { id number url state merged
//	    headRefName headRefOid baseRefName
//	    mergeQueueEntry { id state position enqueuedAt headCommit { oid } baseCommit { oid } }
//	    autoMergeRequest { enabledAt mergeMethod enabledBy { login } }
//	    timelineItems(itemTypes: [REMOVED_FROM_MERGE_QUEUE_EVENT], last: N) {
//	      totalCount nodes { __typename ... on RemovedFromMergeQueueEvent {
//	        id createdAt reason actor { login } beforeCommit { oid } } } } }
//	}
//	enqueuePullRequest(input: {pullRequestId, expectedHeadOid}) {
//	  mergeQueueEntry { id state position headCommit { oid } } }
//	  refused until every Required context is a success
//	enablePullRequestAutoMerge(input: {pullRequestId, mergeMethod, expectedHeadOid, commitHeadline, commitBody}) {
//	  pullRequest { id autoMergeRequest { enabledAt mergeMethod } } }
//	  with a merge queue: queued when the required checks passed, else
//	  armed, and queued once they pass (GitHub's "merge when ready");
//	  without one, refused, as on GitHub, for a pull request that could merge now
//	  ("Pull request is in clean status", or "unstable status" when a
//	  check that is not required failed or is pending)
//	mergePullRequest(input: {pullRequestId, mergeMethod, expectedHeadOid, commitHeadline, commitBody}) {
//	  pullRequest { id state } }
//	  refused while a Required context is not a success, and on a base
//	  branch with a merge queue
//
// Errors are GitHub's: HTTP 200 with "errors": [{type, path, message}]
// and the field null (NOT_FOUND for a repository or pull request that is
// not there, UNPROCESSABLE for a mutation refused).

var roots = []string{"enqueuePullRequest", "enablePullRequestAutoMerge", "mergePullRequest", "mergeQueue", "pullRequest"}

// operation names the root fields a GraphQL request asks for.
func operation(body []byte) string {
	var in struct{ Query string }
	_ = json.Unmarshal(body, &in)
	var ops []string
	for _, r := range roots {
		if strings.Contains(in.Query, r+"(") {
			ops = append(ops, r)
		}
	}
	return strings.Join(ops, " ")
}

type gqlError struct {
	Type    string   `json:"type"`
	Path    []string `json:"path"`
	Message string   `json:"message"`
}

func gqlAnswer(data any, errs ...gqlError) answer {
	out := map[string]any{"data": data}
	if len(errs) > 0 {
		out["errors"] = errs
	}
	return jsonAnswer(200, out)
}

func (s *Server) graphql(body []byte) answer {
	var in struct {
		Query     string
		Variables map[string]json.RawMessage
	}
	if err := json.Unmarshal(body, &in); err != nil || in.Query == "" {
		return jsonAnswer(400, json.RawMessage(message("Problems parsing JSON")))
	}
	str := func(name string) string {
		var v string
		_ = json.Unmarshal(in.Variables[name], &v)
		return v
	}
	switch op := operation(body); {
	case strings.HasPrefix(op, "enqueuePullRequest"):
		return s.enqueue(in.Variables["input"])
	case strings.HasPrefix(op, "enablePullRequestAutoMerge"):
		return s.enableAutoMerge(in.Variables["input"])
	case strings.HasPrefix(op, "mergePullRequest"):
		return s.mergeNow(in.Variables["input"])
	case op == "":
		return jsonAnswer(200, map[string]any{"errors": []gqlError{{Type: "UNSUPPORTED", Message: "githubtest does not answer this query"}}})
	}
	if !strings.EqualFold(str("owner"), s.owner) || !strings.EqualFold(str("name"), s.name) {
		return gqlAnswer(map[string]any{"repository": nil}, gqlError{Type: "NOT_FOUND", Path: []string{"repository"},
			Message: "Could not resolve to a Repository with the name '" + str("owner") + "/" + str("name") + "'."})
	}
	repo := map[string]any{}
	var errs []gqlError
	if strings.Contains(in.Query, "mergeQueue(") {
		repo["mergeQueue"] = nil
		if s.opts.MergeQueue && git.BranchExists(ctx(), s.opts.Remote, str("branch")) {
			repo["mergeQueue"] = map[string]any{"id": "MQ_kwDOtest" + str("branch"), "url": s.http.URL + "/" + s.owner + "/" + s.name + "/queue/" + str("branch")}
		}
	}
	if strings.Contains(in.Query, "pullRequest(") {
		var number int
		_ = json.Unmarshal(in.Variables["number"], &number)
		p := s.pull(number)
		if p == nil {
			repo["pullRequest"] = nil
			errs = append(errs, gqlError{Type: "NOT_FOUND", Path: []string{"repository", "pullRequest"},
				Message: "Could not resolve to a PullRequest with the number of " + string(in.Variables["number"]) + "."})
		} else {
			s.refresh(p)
			repo["pullRequest"] = s.pullNode(p)
		}
	}
	return gqlAnswer(map[string]any{"repository": repo}, errs...)
}

func gqlTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func oid(sha string) any {
	if sha == "" {
		return nil
	}
	return map[string]any{"oid": sha}
}

func (s *Server) entryNode(p *pull) any {
	if p.queue == nil {
		return nil
	}
	state := "AWAITING_CHECKS"
	switch {
	case p.queue.commit == "":
		state = "UNMERGEABLE"
	case s.green(p):
		state = "MERGEABLE"
	}
	return map[string]any{"id": p.queue.id, "state": state, "position": s.position(p), "enqueuedAt": gqlTime(p.queue.enqueued),
		"headCommit": oid(p.queue.commit), "baseCommit": oid(p.queue.baseSHA)}
}

func (s *Server) pullNode(p *pull) map[string]any {
	state := "OPEN"
	switch {
	case p.merged:
		state = "MERGED"
	case p.state == "closed":
		state = "CLOSED"
	}
	var auto any
	if p.autoMerge != nil {
		auto = map[string]any{"enabledAt": gqlTime(p.autoMerge.enabled), "mergeMethod": p.autoMerge.method, "enabledBy": map[string]any{"login": s.opts.User}}
	}
	nodes := []any{}
	for _, r := range p.removals {
		var actor any
		if r.actor != "" {
			actor = map[string]any{"login": r.actor}
		}
		nodes = append(nodes, map[string]any{"__typename": "RemovedFromMergeQueueEvent", "id": r.id, "createdAt": gqlTime(r.at),
			"reason": r.reason, "actor": actor, "beforeCommit": oid(r.commit)})
	}
	return map[string]any{"id": p.nodeID, "number": p.number, "url": s.http.URL + "/" + s.owner + "/" + s.name + "/pull/" + itoa(p.number),
		"state": state, "merged": p.merged, "headRefName": p.head, "headRefOid": p.headSHA, "baseRefName": p.base,
		"mergeQueueEntry": s.entryNode(p), "autoMergeRequest": auto,
		"timelineItems": map[string]any{"totalCount": len(nodes), "nodes": nodes}}
}

// mutationInput is the input of enqueuePullRequest and
// enablePullRequestAutoMerge.
type mutationInput struct {
	PullRequestID   string `json:"pullRequestId"`
	ExpectedHeadOid string `json:"expectedHeadOid"`
	MergeMethod     string `json:"mergeMethod"`
	// CommitHeadline and CommitBody are the message of the commit the
	// merge makes (enablePullRequestAutoMerge, mergePullRequest).
	CommitHeadline string `json:"commitHeadline"`
	CommitBody     string `json:"commitBody"`
}

// mutationTarget is the open pull request a mutation names, or the
// error GitHub gives.
func (s *Server) mutationTarget(field string, raw json.RawMessage) (*pull, mutationInput, *gqlError) {
	var in mutationInput
	_ = json.Unmarshal(raw, &in)
	p := s.pullByNode(in.PullRequestID)
	if p == nil {
		return nil, in, &gqlError{Type: "NOT_FOUND", Path: []string{field}, Message: "Could not resolve to a node with the global id of '" + in.PullRequestID + "'"}
	}
	s.refresh(p)
	if p.state != "open" {
		return nil, in, &gqlError{Type: "UNPROCESSABLE", Path: []string{field}, Message: "Pull request is closed"}
	}
	if in.ExpectedHeadOid != "" && in.ExpectedHeadOid != p.headSHA {
		return nil, in, &gqlError{Type: "UNPROCESSABLE", Path: []string{field}, Message: "Head sha didn't match expected head sha: the pull request's head is " + p.headSHA}
	}
	return p, in, nil
}

// enqueue puts a pull request into its base's merge queue, and makes the
// merge group commit at once: its head merged onto the base's tip.
func (s *Server) enqueue(raw json.RawMessage) answer {
	const field = "enqueuePullRequest"
	p, _, gerr := s.mutationTarget(field, raw)
	if gerr != nil {
		return gqlAnswer(map[string]any{field: nil}, *gerr)
	}
	if !s.opts.MergeQueue {
		return gqlAnswer(map[string]any{field: nil}, gqlError{Type: "UNPROCESSABLE", Path: []string{field},
			Message: "The base branch " + p.base + " does not require a merge queue"})
	}
	if p.queue == nil && !s.requiredMet(p) {
		// GitHub queues a pull request once it passed the checks its
		// branch requires; before, it arms auto-merge ("merge when
		// ready") instead.
		return gqlAnswer(map[string]any{field: nil}, gqlError{Type: "UNPROCESSABLE", Path: []string{field},
			Message: "Pull request is not mergeable: the required status checks have not passed"})
	}
	s.addToQueue(p)
	entry := s.entryNode(p)
	return s.afterRequestMerge(p, gqlAnswer(map[string]any{field: map[string]any{"mergeQueueEntry": entry}}))
}

func (s *Server) enableAutoMerge(raw json.RawMessage) answer {
	const field = "enablePullRequestAutoMerge"
	p, in, gerr := s.mutationTarget(field, raw)
	if gerr != nil {
		return gqlAnswer(map[string]any{field: nil}, *gerr)
	}
	switch in.MergeMethod {
	case "MERGE", "SQUASH", "REBASE":
	case "":
		in.MergeMethod = "MERGE"
	default:
		return gqlAnswer(map[string]any{field: nil}, gqlError{Type: "INVALID", Path: []string{field},
			Message: "Argument 'mergeMethod' on InputObject 'EnablePullRequestAutoMergeInput' has an invalid value (" + in.MergeMethod + ")."})
	}
	if s.opts.NoAutoMerge {
		return gqlAnswer(map[string]any{field: nil}, gqlError{Type: "UNPROCESSABLE", Path: []string{field},
			Message: "Pull request Auto merge is not allowed for this repository"})
	}
	if s.opts.MergeQueue {
		// On a branch with a merge queue, "merge when ready": queued at
		// once when the required checks passed, else armed to be
		// queued once they do.
		if p.queue == nil && s.requiredMet(p) {
			s.addToQueue(p)
		} else if p.queue == nil && p.autoMerge == nil {
			p.autoMerge = &autoMerge{method: in.MergeMethod, enabled: s.opts.Now(), headline: in.CommitHeadline, body: in.CommitBody}
			p.updated = s.opts.Now()
		}
		return s.afterRequestMerge(p, gqlAnswer(map[string]any{field: map[string]any{"pullRequest": s.pullNode(p)}}))
	}
	if p.autoMerge == nil && s.requiredMet(p) {
		status := "clean"
		if !s.green(p) {
			status = "unstable"
		}
		return gqlAnswer(map[string]any{field: nil}, gqlError{Type: "UNPROCESSABLE", Path: []string{field},
			Message: "Pull request Pull request is in " + status + " status"})
	}
	if p.autoMerge == nil {
		p.autoMerge = &autoMerge{method: in.MergeMethod, enabled: s.opts.Now(), headline: in.CommitHeadline, body: in.CommitBody}
		p.updated = s.opts.Now()
	}
	node := s.pullNode(p)
	return s.afterRequestMerge(p, gqlAnswer(map[string]any{field: map[string]any{"pullRequest": node}}))
}

// mergeNow merges a pull request whose required contexts passed, on a
// base branch without a merge queue.
func (s *Server) mergeNow(raw json.RawMessage) answer {
	const field = "mergePullRequest"
	p, in, gerr := s.mutationTarget(field, raw)
	if gerr != nil {
		return gqlAnswer(map[string]any{field: nil}, *gerr)
	}
	refuse := func(msg string) answer {
		return gqlAnswer(map[string]any{field: nil}, gqlError{Type: "UNPROCESSABLE", Path: []string{field}, Message: msg})
	}
	switch in.MergeMethod {
	case "", "MERGE", "SQUASH", "REBASE":
	default:
		return gqlAnswer(map[string]any{field: nil}, gqlError{Type: "INVALID", Path: []string{field},
			Message: "Argument 'mergeMethod' on InputObject 'MergePullRequestInput' has an invalid value (" + in.MergeMethod + ")."})
	}
	if s.opts.MergeQueue {
		return refuse("Pull request " + p.base + " requires a merge queue: the pull request must be enqueued")
	}
	if !s.requiredMet(p) {
		return refuse("Pull request Required status checks have not succeeded")
	}
	if _, err := s.merge(p, in.CommitHeadline, in.CommitBody); err != nil {
		return refuse("Pull request Pull request is not mergeable")
	}
	return gqlAnswer(map[string]any{field: map[string]any{"pullRequest": s.pullNode(p)}})
}

// addToQueue puts p into its base's merge queue, unless it is in, and
// makes the merge group commit at once: its head merged onto the base's
// tip ("" when it does not apply). Auto-merge is done with.
func (s *Server) addToQueue(p *pull) {
	if p.queue != nil {
		return
	}
	now := s.opts.Now()
	base := s.baseTip(p)
	commit, err := git.SquashCommit(ctx(), s.opts.Remote, base, p.headSHA, "Merge group of #"+itoa(p.number), "GitHub", "noreply@github.com")
	if err != nil {
		commit = ""
	}
	p.queue = &queueEntry{id: "MQE_kwDOtest" + itoa(int(s.id())), commit: commit, baseSHA: base, enqueued: now}
	p.autoMerge = nil
	p.updated = now
}

// afterRequestMerge lets Options.AutoMerge and the OnRequestMerge hooks
// act on a pull request handed to the forge's merge.
func (s *Server) afterRequestMerge(p *pull, a answer) answer {
	s.autoMergeAll()
	view := p.view()
	for _, f := range s.hooks.requestMerge {
		a.after = append(a.after, func() { f(view) })
	}
	return a
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

package githubtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/set-engine/set/engine/git"
)

// The REST v3 endpoints, under /repos/{owner}/{repo}:
//
//	GET   ""                                  the repository
//	GET   /pulls?head=owner:branch&state=open pull requests (paginated)
//	POST  /pulls                              open one: 201, or 422
//	GET   /pulls/{n}                          one
//	PATCH /pulls/{n}                          its title, body, state
//	GET   /pulls/{n}/reviews                  its reviews (paginated)
//	GET   /pulls/{n}/reviews/{id}/comments    a review's line comments
//	GET   /issues/{n}                         it as an issue (closed_by)
//	GET   /issues/{n}/comments                its conversation (paginated)
//	POST  /statuses/{sha}                     a commit status: 201
//	GET   /commits/{ref}/status               the combined status
//	GET   /commits/{ref}/check-runs           the check runs
func (s *Server) rest(r *http.Request, path string, body []byte) answer {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) < 3 || parts[0] != "repos" {
		return jsonAnswer(404, json.RawMessage(message("Not Found")))
	}
	if !strings.EqualFold(parts[1], s.owner) || !strings.EqualFold(parts[2], s.name) {
		return jsonAnswer(404, json.RawMessage(message("Not Found")))
	}
	rest := parts[3:]
	q := r.URL.Query()
	m := r.Method
	notFound := jsonAnswer(404, json.RawMessage(message("Not Found")))
	number := func(i int) *pull {
		if len(rest) <= i {
			return nil
		}
		n, err := strconv.Atoi(rest[i])
		if err != nil {
			return nil
		}
		p := s.pull(n)
		if p != nil {
			s.refresh(p)
		}
		return p
	}
	switch {
	case len(rest) == 0 && m == "GET":
		return jsonAnswer(200, s.repoJSON())
	case len(rest) == 1 && rest[0] == "pulls" && m == "GET":
		var list []any
		for _, p := range s.prs {
			s.refresh(p)
			if st := q.Get("state"); st != "all" && p.state != orDefault(st, "open") {
				continue
			}
			if head := q.Get("head"); head != "" {
				// user:ref-name, the user as GitHub compares logins:
				// without regard to case.
				owner, ref, _ := strings.Cut(head, ":")
				if !strings.EqualFold(owner, s.owner) || ref != p.head {
					continue
				}
			}
			if base := q.Get("base"); base != "" && base != p.base {
				continue
			}
			list = append(list, s.pullJSON(p))
		}
		return s.page(r, list)
	case len(rest) == 1 && rest[0] == "pulls" && m == "POST":
		return s.openPull(body)
	case len(rest) == 2 && rest[0] == "pulls" && m == "GET":
		if p := number(1); p != nil {
			return jsonAnswer(200, s.pullJSON(p))
		}
		return notFound
	case len(rest) == 2 && rest[0] == "pulls" && m == "PATCH":
		if p := number(1); p != nil {
			return s.patchPull(p, body)
		}
		return notFound
	case len(rest) == 3 && rest[0] == "pulls" && rest[2] == "reviews" && m == "GET":
		p := number(1)
		if p == nil {
			return notFound
		}
		var list []any
		for _, rv := range p.reviews {
			list = append(list, s.reviewJSON(p, rv))
		}
		return s.page(r, list)
	case len(rest) == 5 && rest[0] == "pulls" && rest[2] == "reviews" && rest[4] == "comments" && m == "GET":
		p := number(1)
		if p == nil {
			return notFound
		}
		for _, rv := range p.reviews {
			if strconv.FormatInt(rv.id, 10) == rest[3] {
				var list []any
				for _, c := range rv.comments {
					list = append(list, s.lineCommentJSON(p, rv, c))
				}
				return s.page(r, list)
			}
		}
		return notFound
	case len(rest) == 2 && rest[0] == "issues" && m == "GET":
		if p := number(1); p != nil {
			return jsonAnswer(200, s.issueJSON(p))
		}
		return notFound
	case len(rest) == 3 && rest[0] == "issues" && rest[2] == "comments" && m == "GET":
		p := number(1)
		if p == nil {
			return notFound
		}
		var list []any
		for _, c := range p.comments {
			list = append(list, s.commentJSON(p, c))
		}
		return s.page(r, list)
	case len(rest) == 2 && rest[0] == "statuses" && m == "POST":
		return s.postStatus(rest[1], body)
	case len(rest) == 3 && rest[0] == "commits" && rest[2] == "status" && m == "GET":
		sha := s.resolve(rest[1])
		if sha == "" {
			return jsonAnswer(422, map[string]any{"message": "No commit found for SHA: " + rest[1], "documentation_url": "https://docs.github.com/rest"})
		}
		return jsonAnswer(200, s.combinedJSON(sha))
	case len(rest) == 3 && rest[0] == "commits" && rest[2] == "check-runs" && m == "GET":
		sha := s.resolve(rest[1])
		if sha == "" {
			return jsonAnswer(422, map[string]any{"message": "No commit found for SHA: " + rest[1], "documentation_url": "https://docs.github.com/rest"})
		}
		var runs []any
		for _, c := range s.checks[sha] {
			if name := q.Get("check_name"); name != "" && name != c.name {
				continue
			}
			runs = append(runs, s.checkRunJSON(c))
		}
		if runs == nil {
			runs = []any{}
		}
		return jsonAnswer(200, map[string]any{"total_count": len(runs), "check_runs": runs})
	}
	return notFound
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// resolve is the commit ref names: a full SHA the remote has, or a
// branch's tip; "" when neither.
func (s *Server) resolve(ref string) string {
	if len(ref) == 40 || len(ref) == 64 {
		if git.HasCommit(ctx(), s.opts.Remote, ref) {
			return ref
		}
		if _, ok := s.statuses[ref]; ok {
			return ref
		}
		if _, ok := s.checks[ref]; ok {
			return ref
		}
		return ""
	}
	tip, _ := git.BranchHead(ctx(), s.opts.Remote, ref)
	return tip
}

// page answers a list with GitHub's pagination: per_page (30 by
// default, at most 100) and page, and a Link header with rel="next"
// and rel="last" while there is more.
func (s *Server) page(r *http.Request, list []any) answer {
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	page = max(page, 1)
	from := min((page-1)*per, len(list))
	to := min(from+per, len(list))
	out := list[from:to]
	if out == nil {
		out = []any{}
	}
	a := jsonAnswer(200, out)
	if last := (len(list) + per - 1) / per; page < last {
		link := func(n int) string {
			u := *r.URL
			u.Scheme, u.Host = "http", r.Host
			q := u.Query()
			q.Set("page", strconv.Itoa(n))
			u.RawQuery = q.Encode()
			return u.String()
		}
		a.header = http.Header{"Link": {fmt.Sprintf(`<%s>; rel="next", <%s>; rel="last"`, link(page+1), link(last))}}
	}
	return a
}

func (s *Server) openPull(body []byte) answer {
	var in struct {
		Title, Head, Base, Body string
		Draft                   bool
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return jsonAnswer(400, json.RawMessage(message("Problems parsing JSON")))
	}
	invalid := func(field string) answer {
		return jsonAnswer(422, map[string]any{"message": "Validation Failed", "errors": []any{
			map[string]any{"resource": "PullRequest", "field": field, "code": "invalid"}}, "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"})
	}
	custom := func(msg string) answer {
		return jsonAnswer(422, map[string]any{"message": "Validation Failed", "errors": []any{
			map[string]any{"resource": "PullRequest", "code": "custom", "message": msg}}, "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"})
	}
	if in.Title == "" {
		return jsonAnswer(422, map[string]any{"message": "Validation Failed", "errors": []any{
			map[string]any{"resource": "PullRequest", "field": "title", "code": "missing_field"}}})
	}
	head := strings.TrimPrefix(in.Head, s.owner+":")
	headSHA, err := git.BranchHead(ctx(), s.opts.Remote, head)
	if err != nil {
		return invalid("head")
	}
	baseSHA, err := git.BranchHead(ctx(), s.opts.Remote, in.Base)
	if err != nil {
		return invalid("base")
	}
	for _, p := range s.prs {
		if p.state == "open" && p.head == head && p.base == in.Base {
			return custom("A pull request already exists for " + s.owner + ":" + head + ".")
		}
	}
	if merged, _ := git.IsAncestor(ctx(), s.opts.Remote, headSHA, baseSHA); merged {
		return custom("No commits between " + in.Base + " and " + head)
	}
	now := s.opts.Now()
	p := &pull{number: len(s.prs) + 1, title: in.Title, body: in.Body, head: head, base: in.Base,
		headSHA: headSHA, state: "open", created: now, updated: now}
	p.nodeID = "PR_kwDOtest" + strconv.Itoa(p.number)
	s.prs = append(s.prs, p)
	a := jsonAnswer(201, s.pullJSON(p))
	a.header = http.Header{"Location": {s.apiURL("pulls/" + strconv.Itoa(p.number))}}
	view := p.view()
	for _, f := range s.hooks.open {
		a.after = append(a.after, func() { f(view) })
	}
	return a
}

func (s *Server) patchPull(p *pull, body []byte) answer {
	var in struct {
		Title, Body, State *string
		Base               *string
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return jsonAnswer(400, json.RawMessage(message("Problems parsing JSON")))
	}
	if in.Title != nil {
		p.title = *in.Title
	}
	if in.Body != nil {
		p.body = *in.Body
	}
	if in.Base != nil {
		p.base = *in.Base
	}
	if in.State != nil && *in.State == "closed" && p.state == "open" {
		if p.queue != nil {
			s.dequeue(p, "the pull request was closed", s.opts.User)
		}
		p.state, p.closedBy, p.closed, p.autoMerge = "closed", s.opts.User, s.opts.Now(), nil
	}
	p.updated = s.opts.Now()
	return jsonAnswer(200, s.pullJSON(p))
}

func (s *Server) postStatus(sha string, body []byte) answer {
	var in struct {
		State       string `json:"state"`
		TargetURL   string `json:"target_url"`
		Description string `json:"description"`
		Context     string `json:"context"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return jsonAnswer(400, json.RawMessage(message("Problems parsing JSON")))
	}
	switch in.State {
	case "pending", "success", "failure", "error":
	default:
		return jsonAnswer(422, map[string]any{"message": "Validation Failed", "errors": []any{
			map[string]any{"resource": "Status", "field": "state", "code": "custom", "message": "state is not included in the list"}}})
	}
	if len([]rune(in.Description)) > 140 {
		return jsonAnswer(422, map[string]any{"message": "Validation Failed", "errors": []any{
			map[string]any{"resource": "Status", "code": "custom", "field": "description", "message": "description is too long (maximum is 140 characters)"}}})
	}
	if !git.HasCommit(ctx(), s.opts.Remote, sha) {
		return jsonAnswer(422, map[string]any{"message": "No commit found for SHA: " + sha, "documentation_url": "https://docs.github.com/rest/commits/statuses#create-a-commit-status"})
	}
	if in.Context == "" {
		in.Context = "default"
	}
	st := &status{id: s.id(), Status: Status{Context: in.Context, State: in.State, Description: in.Description, TargetURL: in.TargetURL}, at: s.opts.Now()}
	s.statuses[sha] = append(s.statuses[sha], st)
	for _, p := range s.prs {
		if p.headSHA == sha {
			p.updated = st.at
		}
	}
	s.autoMergeAll()
	a := jsonAnswer(201, s.statusJSON(sha, st))
	for _, f := range s.hooks.status {
		a.after = append(a.after, func() { f(sha, st.Status) })
	}
	return a
}

func (s *Server) apiURL(rest string) string {
	return s.URL() + "/repos/" + s.owner + "/" + s.name + "/" + rest
}

func (s *Server) user(login string) any {
	if login == "" {
		return nil
	}
	return map[string]any{"login": login, "id": len(login), "node_id": "U_" + login, "type": "User",
		"html_url": s.http.URL + "/" + url.PathEscape(login)}
}

func stamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func (s *Server) repoJSON() map[string]any {
	return map[string]any{"id": 1, "node_id": "R_kgDOtest", "name": s.name, "full_name": s.owner + "/" + s.name,
		"owner": s.user(s.owner), "private": true, "html_url": s.http.URL + "/" + s.owner + "/" + s.name,
		"url": s.URL() + "/repos/" + s.owner + "/" + s.name, "default_branch": "main",
		"permissions": map[string]any{"admin": false, "push": !s.opts.ReadOnly, "pull": true}}
}

func (s *Server) pullJSON(p *pull) map[string]any {
	var autoMerge any
	if p.autoMerge != nil {
		autoMerge = map[string]any{"enabled_by": s.user(s.opts.User), "merge_method": strings.ToLower(p.autoMerge.method),
			"commit_title": "", "commit_message": ""}
	}
	var mergedBy any
	if p.merged {
		mergedBy = s.user(p.mergedBy)
	}
	var mergedAt any
	if p.merged {
		mergedAt = stamp(p.closed)
	}
	var mergeCommit any
	if p.mergeCommit != "" {
		mergeCommit = p.mergeCommit
	}
	repo := s.repoJSON()
	// GitHub computes mergeable in the background (null until then); the
	// stand-in answers at once: an open pull request whose head does not
	// merge onto its base is not mergeable, "dirty".
	var mergeable any
	mergeableState := "unknown"
	if p.state == "open" {
		_, err := git.SquashCommit(ctx(), s.opts.Remote, s.baseTip(p), p.headSHA, "mergeable?", "GitHub", "noreply@github.com")
		var conflict *git.ConflictError
		switch {
		case errors.As(err, &conflict):
			mergeable, mergeableState = false, "dirty"
		case err == nil:
			mergeable, mergeableState = true, "clean"
		}
	}
	return map[string]any{
		"url": s.apiURL("pulls/" + strconv.Itoa(p.number)), "id": int64(p.number) * 7919, "node_id": p.nodeID,
		"html_url": s.http.URL + "/" + s.owner + "/" + s.name + "/pull/" + strconv.Itoa(p.number),
		"number":   p.number, "state": p.state, "locked": false, "title": p.title, "body": p.body,
		"user": s.user(s.opts.User), "created_at": stamp(p.created), "updated_at": stamp(p.updated),
		"closed_at": stamp(p.closed), "merged_at": mergedAt, "merge_commit_sha": mergeCommit, "draft": false,
		"head":       map[string]any{"label": s.owner + ":" + p.head, "ref": p.head, "sha": p.headSHA, "user": s.user(s.owner), "repo": repo},
		"base":       map[string]any{"label": s.owner + ":" + p.base, "ref": p.base, "sha": s.baseTip(p), "user": s.user(s.owner), "repo": repo},
		"auto_merge": autoMerge, "merged": p.merged, "mergeable": mergeable, "mergeable_state": mergeableState, "merged_by": mergedBy,
		"comments": len(p.comments), "review_comments": reviewComments(p),
	}
}

func reviewComments(p *pull) int {
	n := 0
	for _, r := range p.reviews {
		n += len(r.comments)
	}
	return n
}

func (s *Server) reviewJSON(p *pull, r *review) map[string]any {
	return map[string]any{"id": r.id, "node_id": "PRR_kwDOtest" + strconv.FormatInt(r.id, 10), "user": s.user(r.user),
		"body": r.body, "state": r.state, "commit_id": r.commit, "submitted_at": stamp(r.at), "author_association": "MEMBER",
		"html_url":         s.http.URL + "/" + s.owner + "/" + s.name + "/pull/" + strconv.Itoa(p.number) + "#pullrequestreview-" + strconv.FormatInt(r.id, 10),
		"pull_request_url": s.apiURL("pulls/" + strconv.Itoa(p.number))}
}

func (s *Server) lineCommentJSON(p *pull, r *review, c *lineComment) map[string]any {
	return map[string]any{"id": c.id, "node_id": "PRRC_kwDOtest" + strconv.FormatInt(c.id, 10), "pull_request_review_id": r.id,
		"path": c.Path, "line": c.Line, "original_line": c.Line, "side": "RIGHT", "commit_id": c.commit, "original_commit_id": c.commit,
		"user": s.user(r.user), "body": c.Body, "created_at": stamp(c.at), "updated_at": stamp(c.at),
		"html_url": s.http.URL + "/" + s.owner + "/" + s.name + "/pull/" + strconv.Itoa(p.number) + "#discussion_r" + strconv.FormatInt(c.id, 10)}
}

func (s *Server) issueJSON(p *pull) map[string]any {
	var closedBy any
	if p.state == "closed" {
		by := p.closedBy
		if p.merged {
			by = p.mergedBy
		}
		closedBy = s.user(by)
	}
	var mergedAt any
	if p.merged {
		mergedAt = stamp(p.closed)
	}
	return map[string]any{"id": int64(p.number) * 7907, "node_id": "I_kwDOtest" + strconv.Itoa(p.number), "number": p.number,
		"title": p.title, "body": p.body, "user": s.user(s.opts.User), "state": p.state, "locked": false,
		"comments": len(p.comments), "created_at": stamp(p.created), "updated_at": stamp(p.updated), "closed_at": stamp(p.closed),
		"closed_by": closedBy,
		"html_url":  s.http.URL + "/" + s.owner + "/" + s.name + "/pull/" + strconv.Itoa(p.number),
		"pull_request": map[string]any{"url": s.apiURL("pulls/" + strconv.Itoa(p.number)),
			"html_url": s.http.URL + "/" + s.owner + "/" + s.name + "/pull/" + strconv.Itoa(p.number), "merged_at": mergedAt}}
}

func (s *Server) commentJSON(p *pull, c *comment) map[string]any {
	return map[string]any{"id": c.id, "node_id": "IC_kwDOtest" + strconv.FormatInt(c.id, 10), "user": s.user(c.user),
		"body": c.body, "created_at": stamp(c.at), "updated_at": stamp(c.at), "author_association": "MEMBER",
		"html_url":  s.http.URL + "/" + s.owner + "/" + s.name + "/pull/" + strconv.Itoa(p.number) + "#issuecomment-" + strconv.FormatInt(c.id, 10),
		"issue_url": s.apiURL("issues/" + strconv.Itoa(p.number))}
}

func (s *Server) statusJSON(sha string, st *status) map[string]any {
	var target any
	if st.TargetURL != "" {
		target = st.TargetURL
	}
	return map[string]any{"url": s.apiURL("statuses/" + sha), "id": st.id, "node_id": "SC_kwDOtest" + strconv.FormatInt(st.id, 10),
		"state": st.State, "description": st.Description, "target_url": target, "context": st.Context,
		"created_at": stamp(st.at), "updated_at": stamp(st.at), "creator": s.user(s.opts.User)}
}

// combinedJSON is GitHub's combined status: the newest status of each
// context, and a state that is failure when one failed or erred, pending
// when one is pending or there are none, else success.
func (s *Server) combinedJSON(sha string) map[string]any {
	latest := latestStatuses(s.statuses[sha])
	state := "success"
	if len(latest) == 0 {
		state = "pending"
	}
	list := []any{}
	for _, st := range latest {
		switch st.State {
		case "failure", "error":
			state = "failure"
		case "pending":
			if state == "success" {
				state = "pending"
			}
		}
		list = append(list, s.statusJSON(sha, st))
	}
	return map[string]any{"state": state, "statuses": list, "sha": sha, "total_count": len(list),
		"repository": s.repoJSON(), "commit_url": s.apiURL("commits/" + sha), "url": s.apiURL("commits/" + sha + "/status")}
}

func (s *Server) checkRunJSON(c *checkRun) map[string]any {
	title, summary, _ := strings.Cut(c.output, "\n")
	return map[string]any{"id": c.id, "node_id": "CR_kwDOtest" + strconv.FormatInt(c.id, 10), "head_sha": c.sha, "name": c.name,
		"external_id": "", "url": s.apiURL("check-runs/" + strconv.FormatInt(c.id, 10)),
		"html_url":    s.http.URL + "/" + s.owner + "/" + s.name + "/runs/" + strconv.FormatInt(c.id, 10),
		"details_url": s.http.URL + "/" + s.owner + "/" + s.name + "/actions/runs/" + strconv.FormatInt(c.id, 10),
		"status":      "completed", "conclusion": c.conclusion, "started_at": stamp(c.at), "completed_at": stamp(c.at),
		"output":      map[string]any{"title": title, "summary": summary, "text": nil, "annotations_count": 0, "annotations_url": s.apiURL("check-runs/" + strconv.FormatInt(c.id, 10) + "/annotations")},
		"check_suite": map[string]any{"id": c.id + 1}, "app": map[string]any{"id": 15368, "slug": "github-actions", "name": "GitHub Actions"},
		"pull_requests": []any{}}
}

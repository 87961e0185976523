package githubtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func call(t *testing.T, s *Server, token, method, path string, body any, header ...string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	url := s.URL() + path
	if strings.HasPrefix(path, "/api/") {
		url = s.WebURL() + path
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, data
}

func TestServerOpensMergesAndAnswersConditionally(t *testing.T) {
	r := NewRemote(t)
	s := NewServer(Options{Token: "tok", Repository: "acme/app", Remote: r.Bare, MergeQueue: true, AutoMerge: true, Required: []string{"set/test"}})
	defer s.Close()
	head := r.Branch("set/a", "a.txt")

	if resp, _ := call(t, s, "wrong", "GET", "/repos/acme/app", nil); resp.StatusCode != 401 {
		t.Fatalf("a wrong token: %d, want 401", resp.StatusCode)
	}
	if resp, _ := call(t, s, "tok", "GET", "/repos/acme/other", nil); resp.StatusCode != 404 {
		t.Fatalf("another repository: %d, want 404", resp.StatusCode)
	}
	resp, data := call(t, s, "tok", "POST", "/repos/acme/app/pulls", map[string]string{"title": "a", "head": "set/a", "base": "main", "body": "b"})
	if resp.StatusCode != 201 {
		t.Fatalf("open: %d %s", resp.StatusCode, data)
	}
	var pr struct {
		Number int    `json:"number"`
		NodeID string `json:"node_id"`
		Head   struct{ SHA string }
	}
	_ = json.Unmarshal(data, &pr)
	if pr.Number != 1 || pr.Head.SHA != head {
		t.Fatalf("opened %+v, want #1 at %s", pr, head)
	}
	if resp, data := call(t, s, "tok", "POST", "/repos/acme/app/pulls", map[string]string{"title": "a", "head": "set/a", "base": "main"}); resp.StatusCode != 422 || !strings.Contains(string(data), "already exists") {
		t.Fatalf("a second open: %d %s", resp.StatusCode, data)
	}

	// The head filter's user is a login, whatever its case.
	for _, head := range []string{"acme:set/a", "ACME:set/a"} {
		if _, data := call(t, s, "tok", "GET", "/repos/acme/app/pulls?state=open&head="+head, nil); !strings.Contains(string(data), `"number":1`) {
			t.Fatalf("pulls of head %s: %s", head, data)
		}
	}

	// A conditional GET of an unchanged pull request: 304, free.
	resp, _ = call(t, s, "tok", "GET", "/repos/acme/app/pulls/1", nil)
	etag := resp.Header.Get("ETag")
	used := s.RateUsed("core")
	if resp, _ := call(t, s, "tok", "GET", "/repos/acme/app/pulls/1", nil, "If-None-Match", etag); resp.StatusCode != 304 || s.RateUsed("core") != used {
		t.Fatalf("conditional GET: %d, rate used %d -> %d", resp.StatusCode, used, s.RateUsed("core"))
	}

	// Handed to the merge while its required status is missing: GitHub
	// does not queue it yet, "merge when ready" arms auto-merge, and it
	// waits; the status posted, it is queued, then merges.
	enqueue := map[string]any{"query": "mutation($input: EnqueuePullRequestInput!) { enqueuePullRequest(input: $input) { mergeQueueEntry { state position } } }",
		"variables": map[string]any{"input": map[string]any{"pullRequestId": pr.NodeID, "expectedHeadOid": head}}}
	if resp, data := call(t, s, "tok", "POST", "/api/graphql", enqueue); resp.StatusCode != 200 || !strings.Contains(string(data), `"UNPROCESSABLE"`) {
		t.Fatalf("enqueue before the required status: %d %s", resp.StatusCode, data)
	}
	arm := map[string]any{"query": "mutation($input: EnablePullRequestAutoMergeInput!) { enablePullRequestAutoMerge(input: $input) { pullRequest { autoMergeRequest { enabledAt } } } }",
		"variables": map[string]any{"input": map[string]any{"pullRequestId": pr.NodeID, "expectedHeadOid": head}}}
	if resp, data := call(t, s, "tok", "POST", "/api/graphql", arm); resp.StatusCode != 200 || !strings.Contains(string(data), `"enabledAt"`) {
		t.Fatalf("merge when ready: %d %s", resp.StatusCode, data)
	}
	if got, _ := s.PR(1); got.Queued || !got.AutoMerge {
		t.Fatalf("after merge when ready: %+v", got)
	}
	if resp, data := call(t, s, "tok", "POST", "/repos/acme/app/statuses/"+head, map[string]string{"state": "pending", "context": "ci/lint"}); resp.StatusCode != 201 {
		t.Fatalf("status: %d %s", resp.StatusCode, data)
	}
	if resp, data := call(t, s, "tok", "POST", "/repos/acme/app/statuses/"+head, map[string]string{"state": "success", "context": "set/test"}); resp.StatusCode != 201 {
		t.Fatalf("status: %d %s", resp.StatusCode, data)
	}
	if got, _ := s.PR(1); !got.Queued || got.QueueCommit == "" || got.Merged {
		t.Fatalf("once the required status passed, another pending: %+v, want it queued", got)
	}
	if resp, data := call(t, s, "tok", "POST", "/api/graphql", enqueue); resp.StatusCode != 200 || !strings.Contains(string(data), `"AWAITING_CHECKS"`) {
		t.Fatalf("enqueue of a queued one: %d %s", resp.StatusCode, data)
	}
	if resp, data := call(t, s, "tok", "POST", "/repos/acme/app/statuses/"+head, map[string]string{"state": "success", "context": "ci/lint"}); resp.StatusCode != 201 {
		t.Fatalf("status: %d %s", resp.StatusCode, data)
	}
	got, _ := s.PR(1)
	if !got.Merged || r.Git(r.Bare, "rev-parse", "main") != got.MergeCommit || r.Git(r.Bare, "rev-parse", "main^{tree}") != r.Git(r.Bare, "rev-parse", head+"^{tree}") {
		t.Fatalf("after the status: %+v, main at %s", got, r.Git(r.Bare, "rev-parse", "main"))
	}
}

func TestServerFailsAQueuedCheckAndLimits(t *testing.T) {
	r := NewRemote(t)
	s := NewServer(Options{Token: "tok", Repository: "acme/app", Remote: r.Bare, MergeQueue: true})
	defer s.Close()
	r.Branch("set/a", "a.txt")
	call(t, s, "tok", "POST", "/repos/acme/app/pulls", map[string]string{"title": "a", "head": "set/a", "base": "main"})
	p, _ := s.PR(1)
	call(t, s, "tok", "POST", "/graphql", map[string]any{"query": "mutation($input: EnqueuePullRequestInput!) { enqueuePullRequest(input: $input) { mergeQueueEntry { state } } }",
		"variables": map[string]any{"input": map[string]any{"pullRequestId": p.NodeID}}})
	sha, err := s.FailCheck(1, "ci/test", "tests failed\nTestX: want 1, got 2")
	if err != nil || sha == p.HeadSHA {
		t.Fatalf("FailCheck = %s, %v; want the merge group commit", sha, err)
	}
	if p, _ := s.PR(1); p.Queued {
		t.Fatal("a failed queue check leaves the pull request queued")
	}
	_, data := call(t, s, "tok", "GET", "/repos/acme/app/commits/"+sha+"/check-runs", nil)
	if !strings.Contains(string(data), `"conclusion":"failure"`) {
		t.Fatalf("check runs of the merge group commit: %s", data)
	}
	query := map[string]any{"query": "query($owner: String!, $name: String!, $number: Int!) { repository(owner: $owner, name: $name) { pullRequest(number: $number) { timelineItems(last: 50, itemTypes: [REMOVED_FROM_MERGE_QUEUE_EVENT]) { nodes { __typename } } } } }",
		"variables": map[string]any{"owner": "acme", "name": "app", "number": 1}}
	if _, data := call(t, s, "tok", "POST", "/graphql", query); !strings.Contains(string(data), sha) {
		t.Fatalf("the removal does not name the merge group commit: %s", data)
	}

	s.RateLimit(1, TooMany)
	s.RateLimit(1, Primary)
	if resp, _ := call(t, s, "tok", "GET", "/repos/acme/app", nil); resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("TooMany: %d", resp.StatusCode)
	}
	if resp, _ := call(t, s, "tok", "GET", "/repos/acme/app", nil); resp.StatusCode != 403 || resp.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("Primary: %d", resp.StatusCode)
	}
	s.RateLimit(1, Primary)
	if resp, data := call(t, s, "tok", "POST", "/graphql", query); resp.StatusCode != 200 || resp.Header.Get("X-RateLimit-Remaining") != "0" ||
		!strings.Contains(string(data), `"type":"RATE_LIMITED"`) {
		t.Fatalf("Primary, to GraphQL: %d %s", resp.StatusCode, data)
	}
	s.Refuse(403)
	if resp, _ := call(t, s, "tok", "GET", "/repos/acme/app", nil); resp.StatusCode != 403 {
		t.Fatalf("Refuse(403): %d", resp.StatusCode)
	}
	for _, req := range s.Requests() {
		if strings.Contains(req.String(), "tok") {
			t.Errorf("the log holds the token: %s", req)
		}
	}
}

// A test's script for the forge's people: the first request to merge
// gets changes requested (and the pull request out of the queue), the
// next is merged.
func TestServerHooksActBeforeTheAnswer(t *testing.T) {
	r := NewRemote(t)
	s := NewServer(Options{Token: "tok", Repository: "acme/app", Remote: r.Bare, MergeQueue: true})
	defer s.Close()
	asked := 0
	s.OnRequestMerge(func(pr PR) {
		asked++
		if asked == 1 {
			if _, err := s.RequestChanges(pr.Number, "bob", "not like this", ReviewComment{Path: "a.txt", Line: 1, Body: "here"}); err != nil {
				t.Error(err)
			}
			if err := s.Dequeue(pr.Number, "bob", "changes requested"); err != nil {
				t.Error(err)
			}
			return
		}
		if _, err := s.Merge(pr.Number); err != nil {
			t.Error(err)
		}
	})
	r.Branch("set/a", "a.txt")
	call(t, s, "tok", "POST", "/repos/acme/app/pulls", map[string]string{"title": "a", "head": "set/a", "base": "main"})
	p, _ := s.PR(1)
	enqueue := map[string]any{"query": "mutation($input: EnqueuePullRequestInput!) { enqueuePullRequest(input: $input) { mergeQueueEntry { state } } }",
		"variables": map[string]any{"input": map[string]any{"pullRequestId": p.NodeID}}}
	call(t, s, "tok", "POST", "/graphql", enqueue)
	if p, _ := s.PR(1); p.Queued || p.Merged {
		t.Fatalf("after the first request: %+v", p)
	}
	_, data := call(t, s, "tok", "GET", "/repos/acme/app/pulls/1/reviews", nil)
	if !strings.Contains(string(data), `"state":"CHANGES_REQUESTED"`) {
		t.Fatalf("reviews: %s", data)
	}
	call(t, s, "tok", "POST", "/graphql", enqueue)
	if p, _ := s.PR(1); !p.Merged || r.Git(r.Bare, "rev-parse", "main") != p.MergeCommit {
		t.Fatalf("after the second request: %+v", p)
	}
}

// A squash with no message asked for says what GitHub's defaults say:
// a one-commit pull request's commit message, "(#N)" after its subject.
func TestMergeOfOneCommitKeepsItsMessage(t *testing.T) {
	r := NewRemote(t)
	r.Git(r.Clone, "checkout", "-q", "-B", "set/a", "origin/main")
	r.Commit("a.txt", "a\n")
	r.Git(r.Clone, "commit", "-q", "--amend", "-m", "a: Alpha\n\nSet-Change: a")
	r.Git(r.Clone, "push", "-q", "-f", "origin", "set/a")
	s := NewServer(Options{Token: "tok", Repository: "acme/app", Remote: r.Bare})
	defer s.Close()
	call(t, s, "tok", "POST", "/repos/acme/app/pulls", map[string]string{"title": "the title", "head": "set/a", "base": "main"})
	if _, err := s.Merge(1); err != nil {
		t.Fatal(err)
	}
	if got, want := r.Git(r.Bare, "log", "-1", "--format=%B", "main"), "a: Alpha (#1)\n\nSet-Change: a"; got != want {
		t.Errorf("main's commit says %q; want %q", got, want)
	}
	if _, err := s.MergeWith(1, "x"); err == nil {
		t.Error("merged twice")
	}
}

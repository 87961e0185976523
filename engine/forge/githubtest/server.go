// Package githubtest is a stand-in GitHub for tests, as net/http/httptest
// is a stand-in web server: an HTTP server answering the REST v3 and
// GraphQL endpoints forge/github uses, with the shapes GitHub documents
// (status codes, JSON field names, the ETag, x-ratelimit-*, Retry-After
// and Link headers), over a local bare git repository that plays the
// GitHub repository. Tests act as the forge and its people through the
// Server's methods (Merge, ClosePR, RequestChanges, FailCheck, RateLimit,
// Refuse), and may let it react by itself (Options.AutoMerge, the On…
// hooks) while setctl runs unattended.
//
// Invariants:
//   - The bare repository is the truth of git: a pull request's head is
//     its branch's tip there, read at every answer (a push shows at
//     once), and only Merge moves a branch, by a compare-and-swap from
//     the tip it read, to a squash commit whose parent is that tip.
//   - Every request must carry the token (Bearer or token scheme): one
//     without it is a 401, as GitHub answers it.
//   - An answer to a conditional request whose ETag still matches is a
//     304 with no body, and costs no rate limit; every other answer but
//     a 401 costs one (RateUsed).
//   - The server never answers with the token, and never logs it.
//
// It does not parse GraphQL: it recognises forge/github's operations by
// their root fields (mergeQueue, pullRequest, enqueuePullRequest,
// enablePullRequestAutoMerge, mergePullRequest) and answers with every
// field those operations select.
package githubtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configures a Server.
type Options struct {
	// Token is the only token the server takes (required).
	Token string
	// Repository is the owner/name the server serves (required); every
	// other repository is GitHub's 404.
	Repository string
	// Remote is the path of the bare git repository that is the
	// repository's git side (required).
	Remote string
	// MergeQueue: every base branch has a merge queue (GitHub's branch
	// protection "require merge queue"); else pull requests merge by
	// auto-merge.
	MergeQueue bool
	// AutoMerge: the server merges a pull request by itself as soon as it
	// is enqueued or has auto-merge armed and its head is green: no
	// status or check on it pending or failed, and every Required
	// context a success. Merges happen in queue order, and again
	// whenever a status is posted.
	AutoMerge bool
	// Required are the status contexts branch protection requires.
	Required []string
	// NoAutoMerge: the repository's settings do not allow auto-merge,
	// and enablePullRequestAutoMerge is refused as GitHub refuses it.
	NoAutoMerge bool
	// ReadOnly: the token may read the repository but not push to it
	// (its permissions say so).
	ReadOnly bool
	// User is the login the token belongs to ("set-bot" when empty).
	User string
	// Now is the server's clock (time.Now when nil): its timestamps and
	// its x-ratelimit-reset.
	Now func() time.Time
}

// Server is a running stand-in GitHub. Its methods are safe for
// concurrent use, with each other and with the requests it answers.
type Server struct {
	opts     Options
	owner    string
	name     string
	http     *httptest.Server
	mu       sync.Mutex
	nextID   int64
	prs      []*pull // by number-1
	statuses map[string][]*status
	checks   map[string][]*checkRun
	limits   []Limit
	refuse   int
	log      []Request
	used     map[string]int
	etags    map[string]bool
	hooks    hooks
}

type hooks struct {
	open, requestMerge []func(PR)
	status             []func(sha string, s Status)
}

// Request is one request the server answered.
type Request struct {
	Method string
	// Path is the URL's path without the /api/v3 prefix
	// (/repos/o/r/pulls/1, /graphql).
	Path  string
	Query string
	// Operation is, for a GraphQL request, the root field it asked for
	// (enqueuePullRequest, pullRequest, mergeQueue…).
	Operation string
	// Conditional: it carried If-None-Match.
	Conditional bool
	Status      int
}

func (r Request) String() string {
	s := r.Method + " " + r.Path
	if r.Query != "" {
		s += "?" + r.Query
	}
	if r.Operation != "" {
		s += " " + r.Operation
	}
	return fmt.Sprintf("%s %d", s, r.Status)
}

// NewServer starts a Server; Close stops it.
func NewServer(opts Options) *Server {
	owner, name, ok := strings.Cut(opts.Repository, "/")
	if !ok || opts.Token == "" || opts.Remote == "" {
		panic("githubtest: Options need Token, Repository (owner/name) and Remote")
	}
	if opts.User == "" {
		opts.User = "set-bot"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{
		opts: opts, owner: owner, name: name, nextID: 1000,
		statuses: map[string][]*status{}, checks: map[string][]*checkRun{},
		used: map[string]int{}, etags: map[string]bool{},
	}
	s.http = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the REST API's base URL, in GitHub Enterprise Server's form
// (http://127.0.0.1:PORT/api/v3); its GraphQL endpoint is /api/graphql.
// The same API answers at the root too, in api.github.com's form (/repos/…,
// /graphql).
func (s *Server) URL() string { return s.http.URL + "/api/v3" }

// WebURL is the root of the server's pages (a pull request's html_url).
func (s *Server) WebURL() string { return s.http.URL }

// Close stops the server.
func (s *Server) Close() { s.http.Close() }

// Requests is every request answered so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// RateUsed is how much rate limit the requests so far cost, by
// resource ("core" for REST, "graphql").
func (s *Server) RateUsed(resource string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used[resource]
}

// Limit is a rate limit GitHub can answer with.
type Limit int

// The rate limits.
const (
	// TooMany is a 429 with Retry-After: 30.
	TooMany Limit = iota + 1
	// Secondary is a 403 saying a secondary rate limit was exceeded,
	// with no Retry-After and the primary limit not used up.
	Secondary
	// Primary is a 403 with x-ratelimit-remaining: 0 and
	// x-ratelimit-reset 90 seconds on; to a GraphQL request, a 200 with
	// those headers and an error of type RATE_LIMITED, as GitHub
	// answers it there.
	Primary
)

// rateLimit is the primary limit per hour the server advertises.
const rateLimit = 5000

// RateLimit answers each of the next n requests with limit.
func (s *Server) RateLimit(n int, limit Limit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.limits = append(s.limits, limit)
	}
}

// Refuse answers every request from now on with status: 401 (a token
// GitHub does not know) or 403 (a token without access to the
// repository). Refuse(0) stops it.
func (s *Server) Refuse(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = status
}

// OnOpen calls f with every pull request opened, once it is open.
func (s *Server) OnOpen(f func(PR)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks.open = append(s.hooks.open, f)
}

// OnRequestMerge calls f with every pull request that is enqueued or has
// auto-merge armed, before the request is answered (and after
// Options.AutoMerge had its turn): f may Merge, Close, RequestChanges or
// FailCheck it, and the client's read-back sees what f did.
func (s *Server) OnRequestMerge(f func(PR)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks.requestMerge = append(s.hooks.requestMerge, f)
}

// OnStatus calls f with every commit status posted, before the post is
// answered.
func (s *Server) OnStatus(f func(sha string, st Status)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks.status = append(s.hooks.status, f)
}

// serve answers one request. The order matters as GitHub's does: the
// token first (a 401 costs nothing), then a refusal, then a rate limit,
// then the endpoint.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/api/v3")
	if r.URL.Path == "/api/graphql" {
		path = "/graphql"
	}
	var body []byte
	if r.Body != nil {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(r.Body)
		body = buf.Bytes()
	}
	req := Request{Method: r.Method, Path: path, Query: r.URL.RawQuery, Conditional: r.Header.Get("If-None-Match") != ""}
	if path == "/graphql" {
		req.Operation = operation(body)
	}
	resource := "core"
	if path == "/graphql" {
		resource = "graphql"
	}

	s.mu.Lock()
	a := s.answer(r, path, body, resource)
	req.Status = a.status
	s.log = append(s.log, req)
	s.mu.Unlock()

	for _, f := range a.after {
		f()
	}
	for k, v := range a.header {
		w.Header()[k] = v
	}
	w.WriteHeader(a.status)
	if a.status != http.StatusNotModified {
		_, _ = w.Write(a.body)
	}
}

// answer is a response to write, and what to call before writing it,
// unlocked (hooks).
type answer struct {
	status int
	header http.Header
	body   []byte
	after  []func()
}

// answer answers a request with s.mu held.
func (s *Server) answer(r *http.Request, path string, body []byte, resource string) answer {
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-GitHub-Media-Type", "github.v3; format=json")
	if !s.authorized(r.Header.Get("Authorization")) {
		return answer{status: 401, header: h, body: message("Bad credentials")}
	}
	reset := s.opts.Now().Add(time.Hour).Unix()
	setRate := func(remaining int) {
		h.Set("X-RateLimit-Limit", strconv.Itoa(rateLimit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
		h.Set("X-RateLimit-Used", strconv.Itoa(rateLimit-remaining))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(reset, 10))
		h.Set("X-RateLimit-Resource", resource)
	}
	if s.refuse != 0 {
		s.used[resource]++
		setRate(rateLimit - s.used[resource])
		if s.refuse == 401 {
			return answer{status: 401, header: h, body: message("Bad credentials")}
		}
		return answer{status: s.refuse, header: h, body: message("Resource not accessible by personal access token")}
	}
	if len(s.limits) > 0 {
		limit := s.limits[0]
		s.limits = s.limits[1:]
		s.used[resource]++
		switch limit {
		case TooMany:
			setRate(rateLimit - s.used[resource])
			h.Set("Retry-After", "30")
			return answer{status: 429, header: h, body: message("You have exceeded a secondary rate limit. Please wait a few minutes before you try again.")}
		case Secondary:
			setRate(rateLimit - s.used[resource])
			return answer{status: 403, header: h, body: message("You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.")}
		default:
			reset = s.opts.Now().Add(90 * time.Second).Unix()
			setRate(0)
			if resource == "graphql" {
				// GraphQL's primary limit is a 200 whose errors say so.
				return answer{status: 200, header: h, body: mustJSON(map[string]any{"errors": []gqlError{{Type: "RATE_LIMITED",
					Message: "API rate limit already exceeded for user ID 1."}}})}
			}
			return answer{status: 403, header: h, body: message("API rate limit exceeded for user ID 1.")}
		}
	}

	var a answer
	if path == "/graphql" && r.Method == http.MethodPost {
		a = s.graphql(body)
	} else {
		a = s.rest(r, path, body)
	}
	for k, v := range a.header {
		h[k] = v
	}
	a.header = h
	if a.status == http.StatusOK && r.Method == http.MethodGet {
		sum := sha256.Sum256(a.body)
		etag := `W/"` + hex.EncodeToString(sum[:16]) + `"`
		h.Set("ETag", etag)
		if match := r.Header.Get("If-None-Match"); match != "" && match == etag {
			setRate(rateLimit - s.used[resource])
			a.status = http.StatusNotModified
			a.body = nil
			return a
		}
	}
	s.used[resource]++
	setRate(rateLimit - s.used[resource])
	return a
}

// authorized reports whether the Authorization header carries the token.
func (s *Server) authorized(auth string) bool {
	for _, scheme := range []string{"Bearer ", "token "} {
		if t, ok := strings.CutPrefix(auth, scheme); ok && t == s.opts.Token {
			return true
		}
	}
	return false
}

// message is GitHub's error body.
func message(msg string) []byte {
	return mustJSON(map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest"})
}

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

func jsonAnswer(status int, v any) answer {
	return answer{status: status, body: mustJSON(v)}
}

// ctx is the context of the server's git commands: they are local and
// quick, and a request's own context may end before the state they keep
// consistent has been written.
func ctx() context.Context { return context.Background() }

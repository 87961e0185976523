// Package github is forge.Forge for GitHub and GitHub Enterprise Server:
// pull requests and commit statuses through the REST API (v3, version
// 2022-11-28), the merge queue and auto-merge through the GraphQL API.
//
// Invariants:
//   - The token travels only in the Authorization header: it is in no
//     error, no value returned, nothing logged.
//   - A refusal of the token (401, a 403 that is no rate limit) or a
//     repository GitHub does not show (404) is a *forge.ConfigError, never
//     retried. A rate limit (429, a 403 with x-ratelimit-remaining 0 or a
//     secondary-limit message, GraphQL's RATE_LIMITED) is waited out with
//     Options.Sleep and the request sent again, for as long as the
//     context lasts. A 5xx or a broken connection is retried a few times.
//   - Every GET is conditional once its URL was read: the client keeps the
//     last body and ETag of each URL, and a 304 (free of rate limit)
//     answers from it. That cache, and the merge group commits the merge
//     queue showed for each pull request, is all the client keeps between
//     calls; what set has seen of a pull request is the journal's.
package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/set-engine/set/engine/forge"
)

// Options configures a Client.
type Options struct {
	// APIURL is the REST API's base: https://api.github.com, or
	// https://HOST/api/v3 for GitHub Enterprise Server.
	APIURL string
	// Repository is owner/name.
	Repository string
	// Token is the API token (a fine-grained or classic personal access
	// token, or an app's installation token).
	Token string
	// TokenEnv names the variable the token came from, for the Fix of a
	// refused token (project.delivery.forge.tokenEnv); may be empty.
	TokenEnv string
	// HTTPClient sends the requests (one with a one-minute timeout when
	// nil).
	HTTPClient *http.Client
	// Sleep waits d or until ctx ends (a real timer when nil); tests
	// inject one that records the waits.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock that x-ratelimit-reset is read against (time.Now
	// when nil).
	Now func() time.Time
}

// String and GoString print Options without its token (fmt's %v, %+v
// and %#v would else print it).
func (o Options) String() string {
	return fmt.Sprintf("github.Options{APIURL: %q, Repository: %q, TokenEnv: %q, Token: %s}", o.APIURL, o.Repository, o.TokenEnv, redacted(o.Token))
}

// GoString is String.
func (o Options) GoString() string { return o.String() }

func redacted(token string) string {
	if token == "" {
		return `""`
	}
	return "***"
}

// Client is a GitHub repository reached with a token. It is safe for
// concurrent use.
type Client struct {
	api, graphqlURL string
	owner, name     string
	token, tokenEnv string
	http            *http.Client
	sleep           func(context.Context, time.Duration) error
	now             func() time.Time

	mu    sync.Mutex
	cache map[string]cached // by URL: the last 200 of a GET
	queue map[int]queueLook // by pull request: the merge queue read with a version of it
}

type cached struct {
	etag string
	body []byte
	link string
}

var _ forge.Forge = (*Client)(nil)

// String names the client without its token (fmt's %v of a *Client
// would else print it).
func (c *Client) String() string {
	return "GitHub " + c.owner + "/" + c.name + " at " + c.api
}

// GoString is String.
func (c *Client) GoString() string { return c.String() }

// userAgent names set to GitHub, which asks every client for one.
const userAgent = "setctl (https://github.com/set-engine/set)"

// apiVersion is the REST API version the shapes here are of.
const apiVersion = "2022-11-28"

// New returns a Client for opts.Repository at opts.APIURL.
func New(opts Options) (*Client, error) {
	api := strings.TrimRight(opts.APIURL, "/")
	u, err := url.Parse(api)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, &forge.ConfigError{Forge: opts.APIURL, Repository: opts.Repository,
			Message: "not an http(s) URL", Fix: "set project.delivery.forge.apiURL to https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise Server"}
	}
	owner, name, ok := strings.Cut(opts.Repository, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, &forge.ConfigError{Forge: api, Repository: opts.Repository,
			Message: "not an owner/name", Fix: "set project.delivery.forge.repository to the repository's owner/name"}
	}
	if opts.Token == "" {
		return nil, &forge.ConfigError{Forge: api, Repository: opts.Repository, Message: "no token", Fix: tokenFix(opts.TokenEnv, "holding an API token")}
	}
	c := &Client{api: api, graphqlURL: GraphQLURL(api), owner: owner, name: name, token: opts.Token, tokenEnv: opts.TokenEnv,
		http: opts.HTTPClient, sleep: opts.Sleep, now: opts.Now,
		cache: map[string]cached{}, queue: map[int]queueLook{}}
	if c.http == nil {
		c.http = &http.Client{Timeout: time.Minute}
	}
	if c.sleep == nil {
		c.sleep = sleep
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// GraphQLURL is the GraphQL endpoint of the REST API at api:
// https://api.github.com/graphql, or https://HOST/api/graphql for
// https://HOST/api/v3.
func GraphQLURL(api string) string {
	api = strings.TrimRight(api, "/")
	if base, ok := strings.CutSuffix(api, "/api/v3"); ok {
		return base + "/api/graphql"
	}
	return api + "/graphql"
}

// WebURL is the web page of the repository ownerName on the forge whose
// REST API is at api: https://github.com/owner/name for
// https://api.github.com, https://HOST/owner/name for
// https://HOST/api/v3 (GitHub Enterprise Server). ok is false for an API
// URL of neither form, whose pages cannot be told.
func WebURL(api, ownerName string) (string, bool) {
	u, err := url.Parse(strings.TrimRight(api, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || ownerName == "" {
		return "", false
	}
	switch {
	case strings.EqualFold(u.Host, "api.github.com") && u.Path == "":
		u.Host = "github.com"
	case strings.HasSuffix(u.Path, "/api/v3"):
		u.Path = strings.TrimSuffix(u.Path, "/api/v3")
	default:
		return "", false
	}
	return u.String() + "/" + ownerName, true
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RepositoryOf is the owner/name of a GitHub remote URL: scp-like
// (git@github.com:owner/name.git), ssh://, git://, https:// or http://,
// with or without .git. ok is false for any other (a local path, a path
// not of two parts, a part that is no name GitHub gives, as in git's
// ext:: transport).
func RepositoryOf(remoteURL string) (ownerName string, ok bool) {
	var path string
	if u, err := url.Parse(remoteURL); err == nil && u.Scheme != "" && u.Host != "" {
		switch u.Scheme {
		case "https", "http", "ssh", "git", "git+ssh", "ssh+git":
			path = u.Path
		default:
			return "", false
		}
	} else if host, rest, found := strings.Cut(remoteURL, ":"); found && len(host) > 1 && !strings.Contains(host, "/") && !strings.Contains(remoteURL, "://") {
		path = rest // scp-like: [user@]host:owner/name (not C:\ of a Windows path)
	} else {
		return "", false
	}
	path = strings.Trim(path, "/")
	if len(path) > 4 && strings.EqualFold(path[len(path)-4:], ".git") {
		path = path[:len(path)-4]
	}
	owner, name, found := strings.Cut(path, "/")
	if !found || !ownerPattern.MatchString(owner) || !repoPattern.MatchString(name) {
		return "", false
	}
	return owner + "/" + name, true
}

// The names GitHub gives an owner (a login or an organisation, with an
// underscore in an enterprise's managed users) and a repository.
var (
	ownerPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)
	repoPattern  = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
)

// APIError is an answer of GitHub's that is neither a success nor one
// of the refusals above: its status and its own words.
type APIError struct {
	Method, Path string
	Status       int
	Message      string
	// Errors are the details of a 422 (or a GraphQL error's messages).
	Errors []string
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("GitHub: %s %s: %d %s", e.Method, e.Path, e.Status, e.Message)
	if len(e.Errors) > 0 {
		s += ": " + strings.Join(e.Errors, "; ")
	}
	return s
}

// ghError is GitHub's error body.
type ghError struct {
	Message string `json:"message"`
	Errors  []struct {
		Resource string `json:"resource"`
		Field    string `json:"field"`
		Code     string `json:"code"`
		Message  string `json:"message"`
	} `json:"errors"`
}

func parseError(body []byte) ghError {
	var e ghError
	_ = json.Unmarshal(body, &e)
	return e
}

func (e ghError) details() []string {
	var out []string
	for _, d := range e.Errors {
		switch {
		case d.Message != "":
			out = append(out, d.Message)
		case d.Field != "":
			out = append(out, d.Field+" "+d.Code)
		}
	}
	return out
}

// response is an answer read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

// Retries of an answer that is GitHub's trouble (5xx, a broken
// connection): at most serverRetries, waiting serverBackoff, then twice
// that, and so on.
const (
	serverRetries = 3
	serverBackoff = 2 * time.Second
)

// Waits of a rate limit that says nothing of when it ends: a minute at
// first (GitHub's guidance for its secondary limits), doubling each
// time, at most maxLimitWait.
const (
	firstLimitWait = time.Minute
	maxLimitWait   = 15 * time.Minute
)

// do sends a request to u (a full URL) and returns a 2xx (a 304 answered
// from the cache as the 200 it stands for), after waiting out rate
// limits and retrying GitHub's own trouble; any other answer is an
// error: a *forge.ConfigError for a refusal, an *APIError else. in, when
// not nil, is sent as JSON.
func (c *Client) do(ctx context.Context, method, u string, in any) (*response, error) {
	var payload []byte
	if in != nil {
		var err error
		if payload, err = json.Marshal(in); err != nil {
			return nil, err
		}
	}
	serverTries, limitWait := 0, firstLimitWait
	for {
		resp, err := c.send(ctx, method, u, payload)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("GitHub: %s %s: %w", method, c.pathOf(u), ctx.Err())
			}
			if serverTries < serverRetries {
				if err := c.wait(ctx, serverBackoff<<serverTries, method, u); err != nil {
					return nil, err
				}
				serverTries++
				continue
			}
			return nil, fmt.Errorf("GitHub: %s %s: %w", method, c.pathOf(u), err)
		}
		switch {
		case resp.status >= 200 && resp.status < 300:
			return resp, nil
		case c.rateLimited(resp):
			d := c.limitWait(resp.header, &limitWait)
			if err := c.wait(ctx, d, method, u); err != nil {
				return nil, err
			}
			continue
		case resp.status >= 500 && serverTries < serverRetries:
			if err := c.wait(ctx, serverBackoff<<serverTries, method, u); err != nil {
				return nil, err
			}
			serverTries++
			continue
		}
		return nil, c.refusal(ctx, method, u, resp)
	}
}

// send sends one request, conditional when u was read before, and reads
// the answer whole; a 304 comes back as the cached 200.
func (c *Client) send(ctx context.Context, method, u string, payload []byte) (*response, error) {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", apiVersion)
	req.Header.Set("User-Agent", userAgent)
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.mu.Lock()
	hit, ok := c.cache[u]
	c.mu.Unlock()
	if method == http.MethodGet && ok {
		req.Header.Set("If-None-Match", hit.etag)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is said by the caller, once
		}
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, err
	}
	r := &response{status: resp.StatusCode, header: resp.Header, body: data}
	if method != http.MethodGet {
		return r, nil
	}
	switch {
	case resp.StatusCode == http.StatusNotModified && ok:
		r.status, r.body = http.StatusOK, hit.body
		if r.header.Get("Link") == "" && hit.link != "" {
			r.header = r.header.Clone()
			r.header.Set("Link", hit.link)
		}
	case resp.StatusCode == http.StatusOK && resp.Header.Get("ETag") != "":
		c.mu.Lock()
		c.cache[u] = cached{etag: resp.Header.Get("ETag"), body: data, link: resp.Header.Get("Link")}
		c.mu.Unlock()
	}
	return r, nil
}

// rateLimited reports whether an answer is a rate limit: a 429, or a 403
// with x-ratelimit-remaining 0, a message saying it is one, or (from
// the GraphQL API) an error of type RATE_LIMITED.
func (c *Client) rateLimited(r *response) bool {
	switch r.status {
	case http.StatusTooManyRequests:
		return true
	case http.StatusForbidden:
		if r.header.Get("X-RateLimit-Remaining") == "0" {
			return true
		}
		return limitMessage(parseError(r.body).Message) || graphqlLimited(r.body)
	}
	return false
}

// graphqlLimited reports whether body is a GraphQL answer with an error
// of type RATE_LIMITED.
func graphqlLimited(body []byte) bool {
	var answer struct {
		Errors []struct {
			Type string `json:"type"`
		} `json:"errors"`
	}
	_ = json.Unmarshal(body, &answer)
	for _, e := range answer.Errors {
		if e.Type == "RATE_LIMITED" {
			return true
		}
	}
	return false
}

func limitMessage(msg string) bool {
	msg = strings.ToLower(msg)
	return strings.Contains(msg, "rate limit") || strings.Contains(msg, "abuse detection")
}

// limitWait is how long a rate limit asks to wait: Retry-After when the
// answer has it, else until x-ratelimit-reset when the limit is used up,
// else *next, which doubles for the next time (up to maxLimitWait).
func (c *Client) limitWait(h http.Header, next *time.Duration) time.Duration {
	if s := h.Get("Retry-After"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			return max(time.Duration(n)*time.Second, time.Second)
		}
		if t, err := http.ParseTime(s); err == nil {
			return max(t.Sub(c.now()), time.Second)
		}
	}
	if h.Get("X-RateLimit-Remaining") == "0" {
		if n, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			return max(time.Unix(n, 0).Sub(c.now())+time.Second, time.Second)
		}
	}
	d := *next
	*next = min(*next*2, maxLimitWait)
	return d
}

// wait sleeps d before a request is sent again; a context that ends
// first is the error, naming the request.
func (c *Client) wait(ctx context.Context, d time.Duration, method, u string) error {
	if err := c.sleep(ctx, d); err != nil {
		return fmt.Errorf("GitHub: %s %s: gave up waiting %s to send it again: %w", method, c.pathOf(u), d, err)
	}
	return nil
}

// pathOf is u without the API's base, for messages.
func (c *Client) pathOf(u string) string {
	if p, ok := strings.CutPrefix(u, c.api); ok {
		return p
	}
	if u == c.graphqlURL {
		return "graphql"
	}
	return u
}

// refusal is the error of an answer that is not a success: a
// *forge.ConfigError for a token refused or a repository not seen, an
// *APIError else.
func (c *Client) refusal(ctx context.Context, method, u string, r *response) error {
	e := parseError(r.body)
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(r.status)
	}
	switch r.status {
	case http.StatusUnauthorized:
		return c.configError(r.status, msg, tokenFix(c.tokenEnv, "GitHub knows (this one is unknown, expired or revoked)"))
	case http.StatusForbidden:
		return c.configError(r.status, msg, c.accessFix())
	case http.StatusNotFound:
		if repo := c.repoURL(""); u == repo || !c.repositoryVisible(ctx) {
			return c.configError(r.status, msg, "check project.delivery.forge.repository (or the remote URL it is read from) and project.delivery.forge.apiURL, and that the token may read the repository")
		}
	}
	return &APIError{Method: method, Path: c.pathOf(u), Status: r.status, Message: msg, Errors: e.details()}
}

// repositoryVisible reports whether GitHub shows the repository to the
// token (a 404 elsewhere may then be of the thing asked for). An answer
// that is not a clear 404 counts as visible.
func (c *Client) repositoryVisible(ctx context.Context) bool {
	resp, err := c.send(ctx, http.MethodGet, c.repoURL(""), nil)
	return err != nil || resp.status != http.StatusNotFound
}

// accessFix is the Fix of a token refused access: the permissions set
// uses (Look reads check runs, which need their own).
func (c *Client) accessFix() string {
	return "give the token read and write access to " + c.owner + "/" + c.name + "'s pull requests, commit statuses and contents, and read access to its checks, or " + tokenFix(c.tokenEnv, "holding one that has it")
}

func (c *Client) configError(status int, msg, fix string) *forge.ConfigError {
	return &forge.ConfigError{Forge: c.api, Repository: c.owner + "/" + c.name, Status: status, Message: msg, Fix: fix}
}

func tokenFix(env, what string) string {
	if env == "" {
		return "set the variable project.delivery.forge.tokenEnv names to a token " + what
	}
	return "set " + env + " (project.delivery.forge.tokenEnv) to a token " + what
}

// Reach is forge.Forge's: one GET of the repository. GitHub answers it
// with the token's permissions on the repository; one without push (or
// without pull requests to open) is refused here rather than at the
// first change's push.
func (c *Client) Reach(ctx context.Context) error {
	var repo struct {
		Permissions *struct {
			Push bool `json:"push"`
		} `json:"permissions"`
	}
	if _, err := c.get(ctx, "", &repo); err != nil {
		return c.scrub(err)
	}
	if repo.Permissions != nil && !repo.Permissions.Push {
		return c.configError(0, "the token may read the repository but not push to it", c.accessFix())
	}
	return nil
}

// repoURL is the REST URL of path under the repository.
func (c *Client) repoURL(path string) string {
	return c.api + "/repos/" + url.PathEscape(c.owner) + "/" + url.PathEscape(c.name) + path
}

// get GETs path under the repository into out.
func (c *Client) get(ctx context.Context, path string, out any) (*response, error) {
	resp, err := c.do(ctx, http.MethodGet, c.repoURL(path), nil)
	if err != nil {
		return nil, err
	}
	return resp, decode(resp, out)
}

// getAll GETs every page of a list under the repository (100 a page,
// following the Link header's rel="next") into out, a pointer to a
// slice.
func getAll[T any](ctx context.Context, c *Client, path string, out *[]T) error {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	u := c.repoURL(path + sep + "per_page=100")
	for u != "" {
		resp, err := c.do(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		var page []T
		if err := decode(resp, &page); err != nil {
			return err
		}
		*out = append(*out, page...)
		if u, err = c.nextPage(resp); err != nil {
			return err
		}
	}
	return nil
}

// nextPage is the URL of the page after resp, "" when it is the last.
// A next page outside the API is an error: the token goes to the API
// only.
func (c *Client) nextPage(resp *response) (string, error) {
	next := nextLink(resp.header.Get("Link"))
	if next == "" || strings.HasPrefix(next, c.api+"/") {
		return next, nil
	}
	return "", fmt.Errorf("GitHub: the next page of a list is at %s, outside the API at %s: not followed", next, c.api)
}

// nextLink is the rel="next" URL of a Link header, or "".
func nextLink(link string) string {
	for _, part := range strings.Split(link, ",") {
		target, params, ok := strings.Cut(part, ";")
		if ok && strings.Contains(params, `rel="next"`) {
			return strings.Trim(strings.TrimSpace(target), "<>")
		}
	}
	return ""
}

func decode(r *response, out any) error {
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(r.body, out); err != nil {
		return fmt.Errorf("GitHub: an answer that is not the JSON expected: %w", err)
	}
	return nil
}

// graphql runs a GraphQL query or mutation with variables and decodes
// its data into out. GitHub's errors are errors: NOT_FOUND of the
// repository and FORBIDDEN are *forge.ConfigErrors, RATE_LIMITED is
// waited out like a REST rate limit, any other an *APIError carrying
// their messages.
func (c *Client) graphql(ctx context.Context, query string, vars map[string]any, out any) error {
	limitWait := firstLimitWait
	for {
		resp, err := c.do(ctx, http.MethodPost, c.graphqlURL, map[string]any{"query": query, "variables": vars})
		if err != nil {
			return err
		}
		var answer struct {
			Data   json.RawMessage `json:"data"`
			Errors []struct {
				Type string `json:"type"`
				// Path holds field names and list indexes
				// (["repository", "pullRequest", "timelineItems",
				// "nodes", 0]).
				Path    []any  `json:"path"`
				Message string `json:"message"`
			} `json:"errors"`
		}
		if err := decode(resp, &answer); err != nil {
			return err
		}
		var msgs []string
		limited := false
		for _, e := range answer.Errors {
			switch {
			case e.Type == "RATE_LIMITED":
				limited = true
			case e.Type == "NOT_FOUND" && len(e.Path) == 1 && e.Path[0] == any("repository"):
				return c.configError(http.StatusNotFound, e.Message, "check project.delivery.forge.repository (or the remote URL it is read from) and project.delivery.forge.apiURL, and that the token may read the repository")
			case e.Type == "FORBIDDEN":
				return c.configError(http.StatusForbidden, e.Message, c.accessFix())
			}
			msgs = append(msgs, e.Message)
		}
		if limited {
			if err := c.wait(ctx, c.limitWait(resp.header, &limitWait), http.MethodPost, c.graphqlURL); err != nil {
				return err
			}
			continue
		}
		if len(msgs) > 0 {
			return &APIError{Method: http.MethodPost, Path: "graphql", Status: resp.status, Message: "GraphQL errors", Errors: msgs}
		}
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(answer.Data, out); err != nil {
			return fmt.Errorf("GitHub: a GraphQL answer that is not the JSON expected: %w", err)
		}
		return nil
	}
}

// scrub keeps the token out of an error, whatever built it: a message
// that holds it has it replaced.
func (c *Client) scrub(err error) error {
	if err == nil || !strings.Contains(err.Error(), c.token) {
		return err
	}
	var ce *forge.ConfigError
	if errors.As(err, &ce) {
		clean := *ce
		for _, f := range []*string{&clean.Forge, &clean.Repository, &clean.Message, &clean.Fix} {
			*f = strings.ReplaceAll(*f, c.token, "***")
		}
		return &clean
	}
	return errors.New(strings.ReplaceAll(err.Error(), c.token, "***"))
}

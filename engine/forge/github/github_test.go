package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/set-engine/set/engine/forge"
	"github.com/set-engine/set/engine/forge/githubtest"
)

const token = "ghp_s3cr3tT0ken"

// start is the time on a fixture's clock until its test ticks it.
var start = time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)

// clock is the time of one fixture's server and client: each test has
// its own, so that tests that tick theirs run in parallel.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// tick moves the clock on by a second.
func (c *clock) tick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Second)
}

// sleeps records the waits of a client instead of waiting.
type sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

type fixture struct {
	t      *testing.T
	remote *githubtest.Remote
	server *githubtest.Server
	client *Client
	sleeps *sleeps
	clock  *clock
}

func newFixture(t *testing.T, opts githubtest.Options, transport ...func(http.RoundTripper) http.RoundTripper) *fixture {
	t.Helper()
	r := githubtest.NewRemote(t)
	opts.Token, opts.Repository, opts.Remote = token, "acme/app", r.Bare
	clk := &clock{now: start}
	opts.Now = clk.Now
	s := githubtest.NewServer(opts)
	t.Cleanup(s.Close)
	var rt http.RoundTripper = http.DefaultTransport
	for _, wrap := range transport {
		rt = wrap(rt)
	}
	sl := &sleeps{}
	c, err := New(Options{APIURL: s.URL(), Repository: "acme/app", Token: token, TokenEnv: "GH_TOKEN",
		HTTPClient: &http.Client{Transport: rt}, Sleep: sl.sleep, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, remote: r, server: s, client: c, sleeps: sl, clock: clk}
}

// open pushes set/<name> and opens a pull request of it.
func (f *fixture) open(name string) (forge.PullRequest, string) {
	f.t.Helper()
	head := f.remote.Branch("set/"+name, name+".txt")
	pr, err := f.client.Open(context.Background(), forge.NewPullRequest{Head: "set/" + name, Base: "main", Title: "Add " + name, Body: "the change " + name})
	if err != nil {
		f.t.Fatal(err)
	}
	return pr, head
}

// noToken fails the test when err says the token.
func noToken(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), token) {
		t.Fatalf("the error holds the token: %v", err)
	}
}

func TestRepositoryOf(t *testing.T) {
	t.Parallel()
	for remote, want := range map[string]string{
		"git@github.com:acme/app.git":            "acme/app",
		"git@github.com:acme/app":                "acme/app",
		"ssh://git@github.com/acme/app":          "acme/app",
		"ssh://git@ghe.example.com:2222/o/n.git": "o/n",
		"https://github.com/acme/app":            "acme/app",
		"https://github.com/acme/app.git":        "acme/app",
		"https://user@ghe.example.com/o/n.git/":  "o/n",
		"git://github.com/acme/app.git":          "acme/app",
		"/srv/git/app.git":                       "",
		"../app.git":                             "",
		"file:///srv/git/acme/app.git":           "",
		"https://github.com/acme":                "",
		"https://gitlab.com/group/sub/app.git":   "",
		`C:\repos\app`:                           "",
		"https://github.com/acme/app.GIT":        "acme/app",
		"ext::ssh -p 22 host %S acme/app":        "",
		"git@github.com:acme/app with space":     "",
		"ssh://git@github.com/~acme/app":         "",
	} {
		got, ok := RepositoryOf(remote)
		if got != want || ok != (want != "") {
			t.Errorf("RepositoryOf(%q) = %q, %v; want %q", remote, got, ok, want)
		}
	}
}

func TestGraphQLURL(t *testing.T) {
	t.Parallel()
	for api, want := range map[string]string{
		"https://api.github.com":          "https://api.github.com/graphql",
		"https://api.github.com/":         "https://api.github.com/graphql",
		"https://ghe.example.com/api/v3":  "https://ghe.example.com/api/graphql",
		"https://ghe.example.com/api/v3/": "https://ghe.example.com/api/graphql",
		"http://127.0.0.1:8080/api/v3":    "http://127.0.0.1:8080/api/graphql",
	} {
		if got := GraphQLURL(api); got != want {
			t.Errorf("GraphQLURL(%q) = %q, want %q", api, got, want)
		}
	}
}

func TestNewRefusesABadConfiguration(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{
		{APIURL: "api.github.com", Repository: "acme/app", Token: token},
		{APIURL: "https://api.github.com", Repository: "acme", Token: token},
		{APIURL: "https://api.github.com", Repository: "acme/app"},
	} {
		_, err := New(o)
		var ce *forge.ConfigError
		if !errors.As(err, &ce) || ce.Fix == "" {
			t.Errorf("New(%+v) = %v, want a *forge.ConfigError with a fix", o, err)
		}
	}
}

// headers records the headers of every request.
type headers struct {
	mu   sync.Mutex
	seen []http.Header
	next http.RoundTripper
}

func (h *headers) RoundTrip(req *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.seen = append(h.seen, req.Header.Clone())
	h.mu.Unlock()
	return h.next.RoundTrip(req)
}

func TestOpenIsIdempotentAndSendsGitHubsHeaders(t *testing.T) {
	t.Parallel()
	h := &headers{}
	f := newFixture(t, githubtest.Options{}, func(rt http.RoundTripper) http.RoundTripper { h.next = rt; return h })
	ctx := context.Background()
	pr, head := f.open("a")
	if pr.Number != 1 || pr.Head != head || pr.ID == "" || !strings.HasSuffix(pr.URL, "/acme/app/pull/1") {
		t.Fatalf("opened %+v", pr)
	}
	again, err := f.client.Open(ctx, forge.NewPullRequest{Head: "set/a", Base: "main", Title: "Add a, again", Body: "tested again"})
	if err != nil || again.Number != 1 {
		t.Fatalf("a second Open = %+v, %v; want #1", again, err)
	}
	if got, _ := f.server.PR(1); got.Title != "Add a, again" || got.Body != "tested again" || len(f.server.PRs()) != 1 {
		t.Fatalf("after the second Open: %+v, %d pull requests", got, len(f.server.PRs()))
	}
	for _, hd := range h.seen {
		if hd.Get("Authorization") != "Bearer "+token || hd.Get("Accept") != "application/vnd.github+json" ||
			hd.Get("X-GitHub-Api-Version") != "2022-11-28" || !strings.HasPrefix(hd.Get("User-Agent"), "setctl") {
			t.Errorf("a request's headers: %v", hd)
		}
	}
}

// hideOpen answers the first listing of open pull requests with none, as
// when another run opens one between the listing and the creation.
type hideOpen struct {
	next   http.RoundTripper
	hidden bool
}

func (h *hideOpen) RoundTrip(req *http.Request) (*http.Response, error) {
	if !h.hidden && req.Method == "GET" && strings.HasSuffix(req.URL.Path, "/pulls") {
		h.hidden = true
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader("[]")), Request: req}, nil
	}
	return h.next.RoundTrip(req)
}

func TestOpenTakesTheOneGitHubSaysExists(t *testing.T) {
	t.Parallel()
	hide := &hideOpen{}
	f := newFixture(t, githubtest.Options{}, func(rt http.RoundTripper) http.RoundTripper { hide.next = rt; return hide })
	f.remote.Branch("set/a", "a.txt")
	// Opened by "another run", unseen by the client's first listing.
	first, err := New(Options{APIURL: f.server.URL(), Repository: "acme/app", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Open(context.Background(), forge.NewPullRequest{Head: "set/a", Base: "main", Title: "A", Body: "b"}); err != nil {
		t.Fatal(err)
	}
	pr, err := f.client.Open(context.Background(), forge.NewPullRequest{Head: "set/a", Base: "main", Title: "A2", Body: "b2"})
	if err != nil || pr.Number != 1 || len(f.server.PRs()) != 1 {
		t.Fatalf("Open after a 422 = %+v, %v; %d pull requests", pr, err, len(f.server.PRs()))
	}
	var posted bool
	for _, req := range f.server.Requests() {
		if req.Method == "POST" && req.Path == "/repos/acme/app/pulls" && req.Status == 422 {
			posted = true
		}
	}
	if !posted {
		t.Fatalf("no creation refused: %v", f.server.Requests())
	}
	if got, _ := f.server.PR(1); got.Title != "A2" {
		t.Fatalf("title %q, want the second Open's", got.Title)
	}
}

func TestSetStatus(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{})
	_, head := f.open("a")
	long := strings.Repeat("é", 200)
	if err := f.client.SetStatus(context.Background(), head, forge.Status{Context: "set/test", State: forge.StatusSuccess, Description: long, TargetURL: "https://ci.example/1"}); err != nil {
		t.Fatal(err)
	}
	got := f.server.Statuses(head)
	if len(got) != 1 || got[0].Context != "set/test" || got[0].State != "success" || len([]rune(got[0].Description)) != 140 || got[0].TargetURL != "https://ci.example/1" {
		t.Fatalf("statuses %+v", got)
	}
}

func TestRequestMergeEnqueuesAndReadsBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{MergeQueue: true, Required: []string{"ci/test"}})
	ctx := context.Background()
	pr, head := f.open("a")
	// The required check passed (GitHub queues no pull request before);
	// another is still running.
	for _, st := range []forge.Status{{Context: "ci/test", State: forge.StatusSuccess}, {Context: "ci/lint", State: forge.StatusPending}} {
		if err := f.client.SetStatus(ctx, head, st); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.client.RequestMerge(ctx, pr, strings.Repeat("0", 40), "squash", ""); err == nil || !strings.Contains(err.Error(), "not handed") {
		t.Fatalf("RequestMerge with another head = %v", err)
	}
	mr, err := f.client.RequestMerge(ctx, pr, head, "squash", "")
	if err != nil || mr != (forge.MergeRequest{Way: forge.MergeQueued, QueueState: "AWAITING_CHECKS", Position: 1}) {
		t.Fatalf("RequestMerge = %+v, %v", mr, err)
	}
	var ops []string
	for _, r := range f.server.Requests() {
		if r.Operation != "" {
			ops = append(ops, r.Operation)
		}
	}
	if want := "pullRequest pullRequest mergeQueue enqueuePullRequest pullRequest"; strings.Join(ops, " ") != want {
		t.Errorf("GraphQL operations %q, want %q (the last the read-back)", ops, want)
	}
	if again, err := f.client.RequestMerge(ctx, pr, head, "squash", ""); err != nil || again.Way != forge.MergeQueued {
		t.Fatalf("RequestMerge of a queued one = %+v, %v", again, err)
	}
	look, err := f.client.Look(ctx, pr)
	if err != nil || !look.Queued || look.State != forge.Open {
		t.Fatalf("Look = %+v, %v", look, err)
	}

	// The forge merges it: a squash on main, MERGED.
	commit, err := f.server.Merge(1)
	if err != nil {
		t.Fatal(err)
	}
	look, err = f.client.Look(ctx, pr)
	if err != nil || look.State != forge.Merged || look.MergeCommit != commit || look.Queued {
		t.Fatalf("Look after the merge = %+v, %v; want merged by %s", look, err, commit)
	}
	if main := f.remote.Git(f.remote.Bare, "rev-parse", "main"); main != commit {
		t.Fatalf("main at %s, want %s", main, commit)
	}
}

func TestRequestMergeBeforeTheRequiredChecksPassedArmsMergeWhenReady(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{MergeQueue: true, Required: []string{"ci/test"}})
	ctx := context.Background()
	pr, head := f.open("a")
	mr, err := f.client.RequestMerge(ctx, pr, head, "squash", "")
	if err != nil || mr.Way != forge.MergeAuto {
		t.Fatalf("RequestMerge before ci/test passed = %+v, %v; want auto-merge armed", mr, err)
	}
	var ops []string
	for _, r := range f.server.Requests() {
		if r.Operation != "" {
			ops = append(ops, r.Operation+" "+strconv.Itoa(r.Status))
		}
	}
	if want := "pullRequest 200|mergeQueue 200|enqueuePullRequest 200|pullRequest 200|enablePullRequestAutoMerge 200|pullRequest 200"; strings.Join(ops, "|") != want {
		t.Errorf("GraphQL operations %q, want %q", ops, want)
	}
	if got, _ := f.server.PR(1); got.Queued || !got.AutoMerge {
		t.Fatalf("after the request: %+v, want it armed and not queued", got)
	}
	// The check passes: GitHub queues it.
	if err := f.client.SetStatus(ctx, head, forge.Status{Context: "ci/test", State: forge.StatusSuccess}); err != nil {
		t.Fatal(err)
	}
	if look, err := f.client.Look(ctx, pr); err != nil || !look.Queued {
		t.Fatalf("Look once ci/test passed = %+v, %v; want it queued", look, err)
	}
}

func TestRequestMergeArmsAutoMergeWithoutAQueue(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{AutoMerge: true, Required: []string{"set/test"}})
	ctx := context.Background()
	pr, head := f.open("a")
	mr, err := f.client.RequestMerge(ctx, pr, head, "rebase", "")
	if err != nil || mr.Way != forge.MergeAuto {
		t.Fatalf("RequestMerge = %+v, %v", mr, err)
	}
	if got, _ := f.server.PR(1); !got.AutoMerge || got.Merged {
		t.Fatalf("armed, required status missing: %+v", got)
	}
	if err := f.client.SetStatus(ctx, head, forge.Status{Context: "set/test", State: forge.StatusSuccess}); err != nil {
		t.Fatal(err)
	}
	look, err := f.client.Look(ctx, pr)
	if err != nil || look.State != forge.Merged {
		t.Fatalf("Look once green = %+v, %v", look, err)
	}
	if _, err := f.client.RequestMerge(ctx, pr, head, "fast-forward", ""); err == nil {
		t.Error("a merge method GitHub has not: no error")
	}
}

func TestRequestMergeOfAPullRequestMergedAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{MergeQueue: true, AutoMerge: true})
	ctx := context.Background()
	pr, head := f.open("a")
	mr, err := f.client.RequestMerge(ctx, pr, head, "squash", "")
	if err != nil || mr.Way != forge.MergeQueued {
		t.Fatalf("RequestMerge = %+v, %v", mr, err)
	}
	look, err := f.client.Look(ctx, pr)
	if main := f.remote.Git(f.remote.Bare, "rev-parse", "main"); err != nil || look.State != forge.Merged || look.MergeCommit != main {
		t.Fatalf("Look = %+v, %v; main at %s", look, err, main)
	}
}

func TestRequestMergeThatGitHubDoesNotTakeIsAnError(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{MergeQueue: true})
	pr, head := f.open("a")
	// Someone closes it the moment it is enqueued: the read-back shows
	// neither a queue entry nor a merge.
	f.server.OnRequestMerge(func(p githubtest.PR) { _ = f.server.ClosePR(p.Number, "alice", "") })
	_, err := f.client.RequestMerge(context.Background(), pr, head, "squash", "")
	if err == nil || !strings.Contains(err.Error(), "not being merged") {
		t.Fatalf("RequestMerge = %v, want an error saying it is not being merged", err)
	}
}

func TestLookOfAnUnchangedPullRequestIsFree(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{})
	ctx := context.Background()
	pr, head := f.open("a")
	first, err := f.client.Look(ctx, pr)
	if err != nil || first.State != forge.Open || first.Head != head || first.Queued {
		t.Fatalf("Look = %+v, %v", first, err)
	}
	core, gql, before := f.server.RateUsed("core"), f.server.RateUsed("graphql"), len(f.server.Requests())
	second, err := f.client.Look(ctx, pr)
	if err != nil || second.State != first.State || second.Head != first.Head {
		t.Fatalf("second Look = %+v, %v", second, err)
	}
	reqs := f.server.Requests()[before:]
	if len(reqs) == 0 {
		t.Fatal("the second Look sent nothing")
	}
	for _, r := range reqs {
		if r.Status != http.StatusNotModified || !r.Conditional {
			t.Errorf("the second Look's %s: want a conditional GET answered 304", r)
		}
	}
	if f.server.RateUsed("core") != core || f.server.RateUsed("graphql") != gql {
		t.Errorf("the second Look cost rate limit: core %d -> %d, graphql %d -> %d", core, f.server.RateUsed("core"), gql, f.server.RateUsed("graphql"))
	}

	// A change shows at the next Look.
	if _, err := f.server.RequestChanges(1, "bob", "not yet"); err != nil {
		t.Fatal(err)
	}
	third, err := f.client.Look(ctx, pr)
	if err != nil || len(third.ChangesRequested) != 1 {
		t.Fatalf("Look after a review = %+v, %v", third, err)
	}
}

func TestLookReportsReviewsAndFailedChecks(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{MergeQueue: true})
	ctx := context.Background()
	pr, head := f.open("a")
	if _, err := f.server.Approve(1, "carol", "fine"); err != nil {
		t.Fatal(err)
	}
	id, err := f.server.RequestChanges(1, "bob", "Please handle the empty name.",
		githubtest.ReviewComment{Path: "a.txt", Line: 1, Body: "empty here"})
	if err != nil {
		t.Fatal(err)
	}
	// set's own failed status is not reported; another's is.
	for _, st := range []forge.Status{{Context: "set/test", State: forge.StatusFailure}, {Context: "ci/ext", State: forge.StatusError, Description: "external CI broke"}} {
		if err := f.client.SetStatus(ctx, head, st); err != nil {
			t.Fatal(err)
		}
	}
	f.clock.tick()
	f.server.FailCheckOn(head, "lint", "lint failed\nmain.go:3: unused x")

	// Enqueued, its merge group commit fails a check, and the queue
	// takes it out.
	if _, err := f.client.RequestMerge(ctx, pr, head, "squash", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.Look(ctx, pr); err != nil { // seen queued
		t.Fatal(err)
	}
	f.clock.tick()
	queueCommit, err := f.server.FailCheck(1, "test", "tests failed\nTestGreeting: got \"\"")
	if err != nil {
		t.Fatal(err)
	}

	look, err := f.client.Look(ctx, pr)
	if err != nil {
		t.Fatal(err)
	}
	if look.Queued {
		t.Error("Queued after the queue took it out")
	}
	if len(look.ChangesRequested) != 1 {
		t.Fatalf("ChangesRequested = %+v", look.ChangesRequested)
	}
	rv := look.ChangesRequested[0]
	if rv.Author != "bob" || rv.Body != "Please handle the empty name." || rv.Commit != head || rv.ID == "" || rv.ID != itoa64(id) ||
		len(rv.Comments) != 1 || rv.Comments[0] != (forge.ReviewComment{Path: "a.txt", Line: 1, Body: "empty here"}) {
		t.Errorf("review %+v", rv)
	}
	var got []string
	for _, c := range look.FailedChecks {
		got = append(got, c.Name+"@"+c.Commit[:7]+": "+c.Conclusion+": "+c.Output)
		if c.ID == "" || c.URL == "" && c.Name != "ci/ext" {
			t.Errorf("check %+v: no ID or URL", c)
		}
	}
	want := []string{
		"ci/ext@" + head[:7] + ": error: external CI broke",
		"lint@" + head[:7] + ": failure: lint failed\nmain.go:3: unused x",
		"test@" + queueCommit[:7] + ": failure: tests failed\nTestGreeting: got \"\"",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("FailedChecks\n got %q\nwant %q", got, want)
	}
}

func itoa64(n int64) string {
	var b []byte
	for n > 0 || len(b) == 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func TestLookOfAClosedPullRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{})
	ctx := context.Background()
	pr, _ := f.open("a")
	if _, err := f.server.RequestChanges(1, "bob", "this is the wrong approach"); err != nil {
		t.Fatal(err)
	}
	f.clock.tick()
	if err := f.server.ClosePR(1, "alice", "We will not take this: the greeting stays as it is."); err != nil {
		t.Fatal(err)
	}
	look, err := f.client.Look(ctx, pr)
	if err != nil || look.State != forge.Closed || look.ClosedBy != "alice" || look.Words != "We will not take this: the greeting stays as it is." {
		t.Fatalf("Look = %+v, %v", look, err)
	}
}

func TestRefusalsAreConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
		repo   string
		fix    []string
	}{
		{"401", 401, "acme/app", []string{"GH_TOKEN", "project.delivery.forge.tokenEnv"}},
		{"403", 403, "acme/app", []string{"GH_TOKEN", "project.delivery.forge.tokenEnv", "acme/app", "pull requests", "commit statuses", "checks"}},
		{"404", 0, "acme/nope", []string{"project.delivery.forge.repository", "project.delivery.forge.apiURL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, githubtest.Options{})
			f.remote.Branch("set/a", "a.txt")
			c := f.client
			if tc.repo != "acme/app" {
				var err error
				c, err = New(Options{APIURL: f.server.URL(), Repository: tc.repo, Token: token, Sleep: f.sleeps.sleep})
				if err != nil {
					t.Fatal(err)
				}
			}
			if tc.status != 0 {
				f.server.Refuse(tc.status)
			}
			ctx := context.Background()
			pr := forge.PullRequest{Number: 1, ID: "PR_x"}
			for name, call := range map[string]func() error{
				"Open": func() error {
					_, err := c.Open(ctx, forge.NewPullRequest{Head: "set/a", Base: "main", Title: "a"})
					return err
				},
				"SetStatus": func() error {
					return c.SetStatus(ctx, strings.Repeat("a", 40), forge.Status{Context: "set/x", State: forge.StatusSuccess})
				},
				"RequestMerge": func() error { _, err := c.RequestMerge(ctx, pr, strings.Repeat("a", 40), "squash", ""); return err },
				"Look":         func() error { _, err := c.Look(ctx, pr); return err },
				"Reach":        func() error { return c.Reach(ctx) },
			} {
				err := call()
				noToken(t, err)
				var ce *forge.ConfigError
				if !errors.As(err, &ce) {
					t.Errorf("%s = %v, want a *forge.ConfigError", name, err)
					continue
				}
				want := tc.status
				if want == 0 {
					want = 404
				}
				if ce.Status != want || ce.Forge != f.server.URL() || ce.Repository != tc.repo || ce.Message == "" {
					t.Errorf("%s: %+v", name, ce)
				}
				for _, s := range tc.fix {
					if !strings.Contains(ce.Fix, s) {
						t.Errorf("%s: the fix %q does not name %s", name, ce.Fix, s)
					}
				}
			}
			if len(f.sleeps.waits) != 0 {
				t.Errorf("a refusal was retried: waits %v", f.sleeps.waits)
			}
		})
	}
}

func TestReach(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{})
	if err := f.client.Reach(context.Background()); err != nil {
		t.Fatalf("Reach of a repository the token may push to: %v", err)
	}
	ro := newFixture(t, githubtest.Options{ReadOnly: true})
	err := ro.client.Reach(context.Background())
	var ce *forge.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(ce.Message, "not push") || !strings.Contains(ce.Fix, "project.delivery.forge.tokenEnv") {
		t.Fatalf("Reach with a read-only token = %v, want a *forge.ConfigError saying it may not push", err)
	}
	noToken(t, err)
}

func TestRateLimitsAreWaitedOut(t *testing.T) {
	t.Parallel()
	// A required check pending: RequestMerge arms auto-merge, and the
	// pull request stays open.
	f := newFixture(t, githubtest.Options{Required: []string{"ci/test"}})
	f.remote.Branch("set/a", "a.txt")
	f.server.RateLimit(1, githubtest.TooMany)
	f.server.RateLimit(2, githubtest.Secondary)
	f.server.RateLimit(1, githubtest.Primary)
	pr, err := f.client.Open(context.Background(), forge.NewPullRequest{Head: "set/a", Base: "main", Title: "a"})
	if err != nil || pr.Number != 1 {
		t.Fatalf("Open through rate limits = %+v, %v", pr, err)
	}
	// Retry-After; a minute, then two (GitHub's guidance for a secondary
	// limit that says not when); until x-ratelimit-reset and a second.
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 91 * time.Second}
	if !slicesEqual(f.sleeps.waits, want) {
		t.Fatalf("waits %v, want %v", f.sleeps.waits, want)
	}

	// GraphQL's limits too.
	f.sleeps.waits = nil
	f.server.RateLimit(1, githubtest.Secondary)
	if _, err := f.client.RequestMerge(context.Background(), pr, pr.Head, "squash", ""); err != nil {
		t.Fatal(err)
	}
	if !slicesEqual(f.sleeps.waits, []time.Duration{time.Minute}) {
		t.Fatalf("waits %v, want a minute", f.sleeps.waits)
	}

	// GraphQL's primary limit: a 200 with an error RATE_LIMITED.
	f.sleeps.waits = nil
	f.server.RateLimit(1, githubtest.Primary)
	if _, err := f.client.RequestMerge(context.Background(), pr, pr.Head, "squash", ""); err != nil {
		t.Fatal(err)
	}
	if !slicesEqual(f.sleeps.waits, []time.Duration{91 * time.Second}) {
		t.Fatalf("waits %v, want until x-ratelimit-reset and a second", f.sleeps.waits)
	}
}

func TestLookFollowsPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{})
	pr, _ := f.open("a")
	for i := range 105 {
		if _, err := f.server.RequestChanges(1, "bob", "round "+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	look, err := f.client.Look(context.Background(), pr)
	if err != nil || len(look.ChangesRequested) != 105 || look.ChangesRequested[104].Body != "round 104" {
		t.Fatalf("Look = %d reviews, %v", len(look.ChangesRequested), err)
	}
}

func slicesEqual(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRateLimitGivesUpOnlyWhenTheContextEnds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{})
	f.server.RateLimit(100, githubtest.Secondary)
	ctx, cancel := context.WithCancel(context.Background())
	var waits []time.Duration
	f.client.sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		if len(waits) == 6 {
			cancel()
		}
		return ctx.Err()
	}
	err := f.client.SetStatus(ctx, strings.Repeat("a", 40), forge.Status{Context: "set/x", State: forge.StatusSuccess})
	noToken(t, err)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("SetStatus = %v, want the context's end", err)
	}
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 15 * time.Minute, 15 * time.Minute}
	if !slicesEqual(waits, want) {
		t.Fatalf("waits %v, want %v (doubling, capped)", waits, want)
	}
}

// flaky answers the first n requests with 502.
type flaky struct {
	next http.RoundTripper
	n    int
}

func (f *flaky) RoundTrip(req *http.Request) (*http.Response, error) {
	if f.n > 0 {
		f.n--
		return &http.Response{StatusCode: 502, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("<html>bad gateway</html>")), Request: req}, nil
	}
	return f.next.RoundTrip(req)
}

func TestServerErrorsAreRetriedAFewTimes(t *testing.T) {
	t.Parallel()
	fl := &flaky{n: 2}
	f := newFixture(t, githubtest.Options{}, func(rt http.RoundTripper) http.RoundTripper { fl.next = rt; return fl })
	_, head := f.open("a")
	if len(f.sleeps.waits) != 2 {
		t.Fatalf("waits %v, want two", f.sleeps.waits)
	}
	fl.n = 10
	err := f.client.SetStatus(context.Background(), head, forge.Status{Context: "set/x", State: forge.StatusSuccess})
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 502 {
		t.Fatalf("SetStatus against a broken GitHub = %v, want its 502", err)
	}
}

// answer answers every request with status and body, GitHub's JSON.
type answer struct {
	status int
	body   string
}

func (a answer) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: a.status, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}},
		Body: io.NopCloser(strings.NewReader(a.body)), Request: req}, nil
}

func TestGraphQLErrorsWhosePathHasAnIndex(t *testing.T) {
	t.Parallel()
	// GitHub's error paths name list items by their index, a number.
	body := `{"data":{"repository":{"pullRequest":null}},"errors":[{"type":"SERVICE_UNAVAILABLE","path":["repository","pullRequest","timelineItems","nodes",0],"message":"Something went wrong while executing your query."}]}`
	c, err := New(Options{APIURL: "https://api.github.com", Repository: "acme/app", Token: token, HTTPClient: &http.Client{Transport: answer{200, body}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.RequestMerge(context.Background(), forge.PullRequest{Number: 1}, strings.Repeat("a", 40), "squash", "")
	var ae *APIError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "Something went wrong") {
		t.Fatalf("RequestMerge = %v, want an *APIError with GitHub's words", err)
	}
}

func TestLookAfterRequestMergeSeesTheQueue(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{MergeQueue: true})
	ctx := context.Background()
	pr, head := f.open("a")
	if look, err := f.client.Look(ctx, pr); err != nil || look.Queued {
		t.Fatalf("Look before the request = %+v, %v", look, err)
	}
	// The enqueue need not change the pull request's REST answer (its
	// ETag): the Look after it must ask the merge queue again.
	if _, err := f.client.RequestMerge(ctx, pr, head, "squash", ""); err != nil {
		t.Fatal(err)
	}
	look, err := f.client.Look(ctx, pr)
	if err != nil || !look.Queued {
		t.Fatalf("Look after the enqueue = %+v, %v; want it queued", look, err)
	}
}

// elsewhere answers a list of reviews with a next page on another host,
// and records any request sent there.
type elsewhere struct {
	next http.RoundTripper
	mu   sync.Mutex
	sent []string
}

func (e *elsewhere) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == "evil.example" {
		e.mu.Lock()
		e.sent = append(e.sent, req.Header.Get("Authorization"))
		e.mu.Unlock()
		return answer{200, "[]"}.RoundTrip(req)
	}
	resp, err := e.next.RoundTrip(req)
	if err == nil && strings.HasSuffix(req.URL.Path, "/reviews") {
		resp.Header.Set("Link", `<https://evil.example/repos/acme/app/pulls/1/reviews?page=2>; rel="next"`)
	}
	return resp, err
}

func TestTheTokenGoesToTheAPIOnly(t *testing.T) {
	t.Parallel()
	e := &elsewhere{}
	f := newFixture(t, githubtest.Options{}, func(rt http.RoundTripper) http.RoundTripper { e.next = rt; return e })
	pr, _ := f.open("a")
	_, err := f.client.Look(context.Background(), pr)
	if err == nil || !strings.Contains(err.Error(), "outside the API") {
		t.Errorf("Look with a next page elsewhere = %v, want an error", err)
	}
	if len(e.sent) != 0 {
		t.Fatalf("requests sent outside the API, with %q", e.sent)
	}
}

// forgotten answers the checks of one commit as GitHub does a commit it
// does not know: 422.
type forgotten struct {
	next http.RoundTripper
	mu   sync.Mutex
	sha  string
}

func (g *forgotten) RoundTrip(req *http.Request) (*http.Response, error) {
	g.mu.Lock()
	sha := g.sha
	g.mu.Unlock()
	if sha != "" && strings.Contains(req.URL.Path, "/commits/"+sha+"/") {
		return answer{422, `{"message":"No commit found for SHA: ` + sha + `","documentation_url":"https://docs.github.com/rest"}`}.RoundTrip(req)
	}
	return g.next.RoundTrip(req)
}

func TestLookSkipsAMergeGroupCommitGitHubForgot(t *testing.T) {
	t.Parallel()
	g := &forgotten{}
	f := newFixture(t, githubtest.Options{MergeQueue: true})
	f.client.http.Transport = func() http.RoundTripper { g.next = http.DefaultTransport; return g }()
	ctx := context.Background()
	pr, head := f.open("a")
	if _, err := f.client.RequestMerge(ctx, pr, head, "squash", ""); err != nil {
		t.Fatal(err)
	}
	queueCommit, err := f.server.FailCheck(1, "test", "tests failed")
	if err != nil {
		t.Fatal(err)
	}
	if look, err := f.client.Look(ctx, pr); err != nil || len(look.FailedChecks) != 1 {
		t.Fatalf("Look = %+v, %v; want the queue's failed check", look, err)
	}
	g.mu.Lock()
	g.sha = queueCommit
	g.mu.Unlock()
	look, err := f.client.Look(ctx, pr)
	if err != nil || look.State != forge.Open || look.Head != head {
		t.Fatalf("Look once GitHub forgot the merge group commit = %+v, %v", look, err)
	}
	// The head's own checks are still read: a head GitHub does not know
	// is an error.
	g.mu.Lock()
	g.sha = head
	g.mu.Unlock()
	if _, err := f.client.Look(ctx, pr); err == nil {
		t.Fatal("Look of a head GitHub does not know: no error")
	}
}

func TestRequestMergeOfAPullRequestThatMayMergeNowMergesIt(t *testing.T) {
	t.Parallel()
	// GitHub refuses to arm auto-merge on a pull request it would merge
	// now ("Pull request is in clean status"): its required statuses
	// passed already, as set's own do before it asks.
	f := newFixture(t, githubtest.Options{Required: []string{"set/test"}})
	ctx := context.Background()
	pr, head := f.open("a")
	if err := f.client.SetStatus(ctx, head, forge.Status{Context: "set/test", State: forge.StatusSuccess}); err != nil {
		t.Fatal(err)
	}
	mr, err := f.client.RequestMerge(ctx, pr, head, "squash", "")
	if err != nil || mr.Way != forge.MergeAuto {
		t.Fatalf("RequestMerge of a green pull request = %+v, %v", mr, err)
	}
	look, err := f.client.Look(ctx, pr)
	if main := f.remote.Git(f.remote.Bare, "rev-parse", "main"); err != nil || look.State != forge.Merged || look.MergeCommit != main {
		t.Fatalf("Look = %+v, %v; main at %s", look, err, main)
	}
}

func TestRequestMergeWhereAutoMergeIsNotAllowedIsAConfigError(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{NoAutoMerge: true, Required: []string{"ci/test"}})
	pr, head := f.open("a")
	_, err := f.client.RequestMerge(context.Background(), pr, head, "squash", "")
	var ce *forge.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(ce.Message, "Auto merge is not allowed") || !strings.Contains(ce.Fix, "project.delivery.forge.autoMerge") {
		t.Fatalf("RequestMerge = %v, want a *forge.ConfigError naming autoMerge", err)
	}
}

// limitedOnce answers the first GraphQL request with a 403 whose body
// is GraphQL's, an error of type RATE_LIMITED, the primary limit not
// said used up.
type limitedOnce struct {
	next http.RoundTripper
	mu   sync.Mutex
	done bool
}

func (l *limitedOnce) RoundTrip(req *http.Request) (*http.Response, error) {
	l.mu.Lock()
	first := !l.done && strings.HasSuffix(req.URL.Path, "/graphql")
	if first {
		l.done = true
	}
	l.mu.Unlock()
	if first {
		return answer{403, `{"errors":[{"type":"RATE_LIMITED","message":"API rate limit exceeded for installation ID 1."}]}`}.RoundTrip(req)
	}
	return l.next.RoundTrip(req)
}

func TestAGraphQLRateLimitIn403IsWaitedOut(t *testing.T) {
	t.Parallel()
	l := &limitedOnce{}
	f := newFixture(t, githubtest.Options{MergeQueue: true}, func(rt http.RoundTripper) http.RoundTripper { l.next = rt; return l })
	pr, head := f.open("a")
	mr, err := f.client.RequestMerge(context.Background(), pr, head, "squash", "")
	if err != nil || mr.Way != forge.MergeQueued {
		t.Fatalf("RequestMerge through a GraphQL rate limit = %+v, %v", mr, err)
	}
	if !slicesEqual(f.sleeps.waits, []time.Duration{time.Minute}) {
		t.Fatalf("waits %v, want a minute", f.sleeps.waits)
	}
}

func TestPrintingAClientOrItsOptionsHidesTheToken(t *testing.T) {
	t.Parallel()
	opts := Options{APIURL: "https://api.github.com", Repository: "acme/app", Token: token, TokenEnv: "GH_TOKEN"}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{fmt.Sprintf("%v %+v %#v", c, c, c), fmt.Sprintf("%v %+v %#v", opts, opts, opts)} {
		if strings.Contains(s, token) {
			t.Errorf("printed with the token: %s", s)
		}
	}
}

func TestLookLeavesOutADismissedReview(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{})
	ctx := context.Background()
	pr, _ := f.open("a")
	first, err := f.server.RequestChanges(1, "bob", "no")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.server.RequestChanges(1, "carol", "not yet"); err != nil {
		t.Fatal(err)
	}
	if err := f.server.Dismiss(1, first); err != nil {
		t.Fatal(err)
	}
	look, err := f.client.Look(ctx, pr)
	if err != nil || len(look.ChangesRequested) != 1 || look.ChangesRequested[0].Author != "carol" {
		t.Fatalf("Look = %+v, %v; want carol's review only", look, err)
	}
}

// lostEnqueue sends the first enqueue on to GitHub, and answers it with
// the refusal GitHub gives a pull request queued already, as when the
// enqueue's answer was lost and it was sent again.
type lostEnqueue struct {
	next http.RoundTripper
	// refuse: no mutation is sent on, each is refused.
	refuse bool
	mu     sync.Mutex
	done   bool
}

func (l *lostEnqueue) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(strings.NewReader(string(body)))
	}
	l.mu.Lock()
	if l.refuse && strings.Contains(string(body), "mutation") {
		l.mu.Unlock()
		return answer{200, `{"data":null,"errors":[{"type":"UNPROCESSABLE","message":"Pull request is not mergeable"}]}`}.RoundTrip(req)
	}
	first := !l.done && strings.Contains(string(body), "enqueuePullRequest(")
	if first {
		l.done = true
	}
	l.mu.Unlock()
	resp, err := l.next.RoundTrip(req)
	if err != nil || !first {
		return resp, err
	}
	resp.Body.Close()
	return answer{200, `{"data":{"enqueuePullRequest":null},"errors":[{"type":"UNPROCESSABLE","path":["enqueuePullRequest"],"message":"Pull request is already queued to merge"}]}`}.RoundTrip(req)
}

func TestRequestMergeRefusedForWhatItAlreadyDidIsTaken(t *testing.T) {
	t.Parallel()
	l := &lostEnqueue{}
	f := newFixture(t, githubtest.Options{MergeQueue: true}, func(rt http.RoundTripper) http.RoundTripper { l.next = rt; return l })
	pr, head := f.open("a")
	mr, err := f.client.RequestMerge(context.Background(), pr, head, "squash", "")
	if err != nil || mr.Way != forge.MergeQueued || mr.Position != 1 {
		t.Fatalf("RequestMerge = %+v, %v; want it queued, as GitHub shows it", mr, err)
	}
}

func TestRequestMergeRefusedIsAnError(t *testing.T) {
	t.Parallel()
	l := &lostEnqueue{refuse: true}
	f := newFixture(t, githubtest.Options{MergeQueue: true, Required: []string{"ci/test"}}, func(rt http.RoundTripper) http.RoundTripper { l.next = rt; return l })
	pr, head := f.open("a")
	_, err := f.client.RequestMerge(context.Background(), pr, head, "squash", "")
	if err == nil || !strings.Contains(err.Error(), "refused to enqueue") || !strings.Contains(err.Error(), "not mergeable") {
		t.Fatalf("RequestMerge refused = %v, want GitHub's refusal", err)
	}
}

// noLinkOn304 drops the Link header of every 304, which GitHub need not
// send again.
type noLinkOn304 struct{ next http.RoundTripper }

func (n noLinkOn304) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := n.next.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusNotModified {
		resp.Header.Del("Link")
	}
	return resp, err
}

func TestALookAnsweredBy304sStillReadsEveryPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{}, func(rt http.RoundTripper) http.RoundTripper { return noLinkOn304{rt} })
	pr, _ := f.open("a")
	for i := range 105 {
		if _, err := f.server.RequestChanges(1, "bob", "round "+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		look, err := f.client.Look(context.Background(), pr)
		if err != nil || len(look.ChangesRequested) != 105 {
			t.Fatalf("Look %d = %d reviews, %v; want 105", i+1, len(look.ChangesRequested), err)
		}
	}
	var pages int
	for _, r := range f.server.Requests() {
		if strings.HasSuffix(r.Path, "/reviews") && strings.Contains(r.Query, "page=2") && r.Status == http.StatusNotModified {
			pages++
		}
	}
	if pages != 1 {
		t.Fatalf("the second page was answered 304 %d times, want once: %v", pages, f.server.Requests())
	}
}

func TestAClientUsedConcurrently(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{MergeQueue: true, Required: []string{"set/test"}})
	ctx := context.Background()
	type opened struct {
		pr   forge.PullRequest
		head string
	}
	var prs []opened
	for _, name := range []string{"a", "b", "c"} {
		pr, head := f.open(name)
		prs = append(prs, opened{pr, head})
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for _, o := range prs {
		for range 3 {
			wg.Add(3)
			go func() {
				defer wg.Done()
				_, err := f.client.Look(ctx, o.pr)
				errs <- err
			}()
			go func() {
				defer wg.Done()
				errs <- f.client.SetStatus(ctx, o.head, forge.Status{Context: "set/test", State: forge.StatusSuccess})
			}()
			go func() {
				defer wg.Done()
				_, err := f.client.RequestMerge(ctx, o.pr, o.head, "squash", "")
				errs <- err
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	for _, o := range prs {
		if look, err := f.client.Look(ctx, o.pr); err != nil || !look.Queued {
			t.Errorf("Look of #%d = %+v, %v; want it queued", o.pr.Number, look, err)
		}
	}
}

func TestGraphQLRefusalsInA200AreConfigErrors(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"FORBIDDEN": `{"data":{"repository":null},"errors":[{"type":"FORBIDDEN","path":["repository"],"message":"Resource not accessible by integration"}]}`,
		"NOT_FOUND": `{"data":{"repository":null},"errors":[{"type":"NOT_FOUND","path":["repository"],"message":"Could not resolve to a Repository with the name 'acme/app'."}]}`,
	} {
		c, err := New(Options{APIURL: "https://ghe.example.com/api/v3", Repository: "acme/app", Token: token, HTTPClient: &http.Client{Transport: answer{200, body}}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.RequestMerge(context.Background(), forge.PullRequest{Number: 1}, strings.Repeat("a", 40), "squash", "")
		var ce *forge.ConfigError
		if !errors.As(err, &ce) || ce.Message == "" || ce.Fix == "" {
			t.Errorf("%s: RequestMerge = %v, want a *forge.ConfigError", name, err)
		}
	}
}

// unchangedPull answers every conditional GET of pull request #1 with a
// 304, as GitHub may when what changed of it is not in its REST answer.
type unchangedPull struct{ next http.RoundTripper }

func (u unchangedPull) RoundTrip(req *http.Request) (*http.Response, error) {
	if etag := req.Header.Get("If-None-Match"); etag != "" && strings.HasSuffix(req.URL.Path, "/pulls/1") {
		return &http.Response{StatusCode: http.StatusNotModified, Header: http.Header{"Etag": {etag}}, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
	}
	return u.next.RoundTrip(req)
}

func TestLookOfAnArmedPullRequestSeesTheQueueTakeIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{MergeQueue: true, Required: []string{"ci/test"}}, func(rt http.RoundTripper) http.RoundTripper { return unchangedPull{rt} })
	ctx := context.Background()
	pr, head := f.open("a")
	if mr, err := f.client.RequestMerge(ctx, pr, head, "squash", ""); err != nil || mr.Way != forge.MergeAuto {
		t.Fatalf("RequestMerge = %+v, %v", mr, err)
	}
	if look, err := f.client.Look(ctx, pr); err != nil || look.Queued {
		t.Fatalf("Look while armed = %+v, %v", look, err)
	}
	if err := f.client.SetStatus(ctx, head, forge.Status{Context: "ci/test", State: forge.StatusSuccess}); err != nil {
		t.Fatal(err)
	}
	if look, err := f.client.Look(ctx, pr); err != nil || !look.Queued {
		t.Fatalf("Look once GitHub queued it = %+v, %v; want it queued", look, err)
	}
}

// TestLookOfAPullRequestWhoseBaseMovedSaysItConflicts: a pull request
// whose base someone moved with a change to the same lines no longer
// merges (GitHub's mergeable false, "dirty"): Look says it conflicts;
// one whose base moved elsewhere does not.
func TestLookOfAPullRequestWhoseBaseMovedSaysItConflicts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, githubtest.Options{})
	ctx := context.Background()
	pr, _ := f.open("a")
	f.remote.Commit("other.txt", "elsewhere\n")
	f.remote.Git(f.remote.Clone, "push", "-q", "origin", "main")
	if look, err := f.client.Look(ctx, pr); err != nil || look.Conflicts {
		t.Fatalf("Look after an unrelated commit on main = %+v, %v; want no conflict", look, err)
	}
	f.remote.Commit("a.txt", "someone else's a\n")
	f.remote.Git(f.remote.Clone, "push", "-q", "origin", "main")
	if look, err := f.client.Look(ctx, pr); err != nil || !look.Conflicts || look.State != forge.Open {
		t.Fatalf("Look after a conflicting commit on main = %+v, %v; want an open pull request that conflicts", look, err)
	}
}

// The commit GitHub's auto-merge makes on main says what set asked:
// the candidate's message, whose trailer credits the change, whatever
// the pull request's title.
func TestRequestMergeAsksForTheCandidatesMessage(t *testing.T) {
	t.Parallel()
	for _, required := range [][]string{nil, {"set/test"}} { // merged at once; armed
		f := newFixture(t, githubtest.Options{AutoMerge: true, Required: required})
		ctx := context.Background()
		pr, head := f.open("a")
		msg := "a: Alpha\n\n- REQ-A-01: Alpha\n\nSet-Change: a\n"
		if _, err := f.client.RequestMerge(ctx, pr, head, "squash", msg); err != nil {
			t.Fatal(err)
		}
		if err := f.client.SetStatus(ctx, head, forge.Status{Context: "set/test", State: forge.StatusSuccess}); err != nil {
			t.Fatal(err)
		}
		if look, err := f.client.Look(ctx, pr); err != nil || look.State != forge.Merged {
			t.Fatalf("required %v: Look = %+v, %v", required, look, err)
		}
		if got := f.remote.Git(f.remote.Bare, "log", "-1", "--format=%B", "main"); got != strings.TrimSpace(msg) {
			t.Errorf("required %v: main's commit says %q; want %q", required, got, msg)
		}
	}
}

func TestWebURL(t *testing.T) {
	t.Parallel()
	for api, want := range map[string]string{
		"https://api.github.com":           "https://github.com/acme/demo",
		"https://api.github.com/":          "https://github.com/acme/demo",
		"https://ghe.example/api/v3":       "https://ghe.example/acme/demo",
		"http://127.0.0.1:8080/api/v3/":    "http://127.0.0.1:8080/acme/demo",
		"https://ghe.example/git/api/v3":   "https://ghe.example/git/acme/demo",
		"https://example.com/rest":         "",
		"ftp://api.github.com":             "",
		"not a url":                        "",
		"https://api.github.com/elsewhere": "",
	} {
		got, ok := WebURL(api, "acme/demo")
		if got != want || ok != (want != "") {
			t.Errorf("WebURL(%q) = %q, %v; want %q", api, got, ok, want)
		}
	}
}

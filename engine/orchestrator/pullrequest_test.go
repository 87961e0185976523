package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/forge"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/merge"
	"github.com/set-engine/set/engine/state"
)

// fakeForge is a forge over a bare repository, the remote: pull requests
// by head branch, commit statuses by commit, and a react function that
// says what becomes of a pull request each time set looks at it.
type fakeForge struct {
	t    *testing.T
	bare string

	mu       sync.Mutex
	prs      map[string]*fakePR // by head branch
	statuses map[string][]forge.Status
	// react is what the forge does when set looks at pr for the n-th
	// time (1-based); it returns the Look set gets.
	react func(ff *fakeForge, pr *fakePR, n int) (forge.Look, error)
	// refuseMerges is how many merge requests fail before one is taken.
	refuseMerges int
}

type fakePR struct {
	forge.PullRequest
	branch      string
	title, body string
	opens       int
	looks       int
	merges      []forge.MergeRequest
	look        forge.Look
}

func newFakeForge(t *testing.T, bare string) *fakeForge {
	return &fakeForge{t: t, bare: bare, prs: map[string]*fakePR{}, statuses: map[string][]forge.Status{}}
}

func (ff *fakeForge) head(branch string) string {
	out, err := exec.Command("git", "--git-dir="+ff.bare, "rev-parse", "refs/heads/"+branch).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func (ff *fakeForge) Open(_ context.Context, n forge.NewPullRequest) (forge.PullRequest, error) {
	ff.mu.Lock()
	defer ff.mu.Unlock()
	head := ff.head(n.Head)
	if head == "" {
		return forge.PullRequest{}, fmt.Errorf("no branch %s on the remote", n.Head)
	}
	pr := ff.prs[n.Head]
	if pr == nil || pr.look.State != forge.Open && pr.look.State != "" {
		num := len(ff.prs) + 1
		pr = &fakePR{PullRequest: forge.PullRequest{Number: num, ID: fmt.Sprintf("PR_%d", num), URL: fmt.Sprintf("https://forge.test/o/r/pull/%d", num)}, branch: n.Head}
		ff.prs[n.Head] = pr
	}
	pr.Head, pr.title, pr.body = head, n.Title, n.Body
	pr.look.State, pr.look.Head = forge.Open, head
	pr.opens++
	return pr.PullRequest, nil
}

func (ff *fakeForge) SetStatus(_ context.Context, sha string, s forge.Status) error {
	ff.mu.Lock()
	defer ff.mu.Unlock()
	ff.statuses[sha] = append(ff.statuses[sha], s)
	return nil
}

func (ff *fakeForge) RequestMerge(_ context.Context, p forge.PullRequest, head, method, _ string) (forge.MergeRequest, error) {
	ff.mu.Lock()
	defer ff.mu.Unlock()
	for _, pr := range ff.prs {
		if pr.Number == p.Number {
			if pr.Head != head {
				return forge.MergeRequest{}, fmt.Errorf("head %s is not %s", head, pr.Head)
			}
			if ff.refuseMerges > 0 {
				ff.refuseMerges--
				return forge.MergeRequest{}, errors.New("pull request handed to the merge queue, and not read back: connection reset by peer")
			}
			mr := forge.MergeRequest{Way: forge.MergeQueued, QueueState: "QUEUED", Position: 1}
			pr.merges = append(pr.merges, mr)
			pr.look.Queued = true
			return mr, nil
		}
	}
	return forge.MergeRequest{}, fmt.Errorf("no pull request #%d", p.Number)
}

func (ff *fakeForge) Reach(context.Context) error { return nil }

func (ff *fakeForge) Look(_ context.Context, p forge.PullRequest) (forge.Look, error) {
	ff.mu.Lock()
	defer ff.mu.Unlock()
	for _, pr := range ff.prs {
		if pr.Number == p.Number {
			pr.looks++
			if ff.react == nil || pr.look.State != forge.Open {
				return pr.look, nil
			}
			return ff.react(ff, pr, pr.looks)
		}
	}
	return forge.Look{}, fmt.Errorf("no pull request #%d", p.Number)
}

// merge squashes pr onto the remote's main, as the forge's merge does,
// and says so.
func (ff *fakeForge) merge(pr *fakePR) forge.Look {
	ff.t.Helper()
	run := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"--git-dir=" + ff.bare}, args...)...).CombinedOutput()
		if err != nil {
			ff.t.Errorf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	main := run("rev-parse", "refs/heads/main")
	commit := run("commit-tree", pr.Head+"^{tree}", "-p", main, "-m", fmt.Sprintf("%s (#%d)", pr.title, pr.Number))
	run("update-ref", "refs/heads/main", commit, main)
	pr.look.State, pr.look.MergeCommit, pr.look.Queued = forge.Merged, commit, false
	return pr.look
}

// mergesAtOnce is a react of a forge that merges a pull request the
// first time set looks at it.
func mergesAtOnce(ff *fakeForge, pr *fakePR, _ int) (forge.Look, error) {
	return ff.merge(pr), nil
}

// pr is the pull request from branch.
func (ff *fakeForge) pr(branch string) *fakePR {
	ff.mu.Lock()
	defer ff.mu.Unlock()
	return ff.prs[branch]
}

// withForge puts f in pull-request mode against a bare remote origin
// holding its main, and a fake forge over it.
func withForge(t *testing.T, f *fixture) *fakeForge {
	t.Helper()
	bare := f.root + "-remote.git"
	f.git("init", "-q", "--bare", "-b", "main", bare)
	f.git("remote", "add", "origin", bare)
	f.git("push", "-q", "origin", "main")
	f.project.Delivery = config.Delivery{Mode: config.DeliveryPullRequest, Remote: "origin", Forge: &config.Forge{
		Kind: "github", APIURL: "https://forge.test", TokenEnv: "FAKE_FORGE_TOKEN", AutoMerge: true, MergeMethod: "squash",
		Wait: config.Duration(time.Minute),
	}}
	ff := newFakeForge(t, bare)
	f.forge = ff
	return ff
}

// applyStoppedAt runs an apply of f with prAgent that stops, as a crash
// would, the first time it reaches the checkpoint point; f's later
// applies pass it.
func applyStoppedAt(t *testing.T, f *fixture, point string) {
	t.Helper()
	stopped := false
	f.checkpoint = func(p, _ string) {
		if p == point && !stopped {
			stopped = true
			panic("stopped at " + point)
		}
	}
	if _, err := f.apply(context.Background(), f.agentScript(prAgent)); err == nil || !strings.Contains(err.Error(), "stopped at "+point) {
		t.Fatalf("the apply to stop at %s: %v", point, err)
	}
}

// alphaLeftOpen is a fixture in pull-request mode (withForge) with the
// change alpha, whose first apply ended "open" with alpha's pull request
// #1 left open by a forge that does nothing by itself (no react yet).
// forge.wait is 0, for that apply and the test's later ones: a run does
// not wait for the forge before it ends "open".
func alphaLeftOpen(t *testing.T) (*fixture, *fakeForge) {
	t.Helper()
	f := newFixture(t)
	ff := withForge(t, f)
	f.project.Delivery.Forge.Wait = 0
	f.change("alpha")
	f.applyEnds(context.Background(), f.agentScript(prAgent), "open")
	return f, ff
}

const prAgent = `
echo "good $iteration" > "$change.txt"
echo "test for REQ" > "${change}_test.txt"
`

// TestPullRequestMerged: a change whose integration stack passed is
// pushed as set/<change>, its pull request opened with its requirements
// and gates, its integration gates posted as statuses on the candidate,
// and enqueued; main does not move until the forge merges it; then the
// local main follows the remote's, MERGED names the forge's commit, and
// the change that depends on it starts from there.
func TestPullRequestMerged(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ff := withForge(t, f)
	f.change("alpha")
	f.change("beta", "alpha")
	before := f.git("rev-parse", "main")
	ff.react = func(ff *fakeForge, pr *fakePR, n int) (forge.Look, error) {
		if n == 1 {
			return pr.look, nil // still queued
		}
		return ff.merge(pr), nil
	}
	f.applySucceeds(f.agentScript(prAgent))

	alpha := ff.pr("set/alpha")
	if alpha == nil || alpha.opens != 1 || len(alpha.merges) != 1 {
		t.Fatalf("alpha's pull request: %+v", alpha)
	}
	for _, want := range []string{"REQ-ALPHA-01: alpha", "WHEN alpha is asked", "| integration | check | pass |"} {
		if !strings.Contains(alpha.body, want) {
			t.Errorf("alpha's body lacks %q:\n%s", want, alpha.body)
		}
	}
	if st := ff.statuses[alpha.Head]; len(st) != 1 || st[0].Context != "set/check" || st[0].State != forge.StatusSuccess {
		t.Errorf("statuses on alpha's candidate: %+v", st)
	}
	if got := f.git("rev-parse", alpha.Head+"^"); got != before {
		t.Errorf("alpha's candidate is onto %s, want main %s", got, before)
	}
	ev := f.events()
	remoteMain := f.git("--git-dir="+ff.bare, "rev-parse", "main")
	if local := f.git("rev-parse", "main"); local != remoteMain {
		t.Errorf("the local main is at %s, the remote's at %s", local, remoteMain)
	}
	if n := f.git("rev-list", "--count", "main"); n != "3" {
		t.Errorf("main has %s commits, want 3", n)
	}
	for _, name := range []string{"alpha", "beta"} {
		var merged journal.MergedData
		for _, e := range ev {
			if e.Type == journal.Merged && e.Change == name {
				merged, _ = journal.Decode[journal.MergedData](e)
			}
		}
		if pr := ff.pr("set/" + name); merged.PullRequest != pr.Number || merged.Commit != pr.look.MergeCommit {
			t.Errorf("%s: MERGED %+v, want the forge's commit %s of #%d", name, merged, pr.look.MergeCommit, pr.Number)
		}
		if n := count(ev, journal.PullRequestOpened, name); n != 1 {
			t.Errorf("%s: %d PULL_REQUEST_OPENED, want 1", name, n)
		}
	}
	// beta was dispatched once alpha was merged: from the forge's commit.
	for _, e := range ev {
		if e.Type == journal.Dispatch && e.Change == "beta" {
			d, _ := journal.Decode[journal.DispatchData](e)
			if d.Base != ff.pr("set/alpha").look.MergeCommit {
				t.Errorf("beta dispatched on %s, want alpha's merge %s", d.Base, ff.pr("set/alpha").look.MergeCommit)
			}
		}
	}
	if st := f.state(); st.Changes["alpha"].Status != state.Archived || st.Changes["beta"].Status != state.Archived {
		t.Errorf("statuses: alpha %s, beta %s", st.Changes["alpha"].Status, st.Changes["beta"].Status)
	}
}

// TestPullRequestClosed: a pull request closed without a merge fails its
// change as rejected, with the reviewer's words; its dependent is
// blocked.
func TestPullRequestClosed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ff := withForge(t, f)
	f.change("alpha")
	f.change("beta", "alpha")
	ff.react = func(ff *fakeForge, pr *fakePR, n int) (forge.Look, error) {
		pr.look.State, pr.look.ClosedBy, pr.look.Words = forge.Closed, "octocat", "we do not want this"
		return pr.look, nil
	}
	sum := f.applyEnds(context.Background(), f.agentScript(prAgent), "failed")
	if sum.Statuses["alpha"] != state.FailedRejected || sum.Statuses["beta"] != state.DepBlocked {
		t.Fatalf("statuses %v", sum.Statuses)
	}
	if e := f.state().Changes["alpha"].Error; !strings.Contains(e, "closed by octocat") || !strings.Contains(e, "we do not want this") {
		t.Errorf("alpha's error: %q", e)
	}
}

// TestPullRequestFeedback: a review that requests changes, and then a
// check that fails in the merge queue, each go back to the agent with
// their words or output, once each, on the integration budget; the
// change comes back to the same pull request, which then merges.
func TestPullRequestFeedback(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a pull request sent back by a review, then by a failing check, then merged; TestPullRequestFeedbackJournaledThenStopped covers review feedback")
	}
	t.Parallel()
	f := newFixture(t)
	ff := withForge(t, f)
	f.change("alpha")
	review := forge.Review{ID: "R1", Author: "octocat", Body: "please say hello", Comments: []forge.ReviewComment{{Path: "alpha.txt", Line: 1, Body: "not good enough"}}}
	check := forge.Check{ID: "C1", Name: "ci/test", Conclusion: "failure", Output: "FAIL: TestHello"}
	ff.react = func(ff *fakeForge, pr *fakePR, n int) (forge.Look, error) {
		switch pr.opens {
		case 1:
			pr.look.ChangesRequested = []forge.Review{review}
		case 2:
			pr.look.FailedChecks = []forge.Check{check}
		default:
			return ff.merge(pr), nil
		}
		return pr.look, nil
	}
	f.applySucceeds(f.agentScript(prAgent))
	pr := ff.pr("set/alpha")
	if pr.opens != 3 || pr.Number != 1 || len(ff.prs) != 1 {
		t.Errorf("alpha's pull request #%d opened %d times, %d pull requests; want #1 three times", pr.Number, pr.opens, len(ff.prs))
	}
	ev := f.events()
	if n := count(ev, journal.PullRequestFeedback, "alpha"); n != 2 {
		t.Errorf("%d PULL_REQUEST_FEEDBACK, want 2 (the review, then the check)", n)
	}
	st := f.state().Changes["alpha"]
	if st.IntegrationAttempts != 2 {
		t.Errorf("integration retries %d, want 2", st.IntegrationAttempts)
	}
	for n, want := range map[int][]string{
		2: {"octocat requested changes", "please say hello", "alpha.txt:1:\nnot good enough"},
		3: {"The check ci/test of your pull request #1 failed", "FAIL: TestHello"},
	} {
		prompt := readFile(t, f.root, fmt.Sprintf(".set/changes/alpha/prompt-%d.md", n))
		for _, w := range want {
			if !strings.Contains(prompt, w) {
				t.Errorf("prompt-%d lacks %q:\n%s", n, w, prompt)
			}
		}
	}
}

// TestPullRequestConfigError: a forge that refuses set's token ends the
// run with its error; nothing goes back to the agent.
func TestPullRequestConfigError(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ff := withForge(t, f)
	f.change("alpha")
	ff.react = func(ff *fakeForge, pr *fakePR, n int) (forge.Look, error) {
		return forge.Look{}, &forge.ConfigError{Forge: "https://forge.test", Repository: "o/r", Status: 401, Message: "Bad credentials", Fix: "set FAKE_FORGE_TOKEN"}
	}
	_, err := f.apply(context.Background(), f.agentScript(prAgent))
	var ce *forge.ConfigError
	if !errors.As(err, &ce) || ce.Status != 401 {
		t.Fatalf("apply: %v, want the forge's *ConfigError", err)
	}
	if n := count(f.events(), journal.RetryScheduled, "alpha"); n != 0 {
		t.Errorf("%d RETRY_SCHEDULED, want none", n)
	}
	if s := f.state().Changes["alpha"].Status; s != state.InReview {
		t.Errorf("alpha is %s, want in-review", s)
	}
}

// TestPullRequestLeftOpen: a run whose pull request stays open past
// forge.wait ends "open", leaving it in review; the next apply watches it
// again, without opening it again, and records its merge.
func TestPullRequestLeftOpen(t *testing.T) {
	t.Parallel()
	f, ff := alphaLeftOpen(t)
	if s := f.state().Changes["alpha"]; s.Status != state.InReview || s.PullRequest == nil || s.PullRequest.Number != 1 {
		t.Fatalf("alpha after the first run: %s, %+v", s.Status, s.PullRequest)
	}
	ff.react = mergesAtOnce
	sum := f.applySucceeds(f.agentScript("echo the agent must not run again; exit 1"))
	if !sum.Resumed {
		t.Error("the second apply did not resume the run")
	}
	if pr := ff.pr("set/alpha"); pr.opens != 1 {
		t.Errorf("alpha's pull request opened %d times, want once", pr.opens)
	}
	if local, remote := f.git("rev-parse", "main"), f.git("--git-dir="+ff.bare, "rev-parse", "main"); local != remote {
		t.Errorf("the local main %s, the remote's %s", local, remote)
	}
}

// TestPullRequestTokenRedacted: the forge's token, named by tokenEnv, is
// in no file under .set/, also when an agent prints it.
func TestPullRequestTokenRedacted(t *testing.T) {
	const token = "ghp_faketoken1234567890"
	t.Setenv("FAKE_FORGE_TOKEN", token)
	f := newFixture(t)
	ff := withForge(t, f)
	ff.react = mergesAtOnce
	f.change("alpha")
	f.applySucceeds(f.agentScript(prAgent + `echo "the token is $FAKE_FORGE_TOKEN"` + "\n"))
	seen := false
	err := filepath.Walk(filepath.Join(f.root, ".set"), func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), token) {
			t.Errorf("%s holds the token", path)
		}
		seen = seen || strings.Contains(string(data), "the token is [REDACTED]")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !seen {
		t.Error("no file under .set/ holds the agent's masked output: did the agent run?")
	}
}

// TestPullRequestMergedBetweenRuns: a pull request the forge merged while
// no run watched it is recorded by the next apply, also when that apply's
// plan no longer names its change (main has its work).
func TestPullRequestMergedBetweenRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two runs over a pull request merged between them; TestPullRequestMerged covers a merged pull request")
	}
	t.Parallel()
	f, ff := alphaLeftOpen(t)
	before := f.git("rev-parse", "main")
	merged := ff.merge(ff.pr("set/alpha"))
	f.git("fetch", "-q", "origin", "main")
	f.git("merge", "-q", "--ff-only", "FETCH_HEAD")
	f.plan.Changes, f.plan.Requirements = nil, nil
	f.change("beta")
	ff.react = mergesAtOnce
	f.applySucceeds(f.agentScript(prAgent))
	st := f.state()
	if a := st.Changes["alpha"]; a.Status != state.Archived || a.MergedCommit != merged.MergeCommit {
		t.Errorf("alpha: %s, merged at %s; want archived at the forge's %s", a.Status, a.MergedCommit, merged.MergeCommit)
	}
	if b := st.Changes["beta"]; b.Status != state.Archived {
		t.Errorf("beta: %s", b.Status)
	}
	if pr := ff.pr("set/alpha"); pr.opens != 1 {
		t.Errorf("alpha's pull request opened %d times, want once", pr.opens)
	}
	// MERGED names the main the forge merged onto, not the local main,
	// which had followed the remote's to the merge already.
	for _, e := range f.events() {
		if e.Type == journal.Merged && e.Change == "alpha" {
			if d, _ := journal.Decode[journal.MergedData](e); d.Previous != before || d.Commit != merged.MergeCommit {
				t.Errorf("alpha's MERGED: %s → %s, want %s → %s", d.Previous, d.Commit, before, merged.MergeCommit)
			}
		}
	}
}

// TestPullRequestBranchTaken: a remote branch set/<change> holding a
// commit set did not push stops the run; set pushes nothing over it.
func TestPullRequestBranchTaken(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ff := withForge(t, f)
	f.change("alpha")
	f.git("push", "-q", "origin", "main:refs/heads/set/alpha")
	theirs := f.git("rev-parse", "main")
	_, err := f.apply(context.Background(), f.agentScript(prAgent))
	var taken *merge.BranchTakenError
	if !errors.As(err, &taken) || taken.Commit != theirs {
		t.Fatalf("apply: %v, want a *merge.BranchTakenError naming %s", err, theirs)
	}
	if got := ff.head("set/alpha"); got != theirs {
		t.Errorf("the remote's set/alpha moved to %s", got)
	}
	if len(ff.prs) != 0 {
		t.Errorf("pull requests opened: %d", len(ff.prs))
	}
}

// TestPullRequestStoppedAfterPush: a run stopped between the push of a
// candidate and its pull request is resumed by the next apply, which
// integrates the change again (onto a main someone else moved) and
// pushes its new candidate over its own push, leased on it, then opens
// the one pull request.
func TestPullRequestStoppedAfterPush(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a run stopped after its push, resumed onto a moved main; TestPullRequestStoppedAfterMerged covers a resumed pull request")
	}
	t.Parallel()
	f := newFixture(t)
	ff := withForge(t, f)
	ff.react = mergesAtOnce
	f.change("alpha")
	applyStoppedAt(t, f, "pushed")
	first := ff.head("set/alpha")
	// Someone else lands a commit meanwhile: the candidate made again is
	// another commit.
	f.write("other.txt", "someone else's\n")
	f.git("add", "other.txt")
	f.git("commit", "-q", "-m", "someone else's")
	f.git("push", "-q", "origin", "main")
	f.applySucceeds(f.agentScript(prAgent))
	pr := ff.pr("set/alpha")
	if pr == nil || pr.opens != 1 || len(ff.prs) != 1 {
		t.Fatalf("pull requests: %d, alpha's %+v", len(ff.prs), pr)
	}
	if pr.Head == first {
		t.Errorf("the pull request's head is the stopped run's candidate %s", first)
	}
	if n := count(f.events(), journal.Pushing, "alpha"); n != 2 {
		t.Errorf("%d PUSHING, want 2 (the stopped run's, then the resumed run's over it)", n)
	}
	if st := f.state().Changes["alpha"]; st.Status != state.Archived {
		t.Errorf("alpha is %s", st.Status)
	}
}

// TestPullRequestBackoff: set looks at a pull request at once when it is
// opened, then waits 5 s, doubling while nothing changes, up to 2 min.
func TestPullRequestBackoff(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ff := withForge(t, f)
	f.project.Delivery.Forge.Wait = config.Duration(time.Hour)
	var mu sync.Mutex
	var waits []time.Duration
	f.after = func(d time.Duration) <-chan time.Time {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		return time.After(time.Millisecond)
	}
	ff.react = func(ff *fakeForge, pr *fakePR, n int) (forge.Look, error) {
		if n < 8 {
			return pr.look, nil
		}
		return ff.merge(pr), nil
	}
	f.change("alpha")
	f.applySucceeds(f.agentScript(prAgent))
	want := []time.Duration{0, 5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 2 * time.Minute, 2 * time.Minute}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(waits) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v", waits, want)
	}
}

// TestPullRequestForgeDown: a forge that keeps failing the looks ends
// the run with its error once maxLookFailures looks in a row failed; one
// that fails now and then is asked again.
func TestPullRequestForgeDown(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ff := withForge(t, f)
	down := errors.New("502 Bad Gateway")
	ff.react = func(ff *fakeForge, pr *fakePR, n int) (forge.Look, error) {
		switch {
		case n == 1 || n == 3: // now and then
			return forge.Look{}, down
		case n < 5:
			return pr.look, nil
		}
		return forge.Look{}, down // for good
	}
	f.change("alpha")
	_, err := f.apply(context.Background(), f.agentScript(prAgent))
	if !errors.Is(err, down) || !strings.Contains(err.Error(), fmt.Sprintf("failed %d looks in a row", maxLookFailures)) {
		t.Fatalf("apply: %v", err)
	}
	if pr := ff.pr("set/alpha"); pr.looks != 4+maxLookFailures {
		t.Errorf("%d looks, want %d", pr.looks, 4+maxLookFailures)
	}
}

// TestPullRequestEndedWhileBack: a pull request a person closed, or
// merged, while its change was back with the agent (a review had
// requested changes) is what the forge decided: the change comes back
// through the queue, and set pushes and opens nothing (a second pull
// request would undo the close, or merge the change twice); the change
// is failed:rejected, or merged at the forge's commit.
func TestPullRequestEndedWhileBack(t *testing.T) {
	t.Parallel()
	for _, ending := range []forge.State{forge.Closed, forge.Merged} {
		t.Run(string(ending), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ff := withForge(t, f)
			f.change("alpha")
			var mergedAt string
			ff.react = func(ff *fakeForge, pr *fakePR, n int) (forge.Look, error) {
				if n > 1 {
					return ff.merge(pr), nil
				}
				// set sees the review; the person ends the pull request
				// while the agent is at work on it.
				seen := pr.look
				seen.ChangesRequested = []forge.Review{{ID: "R1", Author: "octocat", Body: "please say hello"}}
				if ending == forge.Closed {
					pr.look.State, pr.look.ClosedBy, pr.look.Words = forge.Closed, "octocat", "never mind"
				} else {
					mergedAt = ff.merge(pr).MergeCommit
				}
				return seen, nil
			}
			want := map[forge.State]string{forge.Closed: "failed", forge.Merged: "success"}[ending]
			f.applyEnds(context.Background(), f.agentScript(prAgent), want)
			if pr := ff.pr("set/alpha"); pr.Number != 1 || pr.opens != 1 {
				t.Errorf("alpha's pull request is #%d, opened %d times; want #1, opened once", pr.Number, pr.opens)
			}
			if n := count(f.events(), journal.Pushing, "alpha"); n != 1 {
				t.Errorf("%d PUSHING, want 1", n)
			}
			st := f.state().Changes["alpha"]
			switch ending {
			case forge.Closed:
				if st.Status != state.FailedRejected || !strings.Contains(st.Error, "never mind") {
					t.Errorf("alpha is %s (%q), want failed:rejected with the reviewer's words", st.Status, st.Error)
				}
			case forge.Merged:
				if st.Status != state.Archived || st.MergedCommit != mergedAt {
					t.Errorf("alpha is %s at %s, want archived at the forge's %s", st.Status, st.MergedCommit, mergedAt)
				}
				if n := f.git("rev-list", "--count", "main"); n != "2" {
					t.Errorf("main has %s commits, want 2", n)
				}
			}
		})
	}
}

// TestPullRequestCheckCancelled: a check the forge cancelled (a merge
// group GitHub dropped when a pull request ahead of it failed, a run
// superseded) judged nothing of the change: it is not sent back to the
// agent, whose budget pays only for its own mistakes.
func TestPullRequestCheckCancelled(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ff := withForge(t, f)
	f.change("alpha")
	ff.react = func(ff *fakeForge, pr *fakePR, n int) (forge.Look, error) {
		if n == 1 {
			pr.look.FailedChecks = []forge.Check{{ID: "C1", Name: "ci/test", Commit: "0123456789abcdef0123456789abcdef01234567", Conclusion: "cancelled"}}
			return pr.look, nil
		}
		return ff.merge(pr), nil
	}
	f.applySucceeds(f.agentScript(prAgent))
	if n := count(f.events(), journal.PullRequestFeedback, "alpha"); n != 0 {
		t.Errorf("%d PULL_REQUEST_FEEDBACK, want none", n)
	}
	if st := f.state().Changes["alpha"]; st.IntegrationAttempts != 0 || st.Status != state.Archived {
		t.Errorf("alpha is %s after %d integration retries, want archived after none", st.Status, st.IntegrationAttempts)
	}
}

// TestPullRequestBaseMoved: a pull request that conflicts with its
// base, which someone else moved, is no one's mistake: the change is
// integrated again onto the remote's new main, with no retry budget
// spent and without its agent, and its new candidate updates the same
// pull request, handed to the forge's merge again.
func TestPullRequestBaseMoved(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ff := withForge(t, f)
	f.change("alpha")
	var theirs, conflicted string
	ff.react = func(ff *fakeForge, pr *fakePR, n int) (forge.Look, error) {
		if n > 1 {
			if pr.Head == conflicted {
				return pr.look, nil // it conflicts until its head moves
			}
			pr.look.Conflicts = false
			return ff.merge(pr), nil
		}
		conflicted = pr.Head
		theirs = ff.commitFile("main", "other.txt", "someone else's\n")
		pr.look.Conflicts = true
		return pr.look, nil
	}
	f.applySucceeds(f.agentScript(prAgent))
	pr := ff.pr("set/alpha")
	if pr.Number != 1 || pr.opens != 2 || len(pr.merges) != 2 {
		t.Errorf("alpha's pull request is #%d, opened %d times, handed to the merge %d times; want #1, twice each", pr.Number, pr.opens, len(pr.merges))
	}
	if theirs == "" || f.git("rev-parse", pr.Head+"^") != theirs {
		t.Errorf("the pull request's head %s is not onto the remote's new main %s", pr.Head, theirs)
	}
	st := f.state().Changes["alpha"]
	if st.Status != state.Archived || st.IntegrationAttempts != 0 || st.Iteration != 1 {
		t.Errorf("alpha is %s after %d integration retries and %d iterations; want archived after none and 1", st.Status, st.IntegrationAttempts, st.Iteration)
	}
	if n := count(f.events(), journal.RetryScheduled, "alpha"); n != 0 {
		t.Errorf("%d RETRY_SCHEDULED, want none", n)
	}
}

// commitFile commits content as path onto branch of the remote, as
// someone else's push, and returns the commit.
func (ff *fakeForge) commitFile(branch, path, content string) string {
	ff.t.Helper()
	run := func(stdin string, args ...string) string {
		cmd := exec.Command("git", append([]string{"--git-dir=" + ff.bare}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			ff.t.Errorf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	tip := run("", "rev-parse", "refs/heads/"+branch)
	blob := run(content, "hash-object", "-w", "--stdin")
	tree := run(run("", "ls-tree", tip)+"\n100644 blob "+blob+"\t"+path+"\n", "mktree")
	commit := run("", "commit-tree", tree, "-p", tip, "-m", "someone else's "+path)
	run("", "update-ref", "refs/heads/"+branch, commit, tip)
	return commit
}

// TestPullRequestStoppedAfterMerged: a run stopped once a change whose
// pull request the forge merged is merged, before it is archived, is
// resumed by the next apply, which archives the change at the forge's
// commit: a commit whose message the forge wrote (without set's
// trailer) is found by the journal, not by the trailer.
func TestPullRequestStoppedAfterMerged(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ff := withForge(t, f)
	ff.react = mergesAtOnce
	f.change("alpha")
	applyStoppedAt(t, f, "merged")
	if s := f.state().Changes["alpha"].Status; s != state.Merged {
		t.Fatalf("alpha is %s after the first apply, want merged", s)
	}
	f.applySucceeds(f.agentScript("echo the agent must not run again; exit 1"))
	st := f.state().Changes["alpha"]
	if pr := ff.pr("set/alpha"); st.Status != state.Archived || st.MergedCommit != pr.look.MergeCommit || pr.opens != 1 {
		t.Errorf("alpha is %s at %s, its pull request opened %d times; want archived at the forge's %s, opened once", st.Status, st.MergedCommit, pr.opens, pr.look.MergeCommit)
	}
}

// TestPullRequestMergeAskedAgain: a merge request the forge did not take
// (an answer lost on the way, the forge's trouble) is asked again once
// the pull request is looked at, open and unjudged: with autoMerge, a
// pull request is never left for a person because a request failed.
func TestPullRequestMergeAskedAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ff := withForge(t, f)
	ff.refuseMerges = 1
	f.change("alpha")
	ff.react = func(ff *fakeForge, pr *fakePR, n int) (forge.Look, error) {
		if pr.look.Queued {
			return ff.merge(pr), nil
		}
		return pr.look, nil
	}
	f.applySucceeds(f.agentScript(prAgent))
	pr := ff.pr("set/alpha")
	if len(pr.merges) != 1 || pr.opens != 1 {
		t.Errorf("alpha's pull request opened %d times, taken by the merge %d times; want once each", pr.opens, len(pr.merges))
	}
	if st := f.state().Changes["alpha"]; st.IntegrationAttempts != 0 || st.Status != state.Archived {
		t.Errorf("alpha is %s after %d integration retries", st.Status, st.IntegrationAttempts)
	}
}

// TestPullRequestOpenAcrossANewPlan: a pull request left open by a run
// is watched by the next apply also when its plan is a new one (a
// change added): it is neither implemented nor opened again.
func TestPullRequestOpenAcrossANewPlan(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two runs and a new plan over an open pull request; TestPullRequestLeftOpen covers an open pull request")
	}
	t.Parallel()
	f, ff := alphaLeftOpen(t)
	f.change("beta")
	f.plan.Fingerprint.Config = "another"
	ff.react = mergesAtOnce
	f.applySucceeds(f.agentScript(prAgent))
	if pr := ff.pr("set/alpha"); pr.opens != 1 || pr.Number != 1 {
		t.Errorf("alpha's pull request is #%d, opened %d times; want #1, once", pr.Number, pr.opens)
	}
	if n := count(f.events(), journal.Dispatch, "alpha"); n != 1 {
		t.Errorf("alpha dispatched %d times, want once", n)
	}
}

// TestPullRequestFeedbackJournaledThenStopped: a run stopped between the
// PULL_REQUEST_FEEDBACK of a review and the change's going back to its
// agent (the journal has the one, not the other) did not send it: the
// next apply sends it, rather than taking it for sent and leaving the
// pull request with its changes requested.
func TestPullRequestFeedbackJournaledThenStopped(t *testing.T) {
	t.Parallel()
	f, ff := alphaLeftOpen(t)
	// The stopped run's last event.
	w, err := journal.Open(filepath.Join(f.root, ".set"), f.state().Run)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append("alpha", journal.PullRequestFeedbackData{Number: 1, Kind: journal.FeedbackReview, ID: "R1", By: "octocat"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	review := forge.Review{ID: "R1", Author: "octocat", Body: "please say hello"}
	ff.react = func(ff *fakeForge, pr *fakePR, n int) (forge.Look, error) {
		if pr.opens == 1 {
			pr.look.ChangesRequested = []forge.Review{review}
			return pr.look, nil
		}
		return ff.merge(pr), nil
	}
	f.applySucceeds(f.agentScript(prAgent))
	if n := count(f.events(), journal.PullRequestFeedback, "alpha"); n != 1 {
		t.Errorf("%d PULL_REQUEST_FEEDBACK, want 1 (the stopped run's)", n)
	}
	if st := f.state().Changes["alpha"]; st.IntegrationAttempts != 1 {
		t.Errorf("alpha went back to its agent %d times, want once", st.IntegrationAttempts)
	}
}

// TestPullRequestLeftOpenWithADependent: a run that ends with a pull
// request open and a change that waits for it (its dependent) ends
// "open", not "paused": nothing is paused, and the next apply goes on.
func TestPullRequestLeftOpenWithADependent(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a run with an open pull request and its dependent; TestPullRequestLeftOpen covers an open pull request")
	}
	t.Parallel()
	f := newFixture(t)
	withForge(t, f)
	f.project.Delivery.Forge.Wait = 0
	f.change("alpha")
	f.change("beta", "alpha")
	f.change("gamma", "beta")
	sum := f.applyEnds(context.Background(), f.agentScript(prAgent), "open")
	if sum.Statuses["alpha"] != state.InReview || sum.Statuses["beta"] != state.Pending || sum.Statuses["gamma"] != state.Pending {
		t.Errorf("statuses %v", sum.Statuses)
	}
}

// TestPullRequestMergeAskedAgainAfterACheckSent: a failed check the
// agent already had (the forge still lists it) does not keep a merge
// request the forge did not take from being asked again.
func TestPullRequestMergeAskedAgainAfterACheckSent(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a failed check sent back and a merge request the forge lost; TestPullRequestMergeAskedAgain covers a merge asked again")
	}
	t.Parallel()
	f := newFixture(t)
	ff := withForge(t, f)
	f.change("alpha")
	ff.react = func(ff *fakeForge, pr *fakePR, n int) (forge.Look, error) {
		switch {
		case n == 1:
			pr.look.FailedChecks = []forge.Check{{ID: "C1", Name: "ci/test", Conclusion: "failure", Output: "FAIL"}}
			pr.look.Queued = false // the queue dropped it
			ff.refuseMerges = 1    // and the next merge request is lost
		case pr.look.Queued:
			return ff.merge(pr), nil
		}
		return pr.look, nil
	}
	f.applySucceeds(f.agentScript(prAgent))
	if n := count(f.events(), journal.PullRequestFeedback, "alpha"); n != 1 {
		t.Errorf("%d PULL_REQUEST_FEEDBACK, want 1", n)
	}
}

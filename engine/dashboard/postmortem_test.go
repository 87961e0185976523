package dashboard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/report"
	"github.com/set-engine/set/engine/state"
)

// withRepo makes the fixture's project a git repository holding the
// commits its journal names: main at base; greet's branch after its
// first iteration (greet.go saying "hi") and its second ("hello", and a
// test); main as greet merged (one commit, greet2's tree); farewell's
// branch and main as it merged. Call it before the journal names them.
func (f *fixture) withRepo() {
	f.t.Helper()
	git := func(args ...string) string {
		f.t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = f.root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			f.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, text string) {
		f.t.Helper()
		if err := os.WriteFile(filepath.Join(f.root, name), []byte(text), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
	commit := func(msg string) string {
		git("add", "-A")
		git("commit", "-q", "-m", msg)
		return git("rev-parse", "HEAD")
	}
	// squash is main's one commit of a change: the branch's tree on main.
	squash := func(branchHead, main, msg string) string {
		c := git("commit-tree", branchHead+"^{tree}", "-p", main, "-m", msg)
		git("update-ref", "refs/heads/main", c)
		return c
	}
	git("init", "-q", "-b", "main")
	write(".gitignore", ".set/\n")
	write("README.md", "demo\n")
	f.sha.base = commit("demo")
	git("checkout", "-q", "-b", "set/greet")
	write("greet.go", "package demo\n\nfunc Greet() string { return \"hi\" }\n")
	f.sha.greet1 = commit("greet: iteration 1")
	write("greet.go", "package demo\n\nfunc Greet() string { return \"hello\" }\n")
	write("greet_test.go", "package demo\n\nimport \"testing\"\n\nfunc TestGreet(t *testing.T) {}\n")
	f.sha.greet2 = commit("greet: iteration 2")
	f.sha.greetMain = squash(f.sha.greet2, f.sha.base, "greet")
	git("checkout", "-q", "-b", "set/farewell", f.sha.greetMain)
	write("farewell.go", "package demo\n\nfunc Farewell() string { return \"bye\" }\n")
	f.sha.farewell1 = commit("farewell: iteration 1")
	f.sha.farewellMain = squash(f.sha.farewell1, f.sha.greetMain, "farewell")
}

// A change's events fall into its verify rounds and integration
// attempts: each round with the iterations it judged, its gates, its
// verdict, what went back to the agent and the commits its diff spans.
func TestRounds(t *testing.T) {
	f := newFixture(t)
	f.start()
	f.toMerged()
	ts := serve(t, f, Options{})
	v := getOK[ChangeView](t, ts, "/api/p/0/change/greet")
	type round struct {
		stage      string
		attempt    int
		iterations []int
		gates      int
		verdict    string
		handback   bool
		from, to   string
	}
	want := []round{
		{StageVerify, 1, []int{1}, 1, "fail", true, f.sha.base, f.sha.greet1},
		{StageVerify, 2, []int{2}, 1, "pass", false, f.sha.greet1, f.sha.greet2},
		{StageIntegration, 1, nil, 1, "merged", false, f.sha.base, f.sha.greetMain},
	}
	var got []round
	gates := 0
	for _, r := range v.Rounds {
		got = append(got, round{r.Stage, r.Attempt, r.Iterations, len(r.Gates), r.Verdict, r.Handback != nil, r.From, r.To})
		gates += len(r.Gates)
	}
	if !slices.EqualFunc(got, want, func(a, b round) bool {
		return a.stage == b.stage && a.attempt == b.attempt && slices.Equal(a.iterations, b.iterations) && a.gates == b.gates &&
			a.verdict == b.verdict && a.handback == b.handback && a.from == b.from && a.to == b.to
	}) {
		t.Errorf("rounds:\n got %+v\nwant %+v", got, want)
	}
	if gates != 3 {
		t.Errorf("%d gate verdicts in the rounds, want greet's 3", gates)
	}
	if h := v.Rounds[0].Handback; h == nil || !strings.Contains(string(h.Data), "TestGreet failed") {
		t.Errorf("round 1's handback: %+v", h)
	}
	// A verify round begins with its first iteration, an integration
	// attempt as the change goes to integrating.
	var iteration1, integrating time.Time
	for _, e := range v.Events {
		if e.Type == journal.AgentSessionDecision && iteration1.IsZero() {
			iteration1 = e.Time
		}
		if e.Type == journal.StateChange && strings.Contains(string(e.Data), `"to":"integrating"`) {
			integrating = e.Time
		}
	}
	if !v.Rounds[0].Start.Equal(iteration1) || !v.Rounds[2].Start.Equal(integrating) {
		t.Errorf("round 1 starts at %s (want its iteration's %s), the integration attempt at %s (want %s)",
			v.Rounds[0].Start, iteration1, v.Rounds[2].Start, integrating)
	}
	if v.Links.Commit != f.sha.greetMain || v.Links.CommitURL != "" {
		t.Errorf("links without a forge: %+v", v.Links)
	}
}

// With a forge, a merged change links its commit's page there, from
// its page and the overview.
func TestLinksOnTheForge(t *testing.T) {
	f := newFixture(t)
	f.start()
	f.toMerged()
	s, err := New(Options{Now: f.clock, Projects: []Project{{Root: f.root, Forge: &Forge{Repository: "https://github.com/acme/demo"}}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	v := getOK[ChangeView](t, ts, "/api/p/0/change/greet")
	want := Links{Commit: f.sha.greetMain, CommitURL: "https://github.com/acme/demo/commit/" + f.sha.greetMain}
	if v.Links != want {
		t.Errorf("links %+v, want %+v", v.Links, want)
	}
	o := getOK[Overview](t, ts, "/api/p/0/overview")
	if o.Links["greet"] != want {
		t.Errorf("the overview's links of greet: %+v, want %+v", o.Links["greet"], want)
	}
	if _, ok := o.Links["farewell"]; ok {
		t.Errorf("farewell, not merged, has links: %+v", o.Links["farewell"])
	}
	pr := linksOf(report.Change{Commit: "abc", PullRequest: &report.PullRequest{Number: 12}}, &Forge{Repository: "https://github.com/acme/demo"})
	if pr.PullRequestURL != "https://github.com/acme/demo/pull/12" {
		t.Errorf("a pull request's link: %+v", pr)
	}
	pr = linksOf(report.Change{Commit: "abc", PullRequest: &report.PullRequest{Number: 12, URL: "https://ghe.example/acme/demo/pull/12"}}, nil)
	if pr.PullRequestURL != "https://ghe.example/acme/demo/pull/12" || pr.CommitURL != "" {
		t.Errorf("a pull request's link as the forge gave it: %+v", pr)
	}
}

// A round's diff is what its agent iterations committed, read from the
// project's repository; the integration attempt main took, the change's
// commit on main.
func TestDiff(t *testing.T) {
	f := newFixture(t)
	f.withRepo()
	f.start()
	f.toMerged()
	ts := serve(t, f, Options{})
	for _, tc := range []struct {
		query      string
		from, to   string
		has, lacks []string
	}{
		{"change=greet&round=1", f.sha.base, f.sha.greet1,
			[]string{"diff --git a/greet.go b/greet.go", "new file mode", `+func Greet() string { return "hi" }`}, []string{"greet_test.go"}},
		{"change=greet&round=2", f.sha.greet1, f.sha.greet2,
			[]string{`-func Greet() string { return "hi" }`, `+func Greet() string { return "hello" }`, "greet_test.go"}, []string{"README", `+func Greet() string { return "hi" }`}},
		// A diff spans the commits the journal names, whatever else the
		// request says.
		{"change=greet&round=1&from=HEAD~9&to=--output=/tmp/x&path=/etc/passwd", f.sha.base, f.sha.greet1,
			[]string{"diff --git a/greet.go b/greet.go"}, []string{"greet_test.go", "root:"}},
		{"change=greet&stage=integration&round=1", f.sha.base, f.sha.greetMain,
			[]string{`+func Greet() string { return "hello" }`, "greet_test.go"}, []string{`"hi"`}},
	} {
		var d Diff
		if code := get(t, ts, "/api/p/0/diff?"+tc.query, &d); code != http.StatusOK {
			t.Errorf("%s: %d", tc.query, code)
			continue
		}
		if d.From != tc.from || d.To != tc.to || d.Change != "greet" || d.Truncated {
			t.Errorf("%s: %s..%s of %q (truncated %v), want %s..%s", tc.query, d.From, d.To, d.Change, d.Truncated, tc.from, tc.to)
		}
		for _, s := range tc.has {
			if !strings.Contains(d.Text, s) {
				t.Errorf("%s: the diff lacks %q:\n%s", tc.query, s, d.Text)
			}
		}
		for _, s := range tc.lacks {
			if strings.Contains(d.Text, s) {
				t.Errorf("%s: the diff has %q:\n%s", tc.query, s, d.Text)
			}
		}
	}
	for query, code := range map[string]int{
		"change=greet":                    http.StatusBadRequest,
		"change=greet&round=x":            http.StatusBadRequest,
		"change=greet&round=1&stage=lint": http.StatusBadRequest,
		"round=1":                         http.StatusBadRequest,
		"change=nope&round=1":             http.StatusNotFound,
		"change=greet&round=3":            http.StatusNotFound,
		"change=farewell&round=1":         http.StatusNotFound,
		"change=greet&round=1&run=run-9":  http.StatusNotFound,
	} {
		if got := get(t, ts, "/api/p/0/diff?"+query, nil); got != code {
			t.Errorf("%s: %d, want %d", query, got, code)
		}
	}
}

// A journal whose commits the repository lacks (or that names no
// repository) gives an error, not an empty diff.
func TestDiffOfMissingCommits(t *testing.T) {
	f := newFixture(t)
	f.sha.base, f.sha.greet1 = strings.Repeat("1", 40), strings.Repeat("2", 40)
	f.start()
	f.toMerged()
	ts := serve(t, f, Options{})
	if got := get(t, ts, "/api/p/0/diff?change=greet&round=1", nil); got != http.StatusInternalServerError {
		t.Errorf("a diff of missing commits: %d, want 500", got)
	}
}

// An integration attempt that conflicts goes back to the agent with the
// conflict, one requeued behind a failed change is integrated again, and
// the one main takes is merged, with its pull request.
func TestRoundsOfIntegration(t *testing.T) {
	at := testStart
	var events []journal.Event
	add := func(p journal.Payload) {
		at = at.Add(time.Second)
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, journal.Event{Seq: int64(len(events) + 1), Time: at, Type: p.EventType(), Change: "c", Data: data})
	}
	to := func(from, to state.Status) { add(journal.StateChangeData{From: string(from), To: string(to)}) }
	pass := func(stage string, attempt int) {
		add(journal.VerifyGateData{Stage: stage, Gate: "test", Result: "pass", Attempt: attempt})
	}
	add(journal.DispatchData{Base: "b0"})
	add(journal.AgentSessionDecisionData{Iteration: 1})
	add(journal.AgentIterationData{Iteration: 1, Head: "h1"})
	to(state.Implementing, state.Verifying)
	pass(StageVerify, 1)
	to(state.Verifying, state.Queued)
	to(state.Queued, state.Integrating)
	add(journal.IntegrationAttemptData{Attempt: 1, Onto: "m1"})
	add(journal.ChangeIntegrationFailedData{Reason: "conflict", Paths: []string{"a.go"}, RetryContext: "resolve a.go", Attempt: 1})
	add(journal.RetryScheduledData{Stage: "conflict", Attempt: 1, Budget: 6, Reason: "merge conflict", RetryContext: "resolve a.go"})
	to(state.Integrating, state.IntegrationFailed)
	add(journal.AgentSessionDecisionData{Iteration: 2})
	add(journal.AgentIterationData{Iteration: 2, Head: "h2"})
	to(state.IntegrationFailed, state.Verifying)
	pass(StageVerify, 2)
	to(state.Verifying, state.Queued)
	to(state.Queued, state.Integrating)
	add(journal.IntegrationAttemptData{Attempt: 2, Onto: "m2"})
	to(state.Integrating, state.Queued)
	to(state.Queued, state.Integrating)
	add(journal.IntegrationAttemptData{Attempt: 3, Onto: "m3"})
	pass(StageIntegration, 3)
	add(journal.PullRequestOpenedData{Number: 7, URL: "https://forge/pr/7", Attempt: 3})
	add(journal.MergedData{Commit: "m4", Previous: "m3", Attempt: 3, PullRequest: 7})
	to(state.Integrating, state.Merged)

	var got []string
	for _, r := range Rounds(events) {
		s := fmt.Sprintf("%s %d %s %v %s..%s gates %d", r.Stage, r.Attempt, r.Verdict, r.Iterations, r.From, r.To, len(r.Gates))
		if r.Failure != nil {
			s += " failure"
		}
		if r.Handback != nil {
			s += " handback"
		}
		if r.PullRequest != 0 {
			s += fmt.Sprintf(" #%d %s", r.PullRequest, r.PullRequestURL)
		}
		got = append(got, s)
	}
	want := []string{
		"verify 1 pass [1] b0..h1 gates 1",
		"integration 1 conflict [] .. gates 0 failure handback",
		"verify 2 pass [2] h1..h2 gates 1",
		"integration 2 requeued [] .. gates 0",
		"integration 3 merged [] m3..m4 gates 1 #7 https://forge/pr/7",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rounds:\n got %q\nwant %q", got, want)
	}
}

// The timeline's bands are each change's rounds, from its first
// iteration to its verdict; a round still running reaches the axis's
// end.
func TestTimelineBands(t *testing.T) {
	f := newFixture(t)
	f.lock()
	f.start()
	f.toMerged()
	f.to("farewell", state.Pending, state.Dispatched)
	f.to("farewell", state.Dispatched, state.Implementing)
	f.add("farewell", journal.AgentIterationData{Iteration: 1, Result: "done", DurationMS: 1000, Commits: 1})
	f.to("farewell", state.Implementing, state.Verifying)
	f.add("farewell", journal.GateStartedData{Stage: "verify", Gate: "test", Kind: "exec", Attempt: 1})
	ts := serve(t, f, Options{})
	tl := getOK[TimelineView](t, ts, "/api/p/0/timeline")
	var got []string
	for _, b := range tl.Bands {
		got = append(got, fmt.Sprintf("%s %s %d %v %s %s", b.Change, b.Stage, b.Attempt, b.Iterations, b.Verdict, b.End.Sub(b.Start)))
	}
	want := []string{
		"greet verify 1 [1] fail 7s",
		"greet verify 2 [2] pass 7s",
		"greet integration 1 [] merged 2s",
		"farewell verify 1 [1] running 3s",
	}
	if !slices.Equal(got, want) {
		t.Errorf("bands:\n got %q\nwant %q", got, want)
	}
	if !tl.Bands[3].End.Equal(tl.End) {
		t.Errorf("the running round ends at %s, the axis at %s", tl.Bands[3].End, tl.End)
	}
}

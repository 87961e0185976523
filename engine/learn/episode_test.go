package learn

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm/usage"
)

func TestNormalise(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"every file needs a header comment: main.go", "every file needs a header comment: <file>"},
		{"  \x1b[31mpkg/a/b.go:12:3:\x1b[0m   missing   doc  ", "<file>: missing doc"},
		{"FAIL\tgithub.com/x/y\t0.012s", "FAIL <file> <n>s"},
		{"commit 3f015ef1 is not on main", "commit <sha> is not on main"},
		{"expected 42 got 43", "expected <n> got <n>"},
		{"fmt.Println is forbidden, e.g. in v1.2.3", "fmt.Println is forbidden, e.g. in v1.2.3"},
		{"defaced 1234567", "defaced <n>"},
		{"a // comment", "a // comment"},
		{"--- FAIL: TestGreet (0.00s)", "--- FAIL: TestGreet (<n>s)"},
		{"utf8 and sha256 stay", "utf8 and sha256 stay"},
	} {
		if got := Normalise(tc.in); got != tc.want {
			t.Errorf("Normalise(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFailureLines(t *testing.T) {
	rc := "Gate doc (`sh doc.sh`) failed with exit code 1. Last lines of its output:\n" +
		"```\n" +
		"every file needs a header comment: greet.go\n" +
		"every file needs a header comment: greet_test.go\n" +
		"exit status 1\n" +
		"make: *** [Makefile:3: doc] Error 1\n" +
		"npm ERR! code 1\n" +
		"FAIL\tgithub.com/x/y\t0.012s\n" +
		"ok 1\n" +
		"```\n" +
		"Full log: .set/logs/greet/verify-1/doc.log"
	got := linesOf(failureLines(journal.VerifyGateData{Gate: "doc", RetryContext: rc}, nil, nil))
	want := []string{"every file needs a header comment: greet.go"}
	if !cmp.Equal(got, want) {
		t.Errorf("failureLines(retry context) = %q, want %q", got, want)
	}
	got = linesOf(failureLines(journal.VerifyGateData{Gate: "test", RetryContext: rc, Failures: []string{"TestGreet", "TestPart", "TestGreet"}}, nil, nil))
	if want := []string{"TestGreet", "TestPart"}; !cmp.Equal(got, want) {
		t.Errorf("failureLines(failures) = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		gate, rc string
		want     []string
	}{
		{"spec_verify", "Gate spec_verify failed: 2 of the change's 3 requirements are not named by any test line this change adds:\n- REQ-GREET-01: Greet\n- REQ-GREET-02: Shout\n" +
			"Name each ID in the test that covers it, in a line the change adds to **/*_test.go — for example a comment `// REQ-GREET-01` in the test, or REQ_GREET_01 in the test's name.",
			[]string{"2 of the change's 3 requirements are not named by any test line this change adds:", "REQ-GREET-01: Greet", "REQ-GREET-02: Shout"}},
		{"rules", "Gate rules failed: lines this change adds match forbidden patterns:\n- a.go:3: no-println: no println: println(later)\nRemove or rewrite these lines.",
			[]string{"a.go:3: no-println: no println: println(later)"}},
		{"test_files", "Gate test_files failed: the change adds or modifies no test file. Test files are those matching:\n- **/*_test.go\nAdd or extend the tests that cover this change.",
			[]string{"the change adds or modifies no test file."}},
		{"review", "Gate review failed: the reviewer model (claude-sonnet-4-5 via cli) reported 2 findings of severity major or worse, which block the change:\n" +
			"\n1. [major] greet.go:12 (REQ-GREET-01)\n   The greeting ignores the name.\n   Fix: Use the name.\n" +
			"\n2. [critical] the change\n   Nothing handles an empty name.\n   Fix: Handle it.\n" +
			"It also reported 1 finding below the blocking severity major:\n\n3. [minor] greet.go:3\n   A typo.\n   Fix: Fix it.\n" +
			"Fix the blocking findings.",
			[]string{"[major] greet.go:12: The greeting ignores the name.", "[critical] the change: Nothing handles an empty name."}},
		{"review", "Gate review failed: the reviewer model (m via cli) judged 1 of the change's 2 requirements not implemented:\n- REQ-1: Greet — no greeting\n" +
			"It also reported 1 finding of severity major or worse, which block the change:\n\n2. [major] a.go:1\n   Wrong.\n   Fix: Right.\n" +
			"Implement each requirement as its text and every one of its scenarios say, and fix the blocking findings.",
			[]string{"REQ-1: Greet — no greeting", "[major] a.go:1: Wrong."}},
		{"scope_check", "Gate scope_check failed: the change touches 1 file outside its scope.\nOutside the scope:\n- b.go\nThe change may only touch paths matching:\n- a/**\nUndo the changes.",
			[]string{"the change touches 1 file outside its scope."}},
	} {
		if got := linesOf(failureLines(journal.VerifyGateData{Gate: tc.gate, Kind: tc.gate, RetryContext: tc.rc}, nil, nil)); !cmp.Equal(got, tc.want) {
			t.Errorf("failureLines(%s) = %q, want %q", tc.gate, got, tc.want)
		}
	}
	var many string
	for i := range 15 {
		many += "line about thing " + string(rune('a'+i)) + "\n"
	}
	if got := linesOf(failureLines(journal.VerifyGateData{Gate: "x", RetryContext: many}, nil, nil)); len(got) != maxLinesPerFailure {
		t.Errorf("failureLines(15 lines) gave %d lines, want %d", len(got), maxLinesPerFailure)
	}
}

// linesOf is the failure lines as printed.
func linesOf(ls []failureLine) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Line)
	}
	return out
}

// step is one event of a test journal.
type step struct {
	run, change string
	p           journal.Payload
}

// journalOf writes steps through the journal's own writer, one run after
// another, and reads them back as setctl learn would.
func journalOf(t *testing.T, steps []step) []journal.Event {
	t.Helper()
	dir := t.TempDir()
	at := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	clock := func() time.Time { at = at.Add(time.Second); return at }
	var w *journal.Writer
	run := ""
	for _, s := range steps {
		if s.run != run {
			if w != nil {
				w.Close()
			}
			var err error
			if w, err = journal.Open(dir, s.run, journal.WithClock(clock)); err != nil {
				t.Fatal(err)
			}
			run = s.run
		}
		if _, err := w.Append(s.change, s.p); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	events, err := journal.ReadFile(dir + "/" + journal.EventsFile)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

func docFailed(change string, attempt int) journal.VerifyGateData {
	return journal.VerifyGateData{Stage: "verify", Gate: "doc", Kind: "exec", Result: "fail", ExitCode: 1, Attempt: attempt,
		RetryContext: "Gate doc (`sh doc.sh`) failed with exit code 1. Last lines of its output:\n```\n" +
			"every file needs a header comment: " + change + ".go\nexit status 1\n```\nFull log: .set/logs/" + change + "/verify-1/doc.log"}
}

func iteration(n int, head string, tokens int64) journal.AgentIterationData {
	return journal.AgentIterationData{Iteration: n, Result: "done", Head: head, Tokens: usage.Tokens{Input: tokens}}
}

// TestEpisodes reads the journal of a run in which the doc gate fails the
// first round of greet and part on the same line (both fixed in their
// second round, greet's after two retries), part conflicts with main on
// go.mod, a sentinel warns on part, and lint fails on shout, a change
// that the run leaves failing and that a resumed run-2 fixes.
func TestEpisodes(t *testing.T) {
	events := journalOf(t, []step{
		{"run-1", "", journal.RunStartedData{Changes: []string{"greet", "part", "shout"}}},
		{"run-1", "greet", journal.DispatchData{Base: "base0"}},
		{"run-1", "greet", iteration(1, "g1", 100)},
		{"run-1", "greet", docFailed("greet", 1)},
		{"run-1", "greet", journal.RetryScheduledData{Stage: "verify", Attempt: 1}},
		{"run-1", "greet", iteration(2, "g2", 50)},
		{"run-1", "greet", journal.VerifyGateData{Stage: "verify", Gate: "doc", Result: "fail", Attempt: 2, Failures: []string{"every file needs a header comment: greet.go"}}},
		{"run-1", "greet", journal.RetryScheduledData{Stage: "verify", Attempt: 2}},
		{"run-1", "greet", iteration(3, "g3", 25)},
		{"run-1", "greet", journal.VerifyGateData{Stage: "verify", Gate: "doc", Result: "pass", Attempt: 3}},
		{"run-1", "part", journal.DispatchData{Base: "base0"}},
		{"run-1", "part", iteration(1, "p1", 10)},
		{"run-1", "part", docFailed("part", 1)},
		{"run-1", "part", journal.VerifyGateData{Stage: "verify", Gate: "vet", Result: "warn", Attempt: 1, RetryContext: "something to warn about"}},
		{"run-1", "part", journal.SentinelActionData{Rule: "stuck", Action: "warn", Step: 1, Steps: 2, Facts: json.RawMessage(`{}`)}},
		{"run-1", "part", journal.RetryScheduledData{Stage: "verify", Attempt: 1}},
		{"run-1", "part", iteration(2, "p2", 20)},
		{"run-1", "part", journal.VerifyGateData{Stage: "verify", Gate: "doc", Result: "pass", Attempt: 2}},
		{"run-1", "part", journal.MergeQueuedData{Head: "p2"}},
		{"run-1", "part", journal.ChangeIntegrationFailedData{Reason: "conflict", Paths: []string{"go.mod"}, Attempt: 1}},
		{"run-1", "part", journal.RetryScheduledData{Stage: "conflict", Attempt: 1}},
		{"run-1", "part", iteration(3, "p3", 30)},
		{"run-1", "part", journal.MergedData{Commit: "m1", Previous: "base0", Attempt: 2}},
		{"run-1", "shout", journal.DispatchData{Base: "base0"}},
		{"run-1", "shout", iteration(1, "s1", 10)},
		{"run-1", "shout", journal.VerifyGateData{Stage: "verify", Gate: "lint", Result: "fail", Attempt: 1,
			RetryContext: "Gate lint (`golangci-lint run`) failed with exit code 1. Last lines of its output:\n```\nshout.go:3:1: exported function Shout should have comment\n```"}},
		{"run-1", "", journal.RunFinishedData{Result: "failed"}},
		{"run-2", "", journal.RunStartedData{Changes: []string{"shout"}}},
		{"run-2", "shout", iteration(2, "s2", 40)},
		{"run-2", "shout", journal.VerifyGateData{Stage: "verify", Gate: "test", Result: "pass", Attempt: 2}},
		{"run-2", "shout", journal.MergeQueuedData{Head: "s2"}},
	})
	seq := func(change string, typ journal.Type, n int) int64 {
		for _, e := range events {
			if e.Change == change && e.Type == typ {
				if n--; n == 0 {
					return e.Seq
				}
			}
		}
		t.Fatalf("no %s #%d of %s", typ, n, change)
		return 0
	}
	docLine := "verify gate doc: every file needs a header comment: <file>"
	want := []Episode{
		{Kind: EpisodeGate, Signature: docLine, Run: "run-1", Change: "greet", Seq: seq("greet", journal.VerifyGate, 1),
			Gate: "doc", Stage: "verify", Round: 1, Line: "every file needs a header comment: greet.go",
			Fixed: 3, FixedSeq: seq("greet", journal.VerifyGate, 3), From: "g1", To: "g3", Retries: 2, Tokens: 75},
		{Kind: EpisodeGate, Signature: docLine, Run: "run-1", Change: "part", Seq: seq("part", journal.VerifyGate, 1),
			Gate: "doc", Stage: "verify", Round: 1, Line: "every file needs a header comment: part.go",
			Fixed: 2, FixedSeq: seq("part", journal.VerifyGate, 3), From: "p1", To: "p2", Retries: 1, Tokens: 20},
		{Kind: EpisodeSentinel, Signature: "sentinel stuck: warn", Run: "run-1", Change: "part", Seq: seq("part", journal.SentinelAction, 1),
			FixedSeq: seq("part", journal.Merged, 1), From: "p1", To: "p3", Retries: 2, Tokens: 50},
		{Kind: EpisodeConflict, Signature: "conflict: go.mod", Run: "run-1", Change: "part", Seq: seq("part", journal.ChangeIntegrationFailed, 1),
			Round: 1, Paths: []string{"go.mod"}, Fixed: 2, FixedSeq: seq("part", journal.Merged, 1), From: "p2", To: "p3", Retries: 1, Tokens: 30},
		{Kind: EpisodeGate, Signature: "verify gate lint: <file>: exported function Shout should have comment", Run: "run-1", Change: "shout",
			Seq: seq("shout", journal.VerifyGate, 1), Gate: "lint", Stage: "verify", Round: 1, Line: "shout.go:3:1: exported function Shout should have comment",
			Fixed: 2, FixedSeq: seq("shout", journal.MergeQueued, 1), From: "s1", To: "s2", Tokens: 40},
	}
	if diff := cmp.Diff(want, Episodes(events, nil)); diff != "" {
		t.Errorf("Episodes (-want +got):\n%s", diff)
	}
}

// TestEpisodesOpen: a failure the journal does not see fixed is an
// episode with Fixed 0, and the journal's order does not matter.
func TestEpisodesOpen(t *testing.T) {
	events := journalOf(t, []step{
		{"run-1", "greet", docFailed("greet", 1)},
		{"run-1", "greet", journal.VerifyGateData{Stage: "verify", Gate: "doc", Result: "error", Attempt: 2, RetryContext: "could not run"}},
		{"run-1", "greet", journal.VerifyGateData{Stage: "verify", Gate: "other", Result: "pass", Attempt: 2}},
	})
	events[0], events[2] = events[2], events[0]
	got := Episodes(events, nil)
	if len(got) != 1 || got[0].Fixed != 0 || got[0].FixedSeq != 0 || got[0].Seq != 1 {
		t.Errorf("Episodes = %+v, want one open episode of seq 1", got)
	}
}

// rulesFailed is a rules gate (named "forbid", of kind rules) failing
// with hits, as its retry context lists them.
func rulesFailed(attempt int, hits ...string) journal.VerifyGateData {
	return journal.VerifyGateData{Stage: "verify", Gate: "forbid", Kind: "rules", Result: "fail", Attempt: attempt,
		RetryContext: "Gate forbid failed: lines this change adds match forbidden patterns:\n- " + strings.Join(hits, "\n- ") + "\nRemove or rewrite these lines."}
}

// TestEpisodesRules: a rules gate's finding names the file, its line and
// the text the change added, all the change's own. Its signature is the
// rule and the file pattern, so the same rule broken in two changes is
// one signature, three hits of it in one round one episode (one retry,
// not three), and another rule or file pattern another.
func TestEpisodesRules(t *testing.T) {
	events := journalOf(t, []step{
		{"run-1", "greet", rulesFailed(1,
			"internal/greet/greet.go:3: no-println: no println: println(greeting)",
			"internal/greet/greet.go:9: no-println: no println: println(later)",
			"cmd/greet/main.go:12: no-println: no println: println(flags)",
			"web/app.ts:4: no-println: no println: println(types)",
			"cmd/greet/main.go:20: learning no-println: Use the logger: fmt.Println(\"hi\")")},
		{"run-1", "greet", journal.RetryScheduledData{Stage: "verify", Attempt: 1}},
		{"run-1", "greet", journal.VerifyGateData{Stage: "verify", Gate: "forbid", Kind: "rules", Result: "pass", Attempt: 2}},
		{"run-1", "part", rulesFailed(1, "part.go:1: no-println: no println: println(ann, split)")},
		{"run-1", "part", journal.RetryScheduledData{Stage: "verify", Attempt: 1}},
		{"run-1", "part", journal.VerifyGateData{Stage: "verify", Gate: "forbid", Kind: "rules", Result: "pass", Attempt: 2}},
	})
	var got []string
	for _, ep := range Episodes(events, nil) {
		got = append(got, fmt.Sprintf("%s %s retries %d: %s", ep.Change, ep.Signature, ep.Retries, ep.Line))
	}
	want := []string{
		"greet verify gate forbid: forbidden no-println in *.go retries 1: internal/greet/greet.go:3: no-println: no println: println(greeting)",
		"greet verify gate forbid: forbidden no-println in *.ts retries 1: web/app.ts:4: no-println: no println: println(types)",
		"greet verify gate forbid: forbidden learning no-println in *.go retries 1: cmd/greet/main.go:20: learning no-println: Use the logger: fmt.Println(\"hi\")",
		"part verify gate forbid: forbidden no-println in *.go retries 1: part.go:1: no-println: no println: println(ann, split)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Episodes (-want +got):\n%s", diff)
	}
	ps := Propose(Episodes(events, nil), 2, nil)
	if len(ps) != 1 || ps[0].Signature != "verify gate forbid: forbidden no-println in *.go" || ps[0].Changes != 2 || ps[0].Name != "forbid-forbidden-println" ||
		ps[0].Text != "The `forbid` gate failed earlier changes on lines they added to `*.go` files that its rule `no-println` forbids (no println): add no such line." {
		t.Errorf("Propose = %+v, want one proposal for the rule no-println in *.go, of 2 changes", ps)
	}
}

// TestNormaliseGroups: the lines real tools print for the same failure in
// two changes or runs normalise alike, and those of different failures
// do not. Identifiers a message quotes stay: "`x` is unused" and "`y` is
// unused" are two failures.
func TestNormaliseGroups(t *testing.T) {
	for _, tc := range []struct {
		tool  string
		a, b  string
		group bool
	}{
		{"go vet", "internal/x/y.go:12:3: exported function Foo should have comment or be unexported",
			"cmd/z.go:7:1: exported function Foo should have comment or be unexported", true},
		{"go vet", "internal/x/y.go:12:3: exported function Foo should have comment or be unexported",
			"internal/x/y.go:12:3: exported function Bar should have comment or be unexported", false},
		{"go build", "main.go:3:2: \"os\" imported and not used", "./cmd/a/main.go:4:2: \"os\" imported and not used", true},
		{"golangci-lint", "pkg/a.go:40:10: Error return value of `f.Close` is not checked (errcheck)",
			"pkg/b/b.go:3:1: Error return value of `f.Close` is not checked (errcheck)", true},
		{"golangci-lint", "pkg/a.go:40:10: Error return value of `f.Close` is not checked (errcheck)",
			"pkg/a.go:40:10: Error return value of `w.Write` is not checked (errcheck)", false},
		{"eslint stylish", "  3:7  error  'x' is assigned a value but never used  no-unused-vars",
			"  10:12  error  'x' is assigned a value but never used  no-unused-vars", true},
		{"eslint stylish", "  3:7  error  'x' is assigned a value but never used  no-unused-vars",
			"  3:7  error  'x' is not defined  no-undef", false},
		{"tsc", "src/components/Button.tsx(12,5): error TS2322: Type 'string' is not assignable to type 'number'.",
			"src/Card.tsx(3,15): error TS2322: Type 'string' is not assignable to type 'number'.", true},
		{"cargo", "error[E0425]: cannot find value `x` in this scope", "error[E0425]: cannot find value `x` in this scope", true},
		{"cargo", "error[E0425]: cannot find value `x` in this scope", "error[E0425]: cannot find value `y` in this scope", false},
		{"cargo", "error: could not compile `demo` (bin \"demo\") due to 2 previous errors",
			"error: could not compile `demo` (bin \"demo\") due to 5 previous errors", true},
		{"ruff", "E501 Line too long (120 > 88)", "E501 Line too long (95 > 88)", true},
		{"ruff", "app/models.py:12:89: E501 Line too long (120 > 88)", "app/x.py:1:1: F401 [*] `os` imported but unused", false},
		{"pytest", "E       AssertionError: assert 404 == 200", "E   AssertionError: assert 500 == 200", true},
		{"pytest", "FAILED tests/test_api.py::test_create - AssertionError: assert 404 == 200",
			"FAILED tests/test_api.py::test_delete - AssertionError: assert 404 == 200", false},
		{"jest", "    ✕ renders the header (12 ms)", "  ✕ renders the header (3 ms)", true},
		{"go test", "--- FAIL: TestGreet (0.00s)", "--- FAIL: TestGreet (1.25s)", true},
		{"go test panic", "panic: runtime error: invalid memory address or nil pointer dereference [signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a2b3c]",
			"panic: runtime error: invalid memory address or nil pointer dereference [signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x51f00a]", true},
		{"logger", "2026-11-27T08:01:02Z ERROR cannot open the store", "2026-11-28T17:45:59.120+01:00 ERROR cannot open the store", true},
		{"logger", "2026-11-27 08:01:02 ERROR cannot open the store", "2026-11-27 21:01:02.5 ERROR cannot open the store", true},
		{"uuid", "request 123e4567-e89b-12d3-a456-426614174000 failed", "request 9f0c1a2b-0000-4d3e-8f00-0123456789ab failed", true},
		{"duration", "the server did not start within 1m30s", "the server did not start within 2m5s", true},
	} {
		if got := Normalise(tc.a) == Normalise(tc.b); got != tc.group {
			t.Errorf("%s: %q and %q group: %v, want %v (%q, %q)", tc.tool, tc.a, tc.b, got, tc.group, Normalise(tc.a), Normalise(tc.b))
		}
	}
}

// TestEpisodesFailedForGood: greet fails the doc gate until its retries
// are spent (failed for good, never fixed in run-1); run-2 starts it
// again and it fails the same way before it passes. That is two
// episodes, one per run: run-1's unfixed, with run-1's retry alone, and
// run-2's fixed, so that a learning adopted in run-2 sees the failure
// recur.
func TestEpisodesFailedForGood(t *testing.T) {
	events := journalOf(t, []step{
		{"run-1", "greet", iteration(1, "g1", 10)},
		{"run-1", "greet", docFailed("greet", 1)},
		{"run-1", "greet", journal.RetryScheduledData{Stage: "verify", Attempt: 1}},
		{"run-1", "greet", iteration(2, "g2", 10)},
		{"run-1", "greet", docFailed("greet", 2)},
		{"run-1", "greet", journal.StateChangeData{From: "verify-failed", To: "failed:retry_budget_exhausted"}},
		{"run-2", "greet", journal.StateChangeData{From: "failed:retry_budget_exhausted", To: "pending"}},
		{"run-2", "greet", iteration(3, "g3", 100)},
		{"run-2", "greet", docFailed("greet", 3)},
		{"run-2", "greet", journal.RetryScheduledData{Stage: "verify", Attempt: 3}},
		{"run-2", "greet", iteration(4, "g4", 100)},
		{"run-2", "greet", journal.VerifyGateData{Stage: "verify", Gate: "doc", Result: "pass", Attempt: 4}},
	})
	var got []string
	for _, ep := range Episodes(events, nil) {
		got = append(got, fmt.Sprintf("%s round %d fixed %d retries %d tokens %d", ep.Run, ep.Round, ep.Fixed, ep.Retries, ep.Tokens))
	}
	want := []string{"run-1 round 1 fixed 0 retries 1 tokens 10", "run-2 round 3 fixed 4 retries 1 tokens 100"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Episodes (-want +got):\n%s", diff)
	}
}

// TestEpisodesAcceptedBaseline: run-1 accepted main's failure TestFlaky
// of the test gate (setctl apply --accept-baseline); the gate's failures
// still name it beside greet's own TestGreet, but only TestGreet is
// greet's episode. run-2 accepted nothing: TestFlaky is part's.
func TestEpisodesAcceptedBaseline(t *testing.T) {
	testFailed := func(failures ...string) journal.VerifyGateData {
		return journal.VerifyGateData{Stage: "verify", Gate: "test", Kind: "exec", Result: "fail", Attempt: 1, Failures: failures}
	}
	events := journalOf(t, []step{
		{"run-1", "", journal.BaselineAcceptedData{Gate: "test", Tree: "t1", Failures: []string{"TestFlaky"}}},
		{"run-1", "greet", testFailed("TestFlaky", "TestGreet")},
		{"run-2", "part", testFailed("TestFlaky")},
	})
	var got []string
	for _, ep := range Episodes(events, nil) {
		got = append(got, ep.Run+" "+ep.Change+" "+ep.Line)
	}
	if want := []string{"run-1 greet TestGreet", "run-2 part TestFlaky"}; !cmp.Equal(got, want) {
		t.Errorf("Episodes = %q, want %q", got, want)
	}
	if !SiblingEvent(journal.BaselineAccepted) {
		t.Error("SiblingEvent(BASELINE_ACCEPTED) = false: a journal of sibling events alone would hand on main's accepted failures")
	}
}

// TestMeaningful: the summaries and headings test runners, linters and
// package managers print around every failure say nothing of it (every
// failing change prints them alike, so each would be proposed); the
// lines that name what failed do.
func TestMeaningful(t *testing.T) {
	for _, l := range []string{
		"Tests:       1 failed, 3 passed, 4 total", "Test Suites: 1 failed, 1 total", "Snapshots:   0 total", "Time:        1.234 s",
		"Ran all test suites.", "Ran all test suites matching /greet/i.", "FAIL  src/app.test.ts (5.2 s)",
		" Test Files  1 failed (1)", "      Tests  1 failed | 2 passed (3)", "   Duration  1.20s (transform 20ms, setup 0ms)",
		"  2 failing", "  3 passing (12ms)",
		"========================= 1 failed, 3 passed in 0.12s ==========================",
		"=========================== short test summary info ============================",
		"=================================== FAILURES ===================================",
		"test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
		"error: could not compile `demo` (bin \"demo\") due to 2 previous errors", "error: test failed, to rerun pass `--lib`", "failures:",
		"✖ 3 problems (3 errors, 0 warnings)", "  1 error and 0 warnings potentially fixable with the `--fix` option.",
		"Found 3 errors in 2 files.", "Found 1 error.", "[*] 2 fixable with the `--fix` option.", "3 issues:", "* errcheck: 1",
		"npm error code 1", "npm ERR! Test failed.", " ELIFECYCLE  Test failed. See above for more details.",
		"info Visit https://yarnpkg.com/en/docs/cli/run for documentation about this command.",
		"error Command failed with exit code 1.", "Process finished with exit code 1", "exit status 2", "FAIL\tgithub.com/x/y [build failed]",
		"goroutine 7 [running]:", "created by testing.(*T).Run in goroutine 1",
	} {
		if n := Normalise(l); meaningful(n) {
			t.Errorf("%q (%q) is meaningful, want boilerplate", l, n)
		}
	}
	for _, l := range []string{
		"FAILED tests/test_api.py::test_create - AssertionError: assert 404 == 200", "E       AssertionError: assert 404 == 200",
		"--- FAIL: TestGreet (0.00s)", "  ● Header › renders the header", "    ✕ renders the header (12 ms)",
		"error[E0425]: cannot find value `x` in this scope", "src/app.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.",
		"app/x.py:1:1: F401 [*] `os` imported but unused", "pkg/a.go:40:10: Error return value of `f.Close` is not checked (errcheck)",
		"____________________________ test_create ____________________________",
		"panic: runtime error: index out of range [3] with length 3",
	} {
		if n := Normalise(l); !meaningful(n) {
			t.Errorf("%q (%q) is boilerplate, want meaningful", l, n)
		}
	}
}

// funcDocFailed is the doc gate failing change on a line that names its
// function, with no failures recorded (the gate had no pattern then).
func funcDocFailed(file, fn string, failures ...string) journal.VerifyGateData {
	return journal.VerifyGateData{Stage: "verify", Gate: "doc", Kind: "exec", Result: "fail", ExitCode: 1, Attempt: 1, Failures: failures,
		RetryContext: "Gate doc (`sh doc.sh`) failed with exit code 1. Last lines of its output:\n```\n" +
			file + ":7: exported func " + fn + " has no doc comment starting with its name\n" +
			file + ":9: exported func " + fn + "s has no doc comment starting with its name\nexit status 1\n```\nFull log: .set/logs/x/verify-1/doc.log"}
}

// TestEpisodesByTodaysPattern: a failure that recorded no failures is read
// by the gate's pattern of today, named as the gate's run names them
// (its groups joined), so lines that name a function each are one
// signature, one episode per change, whose Line is the line as printed.
// A failure that recorded failures keeps them; a gate without a pattern
// in patterns, or lines it names nothing on, keep their lines.
func TestEpisodesByTodaysPattern(t *testing.T) {
	events := journalOf(t, []step{
		{"run-1", "bits", funcDocFailed("bits.go", "Bits")},
		{"run-1", "percent", funcDocFailed("percent.go", "Percent")},
		{"run-2", "ordinal", funcDocFailed("ordinal.go", "Ordinal", "recorded then")},
	})
	patterns := map[string]*regexp.Regexp{"doc": regexp.MustCompile(`^\S+\.go:\d+: exported func \S+ (has no doc comment)`)}
	var got []string
	for _, ep := range Episodes(events, patterns) {
		got = append(got, ep.Change+" "+ep.Signature+": "+ep.Line)
	}
	want := []string{
		"bits verify gate doc: has no doc comment: bits.go:7: exported func Bits has no doc comment starting with its name",
		"percent verify gate doc: has no doc comment: percent.go:7: exported func Percent has no doc comment starting with its name",
		"ordinal verify gate doc: recorded then: recorded then",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Episodes (-want +got):\n%s", diff)
	}
	ps := Propose(Episodes(events, patterns), 2, nil)
	if len(ps) != 1 || ps[0].Signature != "verify gate doc: has no doc comment" || ps[0].Changes != 2 {
		t.Errorf("Propose = %+v, want one proposal of 2 changes", ps)
	}
	for _, p := range []map[string]*regexp.Regexp{nil, {"lint": patterns["doc"]}, {"doc": regexp.MustCompile(`^nothing here (\w+)`)}} {
		if n := len(Episodes(events, p)); n != 5 {
			t.Errorf("Episodes with patterns %v gave %d episodes, want 5 (2 lines of each change of run-1, 1 of run-2)", p, n)
		}
	}
}

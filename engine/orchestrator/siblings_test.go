package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/agent"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/learn"
)

// siblingsScenario: changes alpha and beta at work at once, and a gate,
// lesson, that fails while a change's .out file lacks the word "fixed",
// with a recognisable line.
func siblingsScenario(f *fixture) {
	f.change("alpha")
	f.change("beta")
	f.project.MaxParallel = 2
	f.project.Gates["lesson"] = gateConfig{Kind: "exec", Mode: "run", Order: 5, Run: []string{"sh", "-c",
		`for f in $(ls *.out 2>/dev/null); do grep -q fixed "$f" || { echo "LESSON: $f must say fixed"; exit 1; }; done`}}
	f.project.Stacks["feature"]["lesson"] = config.StackEntry{}
	// An adopted convention, which every prompt carries, killed and
	// resumed alike.
	f.project.Learnings = map[string]config.Learning{
		"tests-beside": {Kind: config.LearningConvention, Text: "Every change leaves its test file beside its output.", Enabled: true},
	}
}

// siblingsAgent is the agents of siblingsScenario. alpha fails lesson in
// its first round and fixes it in its second. beta's first iteration
// waits for alpha's lesson to pass and ends without finishing, so that
// its second begins after alpha's fix; that one writes the fix only when
// its prompt hands on alpha's episode. With $KILL_SIBLING set, beta's
// second iteration first kills set (its parent), once.
const siblingsAgent = `
prompt=$(cat)
out="$change.out"
echo "test for REQ" > "${change}_test.txt"
case "$change:$iteration" in
alpha:1) echo broken > "$out" ;;
alpha:*) echo fixed > "$out" ;;
beta:1)
	for i in $(seq 600); do
		grep '"type":"VERIFY_GATE"' ../../events.jsonl | grep '"change":"alpha"' | grep '"gate":"lesson"' | grep -q '"result":"pass"' && exit 1
		sleep 0.05
	done
	exit 1 ;;
*)
	if [ -n "$KILL_SIBLING" ] && mkdir "$KILL_SIBLING/killed" 2>/dev/null; then kill -9 $PPID; sleep 30; fi
	case "$prompt" in
	*"alpha: the verify gate lesson failed in round 1 with"*) echo fixed > "$out" ;;
	*) echo broken > "$out" ;;
	esac ;;
esac
`

// The episode of alpha, as beta's prompt hands it on.
const (
	alphaLesson     = "verify gate lesson: LESSON: <file> must say fixed"
	alphaLessonNote = "- alpha: the verify gate lesson failed in round 1 with `LESSON: alpha.out must say fixed`, and passed in round 2.\n"
)

// TestSiblingsLearnAtOnce: alpha fails the lesson gate and fixes it;
// beta, at work beside it, gets alpha's episode in the prompt of its next
// iteration (and records it in its AGENT_SESSION_DECISION), writes the
// fix, and passes lesson in its first round. alpha, which nobody taught,
// hands on nothing.
func TestSiblingsLearnAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	siblingsScenario(f)
	f.applySucceeds(f.agentScript(siblingsAgent))
	checkSiblingsLearned(t, f)
}

// checkSiblingsLearned checks the journal and prompts of a run of
// siblingsScenario.
func checkSiblingsLearned(t *testing.T, f *fixture) {
	t.Helper()
	ev := f.events()
	if got := readFile(t, f.root, ".set/changes/beta/prompt-2.md"); !strings.Contains(got, "\n## Learned in this run\n") || !strings.Contains(got, alphaLessonNote) {
		t.Errorf("beta's second prompt does not hand on alpha's episode:\n%s", got)
	}
	if got := readFile(t, f.root, ".set/changes/beta/prompt-1.md"); strings.Contains(got, "Learned in this run") {
		t.Errorf("beta's first prompt hands on what nobody had learned yet:\n%s", got)
	}
	for _, p := range []string{"alpha/prompt-1.md", "alpha/prompt-2.md"} {
		if got := readFile(t, f.root, ".set/changes/"+p); strings.Contains(got, "Learned in this run") {
			t.Errorf("%s hands on an episode; beta had none:\n%s", p, got)
		}
	}
	// Per iteration: an iteration done again after a resume is opened
	// again, and hands on what it handed on.
	siblings := map[int][]string{}
	for _, e := range ev {
		if e.Type == journal.AgentSessionDecision && e.Change == "beta" {
			d, err := journal.Decode[journal.AgentSessionDecisionData](e)
			if err != nil {
				t.Fatal(err)
			}
			if prev, ok := siblings[d.Iteration]; ok && !slices.Equal(prev, d.Siblings) {
				t.Errorf("beta's iteration %d opened with siblings %q, then %q", d.Iteration, prev, d.Siblings)
			}
			siblings[d.Iteration] = d.Siblings
		}
	}
	if want := map[int][]string{1: nil, 2: {alphaLesson}}; !cmp.Equal(siblings, want) {
		t.Errorf("beta's AGENT_SESSION_DECISION siblings = %v, want %v", siblings, want)
	}
	// Every RUN_STARTED, a resumed run's too, names the adopted
	// learning, and every iteration's prompt carried it, as its
	// AGENT_SESSION_DECISION says.
	for _, e := range ev {
		var learnings []string
		switch e.Type {
		case journal.RunStarted:
			d, err := journal.Decode[journal.RunStartedData](e)
			if err != nil {
				t.Fatal(err)
			}
			learnings = d.Learnings
		case journal.AgentSessionDecision:
			d, err := journal.Decode[journal.AgentSessionDecisionData](e)
			if err != nil {
				t.Fatal(err)
			}
			learnings = d.Learnings
		default:
			continue
		}
		if !slices.Equal(learnings, []string{"tests-beside"}) {
			t.Errorf("%s of %q: learnings %v, want [tests-beside]", e.Type, e.Change, learnings)
		}
	}
	for _, p := range []string{"alpha/prompt-1.md", "alpha/prompt-2.md", "beta/prompt-1.md", "beta/prompt-2.md"} {
		if got := readFile(t, f.root, ".set/changes/"+p); !strings.Contains(got, "\n## Learnings\n") || !strings.Contains(got, "- Every change leaves its test file beside its output.\n") {
			t.Errorf("%s does not carry the adopted learning:\n%s", p, got)
		}
	}
	for _, e := range ev {
		if e.Type != journal.VerifyGate || e.Change != "beta" {
			continue
		}
		if d, _ := journal.Decode[journal.VerifyGateData](e); d.Result != "pass" {
			t.Errorf("beta's gate %s: %s in round %d; it had learned the lesson", d.Gate, d.Result, d.Attempt)
		}
	}
	if n := count(ev, journal.RetryScheduled, "alpha"); n != 1 {
		t.Errorf("alpha had %d verify retries, want 1", n)
	}
}

// TestCrashWhileSiblingsAreHandedOn: set is SIGKILLed while beta's agent
// works on the iteration that alpha's episode was handed to; the resumed
// run derives what beta's prompt hands on from the journal (the run's
// events read again) and gives the agent the prompt the killed iteration
// had, and records the learnings the killed one did.
func TestCrashWhileSiblingsAreHandedOn(t *testing.T) {
	if testing.Short() {
		t.Skip("crash tests re-execute the test binary")
	}
	f := newFixture(t)
	t.Setenv("KILL_SIBLING", t.TempDir())
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envCrashRoot+"="+f.root, envCrashScript+"=siblings")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed: %v\n%s", err, out)
	}
	killed := readFile(t, f.root, ".set/changes/beta/prompt-2.md")
	if !strings.Contains(killed, alphaLessonNote) {
		t.Fatalf("the killed iteration's prompt does not hand on alpha's episode:\n%s", killed)
	}

	siblingsScenario(f)
	sum, err := f.apply(context.Background(), f.agentScript(siblingsAgent))
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Resumed || sum.Result != "success" {
		t.Fatalf("resumed run: %+v", sum)
	}
	if resumed := readFile(t, f.root, ".set/changes/beta/prompt-2.md"); resumed != killed {
		t.Errorf("the resumed iteration's prompt differs from the killed one's:\n%s\nwant:\n%s", resumed, killed)
	}
	if n := count(f.events(), journal.RunStarted, ""); n != 2 {
		t.Errorf("%d RUN_STARTED, want the killed run's and the resumed one's", n)
	}
	checkSiblingsLearned(t, f)
}

// step is an event of change in a test journal.
type step struct {
	change string
	p      journal.Payload
}

// handOnJournal writes steps as the events of run-1.
func handOnJournal(t *testing.T, steps []step) []journal.Event {
	t.Helper()
	w, err := journal.Open(t.TempDir(), "run-1")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var out []journal.Event
	for _, s := range steps {
		e, err := w.Append(s.change, s.p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// fixedGate is a failure of gate in change's round 1 on line, and its
// pass in round 2.
func fixedGate(change, gate, line string) []step {
	return []step{
		{change, journal.VerifyGateData{Stage: "verify", Gate: gate, Result: "fail", Attempt: 1, Failures: []string{line}}},
		{change, journal.VerifyGateData{Stage: "verify", Gate: gate, Result: "pass", Attempt: 2}},
	}
}

func signatures(notes []agent.SiblingNote) []string {
	var out []string
	for _, n := range notes {
		out = append(out, n.Signature)
	}
	return out
}

// handOn hands on at most maxSiblings notes of maxSiblingBytes, newest
// first, none twice to one change in a run; an iteration opened before
// the run stopped hands on again exactly what it handed on.
func TestHandOn(t *testing.T) {
	t.Parallel()
	var steps []step
	for i := range 7 {
		steps = append(steps, fixedGate(fmt.Sprintf("c%d", i), "lesson", fmt.Sprintf("lesson number %c failed", 'a'+i))...)
	}
	steps = append(steps, fixedGate("c7", "other", "not in beta's stack")...)
	steps = append(steps, fixedGate("beta", "lesson", "beta's own")...)
	events := handOnJournal(t, steps)
	gates := []string{"lesson", "test"}
	sig := func(c rune) string {
		return learn.GateSignature("verify", "lesson", fmt.Sprintf("lesson number %c failed", c))
	}

	first := handOn(events, "run-1", "beta", 1, gates)
	if want := []string{sig('g'), sig('f'), sig('e'), sig('d'), sig('c')}; !slices.Equal(signatures(first), want) {
		t.Errorf("iteration 1 hands on %q, want %q", signatures(first), want)
	}
	if first[0].Note != learn.SiblingNote(learn.Siblings(events, "run-1", "beta", gates, 1)[0]) {
		t.Errorf("note = %q", first[0].Note)
	}

	// Iteration 1 handed on five; iteration 2 hands on the rest.
	opened := handOnJournal(t, append(steps, step{"beta", journal.AgentSessionDecisionData{Iteration: 1, Siblings: signatures(first)}}))
	if got, want := signatures(handOn(opened, "run-1", "beta", 2, gates)), []string{sig('b'), sig('a')}; !slices.Equal(got, want) {
		t.Errorf("iteration 2 hands on %q, want %q", got, want)
	}
	// Iteration 1, opened and not ended, is done again after a resume:
	// with what it handed on, though c8 fixed the lesson since.
	later := append(slices.Clone(steps), step{"beta", journal.AgentSessionDecisionData{Iteration: 1, Siblings: signatures(first)[:2]}})
	later = append(later, fixedGate("c8", "lesson", "learned while beta worked")...)
	again := handOn(handOnJournal(t, later), "run-1", "beta", 1, gates)
	if !cmp.Equal(again, first[:2]) {
		t.Errorf("iteration 1 again hands on %+v, want %+v", again, first[:2])
	}

	// Long names and lines: the notes stay within maxSiblingBytes.
	var long []step
	for i := range 5 {
		long = append(long, fixedGate(fmt.Sprintf("c%d-%s", i, strings.Repeat("x", 200)), "lesson", strings.Repeat(string(rune('a'+i)), 600))...)
	}
	size := 0
	notes := handOn(handOnJournal(t, long), "run-1", "beta", 1, gates)
	for _, n := range notes {
		size += len(n.Note)
	}
	if len(notes) == 0 || len(notes) == 5 || size > maxSiblingBytes {
		t.Errorf("%d notes of %d bytes, want fewer than 5 within %d", len(notes), size, maxSiblingBytes)
	}
}

// BenchmarkHandOn measures what one prompt's siblings cost in a large
// run: 30 changes of 10 verify rounds each, 3 gates failing and passing
// in each round, with their iterations and session decisions (1,500
// events kept).
func BenchmarkHandOn(b *testing.B) {
	w, err := journal.Open(b.TempDir(), "run-1")
	if err != nil {
		b.Fatal(err)
	}
	var events []journal.Event
	add := func(change string, p journal.Payload) {
		e, err := w.Append(change, p)
		if err != nil {
			b.Fatal(err)
		}
		events = append(events, e)
	}
	gates := []string{"build", "lint", "test"}
	for round := 1; round <= 10; round++ {
		for c := range 30 {
			change := fmt.Sprintf("change-%02d", c)
			add(change, journal.AgentSessionDecisionData{Iteration: round})
			add(change, journal.AgentIterationData{Iteration: round, Result: "done"})
			for _, g := range gates {
				result := "fail"
				if round%2 == 0 {
					result = "pass"
				}
				add(change, journal.VerifyGateData{Stage: "verify", Gate: g, Result: result, Attempt: round,
					Failures: []string{fmt.Sprintf("%s: failure %d of change %d", g, round, c)}})
			}
		}
	}
	w.Close()
	b.ResetTimer()
	for range b.N {
		handOn(events, "run-1", "change-00", 11, gates)
	}
	b.ReportMetric(float64(len(events)), "events")
}

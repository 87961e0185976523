package agent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/rundir"
)

// The prompt hands on what the changes beside this one learned, before
// the retry context; a prompt with nothing to hand on says nothing of it.
func TestPromptHandsOnSiblings(t *testing.T) {
	in := PromptInput{Project: &config.Project{Name: "p", MainBranch: "main"}, Change: plan.Change{Name: "x"},
		RetryContext: "Gate test failed.", RetryStage: "verify", Attempt: 1, Budget: 2}
	if got := Prompt(in); strings.Contains(got, "Learned in this run") {
		t.Errorf("a prompt without siblings has the section:\n%s", got)
	}
	in.Siblings = []SiblingNote{
		{Signature: "verify gate doc: a", Note: "greet: the verify gate doc failed in round 1 with `a`, and passed in round 2."},
		{Signature: "verify gate lint: b", Note: "part: the verify gate lint failed in round 2 with `b`, and passed in round 3."},
	}
	want := "\n## Learned in this run\n" +
		"Other changes of this run failed a check that this change runs too, and then passed it. Do not repeat their failure:\n" +
		"- greet: the verify gate doc failed in round 1 with `a`, and passed in round 2.\n" +
		"- part: the verify gate lint failed in round 2 with `b`, and passed in round 3.\n" +
		"\n## The last attempt failed: retry 1 of 2 (verify)\n\nGate test failed.\n"
	if got := Prompt(in); !strings.HasSuffix(got, want) {
		t.Errorf("prompt:\n%s\nwant it to end:\n%s", got, want)
	}
}

// The loop asks for the siblings of each iteration before writing its
// prompt, and the iteration's AGENT_SESSION_DECISION records their
// signatures.
func TestLoopHandsOnSiblings(t *testing.T) {
	root, wt := loopRepo(t)
	// Not done in the first iteration, done in the second.
	a, err := New(config.Agent{Adapter: "exec", Argv: []string{"sh", "-c", `[ "$1" = 2 ] || exit 1; echo x > x.txt; git add x.txt; git commit -qm x; echo committed`, "sh", "{iteration}"}}, root)
	if err != nil {
		t.Fatal(err)
	}
	notes := map[int][]SiblingNote{2: {{Signature: "verify gate doc: a", Note: "greet: the doc gate failed"}}}
	var asked []int
	var decided [][]string
	res, err := Loop(context.Background(), LoopInput{
		Adapter: a,
		Prompt:  PromptInput{Project: &config.Project{}, Change: plan.Change{Name: "x"}},
		Layout:  rundir.New(root), Worktree: wt, MainBranch: "main", MaxIterations: 3,
		Siblings: func(n int) []SiblingNote { asked = append(asked, n); return notes[n] },
		Emit: func(p journal.Payload) error {
			if d, ok := p.(journal.AgentSessionDecisionData); ok {
				decided = append(decided, d.Siblings)
			}
			return nil
		},
	})
	if err != nil || res.Ending != EndDone {
		t.Fatalf("Loop = %+v, %v", res, err)
	}
	if !slices.Equal(asked, []int{1, 2}) {
		t.Errorf("Siblings asked for iterations %v, want [1 2]", asked)
	}
	if len(decided) != 2 || decided[0] != nil || !slices.Equal(decided[1], []string{"verify gate doc: a"}) {
		t.Errorf("decisions' siblings = %q, want [] and [verify gate doc: a]", decided)
	}
	for n, want := range map[int]bool{1: false, 2: true} {
		prompt, _ := rundir.New(root).Prompt("x", n)
		data, err := os.ReadFile(prompt)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(data), "- greet: the doc gate failed\n"); got != want {
			t.Errorf("prompt %s hands on greet's episode: %v, want %v", filepath.Base(prompt), got, want)
		}
	}
}

package orchestrator

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/journal"
)

// TestRunRecordsLearnings: a run records every adopted learning in
// RUN_STARTED (a planning learning's serialise globs among its
// crossCutting ones), the plan's in PLAN_CREATED, and in each iteration's
// AGENT_SESSION_DECISION the conventions its prompt carried: those that
// match the change's scope, whose texts the prompt holds.
func TestRunRecordsLearnings(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.project.CrossCutting = map[string]bool{"routes.txt": true}
	f.project.Learnings = map[string]config.Learning{
		"say-why":      {Kind: config.LearningConvention, Text: "Every file says why it exists.", Enabled: true},
		"api-tests":    {Kind: config.LearningConvention, Text: "Every API change carries a test.", Enabled: true, Paths: []string{"api/**"}},
		"old":          {Kind: config.LearningConvention, Text: "Turned off.", Enabled: false},
		"wiring-apart": {Kind: config.LearningPlanning, Text: "Keep wiring changes apart.", Enabled: true, Serialise: []string{"wire.txt"}},
		"no-todo":      {Kind: config.LearningRule, Text: "no TODO left", Pattern: "TODO", Enabled: true},
	}
	f.change("docs")
	f.plan.Changes[0].Scope = []string{"docs.txt"}
	f.plan.Learnings = []string{"say-why", "wiring-apart"}
	a := f.agentScript(`echo "good $change" > "$change.txt"` + "\n")
	f.applySucceeds(a)

	var started journal.RunStartedData
	var created journal.PlanCreatedData
	var decisions []journal.AgentSessionDecisionData
	var prompts []string
	for _, e := range f.events() {
		var err error
		switch e.Type {
		case journal.RunStarted:
			started, err = journal.Decode[journal.RunStartedData](e)
		case journal.PlanCreated:
			created, err = journal.Decode[journal.PlanCreatedData](e)
		case journal.AgentSessionDecision:
			var d journal.AgentSessionDecisionData
			d, err = journal.Decode[journal.AgentSessionDecisionData](e)
			decisions = append(decisions, d)
		case journal.AgentIteration:
			var d journal.AgentIterationData
			d, err = journal.Decode[journal.AgentIterationData](e)
			prompts = append(prompts, d.Prompt)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"api-tests", "no-todo", "say-why", "wiring-apart"}; !slices.Equal(started.Learnings, want) {
		t.Errorf("RUN_STARTED.learnings = %v, want %v", started.Learnings, want)
	}
	if want := []string{"routes.txt", "wire.txt"}; !slices.Equal(started.CrossCutting, want) {
		t.Errorf("RUN_STARTED.crossCutting = %v, want %v", started.CrossCutting, want)
	}
	if want := []string{"say-why", "wiring-apart"}; !slices.Equal(created.Learnings, want) {
		t.Errorf("PLAN_CREATED.learnings = %v, want %v", created.Learnings, want)
	}
	if len(decisions) == 0 || len(prompts) == 0 {
		t.Fatalf("%d decisions, %d prompts", len(decisions), len(prompts))
	}
	for _, d := range decisions {
		if !slices.Equal(d.Learnings, []string{"say-why"}) {
			t.Errorf("AGENT_SESSION_DECISION.learnings = %v, want [say-why]", d.Learnings)
		}
	}
	text, err := os.ReadFile(filepath.Join(f.root, prompts[0]))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "\n## Learnings\n") || !strings.Contains(string(text), "- Every file says why it exists.\n") || strings.Contains(string(text), "carries a test") {
		t.Errorf("prompt:\n%s", text)
	}
}

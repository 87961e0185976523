package agent

import (
	"regexp"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/plan"
)

// A retry's prompt counts the retries of the stage that failed, against
// that stage's budget, as the console's "retry 1/3 (verify)" does.
func TestPromptRetryCountsTheStage(t *testing.T) {
	for _, tt := range []struct {
		stage           string
		attempt, budget int
		want            string
	}{
		{"verify", 1, 3, "\n## The last attempt failed: retry 1 of 3 (verify)\n\nGate test failed.\n"},
		{"integration", 2, 2, "\n## The last attempt failed: retry 2 of 2 (integration)\n\nGate test failed.\n"},
		// A conflict is no failure of the agent's.
		{"conflict", 3, 6, "\n## trunk moved under your change: merge conflict 3 of at most 6\n\nGate test failed.\n"},
	} {
		got := Prompt(PromptInput{
			Project: &config.Project{Name: "p", MainBranch: "trunk"}, Change: plan.Change{Name: "x"},
			RetryContext: "Gate test failed.", RetryStage: tt.stage, Attempt: tt.attempt, Budget: tt.budget,
		})
		if !strings.HasSuffix(got, tt.want) {
			t.Errorf("prompt ends:\n%s\nwant:\n%s", got[strings.LastIndex(got, "\n## "):], tt.want)
		}
	}
}

// TestPromptNamesTheMainBranch: the prompt speaks of the project's main
// branch by its name.
func TestPromptNamesTheMainBranch(t *testing.T) {
	got := Prompt(PromptInput{
		Project:   &config.Project{Name: "shop", MainBranch: "master"},
		Change:    plan.Change{Name: "cart", Type: "feature", Size: "S"},
		Worktree:  "/repo/.set/worktrees/cart",
		Iteration: 1,
		Folder:    "openspec/changes/cart",
	})
	if !strings.Contains(got, "When the change reaches master, set folds the delta into openspec/specs/.") || regexp.MustCompile(`\bmain\b`).MatchString(got) {
		t.Errorf("prompt:\n%s", got)
	}
}

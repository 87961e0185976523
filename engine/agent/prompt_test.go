package agent

import (
	"regexp"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/plan"
)

// TestPromptNamesTheMainBranch: the prompt speaks of the project's main
// branch by its name.
func TestPromptNamesTheMainBranch(t *testing.T) {
	got := Prompt(PromptInput{
		Project:   &config.Project{Name: "shop", MainBranch: "master"},
		Change:    plan.Change{Name: "cart", Type: "feature", Size: "S"},
		Worktree:  "/repo/.set/worktrees/cart",
		Iteration: 1,
	})
	if !strings.Contains(got, "When the change reaches master, set folds it into openspec/specs/.") || regexp.MustCompile(`\bmain\b`).MatchString(got) {
		t.Errorf("prompt:\n%s", got)
	}
}

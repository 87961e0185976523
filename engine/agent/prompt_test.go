package agent

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hexops/autogold/v2"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/spec"
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

// TestPromptSaysWhereTestsAre: the prompt names the files that count as
// tests and where this project keeps its tests (main's test files, the
// first eight of them), so the agent follows the project's layout; it
// says when main has none, and nothing about them when they are unknown.
func TestPromptSaysWhereTestsAre(t *testing.T) {
	project := &config.Project{Name: "camel", MainBranch: "main", TestPatterns: map[string]string{"file": "**/test.*", "dir": "**/test/**", "types": "**/*.test-d.*"}}
	patterns := "\n## Tests\nFiles matching these patterns count as tests: **/*.test-d.*, **/test.*, **/test/**.\n"
	for _, tt := range []struct {
		files []string
		want  string
	}{
		{[]string{"test.js", "index.test-d.ts"}, patterns + "This project keeps its tests in test.js, index.test-d.ts: add yours where its test runner finds them, as these are.\n"},
		{[]string{"test/a.js", "test/b.js", "test/c.js", "test/d.js", "test/e.js", "test/f.js", "test/g.js", "test/h.js", "test/i.js", "test/j.js"},
			patterns + "This project keeps its tests in test/a.js, test/b.js, test/c.js, test/d.js, test/e.js, test/f.js, test/g.js, test/h.js and 2 more: add yours where its test runner finds them, as these are.\n"},
		{[]string{}, patterns + "main has no test file yet.\n"},
		{nil, patterns},
	} {
		got := Prompt(PromptInput{Project: project, Change: plan.Change{Name: "kebab"}, TestFiles: tt.files})
		if !strings.Contains(got, tt.want+"\n## OpenSpec\n") {
			t.Errorf("prompt for test files %q:\n%s\nwant it to hold:\n%s", tt.files, got, tt.want)
		}
	}
	// Tests written inline (rust's #[cfg(test)] modules) are said too.
	project = &config.Project{Name: "fnv", MainBranch: "main", TestPatterns: map[string]string{"integration": "**/tests/**/*.rs"},
		InlineTests: map[string]config.Inline{"cfg-test": {Files: "**/*.rs", From: `^\s*#\[cfg\(test\)\]`}}}
	inline := "\n## Tests\nFiles matching these patterns count as tests: **/tests/**/*.rs.\n" +
		"Tests written inline count too: in a file matching **/*.rs, the lines from the last one matching `^\\s*#\\[cfg\\(test\\)\\]` to the file's end.\n" +
		"main has no test file yet; it may hold tests inline: add yours as it does.\n"
	if got := Prompt(PromptInput{Project: project, Change: plan.Change{Name: "hash32"}, TestFiles: []string{}}); !strings.Contains(got, inline+"\n## OpenSpec\n") {
		t.Errorf("prompt with inline tests:\n%s\nwant it to hold:\n%s", got, inline)
	}
	if got := Prompt(PromptInput{Project: &config.Project{Name: "p"}, Change: plan.Change{Name: "x"}}); strings.Contains(got, "## Tests") {
		t.Errorf("a project without test patterns gets a Tests section:\n%s", got)
	}
}

// TestPromptCarriesMatchingLearnings: the adopted conventions that match
// the change's type and scope follow the profile's conventions, under
// their own heading; one for other paths or types, one turned off and
// the other kinds are not the agent's.
func TestPromptCarriesMatchingLearnings(t *testing.T) {
	project := &config.Project{
		Name: "shop", MainBranch: "main",
		Conventions: map[string]string{"gofmt": "Format Go code with gofmt."},
		Learnings: map[string]config.Learning{
			"doc-comment":   {Kind: config.LearningConvention, Text: "Every Go file starts with a package comment.", Enabled: true},
			"handler-tests": {Kind: config.LearningConvention, Text: "Every handler has a table test.", Enabled: true, Paths: []string{"internal/http/**"}},
			"docs-only":     {Kind: config.LearningConvention, Text: "Docs wrap at 72 columns.", Enabled: true, Types: []string{"docs"}},
			"old":           {Kind: config.LearningConvention, Text: "Turned off.", Enabled: false},
			"routes-apart":  {Kind: config.LearningPlanning, Text: "Keep route changes apart.", Enabled: true},
			"no-printf":     {Kind: config.LearningRule, Text: "log through slog", Pattern: "log.Printf", Enabled: true},
		},
	}
	in := PromptInput{Project: project, Change: plan.Change{Name: "cart", Type: "feature", Size: "S", Scope: []string{"internal/http/cart.go"}}}
	want := "\n## Conventions\n- Format Go code with gofmt.\n" +
		"\n## Learnings\nEarlier runs of this project failed where these say; follow them from the start:\n" +
		"- Every Go file starts with a package comment.\n- Every handler has a table test.\n\n## OpenSpec\n"
	if got := Prompt(in); !strings.Contains(got, want) {
		t.Errorf("prompt:\n%s\nwant it to hold:\n%s", got, want)
	}
	if got := config.Names(in.Learnings()); !slices.Equal(got, []string{"doc-comment", "handler-tests"}) {
		t.Errorf("Learnings = %v", got)
	}
	in.Change.Scope = []string{"internal/store/**"}
	if got := Prompt(in); strings.Contains(got, "table test") || !strings.Contains(got, "- Every Go file starts with a package comment.\n") {
		t.Errorf("a change outside the learning's paths gets:\n%s", got)
	}
	project.Learnings = nil
	if got := Prompt(in); strings.Contains(got, "## Learnings") {
		t.Errorf("a project without learnings gets:\n%s", got)
	}
}

// userFolderInput is the prompt input of a change whose OpenSpec folder
// the project's people wrote, with a proposal, a design and tasks.
func userFolderInput() PromptInput {
	return PromptInput{
		Project: &config.Project{Name: "shortener", MainBranch: "main",
			Gates: map[string]config.Gate{"spec": {Kind: config.KindSpecVerify, Tasks: config.TasksAllChecked}}},
		Change: plan.Change{Name: "add-links", Type: "feature", Size: "S", Description: "Short links for long ones.",
			Requirements: []string{"REQ-ADD-LINKS-01", "REQ-ADD-LINKS-02", "REQ-ADD-LINKS-03"}},
		Reqs: []spec.Requirement{
			{ID: "REQ-ADD-LINKS-01", Title: "Create a short link", Text: "The service SHALL create a short link for a long one.",
				Scenarios: []spec.Scenario{{Name: "Shorten", When: []string{"a long link is given"}, Then: []string{"a short link is returned"}}}},
			{ID: "REQ-ADD-LINKS-02", Title: "REQ-LINKS-07: Follow a short link", Text: "The service SHALL redirect a short link."},
			{ID: "REQ-ADD-LINKS-03", Title: "Expire links"},
		},
		Standings: map[string]spec.Standing{
			"REQ-ADD-LINKS-01": {ID: "REQ-ADD-LINKS-01", Status: spec.New},
			"REQ-ADD-LINKS-02": {ID: "REQ-ADD-LINKS-02", Status: spec.Changed, Differs: []string{"text"}, Living: "REQ-LINKS-07: Follow a short link"},
			"REQ-ADD-LINKS-03": {ID: "REQ-ADD-LINKS-03", Status: spec.Removed, Living: "Expire links"},
		},
		Worktree: "/repo/.set/worktrees/add-links", Iteration: 1, Gates: []string{"spec"},
		Folder: "openspec/changes/add-links", UserFolder: true,
		Proposal: "## Why\nPeople share long links.\n\n## What Changes\n- Short links.\n",
		Design:   "## Decisions\n- Base62 codes of 7 characters.\n",
		Tasks:    "## 1. Links\n- [ ] 1.1 Create a short link\n- [ ] 1.2 Follow a short link\n",
	}
}

// TestPromptUserFolder: the prompt of a change whose folder the project's
// people wrote says whose the folder is, carries its proposal, design and
// tasks, asks for each task checked off and the delta specs left as they
// are, and names each requirement by set's ID and its OpenSpec name.
func TestPromptUserFolder(t *testing.T) {
	autogold.ExpectFile(t, autogold.Raw(Prompt(userFolderInput())))
}

// TestPromptUserFolderClipped: a long proposal is clipped, saying where
// the full file is; a folder without design.md has no design section.
func TestPromptUserFolderClipped(t *testing.T) {
	in := userFolderInput()
	in.Proposal, in.Design = strings.Repeat("why ", 3000), ""
	got := Prompt(in)
	if !strings.Contains(got, "why \n… (clipped; full file: openspec/changes/add-links/proposal.md)\n````\n") || strings.Contains(got, "### design.md") {
		t.Errorf("prompt:\n%s", got)
	}
	if n := strings.Count(got, "why "); n != folderFileShown/4 {
		t.Errorf("the proposal shows %d words, want %d", n, folderFileShown/4)
	}
}

// TestPromptSetFolderUnchanged: a folder set wrote keeps its words, and
// says nothing of tasks unless spec_verify asks for them all checked.
func TestPromptSetFolderUnchanged(t *testing.T) {
	in := userFolderInput()
	in.UserFolder, in.Proposal, in.Design, in.Tasks = false, "", "", ""
	got := Prompt(in)
	if !strings.Contains(got, "set wrote this change's OpenSpec change folder, openspec/changes/add-links/: ") ||
		!strings.Contains(got, "each test names the requirement ID it covers.\n- Every task in openspec/changes/add-links/tasks.md is checked off (`- [x]`).\n") {
		t.Errorf("prompt:\n%s", got)
	}
	in.Project.Gates["spec"] = config.Gate{Kind: config.KindSpecVerify, Tasks: config.TasksAny}
	if got := Prompt(in); strings.Contains(got, "Every task") {
		t.Errorf("prompt with tasks \"any\":\n%s", got)
	}
}

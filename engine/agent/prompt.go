package agent

import (
	"fmt"
	"strings"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/spec"
)

// PromptInput is what an iteration's prompt is made of.
type PromptInput struct {
	Project      *config.Project
	Change       plan.Change
	Reqs         []spec.Requirement
	Worktree     string
	Iteration    int
	Gates        []string // the verify stack, in order
	RetryContext string   // the last failure, if any
	// RetryStage is the stage whose failure RetryContext reports (a stage
	// of RETRY_SCHEDULED: "verify", "integration", or "conflict": a merge
	// conflict with main, which is not the agent's failure); Attempt is that stage's retries so far,
	// this one included, and Budget the retries its budget allows.
	// Attempt 0: the retry context is where the last iteration stopped, no
	// failure.
	RetryStage string
	Attempt    int
	Budget     int
	// Folder is the change's OpenSpec change folder that set wrote at
	// dispatch ("openspec/changes/<change>"), or "" when it wrote none (a
	// change without requirements); with UserFolder, the folder the
	// project's people wrote.
	Folder string
	// UserFolder says Folder is an OpenSpec change folder the project's
	// people wrote on main (planner strategy "openspec"), which set
	// neither wrote nor rewrites. Proposal, Design and Tasks are then its
	// proposal.md, design.md and tasks.md as the change's base has them,
	// "" for a file it does not have; the prompt carries them, each
	// clipped at folderFileShown characters.
	UserFolder              bool
	Proposal, Design, Tasks string
	// Standings says, by requirement ID, how each of Reqs stands against
	// main's living specs (new, changed, removed); nil says nothing.
	Standings map[string]spec.Standing
	// TestGlobs is the globs of the files the project counts as tests on
	// main (gate.TestGlobs: its testPatterns and its test runners'
	// configuration); nil: the project's testPatterns.
	TestGlobs []string
	// TestFiles is the files of main that TestGlobs count as tests
	// (gate.TestFiles): where this project keeps its tests. The prompt
	// names the first testFilesShown of them; nil: not known, and the
	// prompt does not say.
	TestFiles []string
	// Siblings are what the run's other changes, at work or done,
	// learned, handed on (learn.Siblings; the orchestrator bounds them).
	Siblings []SiblingNote
}

// Learnings is the adopted convention learnings the prompt carries: those
// that match the change's type and scope (config.Project.ConventionsFor).
// The iteration's AGENT_SESSION_DECISION names them.
func (in PromptInput) Learnings() []config.NamedLearning {
	return in.Project.ConventionsFor(in.Change.Type, in.Change.Scope)
}

// testFilesShown is how many of the project's test files a prompt names.
const testFilesShown = 8

// Prompt renders the prompt of one iteration: the change's scope, its
// requirements with their scenarios, the profile's conventions and the
// learnings that match the change, and the last failure's retry context.
// The same input gives the same text.
func Prompt(in PromptInput) string {
	var b strings.Builder
	c := in.Change
	fmt.Fprintf(&b, "# Change %s (%s, size %s) of project %s\n\n", c.Name, c.Type, c.Size, in.Project.Name)
	fmt.Fprintf(&b, "You are implementing this change in the git worktree %s, on branch set/%s (iteration %d).\n", in.Worktree, c.Name, in.Iteration)
	if c.Description != "" {
		fmt.Fprintf(&b, "%s\n", c.Description)
	}
	b.WriteString("\n## Scope\n")
	if len(c.Scope) == 0 {
		b.WriteString("You may change any file of the repository.\n")
	} else {
		b.WriteString("Change only files matching these paths (globs, ** spans directories):\n")
		for _, s := range c.Scope {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	b.WriteString("\n## Requirements\n")
	for _, r := range in.Reqs {
		fmt.Fprintf(&b, "\n### %s: %s%s\n", r.ID, r.Title, standingNote(in.Standings[r.ID]))
		if r.Text != "" {
			fmt.Fprintf(&b, "%s\n", r.Text)
		}
		for _, s := range r.Scenarios {
			fmt.Fprintf(&b, "\nScenario: %s\n", s.Name)
			for _, g := range s.Given {
				fmt.Fprintf(&b, "- GIVEN %s\n", g)
			}
			for _, w := range s.When {
				fmt.Fprintf(&b, "- WHEN %s\n", w)
			}
			for _, t := range s.Then {
				fmt.Fprintf(&b, "- THEN %s\n", t)
			}
		}
	}
	if conventions := in.Project.ConventionList(); len(conventions) > 0 {
		b.WriteString("\n## Conventions\n")
		for _, cv := range conventions {
			fmt.Fprintf(&b, "- %s\n", cv)
		}
	}
	if learnings := in.Learnings(); len(learnings) > 0 {
		b.WriteString("\n## Learnings\n")
		b.WriteString("Earlier runs of this project failed where these say; follow them from the start:\n")
		for _, l := range learnings {
			fmt.Fprintf(&b, "- %s\n", l.Text)
		}
	}
	globs := in.TestGlobs
	if globs == nil {
		globs = in.Project.TestGlobs()
	}
	inline := in.Project.InlineTestRules()
	if len(globs) > 0 || len(inline) > 0 {
		b.WriteString("\n## Tests\n")
		if len(globs) > 0 {
			fmt.Fprintf(&b, "Files matching these patterns count as tests: %s.\n", strings.Join(globs, ", "))
		}
		for _, r := range inline {
			fmt.Fprintf(&b, "Tests written inline count too: in a file matching %s, the lines from the last one matching `%s` to the file's end.\n", r.Files, r.From)
		}
		switch n := len(in.TestFiles); {
		case in.TestFiles == nil:
		case n == 0 && len(inline) > 0:
			fmt.Fprintf(&b, "%s has no test file yet; it may hold tests inline: add yours as it does.\n", in.Project.MainBranch)
		case n == 0:
			fmt.Fprintf(&b, "%s has no test file yet.\n", in.Project.MainBranch)
		case n <= testFilesShown:
			fmt.Fprintf(&b, "This project keeps its tests in %s: add yours where its test runner finds them, as these are.\n", strings.Join(in.TestFiles, ", "))
		default:
			fmt.Fprintf(&b, "This project keeps its tests in %s and %d more: add yours where its test runner finds them, as these are.\n", strings.Join(in.TestFiles[:testFilesShown], ", "), n-testFilesShown)
		}
	}
	b.WriteString("\n## OpenSpec\n")
	if in.UserFolder {
		userFolder(&b, in)
	} else if in.Folder != "" {
		fmt.Fprintf(&b, "set wrote this change's OpenSpec change folder, %s/: proposal.md (why and scope), ", in.Folder)
		b.WriteString("the delta specs specs/<capability>/spec.md (the requirements above as ADDED, MODIFIED, REMOVED or RENAMED requirements) ")
		b.WriteString("and tasks.md (a task per requirement, traced by [REQ: <ID>]). Implement against it. ")
		b.WriteString("You may refine tasks.md and proposal.md (check tasks off, add tasks); leave the delta specs as they are: they say what the spec asks, and the spec_verify gate checks them. ")
		fmt.Fprintf(&b, "When the change reaches %s, set folds the delta into openspec/specs/.\n", in.Project.MainBranch)
	} else {
		fmt.Fprintf(&b, "This change has no requirements, so it has no OpenSpec delta; openspec/specs/ on %s stays as it is.\n", in.Project.MainBranch)
	}
	b.WriteString("\n## Done means\n")
	if in.UserFolder {
		b.WriteString("- The requirements above are implemented and covered by tests; each test names the requirement it covers, by its ID or its OpenSpec name.\n")
	} else {
		b.WriteString("- The requirements above are implemented and covered by tests; each test names the requirement ID it covers.\n")
	}
	if in.Folder != "" && tasksAllChecked(in) {
		fmt.Fprintf(&b, "- Every task in %s/tasks.md is checked off (`- [x]`).\n", in.Folder)
	}
	b.WriteString("- Your work is committed on the branch (set commits what you leave uncommitted).\n")
	if len(in.Gates) > 0 {
		fmt.Fprintf(&b, "- These checks pass, in this order: %s.\n", strings.Join(in.Gates, ", "))
	}
	if len(in.Siblings) > 0 {
		b.WriteString("\n## Learned in this run\n")
		b.WriteString("Other changes of this run failed a check that this change runs too, and then passed it. Do not repeat their failure:\n")
		for _, s := range in.Siblings {
			fmt.Fprintf(&b, "- %s\n", s.Note)
		}
	}
	switch {
	case in.RetryContext == "":
	case in.Attempt > 0 && in.RetryStage == journal.StageConflict:
		// Not the agent's failure: main moved under the change.
		fmt.Fprintf(&b, "\n## %s moved under your change: merge conflict %d of at most %d\n\n%s\n", in.Project.MainBranch, in.Attempt, in.Budget, strings.TrimSpace(in.RetryContext))
	case in.Attempt > 0:
		fmt.Fprintf(&b, "\n## The last attempt failed: retry %d of %d (%s)\n\n%s\n", in.Attempt, in.Budget, in.RetryStage, strings.TrimSpace(in.RetryContext))
	default:
		fmt.Fprintf(&b, "\n## Where the last iteration stopped\n\n%s\n", strings.TrimSpace(in.RetryContext))
	}
	return b.String()
}

// folderFileShown is how many characters of each of a user folder's
// proposal.md, design.md and tasks.md a prompt carries.
const folderFileShown = 8000

// userFolder writes the OpenSpec section of a change whose folder the
// project's people wrote (PromptInput.UserFolder): what the folder is, its
// proposal, design and tasks, what the agent may and may not change in
// it, and the names a test may trace each requirement by.
func userFolder(b *strings.Builder, in PromptInput) {
	fmt.Fprintf(b, "This change is the OpenSpec change %s/, written by the project's people: implement it. ", in.Folder)
	b.WriteString("The requirements above are those of its delta specs (specs/<capability>/spec.md).\n")
	for _, f := range []struct{ name, text string }{{"proposal.md", in.Proposal}, {"design.md", in.Design}, {"tasks.md", in.Tasks}} {
		if f.text == "" {
			continue
		}
		fmt.Fprintf(b, "\n### %s\n````markdown\n%s\n````\n", f.name, clipFile(f.text, in.Folder+"/"+f.name))
	}
	fmt.Fprintf(b, "\nCheck each task off in %s/tasks.md (`- [x]`) as you finish it; you may add tasks. ", in.Folder)
	fmt.Fprintf(b, "Do not edit its delta specs (specs/) or .openspec.yaml: they are the project's people's, and the spec_verify gate holds them to what %s has. ", in.Project.MainBranch)
	fmt.Fprintf(b, "When the change reaches %s, set archives it as `openspec archive` does, folding its delta into openspec/specs/.\n", in.Project.MainBranch)
	var names []string
	for _, r := range in.Reqs {
		if st, ok := in.Standings[r.ID]; ok && NeedsNoTest(st) {
			continue
		}
		names = append(names, fmt.Sprintf("- %s = %q\n", r.ID, r.Title))
	}
	if len(names) > 0 {
		b.WriteString("\nA test covers a requirement when a line it adds names the requirement's ID or its OpenSpec name; name either:\n")
		b.WriteString(strings.Join(names, ""))
	}
}

// NeedsNoTest reports whether no test is to name a requirement of a user
// folder that stands so: one the delta removes, or only renames (its
// behaviour stays what it was). It is the one rule for the prompt and
// for what spec_verify leaves out (the orchestrator's Removing).
func NeedsNoTest(st spec.Standing) bool {
	return st.Status == spec.Removed || st.Status == spec.Changed && len(st.Differs) == 1 && st.Differs[0] == "title"
}

// clipFile is text clipped at folderFileShown characters, saying where
// the full file is when it was clipped, without a final newline.
func clipFile(text, path string) string {
	text = strings.TrimRight(text, "\n")
	if r := []rune(text); len(r) > folderFileShown {
		return string(r[:folderFileShown]) + "\n… (clipped; full file: " + path + ")"
	}
	return text
}

// tasksAllChecked reports whether a spec_verify gate of the change's
// verify stack asks for every task checked off (config.TasksAllChecked).
func tasksAllChecked(in PromptInput) bool {
	for _, name := range in.Gates {
		if g, ok := in.Project.Gates[name]; ok && g.Kind == config.KindSpecVerify && g.Tasks == config.TasksAllChecked {
			return true
		}
	}
	return false
}

// standingNote says how a requirement stands against main, after its
// title: what the change is to do with it.
func standingNote(st spec.Standing) string {
	switch st.Status {
	case spec.New:
		return " (new)"
	case spec.Changed:
		return " (changed: its " + strings.Join(st.Differs, ", ") + "; main implements the old one)"
	case spec.Removed:
		return " (removed from the spec: take out its behaviour and the tests that name it)"
	}
	return ""
}

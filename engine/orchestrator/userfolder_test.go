package orchestrator

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/agent"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/spec"
	"github.com/set-engine/set/engine/state"
)

// theUserFolder is the OpenSpec change folder add-links as the project's
// people wrote it on main.
var theUserFolder = map[string]string{
	"openspec/changes/add-links/.openspec.yaml": "schema: spec-driven\ncreated: 2026-11-27\n",
	"openspec/changes/add-links/proposal.md":    "## Why\nPeople share long links.\n\n## What Changes\n- Short links.\n",
	"openspec/changes/add-links/tasks.md":       "## 1. Links\n- [ ] 1.1 Create a short link\n",
	"openspec/changes/add-links/specs/links/spec.md": "## ADDED Requirements\n\n" +
		"### Requirement: Create a short link\nThe service SHALL create a short link for a long one.\n\n" +
		"#### Scenario: Shorten\n- **WHEN** a long link is given\n- **THEN** a short link is returned\n",
}

// userFolderFixture is a fixture whose main holds theUserFolder and whose
// plan is made from it (planner strategy "openspec"), with spec_verify in
// the feature stack.
func userFolderFixture(t *testing.T) *fixture {
	f := newFixture(t)
	for name, content := range theUserFolder {
		f.write(name, content)
	}
	f.git("add", "-A")
	f.git("commit", "-q", "-m", "openspec: add-links")
	f.plan.Strategy = config.StrategyOpenSpec
	f.plan.Requirements = []spec.Requirement{{ID: "REQ-ADD-LINKS-01", Title: "Create a short link", Domain: "links",
		Text: "The service SHALL create a short link for a long one.", File: "openspec/changes/add-links/specs/links/spec.md", Line: 3,
		Scenarios: []spec.Scenario{{Name: "Shorten", When: []string{"a long link is given"}, Then: []string{"a short link is returned"}}}}}
	f.plan.Changes = []plan.Change{{Name: "add-links", Type: "feature", Size: "S", Requirements: []string{"REQ-ADD-LINKS-01"}}}
	f.withSpecVerify()
	return f
}

// TestUserFolderAtDispatch: a change of a plan from the folders people
// wrote gets no folder commit of set's on its branch (the folder is on
// main already), its delta is main's specs/ and .openspec.yaml byte for
// byte, a test naming the requirement's OpenSpec name traces it (in the
// verify and the integration stack), and the
// archive main gets is of the user's delta with the agent's tasks.md.
func TestUserFolderAtDispatch(t *testing.T) {
	t.Parallel()
	f := userFolderFixture(t)
	f.project.Integration["spec"] = config.StackEntry{} // traces by the OpenSpec name there too
	c := f.plan.Changes[0]
	delta, err := deltaOn(context.Background(), f.root, f.plan, c, f.git("rev-parse", "main"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for name, content := range theUserFolder {
		if rel := strings.TrimPrefix(name, "openspec/changes/add-links/"); rel != "proposal.md" && rel != "tasks.md" {
			want[rel] = []byte(content)
		}
	}
	if diff := cmp.Diff(want, delta); diff != "" {
		t.Errorf("delta (-main +got):\n%s", diff)
	}
	if got := folderName(f.plan, plan.Change{Name: "skip-specs"}); got != "openspec/changes/skip-specs" {
		t.Errorf("folderName of a user folder without requirements = %q", got)
	}
	a := f.agentScript(`
if git log --format=%B main..HEAD | grep -q '^Set-Folder:'; then echo "set committed a folder" >&2; exit 1; fi
grep -q '^People share long links.$' "$3"
grep -q '^- \[ \] 1.1 Create a short link$' "$3"
grep -qF -- '- REQ-ADD-LINKS-01 = "Create a short link"' "$3"
echo "// create a short link" > links_test.txt
echo link > links.txt
sed -i 's/- \[ \] 1.1/- [x] 1.1/' openspec/changes/add-links/tasks.md
`).(*agent.Exec)
	a.Argv = append(a.Argv, "{prompt_file}") // $3: the prompt carries the folder's proposal, tasks and names
	f.applySucceeds(a)
	if got := f.git("log", "--format=%(trailers:key=Set-Folder,valueonly)", "main"); got != "" {
		t.Errorf("main's history has set's folder commits: %q", got)
	}
	for rel, data := range want {
		if got := f.archivedFile("add-links", rel); got+"\n" != string(data) {
			t.Errorf("archived %s = %q, want main's %q", rel, got, data)
		}
	}
	if got := f.archivedFile("add-links", "tasks.md"); !strings.Contains(got, "- [x] 1.1 Create a short link") {
		t.Errorf("archived tasks.md:\n%s", got)
	}
	if got := f.git("show", "main:openspec/specs/links/spec.md"); !strings.Contains(got, "### Requirement: Create a short link\n") {
		t.Errorf("main's living spec:\n%s", got)
	}
}

// TestUserFolderEdited: an agent that edits the delta the project's
// people wrote fails spec_verify, with words that say whose it is, until
// the retry budget is spent.
func TestUserFolderEdited(t *testing.T) {
	t.Parallel()
	f := userFolderFixture(t)
	f.project.Budgets.Retries.Verify = 1
	sum := f.applyEnds(context.Background(), f.agentScript(`
echo "// REQ-ADD-LINKS-01" > links_test.txt
echo link > links.txt
sed -i 's/SHALL/MAY/' openspec/changes/add-links/specs/links/spec.md
`), "failed")
	if sum.Statuses["add-links"] != state.FailedRetryBudget {
		t.Fatalf("add-links = %s", sum.Statuses["add-links"])
	}
	var rc string
	for _, e := range f.events() {
		if e.Type == journal.RetryScheduled && e.Change == "add-links" {
			d, _ := journal.Decode[journal.RetryScheduledData](e)
			rc = d.RetryContext
		}
	}
	if !strings.Contains(rc, "the change edits the OpenSpec change openspec/changes/add-links/ that the project's people wrote") ||
		!strings.Contains(rc, "  - openspec/changes/add-links/specs/links/spec.md was edited\n") {
		t.Errorf("retry context:\n%s", rc)
	}
}

// TestUserFolderRestoredAtMerge: with no spec_verify to hold the change
// to it, the merge still folds the delta the project's people wrote:
// their specs/ and .openspec.yaml go back over the agent's edits before
// the archive.
func TestUserFolderRestoredAtMerge(t *testing.T) {
	t.Parallel()
	f := userFolderFixture(t)
	delete(f.project.Gates, "spec")
	delete(f.project.Stacks["feature"], "spec")
	f.applySucceeds(f.agentScript(`
echo link > links.txt
sed -i 's/SHALL/MAY/' openspec/changes/add-links/specs/links/spec.md
echo "retire_capabilities: [links]" >> openspec/changes/add-links/.openspec.yaml
`))
	for _, rel := range []string{".openspec.yaml", "specs/links/spec.md"} {
		if got, want := f.archivedFile("add-links", rel), theUserFolder["openspec/changes/add-links/"+rel]; got+"\n" != want {
			t.Errorf("archived %s = %q, want main's %q", rel, got, want)
		}
	}
	if got := f.git("show", "main:openspec/specs/links/spec.md"); !strings.Contains(got, "The service SHALL create") {
		t.Errorf("main's living spec:\n%s", got)
	}
}

// TestUserFolderAddedMetadataDropped: a folder the project's people wrote
// without .openspec.yaml is archived without one, although the agent
// added one (here skip_specs: true, which would have kept the delta out
// of the living spec) and no spec_verify held it back.
func TestUserFolderAddedMetadataDropped(t *testing.T) {
	t.Parallel()
	f := userFolderFixture(t)
	f.git("rm", "-q", "openspec/changes/add-links/.openspec.yaml")
	f.git("commit", "-q", "-m", "a folder without metadata")
	delete(f.project.Gates, "spec")
	delete(f.project.Stacks["feature"], "spec")
	f.applySucceeds(f.agentScript(`
echo link > links.txt
printf 'schema: spec-driven\nskip_specs: true\n' > openspec/changes/add-links/.openspec.yaml
`))
	if got := f.git("show", "main:openspec/specs/links/spec.md"); !strings.Contains(got, "The service SHALL create") {
		t.Errorf("main's living spec:\n%s", got)
	}
	if files := f.git("ls-tree", "-r", "--name-only", "main", "openspec/changes/archive/"); strings.Contains(files, ".openspec.yaml") {
		t.Errorf("the agent's .openspec.yaml was archived:\n%s", files)
	}
}

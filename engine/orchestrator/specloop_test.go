package orchestrator

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
)

// TestChangeFolderAtDispatch: set commits the change's OpenSpec folder on
// its branch before the agent runs (an agent that writes no delta), and
// the merge queue folds it into main's living specs.
func TestChangeFolderAtDispatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.change("greet")
	sum, err := f.apply(context.Background(), f.agentScript(
		`test -f openspec/changes/greet/proposal.md
test -f openspec/changes/greet/tasks.md
git log -1 --format=%B | grep -qx 'Set-Folder: greet'
echo hello > greet.txt
`))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Statuses["greet"] != state.Archived {
		t.Fatalf("greet = %s", sum.Statuses["greet"])
	}
	if got := f.git("show", "main:openspec/specs/greet/spec.md"); !strings.Contains(got, "\n### Requirement: REQ-GREET-01: greet\n") {
		t.Errorf("main's living spec:\n%s", got)
	}
	if got := f.git("ls-tree", "-r", "--name-only", "main", "openspec/changes/archive/"); !strings.Contains(got, "-greet/specs/greet/spec.md") || !strings.Contains(got, "-greet/tasks.md") {
		t.Errorf("main's archived change folders:\n%s", got)
	}
}

// TestJournalIsNotTheRecord: a journal that says a change is archived,
// when main does not have it (main was reset), does not make its work look
// done: the run starts anew and does the work again.
func TestJournalIsNotTheRecord(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	initial := f.git("rev-parse", "main")
	f.change("greet")
	agent := f.agentScript("echo hello > greet.txt\n")
	if sum, err := f.apply(context.Background(), agent); err != nil || sum.Statuses["greet"] != state.Archived {
		t.Fatalf("first run: %v, %v", sum, err)
	}
	f.git("reset", "-q", "--hard", initial)
	sum, err := f.apply(context.Background(), agent)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Resumed || sum.Statuses["greet"] != state.Archived {
		t.Errorf("second run: resumed %v, greet %s; want a new run that archives greet", sum.Resumed, sum.Statuses["greet"])
	}
	if n := count(f.events(), journal.Merged, "greet"); n != 2 {
		t.Errorf("greet merged %d times, want twice (once on each main)", n)
	}
	if got := f.git("show", "main:greet.txt"); got != "hello" {
		t.Errorf("main's greet.txt = %q", got)
	}
}

// changeIn adds a change to the plan with one requirement of its own in
// the given capability.
func (f *fixture) changeIn(name, capability string, deps ...string) {
	f.change(name, deps...)
	f.plan.Requirements[len(f.plan.Requirements)-1].Domain = capability
}

// withSpecVerify puts a spec_verify gate in the fixture's feature stack,
// ahead of check.
func (f *fixture) withSpecVerify() {
	f.project.Gates["spec"] = gateConfig{Kind: config.KindSpecVerify, Mode: "run", Order: 5}
	f.project.Stacks["feature"]["spec"] = config.StackEntry{}
}

// namesItsRequirement is an agent script's line that names the change's
// requirement (see fixture.change) in a test file, for spec_verify.
const namesItsRequirement = `echo "REQ-$(echo "$change" | tr a-z A-Z)-01" > "${change}_test.txt"
`

// archivedDelta is the delta spec of capability that main archived for
// change.
func (f *fixture) archivedDelta(change, capability string) string {
	f.t.Helper()
	return f.archivedFile(change, "specs/"+capability+"/spec.md")
}

// archivedFile is the file rel (a slash path in the change folder) of
// the change folder main archived for change.
func (f *fixture) archivedFile(change, rel string) string {
	f.t.Helper()
	for _, p := range strings.Fields(f.git("ls-tree", "-r", "--name-only", "main", "openspec/changes/archive/")) {
		if strings.HasSuffix(p, "-"+change+"/"+rel) {
			return f.git("show", "main:"+p)
		}
	}
	f.t.Fatalf("main has no archived %s of %s", rel, change)
	return ""
}

// TestFolderOnDispatchBase: a change dispatched once a sibling created
// its capability on main gets the delta of an existing capability (no
// "## Purpose"), although the run's plan was made before the capability
// existed.
func TestFolderOnDispatchBase(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.changeIn("create", "links")
	f.changeIn("extend", "links", "create")
	f.plan.Purposes = map[string]string{"links": "Short links."}
	f.withSpecVerify()
	f.applySucceeds(f.agentScript(namesItsRequirement + "echo \"$change\" > \"$change.txt\"\n"))
	if got := f.archivedDelta("create", "links"); !strings.HasPrefix(got, "## Purpose\nShort links.\n") {
		t.Errorf("create's delta does not create the capability:\n%s", got)
	}
	if got := f.archivedDelta("extend", "links"); strings.Contains(got, "## Purpose") {
		t.Errorf("extend's delta, dispatched on a main that has links, has a Purpose:\n%s", got)
	}
	if n := count(f.events(), journal.RetryScheduled, "extend"); n != 0 {
		t.Errorf("extend was retried %d times", n)
	}
}

// TestFolderRewrittenOnResume: a change dispatched before its capability
// existed on main is interrupted; a sibling created the capability
// meanwhile, and the resumed run's plan, made from main's living specs
// again, has no Purpose for it. set rewrites the delta specs it wrote at
// dispatch, in its own commit, keeping the agent's tasks.md; the change
// passes spec_verify without a retry.
func TestFolderRewrittenOnResume(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a run interrupted and resumed, its change folder rewritten; TestFolderOnDispatchBase covers the change folder")
	}
	t.Parallel()
	f := newFixture(t)
	f.project.MaxParallel = 2 // both start from the same main
	f.changeIn("create", "links")
	f.changeIn("extend", "links")
	f.plan.Purposes = map[string]string{"links": "Short links."}
	f.withSpecVerify()
	marker := filepath.Join(t.TempDir(), "started")
	a := f.agentScript(namesItsRequirement + `
echo "$change" > "$change.txt"
[ "$change" = extend ] || exit 0
if [ ! -f "` + marker + `" ]; then
	echo "- [x] 3.1 extend.txt names the change" >> openspec/changes/extend/tasks.md
	i=0
	until git show main:openspec/specs/links/spec.md >/dev/null 2>&1; do
		i=$((i+1)); [ $i -lt 600 ] || exit 1; sleep 0.05
	done
	touch "` + marker + `"; sleep 30
fi
`)
	sum := f.applyEnds(interruptedAt(t, marker), a, "interrupted")
	if sum.Statuses["create"] != state.Archived || sum.Statuses["extend"] != state.Implementing {
		t.Fatalf("after Ctrl-C: %+v", sum)
	}
	// The resumed run plans again from main, which has links now.
	f.plan.Purposes = nil
	sum = f.applySucceeds(a)
	if !sum.Resumed {
		t.Fatalf("not resumed: %+v", sum)
	}
	if n := count(f.events(), journal.RetryScheduled, "extend"); n != 0 {
		t.Errorf("extend was retried %d times", n)
	}
	if got := f.archivedDelta("extend", "links"); strings.Contains(got, "## Purpose") {
		t.Errorf("extend's archived delta has a Purpose:\n%s", got)
	}
	if tasks := f.archivedFile("extend", "tasks.md"); !strings.Contains(tasks, "- [x] 3.1 extend.txt names the change") {
		t.Errorf("the agent's tasks.md is lost:\n%s", tasks)
	}
}

// TestFolderOnIntegrationBase: two changes that add to a capability main
// does not have are verified on the same main, both with a delta that
// creates it; the first to merge creates it, and the second, integrated on
// that main, folds the delta of an existing capability (no "## Purpose").
func TestFolderOnIntegrationBase(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two changes creating one capability, folded on the integration base; TestFolderOnDispatchBase covers the change folder")
	}
	t.Parallel()
	f := newFixture(t)
	f.project.MaxParallel = 2 // both start from the same main
	f.changeIn("one", "links")
	f.changeIn("two", "links")
	f.plan.Purposes = map[string]string{"links": "Short links."}
	f.withSpecVerify()
	// The first integration takes long enough for the second change to be
	// verified on the main without links.
	f.project.Gates["slow"] = gateConfig{Kind: "exec", Mode: "run", Order: 20, Run: []string{"sleep", "1"}}
	f.project.Integration["slow"] = config.StackEntry{}
	f.applySucceeds(f.agentScript(namesItsRequirement + "echo \"$change\" > \"$change.txt\"\n"))
	first := f.git("log", "--reverse", "--format=%(trailers:key=Set-Change,valueonly)", "main")
	first = strings.Fields(first)[0]
	second := map[string]string{"one": "two", "two": "one"}[first]
	if got := f.archivedDelta(first, "links"); !strings.HasPrefix(got, "## Purpose\nShort links.\n") {
		t.Errorf("%s, merged first, does not create the capability:\n%s", first, got)
	}
	if got := f.archivedDelta(second, "links"); strings.Contains(got, "## Purpose") {
		t.Errorf("%s, integrated on a main that has links, has a Purpose:\n%s", second, got)
	}
	if n := count(f.events(), journal.RetryScheduled, second); n != 0 {
		t.Errorf("%s was retried %d times", second, n)
	}
}

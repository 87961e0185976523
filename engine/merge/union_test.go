package merge

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/journal"
)

// appendOnBothSides has the change and main each append a line to
// CHANGELOG.md, which both have as "# log\n- start\n".
func appendOnBothSides(f *fixture) {
	f.t.Helper()
	f.write(f.wt, "CHANGELOG.md", "# log\n- start\n- feat\n")
	f.commit(f.wt, "feat entry")
	f.write(f.root, "CHANGELOG.md", "# log\n- start\n- main\n")
	f.commit(f.root, "main entry")
}

// merged is the MERGED payload emitted, or fails the test.
func (f *fixture) merged() journal.MergedData {
	f.t.Helper()
	for _, p := range f.events {
		if m, ok := p.(journal.MergedData); ok {
			return m
		}
	}
	f.t.Fatalf("no MERGED in %#v", f.events)
	return journal.MergedData{}
}

// A conflict in a file mergeUnion names merges as git's union driver
// does, without the agent; MERGED names the file.
func TestIntegrateUnionsAppendOnlyFiles(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"CHANGELOG.md": "# log\n- start\n"})
	f.project.MergeUnion = map[string]bool{"*.md": true, "notes.txt": false}
	ctx := context.Background()
	appendOnBothSides(f)

	out, err := integrate(ctx, f.input("ok"))
	if err != nil {
		t.Fatal(err)
	}
	if !out.Merged || out.Commit != f.mainAt() {
		t.Fatalf("outcome = %+v, want merged at main", out)
	}
	if got, _ := f.onMain("CHANGELOG.md"); got != "# log\n- start\n- feat\n- main\n" {
		t.Errorf("CHANGELOG.md on main = %q, want both entries, the change's first", got)
	}
	if got := f.git(f.wt, "log", "--merges", "-1", "--format=%s"); got != "Merge main into feat (union of CHANGELOG.md)" {
		t.Errorf("worktree merge message = %q", got)
	}
	if f.hasEvent(func(p journal.Payload) bool { _, ok := p.(journal.ChangeIntegrationFailedData); return ok }) {
		t.Error("CHANGE_INTEGRATION_FAILED emitted for a union merge")
	}
	if diff := cmp.Diff([]string{"CHANGELOG.md"}, f.merged().Union); diff != "" {
		t.Errorf("MERGED union (-want +got):\n%s", diff)
	}
	if got := f.read(f.root, ".git/config"); strings.Contains(got, "merge") {
		t.Errorf("the repository's config names a merge driver:\n%s", got)
	}
}

// A file whose .gitattributes say merge=union, added by main in the
// merge itself (so git's own merge did not know it yet), is unioned too.
func TestIntegrateHonoursMergeUnionAttribute(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"CHANGELOG.md": "# log\n- start\n"})
	ctx := context.Background()
	f.write(f.root, ".gitattributes", "CHANGELOG.md merge=union\n")
	appendOnBothSides(f)

	out, err := integrate(ctx, f.input("ok"))
	if err != nil {
		t.Fatal(err)
	}
	if !out.Merged {
		t.Fatalf("outcome = %+v, want merged", out)
	}
	if got, _ := f.onMain("CHANGELOG.md"); got != "# log\n- start\n- feat\n- main\n" {
		t.Errorf("CHANGELOG.md on main = %q, want both entries", got)
	}
	if diff := cmp.Diff([]string{"CHANGELOG.md"}, f.merged().Union); diff != "" {
		t.Errorf("MERGED union (-want +got):\n%s", diff)
	}
}

// With another real conflict the agent gets only that one; the
// append-only file is resolved and staged already.
func TestIntegrateUnionWithARealConflict(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"CHANGELOG.md": "# log\n- start\n"})
	f.project.MergeUnion = map[string]bool{"CHANGELOG.md": true}
	ctx := context.Background()
	appendOnBothSides(f)
	f.conflictOnNotes()

	out, err := integrate(ctx, f.input("ok"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != "conflict" || !strings.Contains(out.RetryContext, "conflicts in 1 file(s): notes.txt.") {
		t.Fatalf("outcome = %+v, want a conflict in notes.txt only", out)
	}
	if got := f.read(f.wt, "CHANGELOG.md"); got != "# log\n- start\n- feat\n- main\n" {
		t.Errorf("CHANGELOG.md in the worktree = %q, want the union", got)
	}
	left, err := git.Conflicts(ctx, f.wt)
	if err != nil || !cmp.Equal(left, []string{"notes.txt"}) {
		t.Errorf("unmerged paths = %q (%v), want notes.txt", left, err)
	}
}

// A side that deleted the append-only file is a conflict union does not
// resolve: it goes to the agent.
func TestIntegrateUnionLeavesADeletion(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"CHANGELOG.md": "# log\n- start\n"})
	f.project.MergeUnion = map[string]bool{"CHANGELOG.md": true}
	ctx := context.Background()
	f.git(f.wt, "rm", "-q", "CHANGELOG.md")
	f.commit(f.wt, "feat drops the log")
	f.write(f.root, "CHANGELOG.md", "# log\n- start\n- main\n")
	f.commit(f.root, "main entry")

	out, err := integrate(ctx, f.input("ok"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != "conflict" || !strings.Contains(out.RetryContext, "CHANGELOG.md") {
		t.Fatalf("outcome = %+v, want a conflict in CHANGELOG.md", out)
	}
}

// An integration gate that fails after a union merge sends the change
// back with a line saying set merged those files, which may be what
// failed.
func TestIntegrationFailureAfterAUnionSaysSo(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"CHANGELOG.md": "# log\n- start\n"})
	f.project.MergeUnion = map[string]bool{"CHANGELOG.md": true}
	appendOnBothSides(f)

	out, err := integrate(context.Background(), f.input("broken"))
	if err != nil {
		t.Fatal(err)
	}
	want := "set merged CHANGELOG.md as a union of both sides' lines (yours, then main's): if the failure comes from those lines, fix them on your branch.\n"
	if out.Reason != journal.ReasonGate || !strings.Contains(out.RetryContext, want) {
		t.Errorf("outcome = %+v, want a gate failure whose retry context has %q", out, want)
	}
}

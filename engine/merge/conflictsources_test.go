package merge

import (
	"context"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/spec"
)

// TestConflictNamesTheChangesSinceTheBase: the retry context of a
// conflict names the changes that reached main since the change's base
// and changed the conflicting files, oldest first, with what they were
// for (their requirements, or their title when they have none); a change
// that touched other files, a person's commit and what main held at the
// base are not named.
func TestConflictNamesTheChangesSinceTheBase(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"registry.txt": "one\n", "other.txt": "x\n"})
	ctx := context.Background()
	land := func(name, file, content string, reqs ...spec.Requirement) {
		t.Helper()
		f.write(f.root, file, content)
		f.git(f.root, "add", "-A")
		f.git(f.root, "commit", "-q", "-m", squashMessage(Input{Change: plan.Change{Name: name}, Reqs: reqs}))
	}
	f.write(f.wt, "registry.txt", "one\nfeat\n")
	f.write(f.wt, "notes.txt", "line 1\nfeat 2\nline 3\n")
	f.commit(f.wt, "feat edit")
	land("custom-alias", "registry.txt", "one\nalias\n", spec.Requirement{ID: "REQ-LINKS-002", Title: "Custom aliases"})
	land("unrelated", "other.txt", "y\n", spec.Requirement{ID: "REQ-OTHER-01", Title: "Other"})
	f.write(f.root, "notes.txt", "line 1\nperson 2\nline 3\n")
	f.commit(f.root, "a person's edit")
	land("stats", "registry.txt", "one\nalias\nstats\n",
		spec.Requirement{ID: "REQ-STATS-01", Title: "Count visits"}, spec.Requirement{ID: "REQ-STATS-02", Title: "Show counts"})
	land("tidy", "notes.txt", "line 1\ntidy 2\nline 3\n")

	out, err := integrate(ctx, f.input("ok"))
	if err != nil {
		t.Fatal(err)
	}
	want := "Merging main into your branch conflicts in 2 file(s): notes.txt, registry.txt.\n" +
		"Since your branch's base, these changes reached main and changed the same files:\n" +
		"- custom-alias (REQ-LINKS-002 Custom aliases) changed registry.txt\n" +
		"- stats (REQ-STATS-01 Count visits; REQ-STATS-02 Show counts) changed registry.txt\n" +
		"- tidy changed notes.txt\n" +
		"Keep what they added as well as your own work.\n" +
		"The merge is in progress in your worktree."
	if !out.Failed || out.Reason != "conflict" || !strings.HasPrefix(out.RetryContext, want) {
		t.Errorf("outcome %+v; retry context:\n%s\nwant it to start with:\n%s", out, out.RetryContext, want)
	}
}

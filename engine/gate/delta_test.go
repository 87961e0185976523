package gate

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/spec"
)

// theDelta is the delta set wrote for featureChange.
var theDelta = map[string][]byte{"specs/auth/spec.md": []byte("## ADDED Requirements\n\n### Requirement: REQ-AUTH-01: Login\nIt SHALL.\n")}

// TestSpecVerifyDeltaAsWritten: the agent may refine tasks.md, and the
// delta specs pass when they are the ones set wrote.
func TestSpecVerifyDeltaAsWritten(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	r.write("openspec/changes/auth-login/specs/auth/spec.md", string(theDelta["specs/auth/spec.md"]))
	r.write("openspec/changes/auth-login/tasks.md", "- [x] 1.1 done by the agent\n")
	r.write("internal/auth/login_test.go", "package auth\n\n// REQ-AUTH-01, REQ-AUTH-02\n")
	r.commit()
	in := r.input(config.KindSpecVerify, featureChange)
	in.Delta = theDelta
	want(t, runGate(t, in), StatusPass, "", "")
}

// TestSpecVerifyDeltaEdited: a delta spec the agent changed, removed or
// added fails the gate, with set's text in the retry context; only in the
// verify stage (integration runs after the fold moved the folder).
func TestSpecVerifyDeltaEdited(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	r.write("openspec/changes/auth-login/specs/auth/spec.md", "## ADDED Requirements\n\n### Requirement: REQ-AUTH-01: Login\nIt MAY.\n")
	r.write("openspec/changes/auth-login/specs/extra/spec.md", "## ADDED Requirements\n")
	r.write("internal/auth/login_test.go", "package auth\n\n// REQ-AUTH-01, REQ-AUTH-02\n")
	r.commit()
	in := r.input(config.KindSpecVerify, featureChange)
	in.Delta = map[string][]byte{"specs/auth/spec.md": theDelta["specs/auth/spec.md"], "specs/gone/spec.md": []byte("## REMOVED Requirements\n\n### Requirement: REQ-GONE-01: Gone\n")}
	want(t, runGate(t, in), StatusFail,
		"the delta specs are not the ones set wrote: openspec/changes/auth-login/specs/auth/spec.md differs from what set wrote, openspec/changes/auth-login/specs/gone/spec.md is missing, openspec/changes/auth-login/specs/extra/spec.md was added",
		"Gate spec_verify failed: the change's delta specs are not the ones set wrote from the spec and main's living specs:\n"+
			"  - openspec/changes/auth-login/specs/auth/spec.md differs from what set wrote\n"+
			"  - openspec/changes/auth-login/specs/gone/spec.md is missing\n"+
			"  - openspec/changes/auth-login/specs/extra/spec.md was added\n"+
			"A change may refine tasks.md and proposal.md, never its requirements. Put the delta specs back as set wrote them (and remove any other file under openspec/changes/auth-login/specs/):\n"+
			"--- openspec/changes/auth-login/specs/auth/spec.md ---\n## ADDED Requirements\n\n### Requirement: REQ-AUTH-01: Login\nIt SHALL.\n"+
			"--- openspec/changes/auth-login/specs/gone/spec.md ---\n## REMOVED Requirements\n\n### Requirement: REQ-GONE-01: Gone\n")
	in.Stage = graph.StageIntegration
	want(t, runGate(t, in), StatusPass, "", "")
}

// TestSpecVerifyRemoving: a requirement the spec removed needs no test
// that names it.
func TestSpecVerifyRemoving(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	r.write("internal/auth/login_test.go", "package auth\n\n// REQ-AUTH-01\n")
	r.commit()
	in := r.input(config.KindSpecVerify, featureChange)
	in.Removing = []string{"REQ-AUTH-02"}
	want(t, runGate(t, in), StatusPass, "", "")
}

func TestTestsNaming(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	r.write("internal/auth/login_test.go", "package auth\n\n// REQ-AUTH-01\nfunc TestREQ_AUTH_02(t *testing.T) {}\n// REQ-AUTH-010, REQ-AUTH-01 again\n")
	r.write("internal/auth/login.go", "package auth // REQ-AUTH-03, not a test\n")
	r.commit()
	got, err := TestsNaming(context.Background(), r.dir, "HEAD", &config.Project{TestPatterns: map[string]string{"go": "**/*_test.go"}}, []string{"REQ-AUTH-01", "REQ-AUTH-02", "REQ-AUTH-03"})
	if err != nil {
		t.Fatal(err)
	}
	wantPlaces := map[string][]string{"REQ-AUTH-01": {"internal/auth/login_test.go:3"}, "REQ-AUTH-02": {"internal/auth/auth_test.go:3", "internal/auth/login_test.go:4"}}
	if diff := cmp.Diff(wantPlaces, got); diff != "" {
		t.Errorf("TestsNaming (-want +got):\n%s", diff)
	}
}

// userChange is a change of planner strategy "openspec": its folder,
// openspec/changes/add-links/, is on main as the project's people wrote it.
var userChange = plan.Change{Name: "add-links", Type: "feature", Size: "S", Requirements: []string{"REQ-ADD-LINKS-01", "REQ-ADD-LINKS-02"}}

// userReqs are userChange's requirements: one titled by its OpenSpec name
// only, one whose name starts with the user's own ID.
var userReqs = []spec.Requirement{
	{ID: "REQ-ADD-LINKS-01", Title: "Create a short link", Domain: "links"},
	{ID: "REQ-ADD-LINKS-02", Title: "REQ-LINKS-07: Follow a short link", Domain: "links"},
}

// userFolder is userChange's folder on main.
var userFolder = map[string]string{
	"openspec/changes/add-links/.openspec.yaml":         "schema: spec-driven\ncreated: 2026-11-27\n",
	"openspec/changes/add-links/proposal.md":            "## Why\nLinks.\n",
	"openspec/changes/add-links/tasks.md":               "## 1. Links\n- [ ] 1.1 Create\n- [ ] 1.2 Follow\n",
	"openspec/changes/add-links/specs/links/spec.md":    "## ADDED Requirements\n\n### Requirement: Create a short link\nThe service SHALL.\n",
	"openspec/changes/add-links/specs/redirect/spec.md": "## ADDED Requirements\n\n### Requirement: REQ-LINKS-07: Follow a short link\nIt SHALL.\n",
}

// userInput is spec_verify's input for userChange on r, whose base holds
// userFolder: the delta is the folder's specs/ and .openspec.yaml there.
func userInput(r *repo) Input {
	in := r.input(config.KindSpecVerify, userChange)
	in.Reqs, in.UserFolder = userReqs, true
	in.Delta = map[string][]byte{}
	for name, data := range userFolder {
		if rel := strings.TrimPrefix(name, "openspec/changes/add-links/"); strings.HasPrefix(rel, "specs/") || rel == ".openspec.yaml" {
			in.Delta[rel] = []byte(data)
		}
	}
	return in
}

func withFolder(files map[string]string) map[string]string {
	out := maps.Clone(files)
	maps.Copy(out, userFolder)
	return out
}

// TestSpecVerifyUserDelta: the delta specs and .openspec.yaml of a folder
// the project's people wrote stay as main has them; an edit, a removal or
// an addition fails the gate with words that say whose they are.
func TestSpecVerifyUserDelta(t *testing.T) {
	t.Parallel()
	r := newRepo(t, withFolder(baseFiles))
	r.write("internal/links/links_test.go", "package links\n\n// REQ-ADD-LINKS-01, REQ-ADD-LINKS-02\n")
	r.write("openspec/changes/add-links/tasks.md", "## 1. Links\n- [x] 1.1 Create\n- [ ] 1.2 Follow\n")
	r.commit()
	want(t, runGate(t, userInput(r)), StatusPass, "", "")

	r.write("openspec/changes/add-links/specs/links/spec.md", "## ADDED Requirements\n\n### Requirement: Create a short link\nThe service MAY.\n")
	r.write("openspec/changes/add-links/.openspec.yaml", "schema: spec-driven\n")
	r.remove("openspec/changes/add-links/specs/redirect/spec.md")
	r.write("openspec/changes/add-links/specs/extra/spec.md", "## ADDED Requirements\n")
	r.commit()
	want(t, runGate(t, userInput(r)), StatusFail,
		"the change edits the delta specs the project's people wrote: openspec/changes/add-links/.openspec.yaml was edited, openspec/changes/add-links/specs/links/spec.md was edited, openspec/changes/add-links/specs/redirect/spec.md was removed, …",
		"Gate spec_verify failed: the change edits the OpenSpec change openspec/changes/add-links/ that the project's people wrote: its delta specs (specs/) and .openspec.yaml are theirs, on main, and must stay as they wrote them:\n"+
			"  - openspec/changes/add-links/.openspec.yaml was edited\n"+
			"  - openspec/changes/add-links/specs/links/spec.md was edited\n"+
			"  - openspec/changes/add-links/specs/redirect/spec.md was removed\n"+
			"  - openspec/changes/add-links/specs/extra/spec.md was added\n"+
			"They say what the change is to do: implement them, never rewrite them. You may check tasks off in tasks.md. Put these files back as they are on main (and remove any other file you added under openspec/changes/add-links/specs/):\n"+
			"--- openspec/changes/add-links/.openspec.yaml ---\nschema: spec-driven\ncreated: 2026-11-27\n"+
			"--- openspec/changes/add-links/specs/links/spec.md ---\n## ADDED Requirements\n\n### Requirement: Create a short link\nThe service SHALL.\n"+
			"--- openspec/changes/add-links/specs/redirect/spec.md ---\n## ADDED Requirements\n\n### Requirement: REQ-LINKS-07: Follow a short link\nIt SHALL.\n")

	// A .openspec.yaml added where main has none is an edit of the delta too.
	r2 := newRepo(t, withFolder(baseFiles))
	r2.write("internal/links/links_test.go", "package links\n\n// REQ-ADD-LINKS-01, REQ-ADD-LINKS-02\n")
	r2.commit()
	in := userInput(r2)
	delete(in.Delta, ".openspec.yaml")
	if res := runGate(t, in); res.Status != StatusFail || res.Reason != "the change edits the delta specs the project's people wrote: openspec/changes/add-links/.openspec.yaml was added" ||
		!strings.Contains(res.RetryContext, "  - openspec/changes/add-links/.openspec.yaml was added\n") {
		t.Errorf("an added .openspec.yaml: %+v", res)
	}
}

// TestSpecVerifyTitleTrace: in a folder the project's people wrote, an
// added test line traces a requirement by set's ID, by the user's own ID
// its name starts with, or by its OpenSpec name (case and white space
// aside); a set-written folder's requirements trace by ID only.
func TestSpecVerifyTitleTrace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, test, status, reason string }{
		{"set's IDs", "// REQ-ADD-LINKS-01\nfunc TestREQ_ADD_LINKS_02(t *testing.T) {}\n", StatusPass, ""},
		{"the user's ID", "// REQ-ADD-LINKS-01\nfunc TestREQ_LINKS_07(t *testing.T) {}\n", StatusPass, ""},
		{"the names", "// create a  short\tLINK\nt.Run(\"Follow a short link\", nil)\n", StatusPass, ""},
		{"the name with its ID", "// REQ-LINKS-07: Follow a short link\n// Create a short link\n", StatusPass, ""},
		{"part of a name", "// Create a short\n// Follow\n", StatusFail, "requirements not referenced by a test: REQ-ADD-LINKS-01, REQ-ADD-LINKS-02"},
		{"another ID", "// REQ-LINKS-070, Create a short link\n", StatusFail, "requirements not referenced by a test: REQ-ADD-LINKS-02"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, withFolder(baseFiles))
			r.write("internal/links/links_test.go", "package links\n\n"+tc.test)
			r.commit()
			res := runGate(t, userInput(r))
			if res.Status != tc.status || res.Reason != tc.reason {
				t.Errorf("status %q, reason %q; want %q, %q", res.Status, res.Reason, tc.status, tc.reason)
			}
		})
	}
	r := newRepo(t, withFolder(baseFiles))
	r.write("internal/links/links_test.go", "package links\n\n// Create a short link\n")
	r.commit()
	want(t, runGate(t, userInput(r)), StatusFail, "requirements not referenced by a test: REQ-ADD-LINKS-02",
		"Gate spec_verify failed: 1 of the change's 2 requirements is not named by any test line this change adds:\n"+
			"  - REQ-ADD-LINKS-02 = \"REQ-LINKS-07: Follow a short link\"\n"+
			"Name each requirement in the test that covers it, in a line the change adds to a file matching **/*_test.go: "+
			"its ID (for example a comment `// REQ-ADD-LINKS-02` in the test, or REQ_ADD_LINKS_02 in the test's name) or its OpenSpec name, as its heading in openspec/changes/add-links/specs/ has it.")

	// Without UserFolder a name is not a trace.
	in := userInput(r)
	in.UserFolder, in.Delta = false, nil
	want(t, runGate(t, in), StatusFail, "requirements not referenced by a test: REQ-ADD-LINKS-01, REQ-ADD-LINKS-02",
		"Gate spec_verify failed: 2 of the change's 2 requirements are not named by any test line this change adds:\n"+
			"  - REQ-ADD-LINKS-01: Create a short link\n"+
			"  - REQ-ADD-LINKS-02: REQ-LINKS-07: Follow a short link\n"+
			"Name each ID in the test that covers it, in a line the change adds to a file matching **/*_test.go — "+
			"for example a comment `// REQ-ADD-LINKS-01` in the test, or REQ_ADD_LINKS_01 in the test's name.")
}

// TestSpecVerifyTitleTraceWhole: a name traces its requirement only as
// whole words, and not inside the longer name of another requirement of
// the change that contains it: "Redirect" is not named by "redirected"
// nor by "Redirect permanently", another requirement's name.
func TestSpecVerifyTitleTraceWhole(t *testing.T) {
	t.Parallel()
	reqs := []spec.Requirement{
		{ID: "REQ-ADD-LINKS-01", Title: "Redirect", Domain: "links"},
		{ID: "REQ-ADD-LINKS-02", Title: "Redirect permanently", Domain: "links"},
	}
	for _, tc := range []struct{ name, test, reason string }{
		{"inside a longer name", "// Redirect permanently\n", "requirements not referenced by a test: REQ-ADD-LINKS-01"},
		{"inside a word", "// redirected permanently\n", "requirements not referenced by a test: REQ-ADD-LINKS-01, REQ-ADD-LINKS-02"},
		{"both", "// Redirect permanently, then redirect.\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, withFolder(baseFiles))
			r.write("internal/links/links_test.go", "package links\n\n"+tc.test)
			r.commit()
			in := userInput(r)
			in.Reqs = reqs
			res := runGate(t, in)
			if res.Reason != tc.reason {
				t.Errorf("reason %q; want %q", res.Reason, tc.reason)
			}
		})
	}
}

// TestSpecVerifyTasksAllChecked: with tasks "all-checked", spec_verify
// fails in the verify stage while the folder's tasks.md has a task not
// checked off, naming each with its line, for a user folder and a
// set-written one alike; no tasks.md, a tasks.md without tasks, and tasks
// "any" pass.
func TestSpecVerifyTasksAllChecked(t *testing.T) {
	t.Parallel()
	allChecked := func(in Input) Input {
		in.Project.Gates = map[string]config.Gate{config.KindSpecVerify: {Kind: config.KindSpecVerify, Tasks: config.TasksAllChecked}}
		return in
	}
	r := newRepo(t, withFolder(baseFiles))
	r.write("internal/links/links_test.go", "package links\n\n// REQ-ADD-LINKS-01, REQ-ADD-LINKS-02\n")
	r.write("openspec/changes/add-links/tasks.md", "## 1. Links\n- [x] 1.1 Create\n- [ ] 1.2 Follow\n\n## 2. More\n* [ ]  2.1 Count clicks\n1. [X] 2.2 Done\n")
	r.commit()
	want(t, runGate(t, allChecked(userInput(r))), StatusFail,
		"2 tasks of 4 not checked off in openspec/changes/add-links/tasks.md (first: line 3)",
		"Gate spec_verify failed: 2 tasks of the 4 in openspec/changes/add-links/tasks.md are not checked off, and this project's spec_verify asks for every task checked (tasks: \"all-checked\"):\n"+
			"  - openspec/changes/add-links/tasks.md:3: 1.2 Follow\n"+
			"  - openspec/changes/add-links/tasks.md:6: 2.1 Count clicks\n"+
			"Finish each of these tasks and check it off in openspec/changes/add-links/tasks.md as you do (`- [x]`).")
	want(t, runGate(t, userInput(r)), StatusPass, "", "") // tasks "any"
	in := allChecked(userInput(r))
	in.Stage = graph.StageIntegration
	want(t, runGate(t, in), StatusPass, "", "")

	r.write("openspec/changes/add-links/tasks.md", "## 1. Links\n- [x] 1.1 Create\n- [x] 1.2 Follow\n")
	r.commit()
	res := runGate(t, allChecked(userInput(r)))
	want(t, res, StatusPass, "", "")
	if log := readLog(t, res); !strings.Contains(log, "tasks: 2 tasks checked off in openspec/changes/add-links/tasks.md\n") {
		t.Errorf("log:\n%s", log)
	}
	// The tasks the base has are not to be removed: a tasks.md emptied
	// of them, or removed, fails (here the 2 the project's people wrote).
	r.write("openspec/changes/add-links/tasks.md", "No tasks yet.\n")
	r.commit()
	removed := "Gate spec_verify failed: openspec/changes/add-links/tasks.md has 0 tasks, and its base has 2: this project's spec_verify asks for every task checked off (tasks: \"all-checked\"), not removed. " +
		"Put the tasks back as openspec/changes/add-links/tasks.md has them on the base, and check each off (`- [x]`) as you finish it."
	want(t, runGate(t, allChecked(userInput(r))), StatusFail, "2 tasks removed from openspec/changes/add-links/tasks.md (0 left of the base's 2)", removed)
	r.remove("openspec/changes/add-links/tasks.md")
	r.commit()
	want(t, runGate(t, allChecked(userInput(r))), StatusFail, "2 tasks removed from openspec/changes/add-links/tasks.md (0 left of the base's 2)", removed)
	// A folder whose base has no tasks.md needs none.
	noTasks := withFolder(baseFiles)
	delete(noTasks, "openspec/changes/add-links/tasks.md")
	b := newRepo(t, noTasks)
	b.write("internal/links/links_test.go", "package links\n\n// REQ-ADD-LINKS-01, REQ-ADD-LINKS-02\n")
	b.commit()
	want(t, runGate(t, allChecked(userInput(b))), StatusPass, "", "")

	// A folder set wrote: its tasks.md too.
	s := newRepo(t, baseFiles)
	s.write("openspec/changes/auth-login/specs/auth/spec.md", string(theDelta["specs/auth/spec.md"]))
	s.write("openspec/changes/auth-login/tasks.md", "- [x] 1.1 Login [REQ: REQ-AUTH-01]\n- [ ] 1.2 Logout [REQ: REQ-AUTH-02]\n")
	s.write("internal/auth/login_test.go", "package auth\n\n// REQ-AUTH-01, REQ-AUTH-02\n")
	s.commit()
	set := allChecked(s.input(config.KindSpecVerify, featureChange))
	set.Delta = theDelta
	want(t, runGate(t, set), StatusFail,
		"1 task of 2 not checked off in openspec/changes/auth-login/tasks.md (first: line 2)",
		"Gate spec_verify failed: 1 task of the 2 in openspec/changes/auth-login/tasks.md is not checked off, and this project's spec_verify asks for every task checked (tasks: \"all-checked\"):\n"+
			"  - openspec/changes/auth-login/tasks.md:2: 1.2 Logout [REQ: REQ-AUTH-02]\n"+
			"Finish each of these tasks and check it off in openspec/changes/auth-login/tasks.md as you do (`- [x]`).")
}

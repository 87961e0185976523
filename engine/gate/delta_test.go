package gate

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/graph"
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

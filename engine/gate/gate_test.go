package gate

import (
	"slices"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
)

const mdCondition = `any(files, {# endsWith ".md"})`

func TestRunTimeConditionHolds(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	r.write("docs/guide.md", "# guide\n")
	r.write("internal/auth/login.go", "package auth\n")
	r.commit()
	in := r.input(config.KindScopeCheck, featureChange)
	in.Change.Scope = nil
	in.Step.Condition = mdCondition
	res := runGate(t, in)
	want(t, res, StatusPass, "", "")
	if res.Expanded == nil || !res.Expanded.Held || res.Expanded.Condition != mdCondition ||
		!slices.Equal(res.Expanded.Files, []string{"docs/guide.md", "internal/auth/login.go"}) {
		t.Errorf("expanded %+v", res.Expanded)
	}
}

func TestRunTimeConditionFalse(t *testing.T) {
	t.Parallel()
	in, _ := execInput(t, "docs-lint", "false")
	in.Step.Condition = mdCondition
	res := runGate(t, in)
	want(t, res, StatusSkip, `when: any(files, {# endsWith ".md"}) is false`, "")
	if res.Expanded == nil || res.Expanded.Held || !slices.Equal(res.Expanded.Files, []string{"internal/auth/login.go"}) {
		t.Errorf("expanded %+v", res.Expanded)
	}
	if log := readLog(t, res); !strings.Contains(log, "result: skip\n") || !strings.Contains(log, "files: internal/auth/login.go") {
		t.Errorf("log:\n%s", log)
	}
}

// TestRunTimeConditionReadsChange: the condition sees the change too.
func TestRunTimeConditionReadsChange(t *testing.T) {
	t.Parallel()
	in, _ := execInput(t, "gen", "true")
	in.Step.Condition = `change.type == "feature" && len(files) == 1`
	if res := runGate(t, in); res.Status != StatusPass || !res.Expanded.Held {
		t.Errorf("result %+v", res)
	}
}

func TestRunTimeConditionBad(t *testing.T) {
	t.Parallel()
	in, _ := execInput(t, "gen", "true")
	in.Step.Condition = `nosuchname > 1`
	res := runGate(t, in)
	if res.Status != StatusError || res.Err == nil || res.Expanded == nil || res.Expanded.Held {
		t.Errorf("result %+v, want an error", res)
	}
}

func TestModeSkip(t *testing.T) {
	t.Parallel()
	in, _ := execInput(t, "gen", "false")
	in.Step.Mode = config.ModeSkip
	want(t, runGate(t, in), StatusSkip, `mode "skip"`, "")
}

func TestWarnModeBuiltin(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	in := r.input(config.KindScopeCheck, featureChange)
	in.Step.Mode = config.ModeWarn
	res := runGate(t, in)
	if res.Status != StatusWarn || res.Reason != "the change touches no file" || res.RetryContext == "" || res.Blocking() {
		t.Errorf("result %+v", res)
	}
	if log := readLog(t, res); !strings.Contains(log, "result: warn\n") {
		t.Errorf("log:\n%s", log)
	}
}

func TestNoBase(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	in := r.input(config.KindScopeCheck, featureChange)
	in.Base = ""
	res := runGate(t, in)
	if res.Status != StatusError || res.Reason != "no base commit to diff against" {
		t.Errorf("result %+v", res)
	}
}

func TestNoLogPath(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	in := r.input(config.KindScopeCheck, featureChange)
	in.LogPath = ""
	if res := runGate(t, in); res.Status != StatusFail || res.Log != "" {
		t.Errorf("result %+v", res)
	}
}

package project

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/rundir"
)

// fixed is a Modeler that answers with its changes.
type fixed []plan.Change

func (f fixed) Changes(context.Context, *plan.Plan, []string, []plan.Change) ([]plan.Change, *plan.Planning, error) {
	return f, &plan.Planning{Strategy: "single", Calls: []plan.PlannerCall{{Step: "single"}}}, nil
}

// A model strategy's plan is made by the plan role's model, except that
// the run's plan (.set/plan.json), made by a model from the same set.cue
// and spec, is reused: a run keeps its plan from one apply to the next.
// vet and doctor ask no model (PlanWithoutModel).
func TestModelPlanReuse(t *testing.T) {
	ctx := context.Background()
	t.Setenv("ANTHROPIC_API_KEY", "") // so that asking the model fails
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
	dir := writeProject(t, "\tplanner: strategy: \"single\"\n\tagent: {transport: \"anthropic\", models: plan: \"m\"}\n")
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.PlanWithoutModel(ctx)
	if nm := (*plan.NeedsModelError)(nil); !errors.As(err, &nm) || nm.Strategy != "single" {
		t.Fatalf("PlanWithoutModel: %v", err)
	}
	if _, err := p.MakePlan(ctx); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("MakePlan asks no model: %v", err)
	}
	pr, ds := p.Prepare(ctx, Options{NoModel: true})
	if len(ds) != 0 || pr.NeedsModel == nil || pr.Plan != nil {
		t.Fatalf("Prepare with NoModel: %v, %+v", ds, pr)
	}

	// The run's plan, made by a model from these inputs.
	rec, fp, err := p.fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	made, err := plan.MakeWith(ctx, p.Config, p.Spec, rec, fp, fixed{
		{Name: "first", Type: "feature", Size: "S", Requirements: []string{"REQ-A-01"}, DependsOn: []string{}},
		{Name: "second", Type: "fix", Size: "M", Requirements: []string{"REQ-A-02"}, DependsOn: []string{"first"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	saved := rundir.New(dir).Plan()
	if err := os.MkdirAll(filepath.Dir(saved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := plan.Write(saved, made); err != nil {
		t.Fatal(err)
	}
	for name, mk := range map[string]func(context.Context) (*plan.Plan, error){"MakePlan": p.MakePlan, "PlanWithoutModel": p.PlanWithoutModel} {
		got, err := mk(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got.Changes) != 2 || got.Changes[1].Name != "second" || got.Strategy != "single" || !got.Planning.Reused || len(got.Planning.Calls) != 1 {
			t.Errorf("%s: %+v", name, got)
		}
	}

	// Another spec: the model is asked again.
	if err := os.WriteFile(filepath.Join(dir, "docs", "spec.md"), []byte(specMD+"\nMore words.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err = Load(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := p.MakePlan(ctx); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("MakePlan of another spec: %v", err)
	}
}

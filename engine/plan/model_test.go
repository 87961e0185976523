package plan

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm/usage"
)

// asked is a Modeler that records that it was asked.
type asked struct{ n *int }

func (a asked) Changes(context.Context, *Plan, []string, []Change) ([]Change, *Planning, error) {
	*a.n++
	return nil, &Planning{Strategy: "single"}, nil
}

func TestReuse(t *testing.T) {
	fp := Fingerprint{Config: "c", Specs: map[string]string{"spec.md": "s"}}
	prev := &Plan{
		Fingerprint: fp,
		Changes:     []Change{{Name: "a", Requirements: []string{"REQ-A-01", "REQ-A-02"}, DependsOn: []string{}}},
		Planning:    &Planning{Strategy: "three-phase", Calls: []PlannerCall{{Step: "brief"}}},
	}
	p := &Plan{Strategy: "auto"}
	ctx := context.Background()
	n := 0
	m := asked{&n}

	got, planning, err := Reuse(prev, fp, m).Changes(ctx, p, []string{"REQ-A-02"}, nil)
	if err != nil || n != 0 || len(got) != 1 || !planning.Reused || planning.Strategy != "three-phase" || prev.Planning.Reused {
		t.Fatalf("reuse: %v, %d asks, %+v, %+v", err, n, got, planning)
	}
	got[0].Requirements[0] = "changed"
	if prev.Changes[0].Requirements[0] != "REQ-A-01" {
		t.Error("the reused changes share the previous plan's lists")
	}

	for name, tc := range map[string]struct {
		prev     *Plan
		fp       Fingerprint
		cover    []string
		existing []Change
	}{
		"no previous plan":       {nil, fp, []string{"REQ-A-01"}, nil},
		"a static plan":          {&Plan{Fingerprint: fp, Changes: prev.Changes}, fp, []string{"REQ-A-01"}, nil},
		"another configuration":  {prev, Fingerprint{Config: "d", Specs: fp.Specs}, []string{"REQ-A-01"}, nil},
		"another spec":           {prev, Fingerprint{Config: "c", Specs: map[string]string{"spec.md": "t"}}, []string{"REQ-A-01"}, nil},
		"a requirement it lacks": {prev, fp, []string{"REQ-A-01", "REQ-B-01"}, nil},
		"existing changes":       {prev, fp, []string{"REQ-A-01"}, []Change{{Name: "x"}}},
	} {
		n = 0
		if _, _, err := Reuse(tc.prev, tc.fp, m).Changes(ctx, p, tc.cover, tc.existing); err != nil || n != 1 {
			t.Errorf("%s: %v, %d asks; want the model asked", name, err, n)
		}
		_, _, err := Reuse(tc.prev, tc.fp, nil).Changes(ctx, p, tc.cover, tc.existing)
		if nm := (*NeedsModelError)(nil); !errors.As(err, &nm) || nm.Strategy != "auto" {
			t.Errorf("%s without a model: %v", name, err)
		}
	}
}

func TestPlanningTotals(t *testing.T) {
	pl := &Planning{Calls: []PlannerCall{
		{Step: "brief", LLMCallData: journal.LLMCallData{Model: "a", Transport: "anthropic", Error: "529", Tokens: usage.Tokens{Input: 1}}},
		{Step: "brief", LLMCallData: journal.LLMCallData{Model: "b", Transport: "anthropic", Tokens: usage.Tokens{Input: 10, Output: 2}, CostUSD: 0.5}},
		{Step: "merge", LLMCallData: journal.LLMCallData{Model: "b", Transport: "anthropic", Tokens: usage.Tokens{Input: 20, CacheRead: 3}, CostUSD: 0.25}},
		{Step: "merge", Repair: 1, LLMCallData: journal.LLMCallData{Model: "c", Transport: "openai", Tokens: usage.Tokens{Output: 4}}},
	}}
	if got := pl.Tokens(); got != (usage.Tokens{Input: 31, Output: 6, CacheRead: 3}) {
		t.Errorf("tokens %+v", got)
	}
	if got := pl.CostUSD(); got != 0.75 {
		t.Errorf("cost %v", got)
	}
	if got := pl.Models(); !reflect.DeepEqual(got, []string{"b via anthropic", "c via openai"}) {
		t.Errorf("models %v", got)
	}
}

package graph

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/plan"
)

func TestResolveStack(t *testing.T) {
	featureM := &plan.Change{Name: "links", Type: "feature", Size: "M"}
	featureS := &plan.Change{Name: "stats", Type: "feature", Size: "S"}

	tests := []struct {
		name        string
		stack       config.Stack
		change      *plan.Change
		wantSteps   []GateStep
		wantSkipped []SkippedGate
	}{{
		name:   "defaults from the gate, sorted by order then name",
		stack:  config.Stack{"test": {}, "build": {}, "scope_check": {}},
		change: featureM,
		wantSteps: []GateStep{
			{Gate: "scope_check", Kind: config.KindScopeCheck, Mode: "run", Order: 0, Runner: "host", Timeout: minutes(10)},
			{Gate: "build", Kind: config.KindExec, Mode: "run", Order: 10, Runner: "host", Timeout: minutes(5)},
			{Gate: "test", Kind: config.KindExec, Mode: "run", Order: 30, Runner: "host", Timeout: minutes(15)},
		},
	}, {
		name:   "entry mode overrides the gate's",
		stack:  config.Stack{"review": {Mode: config.ModeWarn}},
		change: featureM,
		wantSteps: []GateStep{
			{Gate: "review", Kind: config.KindExec, Mode: "warn", Order: 60, Runner: "host", Timeout: minutes(10)},
		},
	}, {
		name:   "entry order overrides the gate's; ties go by name",
		stack:  config.Stack{"test": {Order: intp(1)}, "build": {}, "vet": {Order: intp(1)}},
		change: featureM,
		wantSteps: []GateStep{
			{Gate: "test", Kind: config.KindExec, Mode: "run", Order: 1, Runner: "host", Timeout: minutes(15)},
			{Gate: "vet", Kind: config.KindExec, Mode: "run", Order: 1, Runner: "host", Timeout: minutes(5)},
			{Gate: "build", Kind: config.KindExec, Mode: "run", Order: 10, Runner: "host", Timeout: minutes(5)},
		},
	}, {
		name:      "mode skip",
		stack:     config.Stack{"test_files": {Mode: config.ModeSkip}, "build": {}, "rules": {Mode: config.ModeSkip}},
		change:    featureM,
		wantSteps: []GateStep{{Gate: "build", Kind: config.KindExec, Mode: "run", Order: 10, Runner: "host", Timeout: minutes(5)}},
		wantSkipped: []SkippedGate{
			{Gate: "rules", Reason: `mode "skip"`},
			{Gate: "test_files", Reason: `mode "skip"`},
		},
	}, {
		name:   "plan-time when that holds keeps the gate, unconditionally",
		stack:  config.Stack{"lint": {}},
		change: featureM,
		wantSteps: []GateStep{
			{Gate: "lint", Kind: config.KindExec, Mode: "run", Order: 12, Runner: "host", When: `change.size != "S"`, Timeout: minutes(10)},
		},
	}, {
		name:        "plan-time when that fails skips the gate",
		stack:       config.Stack{"lint": {}},
		change:      featureS,
		wantSkipped: []SkippedGate{{Gate: "lint", Reason: `when: change.size != "S" is false`}},
	}, {
		name:   "run-time when keeps the gate with its condition; gate runner overrides the project's",
		stack:  config.Stack{"e2e": {}},
		change: featureS,
		wantSteps: []GateStep{{
			Gate: "e2e", Kind: config.KindExec, Mode: "run", Order: 35, Runner: "dagger",
			Condition: `any(files, {# matches "\\.tsx$"})`, When: `any(files, {# matches "\\.tsx$"})`,
			Timeout: minutes(20),
		}},
	}, {
		name:   "skip wins over when",
		stack:  config.Stack{"e2e": {Mode: config.ModeSkip}},
		change: featureS,
		wantSkipped: []SkippedGate{
			{Gate: "e2e", Reason: `mode "skip"`},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, skipped, err := ResolveStack(fixtureConfig(), tt.stack, tt.change)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantSteps, steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSkipped, skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveStackProjectRunner(t *testing.T) {
	cfg := fixtureConfig()
	cfg.Runner.Kind = "dagger"
	g := cfg.Gates["build"]
	g.Runner = "host"
	cfg.Gates["build"] = g
	steps, _, err := ResolveStack(cfg, config.Stack{"build": {}, "vet": {}}, &plan.Change{Name: "x", Type: "fix", Size: "S"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range steps {
		got[s.Gate] = s.Runner
	}
	if diff := cmp.Diff(map[string]string{"build": "host", "vet": "dagger"}, got); diff != "" {
		t.Errorf("runners (-want +got):\n%s", diff)
	}
}

func TestResolveStackErrors(t *testing.T) {
	cfg := fixtureConfig()
	bad := cfg.Gates["lint"]
	bad.When = `change.sise == "S"`
	cfg.Gates["bad"] = bad
	for _, tt := range []struct {
		stack config.Stack
		want  string
	}{
		{config.Stack{"nope": {}}, `unknown gate "nope"`},
		{config.Stack{"bad": {}}, `gate "bad": condition`},
	} {
		_, _, err := ResolveStack(cfg, tt.stack, &plan.Change{Name: "x"})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ResolveStack(%v) error = %v, want it to contain %q", tt.stack, err, tt.want)
		}
	}
}

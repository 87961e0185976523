package project

import (
	"context"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/llm"
)

// A run gets a model configuration only when its graph runs a
// model-graded gate, and then one whose routes reach the roles those
// gates ask; a graded gate whose role has no model is refused before
// anything runs, at the field that asks for it.
func TestModels(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, body string
		roles      []llm.Role // routed, when the graph runs a graded gate
		err        string
	}{
		{name: "no graded gate", body: ""},
		{name: "review in the profile only", body: "\tagent: {adapter: \"exec\", argv: [\"true\"]}\n"},
		{name: "review with the claude agent's defaults", body: "\tstacks: feature: review: {}\n", roles: []llm.Role{llm.Review, llm.Verify}},
		{
			name:  "spec_verify graded through the API",
			body:  "\tagent: {adapter: \"exec\", argv: [\"true\"], transport: \"anthropic\", models: verify: \"m\"}\n\tgates: spec_verify: grader: \"llm\"\n",
			roles: []llm.Role{llm.Verify},
		},
		{
			name: "review without a transport",
			body: "\tagent: {adapter: \"exec\", argv: [\"true\"], models: review: \"m\"}\n\tintegration: review: {}\n",
			err:  "project.integration.review: the review gate asks the review model, and the review role has no transport: an exec agent has no CLI of its own; set project.agent.transport to claude, codex, anthropic or openai",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeProject(t, tc.body)
			pr, ds := Prepare(ctx, dir, Options{})
			if tc.err != "" {
				if len(ds) != 1 || !strings.HasPrefix(strings.Join(ds[0].Path, ".")+": "+ds[0].Summary, tc.err) {
					t.Fatalf("diagnostics %v, want %s", ds, tc.err)
				}
				return
			}
			if len(ds) != 0 {
				t.Fatalf("diagnostics: %v", ds)
			}
			cfg := pr.Models(pr.Graph)
			if tc.roles == nil {
				if cfg != nil {
					t.Fatalf("models %+v for a graph without graded gates", cfg)
				}
				return
			}
			if cfg == nil {
				t.Fatal("no models for a graph with a graded gate")
			}
			for _, role := range tc.roles {
				if len(cfg.Routes[role]) == 0 {
					t.Errorf("no route for %s: %+v", role, cfg.Routes)
				}
			}
		})
	}
}

package planner

import (
	"encoding/json"
	"slices"

	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/plan/prompt"
)

// The answer schemas the model is asked to follow (JSON Schema, in the
// subset every transport's structured output takes: every property
// required, no other property allowed). The schema's #PlannedChanges is
// what an answer is checked against; a test keeps the two in step.

type object map[string]any

func strict(properties object) object {
	required := make([]string, 0, len(properties))
	for name := range properties {
		required = append(required, name)
	}
	slices.Sort(required)
	return object{"type": "object", "additionalProperties": false, "required": required, "properties": properties}
}

func list(items any) object { return object{"type": "array", "items": items} }

var str = object{"type": "string"}

func enum(values []string) object { return object{"type": "string", "enum": values} }

// changesSchema is the schema of a changes answer whose requirements are
// among reqs.
func changesSchema(reqs []prompt.Requirement) json.RawMessage {
	ids := make([]string, len(reqs))
	for i, r := range reqs {
		ids[i] = r.ID
	}
	return mustJSON(strict(object{"changes": list(strict(object{
		"name":         object{"type": "string", "pattern": plan.NamePattern},
		"type":         enum(plan.Types),
		"size":         enum(plan.Sizes),
		"description":  str,
		"requirements": list(enum(ids)),
		"dependsOn":    list(object{"type": "string", "pattern": plan.NamePattern}),
		"scope":        list(str),
	}))}))
}

// briefSchema is the schema of the brief answer about domains.
func briefSchema(domains []prompt.DomainRequirements) json.RawMessage {
	names := make([]string, len(domains))
	for i, d := range domains {
		names[i] = d.Name
	}
	return mustJSON(strict(object{
		"overview":  str,
		"decisions": list(str),
		"domains":   list(strict(object{"domain": enum(names), "notes": str})),
	}))
}

func mustJSON(v any) json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings and lists: Marshal cannot fail
	}
	return data
}

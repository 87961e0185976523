package config

import "slices"

// Model statuses of a ModelTable.
const (
	ModelCurrent    = "current"
	ModelDeprecated = "deprecated"
	ModelRetired    = "retired"
	ModelSuperseded = "superseded"
)

// ModelTable is what one agent CLI, at the version set pins, says about
// model ids: stdlib.modelTables.<adapter>, decoded.
type ModelTable struct {
	// CLI is the npm package and version the table is copied from
	// ("@anthropic-ai/claude-code@2.1.330").
	CLI string `json:"cli"`
	// Current maps the CLI's model aliases to the models they run.
	Current map[string]string `json:"current"`
	// ListsAll: Models holds every model the CLI knows.
	ListsAll bool                   `json:"listsAll"`
	Models   map[string]ModelStatus `json:"models"`
}

// ModelStatus is what a ModelTable says of one model.
type ModelStatus struct {
	Status string `json:"status"`
	// Date is when a deprecated model retires, or a retired one did.
	Date string `json:"date,omitempty"`
	// Use is the model the CLI puts in its place.
	Use string `json:"use,omitempty"`
}

// ModelTables are the pinned agent CLIs' tables, by adapter ("claude",
// "codex").
type ModelTables map[string]ModelTable

// Lookup finds model in the tables: in adapter's first, then in the
// others (an API transport reaches the same models as its CLI). It
// returns the table's adapter and what it says; ok is false when no table
// lists the model.
func (t ModelTables) Lookup(adapter, model string) (table string, st ModelStatus, ok bool) {
	if st, ok := t[adapter].Models[model]; ok {
		return adapter, st, true
	}
	names := make([]string, 0, len(t))
	for name := range t {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if st, ok := t[name].Models[model]; ok {
			return name, st, true
		}
	}
	return "", ModelStatus{}, false
}

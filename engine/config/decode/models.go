package decode

import (
	"fmt"

	"cuelang.org/go/cue"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/load"
)

// ModelTables decodes the pinned agent CLIs' model tables from the
// embedded stdlib (stdlib/models.cue).
func ModelTables(opts load.Options) (config.ModelTables, error) {
	v, err := load.Stdlib(opts)
	if err != nil {
		return nil, err
	}
	var tables config.ModelTables
	if err := v.LookupPath(cue.ParsePath(load.ModelTablesField)).Decode(&tables); err != nil {
		return nil, fmt.Errorf("stdlib.%s: %w", load.ModelTablesField, err)
	}
	return tables, nil
}

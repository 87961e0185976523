package plan

import (
	"context"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/spec"
)

// Make is MakeWith without a model: a strategy that asks one is a
// *NeedsModelError.
func Make(cfg *config.Project, s *spec.Spec, rec Record, fp Fingerprint) (*Plan, error) {
	return MakeWith(context.Background(), cfg, s, rec, fp, nil)
}

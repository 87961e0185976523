package project

import (
	"context"
	"errors"
	"fmt"

	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/merge"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/spec"
)

// Record reads what the project's main branch records as implemented: the
// requirements of its living specs (openspec/specs in main's tree, not in
// the checkout) and the changes whose commit is on it. It also returns the
// living spec files, for the plan's fingerprint. A directory outside git,
// or a repository without the main branch yet, records nothing. .set/ is
// never read: it is the cache of a run, not the record of what is done.
func (p *Project) Record(ctx context.Context) (plan.Record, map[string][]byte, error) {
	rec := plan.Record{Sources: p.SpecData}
	if !git.InRepository(ctx, p.Root) {
		return rec, nil, nil
	}
	main, err := git.BranchHead(ctx, p.Root, p.Config.MainBranch)
	if nb := (*git.NoBranchError)(nil); errors.As(err, &nb) {
		return rec, nil, nil
	}
	if err != nil {
		return rec, nil, err
	}
	files, err := git.FilesAt(ctx, p.Root, main, spec.LivingSpecsDir)
	if err != nil {
		return rec, nil, err
	}
	if rec.Living, err = spec.ParseLiving(files); err != nil {
		return rec, nil, fmt.Errorf("the living specs on %s: %w", p.Config.MainBranch, err)
	}
	landed, err := merge.LandedOn(ctx, p.Root, main)
	if err != nil {
		return rec, nil, err
	}
	rec.Landed = map[string]bool{}
	for _, l := range landed {
		rec.Landed[l.Change] = true
	}
	return rec, files, nil
}

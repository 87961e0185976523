package project

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/merge"
	"github.com/set-engine/set/engine/openspec"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/spec"
)

// openSpecDir is the OpenSpec directory at the project root; the change
// folders are in its changes/.
const openSpecDir = "openspec"

// Record reads what the project's main branch records as implemented: the
// requirements of its living specs (openspec/specs in main's tree, not in
// the checkout) and the changes whose commit is on it. It also returns the
// living spec files, for the plan's fingerprint. For the openspec
// strategy it reads main's whole openspec/ instead (Record.OpenSpec), the
// open change folders it plans from among it, and leaves Record.Living
// empty: those folders name requirements by their OpenSpec names, which
// engine/openspec matches as the CLI does, not by set's REQ IDs. A
// directory outside git, or a repository without the main branch yet,
// records nothing. .set/ is never read: it is the cache of a run, not the
// record of what is done.
//
// For the other strategies, which plan from the markdown spec, a change
// folder open on main that no landed change of set's wrote is an error
// (checkOpenFolders): set would neither implement nor archive it.
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
	landed, err := merge.LandedOn(ctx, p.Root, main)
	if err != nil {
		return rec, nil, err
	}
	rec.Landed = map[string]bool{}
	for _, l := range landed {
		rec.Landed[l.Change] = true
	}
	if p.Config.Planner.FromFolders() {
		tree, err := git.FilesAt(ctx, p.Root, main, openSpecDir)
		if err != nil {
			return rec, nil, err
		}
		rec.OpenSpec = openspec.Tree(tree)
		living := map[string][]byte{}
		for name, data := range tree {
			if strings.HasPrefix(name, spec.LivingSpecsDir+"/") {
				living[name] = data
			}
		}
		return rec, living, nil
	}
	if err := p.checkOpenFolders(ctx, main, rec.Landed); err != nil {
		return rec, nil, err
	}
	files, err := git.FilesAt(ctx, p.Root, main, spec.LivingSpecsDir)
	if err != nil {
		return rec, nil, err
	}
	if rec.Living, err = spec.ParseLiving(files); err != nil {
		return rec, nil, fmt.Errorf("the living specs on %s: %w", p.Config.MainBranch, err)
	}
	return rec, files, nil
}

// checkOpenFolders is the mixed-project rule for a markdown strategy: an
// error at every change folder open on main (commit main) that set would
// neither implement (it plans from the spec) nor archive (it archives the
// folders it writes, when it merges their change). set writes a change's
// folder on the change's branch and archives it as the change lands, so
// main holds none open but one whose archive OpenSpec refused, and that
// change is landed.
func (p *Project) checkOpenFolders(ctx context.Context, main string, landed map[string]bool) error {
	dirs, err := git.DirsAt(ctx, p.Root, main, openSpecDir+"/changes")
	if err != nil {
		return err
	}
	var ds diag.List
	for _, dir := range dirs {
		name, ok := openspec.OpenFolderOf(openSpecDir + "/changes/" + dir + "/")
		if !ok || landed[name] {
			continue
		}
		ds = append(ds, diag.Errorf(spec.ChangeDir(name)+"/", 0,
			"the OpenSpec change %s on %s would be neither implemented nor archived: planner.strategy %q plans from the spec; choose planner.strategy: %q (and remove spec) to implement the change folders, or archive it first (setctl archive %s, then commit)",
			name, p.Config.MainBranch, p.Config.Planner.Strategy, config.StrategyOpenSpec, name))
	}
	return ds.Err()
}

package decode

import (
	"maps"
	"slices"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/errors"

	"github.com/set-engine/set/engine/load"

	"github.com/set-engine/set/engine/pathglob"
)

// checkPathGlobs checks the globs the merge queue, dispatch and the static
// planner match paths with (mergeUnion, crossCutting, planner.scopes):
// each must be a glob pathglob can use, reported at its own field.
func (d *decoder) checkPathGlobs() {
	check := func(globs map[string]bool, sels ...string) {
		for _, g := range slices.Sorted(maps.Keys(globs)) {
			if err := pathglob.Check(g); err != nil {
				// The glob is a label: named as CUE writes it, quoted.
				at := append(slices.Clone(sels), g)
				path := append([]string{load.ProjectField}, append(slices.Clone(sels), cue.Str(g).String())...)
				d.errs = errors.Append(d.errs, load.NewFieldError(path, d.pos(at...), "%v", err))
			}
		}
	}
	check(d.p.MergeUnion, "mergeUnion")
	check(d.p.CrossCutting, "crossCutting")
	for _, domain := range slices.Sorted(maps.Keys(d.p.Planner.Scopes)) {
		check(d.p.Planner.Scopes[domain], "planner", "scopes", domain)
	}
}

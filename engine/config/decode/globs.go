package decode

import (
	"maps"
	"regexp"
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
				d.errs = errors.Append(d.errs, load.NewFieldError(path, d.givenPos(at...), "%v", err))
			}
		}
	}
	check(d.p.MergeUnion, "mergeUnion")
	check(d.p.CrossCutting, "crossCutting")
	for _, domain := range slices.Sorted(maps.Keys(d.p.Planner.Scopes)) {
		check(d.p.Planner.Scopes[domain], "planner", "scopes", domain)
	}
}

// checkLearnings checks what the schema cannot of each learning: a rule's
// pattern is a valid regular expression, and its paths, a convention's
// paths and a planning learning's serialise globs are globs pathglob can
// use, each reported at its own field (a glob at its index), where the
// project or the profile that ships the learning gave it.
func (d *decoder) checkLearnings() {
	for _, name := range slices.Sorted(maps.Keys(d.p.Learnings)) {
		l := d.p.Learnings[name]
		// The name is a label: named as CUE writes it, quoted where it
		// is not an identifier, as the schema's errors name it.
		fail := func(field, format string, args ...any) {
			path := []string{load.ProjectField, "learnings", cue.Str(name).String(), field}
			d.errs = errors.Append(d.errs, load.NewFieldError(path, d.givenPos("learnings", name, field), format, args...))
		}
		if l.Pattern != "" {
			if _, err := regexp.Compile(l.Pattern); err != nil {
				fail("pattern", "invalid regular expression: %v", err)
			}
		}
		for _, f := range []struct {
			field string
			globs []string
		}{{"paths", l.Paths}, {"serialise", l.Serialise}} {
			for i, g := range f.globs {
				if err := pathglob.Check(g); err != nil {
					fail(f.field, "index %d: %v", i, err)
				}
			}
		}
	}
}

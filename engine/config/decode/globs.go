package decode

import (
	"maps"
	"regexp"
	"slices"

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
				d.failGiven(append(slices.Clone(sels), g), "%v", err)
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
// pattern and paths as the rules gate uses them (checkRule), a
// convention's paths and a planning learning's serialise globs as globs
// pathglob can use, each reported at its own field, where the project or
// the profile that ships the learning gave it.
func (d *decoder) checkLearnings() {
	for _, name := range slices.Sorted(maps.Keys(d.p.Learnings)) {
		l := d.p.Learnings[name]
		d.checkRule([]string{"learnings", name}, l.Pattern, l.Paths)
		d.checkGlobs([]string{"learnings", name, "serialise"}, l.Serialise)
	}
}

// checkRule checks a pattern the rules gate forbids in the lines a change
// adds (a forbidden pattern's, or a rule learning's) at sels: its pattern
// is a valid regular expression ("" is the schema's to refuse) and its
// paths globs pathglob can use, as the gate matches them.
func (d *decoder) checkRule(sels []string, pattern string, paths []string) {
	if pattern != "" {
		if _, err := regexp.Compile(pattern); err != nil {
			d.failGiven(append(slices.Clone(sels), "pattern"), "invalid regular expression: %v", err)
		}
	}
	d.checkGlobs(append(slices.Clone(sels), "paths"), paths)
}

// checkGlobs checks that each of globs, the list at sels, is a glob
// pathglob can use, reported at the list with its index.
func (d *decoder) checkGlobs(sels []string, globs []string) {
	for i, g := range globs {
		if err := pathglob.Check(g); err != nil {
			d.failGiven(sels, "index %d: %v", i, err)
		}
	}
}

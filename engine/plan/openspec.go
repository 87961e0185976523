package plan

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/openspec"
	"github.com/set-engine/set/engine/spec"
)

// This file is the openspec strategy (config.StrategyOpenSpec): the plan
// is the OpenSpec change folders people wrote, one change per folder under
// openspec/changes/ on main, named after it. set plans nothing itself: a
// folder's requirements are its delta's operations, its dependencies are
// the orders OpenSpec's archive needs and those its .openspec.yaml states
// (depends_on), and a folder OpenSpec would refuse to archive is refused
// here, at its file and line, before any agent runs.

// Operations of a delta, as a dependency's reason names them.
const (
	opAdded    = "ADDED"
	opModified = "MODIFIED"
	opRemoved  = "REMOVED"
	opRenamed  = "RENAMED"
)

// fromOpenSpec is MakeWith for the openspec strategy: rec.OpenSpec's open
// change folders (FromFolders), validated, in dependency order, each
// archivable after the ones before it (openspec.CheckArchivable on day
// now). A folder archived on main is no longer under openspec/changes/,
// so it is not planned: a fully applied main plans nothing.
func fromOpenSpec(cfg *config.Project, rec Record, fp Fingerprint, now time.Time) (*Plan, error) {
	p := &Plan{
		Version:     FormatVersion,
		Project:     cfg.Name,
		Strategy:    config.StrategyOpenSpec,
		Fingerprint: fp,
	}
	folders, ds := openspec.OpenChanges(rec.OpenSpec)
	problems := diagProblems(ds)
	made := FromFolders(folders, rec.OpenSpec, rec.Landed)
	problems = append(problems, made.Problems...)
	if len(problems) > 0 {
		// With only folders refused by validation, those that were read
		// are still checked for what archive would refuse, so that one
		// vet names every refusal, as one `openspec validate --changes
		// --strict` does. Not when their order is in question
		// (made.Problems): archiving them in an order the user has not
		// settled would refuse folders for want of that order.
		if changes, err := TopoSort(made.Changes); err == nil && len(made.Problems) == 0 {
			refused := openspec.CheckArchivable(rec.OpenSpec, changeNames(changes), now)
			for _, c := range changes {
				problems = append(problems, diagProblems(refused[c.Name])...)
			}
		}
		return nil, &InvalidError{Problems: problems}
	}
	p.Requirements, p.Standings, p.Changes = made.Requirements, made.Standings, made.Changes
	if err := Validate(p, Limits{}); err != nil {
		return nil, err
	}
	changes, err := TopoSort(p.Changes)
	if err != nil {
		return nil, err
	}
	p.Changes = changes
	order := changeNames(changes)
	refused := openspec.CheckArchivable(rec.OpenSpec, order, now)
	for _, name := range order {
		problems = append(problems, diagProblems(refused[name])...)
	}
	if len(problems) > 0 {
		return nil, &InvalidError{Problems: problems}
	}
	p.Learnings = Used(cfg, false)
	return p, nil
}

// diagProblems are the errors of ds as plan problems, at their positions
// (warnings are left out: they do not make a plan invalid).
func diagProblems(ds diag.List) []Problem {
	var out []Problem
	for _, d := range ds {
		if d.Severity != diag.Error {
			continue
		}
		out = append(out, Problem{Message: d.Summary, At: d.Pos, Pos: diag.Rel(d.Pos, "")})
	}
	return out
}

// FolderPlan is what FromFolders makes of the open change folders.
type FolderPlan struct {
	// Requirements and Standings are the requirements of every folder, in
	// folder order, and their standings (same order).
	Requirements []spec.Requirement
	Standings    []spec.Standing
	// Changes are one change per folder, in folder order.
	Changes []Change
	// Problems are why the folders cannot be planned, at their positions.
	Problems []Problem
}

// FromFolders makes the changes of the openspec strategy from the open
// change folders of t (openspec.OpenChanges), t being main's openspec/
// directory and landed the changes whose commit is on main.
//
// Each folder is one change, named after it, of type "feature", sized by
// its scenarios, described by the first paragraph under proposal.md's
// "## Why". Its requirements are its delta's operations, capability by
// capability (sorted), ADDED, MODIFIED, REMOVED then RENAMED, each in
// document order; the n-th has the ID REQ-<CHANGE>-<nn> (the change name
// upper-cased), stable while the folder is, and its OpenSpec name as its
// title.
//
// A change depends on another when OpenSpec could archive them in one
// order only: it MODIFIES, REMOVES or RENAMES a requirement that main's
// living spec of that capability lacks and the other ADDs or RENAMEs to,
// or it ADDs or RENAMEs to a name main has and the other REMOVES or
// RENAMEs away. It also depends on each open change its .openspec.yaml
// lists under depends_on (a name archived on main, or landed, is
// satisfied). Change.Because says why. Two changes that MODIFY, REMOVE or RENAME one requirement with no
// order between them are a problem, as is a depends_on naming no change,
// a dependency cycle, and a folder whose change landed on main without
// being archived there (set implements a folder once: a fully applied
// main plans nothing).
func FromFolders(folders []*openspec.Folder, t openspec.Tree, landed map[string]bool) FolderPlan {
	var out FolderPlan
	open := map[string]*openspec.Folder{}
	archived := archivedIn(t)
	for _, f := range folders {
		dir := spec.ChangeDir(f.Name) + "/"
		why := folderNameProblem(f.Name)
		if why == "" && landed[f.Name] && !archived(f.Name) {
			why = fmt.Sprintf("the change %s landed on main, but its folder is still open there (its archive was refused when it merged): archive it (setctl archive %s, then commit) or remove it; set implements an open folder once", f.Name, f.Name)
		}
		if why != "" {
			out.Problems = append(out.Problems, Problem{Message: why, At: config.Pos{File: dir}, Pos: dir})
			continue
		}
		open[f.Name] = f
	}
	names := slices.Sorted(maps.Keys(open))
	d := newFolderDeps(names, open, t)
	for _, name := range names {
		c, reqs, sts := folderChange(open[name], d.before)
		out.Changes = append(out.Changes, c)
		out.Requirements = append(out.Requirements, reqs...)
		out.Standings = append(out.Standings, sts...)
	}

	d.derive()
	d.declared(archivedOn(t, landed))
	for i := range out.Changes {
		c := &out.Changes[i]
		c.DependsOn = sortedUnique(slices.Collect(maps.Keys(d.because[c.Name])))
		if len(c.DependsOn) > 0 {
			c.Because = d.because[c.Name]
		}
	}
	out.Problems = append(out.Problems, d.problems...)
	if len(d.problems) > 0 {
		return out
	}
	if cycle := FindCycle(&Plan{Changes: out.Changes}); len(cycle) > 0 {
		dir := spec.ChangeDir(cycle[0]) + "/"
		out.Problems = append(out.Problems, Problem{
			Message: "dependency cycle: " + strings.Join(cycle, " → ") + " (" + cycleReasons(out.Changes, cycle) + ")",
			Change:  cycle[0], At: config.Pos{File: dir}, Pos: dir,
		})
		return out
	}
	out.Problems = append(out.Problems, d.unordered(Ancestors(&Plan{Changes: out.Changes}))...)
	return out
}

// folderNameProblem says why a folder's name cannot name a change, or "".
func folderNameProblem(name string) string {
	switch {
	case !ValidName(name):
		return fmt.Sprintf("the change folder %q cannot name a change: a name is kebab-case and at most %d characters (e.g. \"add-links\")", name, MaxNameLen)
	case reservedName(name) != "":
		return fmt.Sprintf("the change folder %q cannot name a change: %s", name, reservedName(name))
	case !spec.IDPattern.MatchString(folderReqID(name, 1)):
		return fmt.Sprintf("the change folder %q cannot name a change: its requirement IDs (%s) would not be requirement IDs", name, folderReqID(name, 1))
	}
	return ""
}

// folderReqID is the ID of the n-th requirement of the change folder name.
func folderReqID(name string, n int) string {
	return fmt.Sprintf("REQ-%s-%02d", strings.ToUpper(name), n)
}

// folderChange is the change of folder f with its requirements and their
// standings; its dependencies come later (folderDeps). before gives what a
// MODIFIED requirement was before it, to say what it changes.
func folderChange(f *openspec.Folder, before func(capability, name string) (spec.Requirement, bool)) (Change, []spec.Requirement, []spec.Standing) {
	c := Change{Name: f.Name, Type: "feature", Description: whyParagraph(f.Files["proposal.md"]), Requirements: []string{}, DependsOn: []string{}}
	var reqs []spec.Requirement
	var sts []spec.Standing
	scenarios := 0
	add := func(r spec.Requirement, st spec.Standing) {
		r.ID = folderReqID(f.Name, len(reqs)+1)
		st.ID, st.Capability = r.ID, r.Domain
		reqs = append(reqs, r)
		sts = append(sts, st)
		c.Requirements = append(c.Requirements, r.ID)
		scenarios += len(r.Scenarios)
	}
	for _, d := range f.Deltas {
		file := f.DeltaFiles[d.Capability]
		for _, b := range d.Added {
			add(blockRequirement(d.Capability, file, b), spec.Standing{Status: spec.New})
		}
		for _, b := range d.Modified {
			r := blockRequirement(d.Capability, file, b)
			st := spec.Standing{Status: spec.Changed, Living: b.Name}
			if old, ok := before(d.Capability, b.Name); ok {
				// OpenSpec matches requirements by name: the title is
				// the one main has, however it is spaced.
				st.Differs = slices.DeleteFunc(spec.Differs(r, old), func(d string) bool { return d == "title" })
			}
			add(r, st)
		}
		for _, n := range d.Removed {
			add(spec.Requirement{Title: n.Name, Domain: d.Capability, File: file, Line: n.Line}, spec.Standing{Status: spec.Removed, Living: n.Name})
		}
		for _, rn := range d.Renamed {
			add(spec.Requirement{Title: rn.To, Domain: d.Capability, File: file, Line: rn.Line},
				spec.Standing{Status: spec.Changed, Living: rn.From, Differs: []string{"title"}})
		}
	}
	c.Size = sizeFor(scenarios)
	return c, reqs, sts
}

// blockRequirement is an ADDED or MODIFIED requirement block of the delta
// file of capability: its text and scenarios as engine/spec reads them
// when it can, else its body as written.
func blockRequirement(capability, file string, b openspec.RequirementBlock) spec.Requirement {
	r := spec.Requirement{Title: b.Name, Domain: capability, File: file, Line: b.Line}
	parsed, _ := spec.Parse(file, []byte(b.Raw), spec.Options{})
	if len(parsed) == 1 {
		r.Text, r.Scenarios = parsed[0].Text, parsed[0].Scenarios
		for i := range r.Scenarios {
			r.Scenarios[i].Line += b.Line - 1
		}
		return r
	}
	if _, body, ok := strings.Cut(b.Raw, "\n"); ok {
		r.Text = strings.TrimSpace(body)
	}
	return r
}

var reWhyHeading = regexp.MustCompile(`(?i)^##\s+why\s*$`)

// whyParagraph is the first paragraph under proposal.md's "## Why", its
// lines joined by spaces; "" when it has none.
func whyParagraph(proposal []byte) string {
	lines := strings.Split(strings.ReplaceAll(string(proposal), "\r\n", "\n"), "\n")
	var para []string
	in := false
	for _, l := range lines {
		l = strings.TrimSpace(l)
		switch {
		case !in:
			in = reWhyHeading.MatchString(l)
		case strings.HasPrefix(l, "#"):
			return strings.Join(para, " ")
		case l == "":
			if len(para) > 0 {
				return strings.Join(para, " ")
			}
		default:
			para = append(para, l)
		}
	}
	return strings.Join(para, " ")
}

// archivedOn is the set of change names archived in t (archivedIn),
// plus landed.
func archivedOn(t openspec.Tree, landed map[string]bool) func(name string) bool {
	archived := archivedIn(t)
	return func(name string) bool { return landed[name] || archived(name) }
}

// archivedIn is the set of change names archived in t
// (openspec/changes/archive/<date>-<name>/).
func archivedIn(t openspec.Tree) func(name string) bool {
	const archive = "openspec/changes/archive/"
	dirs := map[string]bool{}
	for file := range t {
		if rest, ok := strings.CutPrefix(file, archive); ok {
			if dir, _, ok := strings.Cut(rest, "/"); ok {
				dirs[dir] = true
			}
		}
	}
	return func(name string) bool {
		for dir := range dirs {
			if openspec.ArchivedAs(dir, name) {
				return true
			}
		}
		return false
	}
}

// touch is one operation of a folder on an existing requirement: a
// MODIFIED or REMOVED requirement, or a RENAMED one's FROM name (name, as
// NormalizeName gives it).
type touch struct {
	change, op, name, file string
	line                   int
}

// folderDeps finds the dependencies between open folders. because maps a
// change to, by the change it depends on, why.
type folderDeps struct {
	names    []string
	open     map[string]*openspec.Folder
	living   map[string]map[string]openspec.RequirementBlock // capability → normalised name → block on main
	added    map[string]map[string]openspec.RequirementBlock // capability → normalised name → first open folder's ADDED block
	because  map[string]map[string]string
	problems []Problem
	// touches are, by capability then normalised name, the operations of
	// the folders on that requirement, folders in name order.
	touches map[string]map[string][]touch
	// makes are, by capability then normalised name, the first folder that
	// ADDs the requirement or RENAMEs to it.
	makes map[string]map[string]maker
}

// maker is a folder bringing a requirement in, and how ("ADDs").
type maker struct{ change, verb string }

func newFolderDeps(names []string, open map[string]*openspec.Folder, t openspec.Tree) *folderDeps {
	d := &folderDeps{names: names, open: open, living: map[string]map[string]openspec.RequirementBlock{}, added: map[string]map[string]openspec.RequirementBlock{},
		because: map[string]map[string]string{}, touches: map[string]map[string][]touch{}}
	for file, src := range t {
		capability, ok := livingCapability(file)
		if !ok {
			continue
		}
		blocks := map[string]openspec.RequirementBlock{}
		for _, b := range openspec.LivingRequirements(src) {
			blocks[openspec.NormalizeName(b.Name)] = b
		}
		d.living[capability] = blocks
	}
	for _, name := range names {
		for _, delta := range open[name].Deltas {
			for _, b := range delta.Added {
				m := d.added[delta.Capability]
				if m == nil {
					m = map[string]openspec.RequirementBlock{}
					d.added[delta.Capability] = m
				}
				if _, ok := m[openspec.NormalizeName(b.Name)]; !ok {
					m[openspec.NormalizeName(b.Name)] = b
				}
			}
		}
	}
	return d
}

// before is the requirement name of capability as a MODIFIED requirement
// finds it: main's, else the one an open folder ADDs.
func (d *folderDeps) before(capability, name string) (spec.Requirement, bool) {
	key := openspec.NormalizeName(name)
	b, ok := d.living[capability][key]
	if !ok {
		b, ok = d.added[capability][key]
	}
	if !ok {
		return spec.Requirement{}, false
	}
	return blockRequirement(capability, "", b), true
}

// livingCapability is the capability whose living spec file is, if it is
// one: openspec/specs/<capability>/spec.md.
func livingCapability(file string) (string, bool) {
	rest, ok := strings.CutPrefix(file, "openspec/specs/")
	if !ok || path.Base(rest) != "spec.md" || path.Dir(rest) == "." {
		return "", false
	}
	return path.Dir(rest), true
}

func (d *folderDeps) edge(from, to, why string) {
	m := d.because[from]
	if m == nil {
		m = map[string]string{}
		d.because[from] = m
	}
	if prev, ok := m[to]; ok && prev != why {
		why = prev + "; " + why
	}
	m[to] = why
}

// derive adds the dependencies OpenSpec's archive imposes: a folder that
// MODIFIES, REMOVES or RENAMES a requirement main lacks waits for the
// folder that ADDs it (or RENAMEs to it), and one that ADDs (or RENAMEs
// to) a name main has waits for the folder that REMOVES it (or RENAMEs it
// away). It records every touch too.
func (d *folderDeps) derive() {
	makes := map[string]map[string]maker{}
	d.makes = makes
	for _, name := range d.names {
		for _, delta := range d.open[name].Deltas {
			m := makes[delta.Capability]
			if m == nil {
				m = map[string]maker{}
				makes[delta.Capability] = m
			}
			set := func(n, verb string) {
				if _, ok := m[openspec.NormalizeName(n)]; !ok {
					m[openspec.NormalizeName(n)] = maker{name, verb}
				}
			}
			for _, b := range delta.Added {
				set(b.Name, "ADDs")
			}
			for _, r := range delta.Renamed {
				set(r.To, "RENAMEs to")
			}
		}
	}
	for _, name := range d.names {
		f := d.open[name]
		for _, delta := range f.Deltas {
			cp := delta.Capability
			file := f.DeltaFiles[cp]
			var ts []touch
			for _, b := range delta.Modified {
				ts = append(ts, touch{name, opModified, openspec.NormalizeName(b.Name), file, b.Line})
			}
			for _, n := range delta.Removed {
				ts = append(ts, touch{name, opRemoved, openspec.NormalizeName(n.Name), file, n.Line})
			}
			for _, r := range delta.Renamed {
				ts = append(ts, touch{name, opRenamed, openspec.NormalizeName(r.From), file, r.Line})
			}
			for _, t := range ts {
				key := t.name
				if d.touches[cp] == nil {
					d.touches[cp] = map[string][]touch{}
				}
				d.touches[cp][key] = append(d.touches[cp][key], t)
				if _, ok := d.living[cp][key]; ok {
					continue
				}
				if mk, ok := makes[cp][key]; ok && mk.change != name {
					d.edge(name, mk.change, fmt.Sprintf("%s %q (%s), which %s %s", t.op, t.name, cp, mk.change, mk.verb))
				}
			}
		}
	}
	// A folder that ADDs (or RENAMEs to) a name main's living spec has
	// waits for the folder that REMOVEs it (or RENAMEs it away): before,
	// OpenSpec refuses the name as one that already exists.
	for _, name := range d.names {
		for _, delta := range d.open[name].Deltas {
			cp := delta.Capability
			brought := func(n, op string) {
				key := openspec.NormalizeName(n)
				if _, ok := d.living[cp][key]; !ok {
					return
				}
				for _, t := range d.touches[cp][key] {
					if t.change != name && t.op != opModified {
						verb := map[string]string{opRemoved: "REMOVEs", opRenamed: "RENAMEs away"}[t.op]
						d.edge(name, t.change, fmt.Sprintf("%s %q (%s), which main has and %s %s", op, key, cp, t.change, verb))
						return
					}
				}
			}
			for _, b := range delta.Added {
				brought(b.Name, opAdded)
			}
			for _, r := range delta.Renamed {
				brought(r.To, opRenamed)
			}
		}
	}
}

// declared adds the dependencies the folders' .openspec.yaml state
// (depends_on); a name archived (or landed) on main is satisfied.
func (d *folderDeps) declared(archived func(string) bool) {
	for _, name := range d.names {
		f := d.open[name]
		for _, dep := range f.DependsOn {
			at := config.Pos{File: f.MetadataFile, Line: dep.Line}
			switch {
			case dep.Name == name:
				d.problem(at, name, "change %q depends on itself (depends_on)", name)
			case d.open[dep.Name] != nil:
				d.edge(name, dep.Name, fmt.Sprintf("depends_on in %s:%d", f.MetadataFile, dep.Line))
			case archived(dep.Name):
			default:
				d.problem(at, name, "depends_on names %q, which is neither an open change folder under openspec/changes/ nor archived on main%s",
					dep.Name, suggest(dep.Name, slices.DeleteFunc(slices.Clone(d.names), func(n string) bool { return n == name })))
			}
		}
	}
}

// unordered reports two folders that touch one requirement with no order
// between them (ancestors: by change, those it depends on, transitively):
// OpenSpec folds them in the order they are archived, so the plan must
// say which.
func (d *folderDeps) unordered(ancestors map[string]map[string]bool) []Problem {
	var out []Problem
	for _, cp := range slices.Sorted(maps.Keys(d.touches)) {
		byName := d.touches[cp]
		for _, key := range slices.Sorted(maps.Keys(byName)) {
			_, onMain := d.living[cp][key]
			if _, made := d.makes[cp][key]; !onMain && !made {
				continue // no order folds it: CheckArchivable says so
			}
			ts := byName[key]
			for j := 1; j < len(ts); j++ {
				for i := range j {
					a, b := ts[i], ts[j]
					if a.change == b.change || ancestors[a.change][b.change] || ancestors[b.change][a.change] {
						continue
					}
					out = append(out, Problem{
						Message: fmt.Sprintf("%s %q (%s) is also %s by %s, and neither change depends on the other: OpenSpec folds them in the order they are archived, so say which lands first with depends_on: [%s] in %s/.openspec.yaml",
							b.op, b.name, cp, a.op, a.change, a.change, spec.ChangeDir(b.change)),
						Change: b.change, At: config.Pos{File: b.file, Line: b.line}, Pos: fmt.Sprintf("%s:%d", b.file, b.line),
					})
				}
			}
		}
	}
	return out
}

func (d *folderDeps) problem(at config.Pos, change, format string, args ...any) {
	d.problems = append(d.problems, Problem{Message: fmt.Sprintf(format, args...), Change: change, At: at, Pos: diag.Rel(at, "")})
}

// cycleReasons says why each step of a dependency cycle waits.
func cycleReasons(changes []Change, cycle []string) string {
	var why []string
	for i := 0; i+1 < len(cycle); i++ {
		for _, c := range changes {
			if c.Name == cycle[i] {
				if r := c.Because[cycle[i+1]]; r != "" {
					why = append(why, cycle[i]+" after "+cycle[i+1]+": "+r)
				}
			}
		}
	}
	return strings.Join(why, "; ")
}

// changeNames are the names of changes, in their order.
func changeNames(changes []Change) []string {
	names := make([]string, len(changes))
	for i, c := range changes {
		names[i] = c.Name
	}
	return names
}

package openspec

import (
	"fmt"
	"strings"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/diag"
)

// This file reads a change's delta spec,
// openspec/changes/<change>/specs/<capability>/spec.md, exactly as the
// OpenSpec CLI (@fission-ai/openspec 1.13.2) reads it, so that the archive
// folds what `openspec archive` folds and refuses what it refuses.

// Delta is one capability's delta spec of a change.
type Delta struct {
	Capability string
	Added      []RequirementBlock // under "## ADDED Requirements", in document order
	Modified   []RequirementBlock // under "## MODIFIED Requirements", in document order
	Removed    []NamedLine        // names under "## REMOVED Requirements"
	Renamed    []Rename           // pairs under "## RENAMED Requirements"

	unpaired []unpairedRename
	orphans  []orphanRequirement
	// sections records which of the four sections the delta has (an empty
	// one included).
	sections struct{ added, modified, removed, renamed bool }
	// purpose is the body of the delta's "## Purpose" section, "" when it
	// has none; it becomes the Purpose of a capability the delta creates.
	purpose string
}

// RequirementBlock is one "### Requirement: <name>" block.
type RequirementBlock struct {
	// Name is the text after "Requirement:", without a closing run of
	// '#' and trimmed.
	Name string
	// Raw is the block as written (line endings normalised to "\n"): its
	// header line and every line up to the next requirement header or "## "
	// heading, trailing white space removed.
	Raw  string
	Line int // 1-based line of the header in its file
}

// NamedLine is a requirement name and the line that names it.
type NamedLine struct {
	Name string
	Line int
}

// Rename renames the requirement From to To.
type Rename struct {
	From, To string
	Line     int // the FROM line
}

type unpairedRename struct {
	side string // "FROM" or "TO"
	name string
	line int
}

type orphanRequirement struct {
	name    string
	section string // "" above the first "## " heading
	line    int
}

// ops is the number of operations of the delta.
func (d *Delta) ops() int {
	return len(d.Added) + len(d.Modified) + len(d.Removed) + len(d.Renamed)
}

var (
	reRequirementHeader = js(`^###` + reS + `*` + ci("Requirement:") + reS + `*(` + reDot + `+)` + reS + `*$`)
	reSectionHeading    = js(`^##` + reS + `+(` + reDot + `+)$`)
	reTopLevelHeading   = js(`^##` + reS + `+`)
	reClosingHashes     = js(`[ \t]+#+[ \t]*$`)
	reRemovedBullet     = js("^" + reS + "*[-*+]" + reS + "*`?###" + reS + "*Requirement:" + reS + "*(" + reDot + "+?)`?" + reS + "*$")
	reRenameFrom        = js("^" + reS + "*[-*+]?" + reS + "*FROM:" + reS + "*`?###" + reS + "*Requirement:" + reS + "*(" + reDot + "+?)`?" + reS + "*$")
	reRenameTo          = js("^" + reS + "*[-*+]?" + reS + "*TO:" + reS + "*`?###" + reS + "*Requirement:" + reS + "*(" + reDot + "+?)`?" + reS + "*$")
	reSpaceRun          = js(reS + `+`)
)

// normalizeRequirementName drops a closing run of '#' (only one preceded by
// a space or tab, so "C#" keeps its '#') and trims.
func normalizeRequirementName(name string) string {
	return jsTrim(removeFirst(name, reClosingHashes))
}

// foldRequirementName is the name compared case- and spacing-insensitively,
// to tell a mistyped name from a new one.
func foldRequirementName(name string) string {
	return reSpaceRun.ReplaceAllString(jsLower(normalizeRequirementName(name)), " ")
}

// deltaSectionTitles are the four section titles, lower-cased.
var deltaSectionTitles = map[string]bool{
	"added requirements":    true,
	"modified requirements": true,
	"removed requirements":  true,
	"renamed requirements":  true,
}

// sectionBody is the lines of one "## " section after its heading.
type sectionBody struct {
	lines []string
	mask  []bool
	start int // 1-based line number of lines[0]
}

// parseDelta reads a delta spec. It never fails: what the CLI cannot read
// is reported by validateDelta.
//
// The delta's sections are its "## " headings outside code fences; a
// section titled, in any case, "ADDED Requirements" (likewise MODIFIED,
// REMOVED, RENAMED) holds operations, and may appear more than once. A
// title is compared exactly otherwise: "ADDED  Requirements" (two spaces)
// is another section. Other sections ("## Why", "## Purpose", a "# Delta"
// title…) are ignored, as are requirement blocks outside the four sections.
func parseDelta(capability, src string) *Delta {
	d := &Delta{Capability: capability, purpose: purposeSection(src)}
	lines := strings.Split(normalizeEOL(stripBOM(src)), "\n")
	mask := fenceMask(lines)
	type section struct {
		title string
		body  sectionBody
	}
	var sections []section
	var starts []int
	for i, l := range lines {
		if !mask[i] && reSectionHeading.MatchString(l) {
			starts = append(starts, i)
		}
	}
	for k, i := range starts {
		end := len(lines)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		title := jsTrim(reSectionHeading.FindStringSubmatch(lines[i])[1])
		sections = append(sections, section{title, sectionBody{lines[i+1 : end], mask[i+1 : end], i + 2}})
	}
	for _, s := range sections {
		switch jsLower(s.title) {
		case "added requirements":
			d.sections.added = true
			d.Added = append(d.Added, requirementBlocks(s.body)...)
		case "modified requirements":
			d.sections.modified = true
			d.Modified = append(d.Modified, requirementBlocks(s.body)...)
		case "removed requirements":
			d.sections.removed = true
			d.Removed = append(d.Removed, removedNames(s.body)...)
		case "renamed requirements":
			d.sections.renamed = true
			d.Renamed = append(d.Renamed, d.renamePairs(s.body)...)
		}
	}
	// Requirement headers outside the four sections are not applied.
	var current string
	inSection := false
	for i, l := range lines {
		if mask[i] {
			continue
		}
		if m := reSectionHeading.FindStringSubmatch(l); m != nil {
			current, inSection = jsTrim(m[1]), true
			continue
		}
		if inSection && deltaSectionTitles[jsLower(current)] {
			continue
		}
		if m := reRequirementHeader.FindStringSubmatch(l); m != nil {
			d.orphans = append(d.orphans, orphanRequirement{normalizeRequirementName(m[1]), current, i + 1})
		}
	}
	return d
}

// requirementBlocks returns the requirement blocks of an ADDED or MODIFIED
// section: each "### Requirement:" header and the lines after it, up to the
// next such header or "## " heading. Lines before the first header are
// ignored.
func requirementBlocks(b sectionBody) []RequirementBlock {
	isHeader := func(i int) bool { return !b.mask[i] && reRequirementHeader.MatchString(b.lines[i]) }
	isTop := func(i int) bool { return !b.mask[i] && reTopLevelHeading.MatchString(b.lines[i]) }
	var blocks []RequirementBlock
	for i := 0; i < len(b.lines); {
		for i < len(b.lines) && !isHeader(i) {
			i++
		}
		if i >= len(b.lines) {
			break
		}
		name := normalizeRequirementName(reRequirementHeader.FindStringSubmatch(b.lines[i])[1])
		start := i
		buf := []string{b.lines[i]}
		for i++; i < len(b.lines) && !isHeader(i) && !isTop(i); i++ {
			buf = append(buf, b.lines[i])
		}
		blocks = append(blocks, RequirementBlock{Name: name, Raw: jsTrimEnd(strings.Join(buf, "\n")), Line: b.start + start})
	}
	return blocks
}

// removedNames returns the names a REMOVED section lists: requirement
// headers, or bullets ('-', '*' or '+') holding one, in backticks or not.
func removedNames(b sectionBody) []NamedLine {
	var names []NamedLine
	for i, l := range b.lines {
		if b.mask[i] {
			continue
		}
		if m := reRequirementHeader.FindStringSubmatch(l); m != nil {
			names = append(names, NamedLine{normalizeRequirementName(m[1]), b.start + i})
		} else if m := reRemovedBullet.FindStringSubmatch(l); m != nil {
			names = append(names, NamedLine{normalizeRequirementName(m[1]), b.start + i})
		}
	}
	return names
}

// renamePairs returns the FROM/TO pairs of a RENAMED section, recording
// every line that forms no pair (a FROM displaced by another FROM, a TO
// without a FROM, a FROM left at the end).
func (d *Delta) renamePairs(b sectionBody) []Rename {
	var pairs []Rename
	var pending *unpairedRename
	for i, l := range b.lines {
		if b.mask[i] {
			continue
		}
		if m := reRenameFrom.FindStringSubmatch(l); m != nil {
			if pending != nil {
				d.unpaired = append(d.unpaired, *pending)
			}
			pending = &unpairedRename{"FROM", normalizeRequirementName(m[1]), b.start + i}
		} else if m := reRenameTo.FindStringSubmatch(l); m != nil {
			to := normalizeRequirementName(m[1])
			if pending == nil {
				d.unpaired = append(d.unpaired, unpairedRename{"TO", to, b.start + i})
				continue
			}
			pairs = append(pairs, Rename{From: pending.name, To: to, Line: pending.line})
			pending = nil
		}
	}
	if pending != nil {
		d.unpaired = append(d.unpaired, *pending)
	}
	return pairs
}

// validateDelta checks one delta file as the CLI's validateChangeDeltaSpecs
// does; file names it in the diagnostics, which come in the order of the
// checks: unpaired renames and requirements outside the delta sections,
// the operations, each ADDED and MODIFIED block, names twice, and names in
// two sections that exclude each other.
func validateDelta(file string, d *Delta) []diag.Diagnostic {
	r := &deltaReport{file: file}
	r.placement(d)
	r.operations(d)
	added := r.blocks("ADDED", d.Added)
	modified := r.blocks("MODIFIED", d.Modified)
	removed, removedOrder := r.removed(d.Removed)
	r.renamedTwice(d.Renamed)
	r.contradictions(d, added, modified, removed, removedOrder)
	return r.ds
}

// deltaReport is the diagnostics found in one delta file, in order.
type deltaReport struct {
	file string
	ds   []diag.Diagnostic
}

func (r *deltaReport) report(sev diag.Severity, line int, format string, args ...any) {
	r.ds = append(r.ds, diag.Diagnostic{Severity: sev, Summary: fmt.Sprintf(format, args...), Pos: config.Pos{File: r.file, Line: line}})
}

// placement reports a FROM or TO line without its pair (an error) and a
// requirement outside the four delta sections (a warning).
func (r *deltaReport) placement(d *Delta) {
	for _, u := range d.unpaired {
		missing := "TO"
		if u.side == "TO" {
			missing = "FROM"
		}
		r.report(diag.Error, u.line, "RENAMED %s: %q has no matching %s: line; write each rename as a FROM: line followed by its TO: line", u.side, u.name, missing)
	}
	for _, o := range d.orphans {
		where := "above the first ## section"
		if o.section != "" {
			where = "under \"## " + o.section + "\""
		}
		r.report(diag.Warning, o.line, "requirement %q is %s, which is not a delta section, so it is ignored", o.name, where)
	}
}

// operations reports a delta without any operation, naming the delta
// sections it has that hold none.
func (r *deltaReport) operations(d *Delta) {
	if d.ops() > 0 {
		return
	}
	var present []string
	for _, s := range []struct {
		ok    bool
		title string
	}{{d.sections.added, "## ADDED Requirements"}, {d.sections.modified, "## MODIFIED Requirements"}, {d.sections.removed, "## REMOVED Requirements"}, {d.sections.renamed, "## RENAMED Requirements"}} {
		if s.ok {
			present = append(present, s.title)
		}
	}
	if len(present) > 0 {
		r.report(diag.Error, 0, "no operations: %s holds no \"### Requirement:\" entry", strings.Join(present, ", "))
	} else {
		r.report(diag.Error, 0, "no operations: no ## ADDED, MODIFIED, REMOVED or RENAMED Requirements section (a title with doubled spaces is not one)")
	}
}

// blocks checks the blocks of the ADDED or MODIFIED section (op): a name
// twice, no text (an error) or no SHALL or MUST in it (a warning), no
// scenario. It returns the section's normalized names.
func (r *deltaReport) blocks(op string, blocks []RequirementBlock) map[string]bool {
	names := map[string]bool{}
	for _, b := range blocks {
		key := normalizeRequirementName(b.Name)
		if names[key] {
			r.report(diag.Error, b.Line, "duplicate requirement %q under ## %s Requirements", b.Name, op)
		}
		names[key] = true
		text := requirementBody(strings.Split(b.Raw, "\n")[1:])
		switch {
		case text == "":
			r.report(diag.Error, b.Line, "%s requirement %q has no text (want a statement with SHALL or MUST after its header)", op, b.Name)
		case !containsShallOrMust(text):
			r.report(diag.Warning, b.Line, "%s requirement %q should contain SHALL or MUST", op, b.Name)
		}
		if countScenarios(strings.Split(b.Raw, "\n")[1:]) < 1 {
			r.report(diag.Error, b.Line, "%s requirement %q has no scenario (want a \"#### Scenario:\" heading with steps under it)", op, b.Name)
		}
	}
	return names
}

// removed reports a name twice under REMOVED and returns the section's
// normalized names, as a set and in order.
func (r *deltaReport) removed(lines []NamedLine) (map[string]bool, []string) {
	removed := map[string]bool{}
	var order []string
	for _, n := range lines {
		key := normalizeRequirementName(n.Name)
		if removed[key] {
			r.report(diag.Error, n.Line, "duplicate requirement %q under ## REMOVED Requirements", n.Name)
			continue
		}
		removed[key] = true
		order = append(order, key)
	}
	return removed, order
}

// renamedTwice reports a requirement renamed twice and two renamed to one
// name.
func (r *deltaReport) renamedTwice(renames []Rename) {
	from, to := map[string]bool{}, map[string]bool{}
	for _, rn := range renames {
		fk, tk := normalizeRequirementName(rn.From), normalizeRequirementName(rn.To)
		if from[fk] {
			r.report(diag.Error, rn.Line, "requirement %q is renamed twice", rn.From)
		}
		if to[tk] {
			r.report(diag.Error, rn.Line, "two requirements are renamed to %q", rn.To)
		}
		from[fk], to[tk] = true, true
	}
}

// contradictions reports a name in two sections that exclude each other.
func (r *deltaReport) contradictions(d *Delta, added, modified, removed map[string]bool, removedOrder []string) {
	for _, b := range d.Modified {
		key := normalizeRequirementName(b.Name)
		if removed[key] {
			r.report(diag.Error, b.Line, "requirement %q is under both ## MODIFIED and ## REMOVED Requirements", key)
		}
		if added[key] {
			r.report(diag.Error, b.Line, "requirement %q is under both ## MODIFIED and ## ADDED Requirements", key)
		}
	}
	for _, b := range d.Added {
		if key := normalizeRequirementName(b.Name); removed[key] {
			r.report(diag.Error, b.Line, "requirement %q is under both ## ADDED and ## REMOVED Requirements", key)
		}
	}
	for _, rn := range d.Renamed {
		fk, tk := normalizeRequirementName(rn.From), normalizeRequirementName(rn.To)
		if modified[fk] {
			r.report(diag.Error, rn.Line, "MODIFIED names %q, which RENAMED renames to %q; use the new name", rn.From, rn.To)
		}
		if added[tk] {
			r.report(diag.Error, rn.Line, "RENAMED target %q is also ADDED", rn.To)
		}
		for _, rk := range removedOrder {
			if foldRequirementName(rk) == foldRequirementName(fk) {
				r.report(diag.Error, rn.Line, "requirement %q is both RENAMED and REMOVED", rn.From)
				break
			}
		}
	}
}

package openspec

import (
	"fmt"
	"strings"

	"github.com/set-engine/set/engine/diag"
)

// Placeholder Purpose of a capability a change creates without a
// "## Purpose" of its own, word for word as `openspec archive` writes it.
const (
	purposePlaceholderPrefix = "TBD - created by archiving change "
	purposePlaceholderSuffix = ". Update Purpose after archive."
)

// applied is a living spec with one capability's delta applied.
type applied struct {
	// text is the new spec: lines end with "\n" (but see splitLiving for a
	// spec without a Requirements section), runs of blank lines outside
	// code fences are one blank line, and it ends with one newline.
	text string
	// The operations that changed something; all zero when the delta was
	// already applied (the spec is then left as it is).
	added, modified, removed, renamed int
	warnings                          diag.List
	// noBlocks reports that no requirement block is left.
	noBlocks bool
	// unaccounted is the content of the spec that is neither its title,
	// its Purpose, nor a part of a requirement block: what deleting the
	// file would lose without saying.
	unaccounted []string
}

func (a *applied) changed() bool { return a.added+a.modified+a.removed+a.renamed > 0 }

// orderedBlocks is a JavaScript Map from requirement key to block: setting
// an existing key keeps its place, a new key goes last.
type orderedBlocks struct {
	keys []string
	m    map[string]RequirementBlock
}

func (o *orderedBlocks) get(k string) (RequirementBlock, bool) { b, ok := o.m[k]; return b, ok }

func (o *orderedBlocks) set(k string, b RequirementBlock) {
	if _, ok := o.m[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.m[k] = b
}

func (o *orderedBlocks) del(k string) {
	if _, ok := o.m[k]; !ok {
		return
	}
	delete(o.m, k)
	for i, x := range o.keys {
		if x == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

// nearMiss returns the first key, other than except, whose name differs from
// name only in case or spacing.
func (o *orderedBlocks) nearMiss(name, except string) (RequirementBlock, bool) {
	f := foldRequirementName(name)
	for _, k := range o.keys {
		if k != except && foldRequirementName(k) == f {
			return o.m[k], true
		}
	}
	return RequirementBlock{}, false
}

// applyDelta folds d into a capability's living spec as `openspec archive`
// does (the CLI's buildUpdatedSpec). living is the spec's content; exists
// says whether the spec exists (a new one starts from a skeleton whose
// Purpose is the delta's, or a placeholder naming change). deltaFile and
// specFile name the two files in errors.
//
// Operations run in the order RENAMED, REMOVED, MODIFIED, ADDED, each
// matching requirement names exactly. A requirement keeps its place when
// renamed or modified; added ones go last. An operation that is already
// applied is not an error and changes nothing (REMOVED of an absent
// requirement, ADDED or MODIFIED identical to the spec's block, RENAMED
// whose target exists and source does not). It fails on the first problem:
// a delta that contradicts itself, a name that differs from an existing one
// only in case or spacing, a MODIFIED or RENAMED requirement that does not
// exist, an ADDED one that exists with other content, a MODIFIED block that
// drops a scenario the spec has, MODIFIED or RENAMED for a new capability,
// a spec whose structure is unsound (see structureIssues).
//
// It runs in the steps the CLI takes: the delta's self-consistency
// (checkConsistent), the spec it folds into (target), the four operations
// on that spec's requirement blocks (rename, remove, modify, add), and the
// new text (render).
func applyDelta(d *Delta, living string, exists bool, change, deltaFile, specFile string) (*applied, error) {
	at := foldFiles{delta: deltaFile, spec: specFile}
	if err := checkConsistent(d, at); err != nil {
		return nil, err
	}
	a := &applied{warnings: orphanWarnings(d, at)}
	target, err := a.target(d, living, exists, change, at)
	if err != nil {
		return nil, err
	}
	parts := splitLiving(target)
	blocks := newSpecBlocks(parts)
	for _, op := range []func(*Delta, *specBlocks, bool, foldFiles) error{a.rename, a.remove, a.modify, a.add} {
		if err := op(d, blocks, !exists, at); err != nil {
			return nil, err
		}
	}
	a.render(parts, blocks)
	return a, nil
}

// foldFiles names the two files of a fold in its diagnostics: the delta
// and the living spec.
type foldFiles struct{ delta, spec string }

// deltaErr is an error at line of the delta file.
func (f foldFiles) deltaErr(line int, format string, args ...any) error {
	return diag.Errorf(f.delta, line, format, args...)
}

// orphanWarnings says which requirements of d are outside its four delta
// sections, and so not applied.
func orphanWarnings(d *Delta, at foldFiles) diag.List {
	var ws diag.List
	for _, o := range d.orphans {
		where := "above the first ## section"
		if o.section != "" {
			where = "under \"## " + o.section + "\""
		}
		ws = append(ws, diag.Warningf(at.delta, o.line, "requirement %q is %s, which is not a delta section, so it was not applied", o.name, where))
	}
	return ws
}

// checkConsistent fails on the first way d contradicts itself: a FROM or
// TO line without its pair, a name twice in one section, a requirement
// renamed twice or two renamed to one name, a name in two sections that
// exclude each other, or no operation at all.
func checkConsistent(d *Delta, at foldFiles) error {
	if len(d.unpaired) > 0 {
		u := d.unpaired[0]
		return at.deltaErr(u.line, "RENAMED %s: %q has no matching line; write each rename as a FROM: line followed by its TO: line", u.side, u.name)
	}
	added, addedOrder, err := sectionNames("ADDED", blockNames(d.Added), at)
	if err != nil {
		return err
	}
	modified, modifiedOrder, err := sectionNames("MODIFIED", blockNames(d.Modified), at)
	if err != nil {
		return err
	}
	removed, removedOrder, err := sectionNames("REMOVED", d.Removed, at)
	if err != nil {
		return err
	}
	if err := checkRenames(d.Renamed, added, modified, removedOrder, at); err != nil {
		return err
	}
	for _, k := range modifiedOrder {
		if _, ok := removed[k]; ok {
			return at.deltaErr(modified[k], "requirement %q is under both ## MODIFIED and ## REMOVED Requirements", k)
		}
		if _, ok := added[k]; ok {
			return at.deltaErr(modified[k], "requirement %q is under both ## MODIFIED and ## ADDED Requirements", k)
		}
	}
	for _, k := range addedOrder {
		if _, ok := removed[k]; ok {
			return at.deltaErr(added[k], "requirement %q is under both ## ADDED and ## REMOVED Requirements", k)
		}
	}
	if d.ops() == 0 {
		return at.deltaErr(0, "no operations: want ## ADDED, ## MODIFIED, ## REMOVED or ## RENAMED Requirements with entries")
	}
	return nil
}

// sectionNames returns the normalized names of one section's entries with
// their lines, and in order; a name twice is an error.
func sectionNames(section string, lines []NamedLine, at foldFiles) (map[string]int, []string, error) {
	line, order := map[string]int{}, make([]string, 0, len(lines))
	for _, n := range lines {
		k := normalizeRequirementName(n.Name)
		if _, dup := line[k]; dup {
			return nil, nil, at.deltaErr(n.Line, "duplicate requirement %q under ## %s Requirements", n.Name, section)
		}
		line[k] = n.Line
		order = append(order, k)
	}
	return line, order, nil
}

// checkRenames fails on a requirement renamed twice, two renamed to one
// name, or a rename that another section contradicts.
func checkRenames(renames []Rename, added, modified map[string]int, removedOrder []string, at foldFiles) error {
	from, to := map[string]bool{}, map[string]bool{}
	for _, r := range renames {
		fk, tk := normalizeRequirementName(r.From), normalizeRequirementName(r.To)
		if from[fk] {
			return at.deltaErr(r.Line, "requirement %q is renamed twice", r.From)
		}
		if to[tk] {
			return at.deltaErr(r.Line, "two requirements are renamed to %q", r.To)
		}
		from[fk], to[tk] = true, true
	}
	for _, r := range renames {
		fk, tk := normalizeRequirementName(r.From), normalizeRequirementName(r.To)
		for _, rk := range removedOrder {
			if foldRequirementName(rk) == foldRequirementName(fk) {
				return at.deltaErr(r.Line, "requirement %q is both RENAMED and REMOVED", r.From)
			}
		}
		if _, ok := modified[fk]; ok {
			return at.deltaErr(r.Line, "MODIFIED names %q, which RENAMED renames to %q; use the new name", r.From, r.To)
		}
		if _, ok := added[tk]; ok {
			return at.deltaErr(r.Line, "RENAMED target %q is also ADDED", r.To)
		}
	}
	return nil
}

// target returns the spec d is folded into: living when it exists, else
// the skeleton of a new capability, whose Purpose is the delta's (or a
// placeholder naming change when the delta has none or one that would
// leave the spec unreadable). A new capability takes only ADDED
// requirements; a spec whose structure is unsound is refused.
func (a *applied) target(d *Delta, living string, exists bool, change string, at foldFiles) (string, error) {
	target := living
	if exists {
		if d.purpose != "" {
			if p := purposeSection(living); p != "" && p != d.purpose {
				a.warnings = append(a.warnings, diag.Warningf(at.delta, 0, "the delta's ## Purpose is ignored: %s already has one", at.spec))
			}
		}
	} else {
		if len(d.Modified) > 0 || len(d.Renamed) > 0 {
			op, name, line := "MODIFIED", "", 0
			if len(d.Modified) > 0 {
				name, line = d.Modified[0].Name, d.Modified[0].Line
			}
			if len(d.Renamed) > 0 && (line == 0 || d.Renamed[0].Line < line) {
				op, name, line = "RENAMED", d.Renamed[0].From, d.Renamed[0].Line
			}
			return "", at.deltaErr(line, "%s does not exist; a new capability takes only ADDED requirements (%s %q)", at.spec, op, name)
		}
		if len(d.Removed) > 0 {
			a.warnings = append(a.warnings, diag.Warningf(at.delta, 0, "%d REMOVED requirement(s) ignored: %s is new", len(d.Removed), at.spec))
		}
		target = specSkeleton(d.Capability, change, d.purpose)
		if d.purpose != "" && readableOverview(target) == "" {
			target = specSkeleton(d.Capability, change, "")
			a.warnings = append(a.warnings, diag.Warningf(at.delta, 0, "the delta's ## Purpose is ignored (it would leave the new spec unreadable); the placeholder Purpose is used"))
		}
	}
	if issues := structureIssues(at.spec, target); len(issues) > 0 {
		return "", issues[0]
	}
	return target, nil
}

// specBlocks is the requirement blocks of the spec being folded into, as
// the operations leave them: by normalized name in JavaScript Map order,
// and the name each block the spec had now goes by (original, which a
// rename updates), so that a requirement keeps its place.
type specBlocks struct {
	*orderedBlocks
	original []string
}

func newSpecBlocks(parts livingParts) *specBlocks {
	s := &specBlocks{orderedBlocks: &orderedBlocks{m: map[string]RequirementBlock{}}, original: make([]string, len(parts.blocks))}
	for i, b := range parts.blocks {
		k := normalizeRequirementName(b.Name)
		s.set(k, b)
		s.original[i] = k
	}
	return s
}

// rename applies d's RENAMED requirements. One whose target exists and
// source does not is already applied, unless the source is only misspelt.
func (a *applied) rename(d *Delta, s *specBlocks, _ bool, at foldFiles) error {
	for _, r := range d.Renamed {
		fk, tk := normalizeRequirementName(r.From), normalizeRequirementName(r.To)
		if _, ok := s.get(fk); !ok {
			if _, ok := s.get(tk); ok {
				if near, ok := s.nearMiss(fk, tk); ok {
					return at.deltaErr(r.Line, "RENAMED requirement %q does not exist in %s, but %q does (line %d); write the name exactly as the spec does", r.From, at.spec, near.Name, near.Line)
				}
				continue
			}
			return at.deltaErr(r.Line, "RENAMED requirement %q does not exist in %s", r.From, at.spec)
		}
		if b, ok := s.get(tk); ok {
			return at.deltaErr(r.Line, "cannot rename %q to %q: %q already exists in %s (line %d)", r.From, r.To, r.To, at.spec, b.Line)
		}
		if near, ok := s.nearMiss(tk, fk); ok {
			return at.deltaErr(r.Line, "cannot rename %q to %q: %q in %s (line %d) differs from it only in case or spacing", r.From, r.To, near.Name, at.spec, near.Line)
		}
		b, _ := s.get(fk)
		lines := strings.Split(b.Raw, "\n")
		lines[0] = "### Requirement: " + tk
		s.del(fk)
		s.set(tk, RequirementBlock{Name: tk, Raw: strings.Join(lines, "\n"), Line: b.Line})
		for i, k := range s.original {
			if k == fk {
				s.original[i] = tk
				break
			}
		}
		a.renamed++
	}
	return nil
}

// remove applies d's REMOVED requirements. One the spec does not have is
// already removed (with a warning, unless the spec is new), unless its
// name is only misspelt.
func (a *applied) remove(d *Delta, s *specBlocks, isNew bool, at foldFiles) error {
	for _, r := range d.Removed {
		k := normalizeRequirementName(r.Name)
		if _, ok := s.get(k); !ok {
			if !isNew {
				if near, ok := s.nearMiss(k, ""); ok {
					return at.deltaErr(r.Line, "REMOVED requirement %q does not exist in %s, but %q does (line %d); write the name exactly as the spec does", r.Name, at.spec, near.Name, near.Line)
				}
				a.warnings = append(a.warnings, diag.Warningf(at.spec, 0, "REMOVED requirement %q is not in the spec; treated as already removed", r.Name))
			}
			continue
		}
		s.del(k)
		a.removed++
	}
	return nil
}

// modify applies d's MODIFIED requirements: each must exist, be named by
// its own header, and keep every scenario of the spec's block.
func (a *applied) modify(d *Delta, s *specBlocks, _ bool, at foldFiles) error {
	for _, m := range d.Modified {
		k := normalizeRequirementName(m.Name)
		cur, ok := s.get(k)
		if !ok {
			return at.deltaErr(m.Line, "MODIFIED requirement %q does not exist in %s", m.Name, at.spec)
		}
		h := reRequirementHeader.FindStringSubmatch(strings.Split(m.Raw, "\n")[0])
		if h == nil || normalizeRequirementName(h[1]) != k {
			return at.deltaErr(m.Line, "MODIFIED requirement %q: its header does not name it", m.Name)
		}
		if missing := missingScenarios(cur.Raw, m.Raw); len(missing) > 0 {
			return at.deltaErr(m.Line, "MODIFIED requirement %q drops the scenario(s) %s that %s has; a MODIFIED block replaces the whole requirement, so copy them into it", m.Name, quoteAll(missing), at.spec)
		}
		if normalizeBlockRaw(cur.Raw) != normalizeBlockRaw(m.Raw) {
			a.modified++
		}
		s.set(k, m)
	}
	return nil
}

// add applies d's ADDED requirements. One the spec has with the same
// content is already added; one with other content, or whose name
// differs from an existing one only in case or spacing, is an error.
func (a *applied) add(d *Delta, s *specBlocks, _ bool, at foldFiles) error {
	for _, ad := range d.Added {
		k := normalizeRequirementName(ad.Name)
		if cur, ok := s.get(k); ok {
			if normalizeBlockRaw(cur.Raw) == normalizeBlockRaw(ad.Raw) {
				continue // already added
			}
			return at.deltaErr(ad.Line, "ADDED requirement %q already exists in %s (line %d) with other content", ad.Name, at.spec, cur.Line)
		}
		if near, ok := s.nearMiss(k, ""); ok {
			return at.deltaErr(ad.Line, "ADDED requirement %q differs from %q in %s (line %d) only in case or spacing; use MODIFIED with that exact name, or choose a distinct name", ad.Name, near.Name, at.spec, near.Line)
		}
		s.set(k, ad)
		a.added++
	}
	return nil
}

// render writes the folded spec into a: the requirements keep their
// order, new ones follow, and the parts around them stay.
func (a *applied) render(parts livingParts, s *specBlocks) {
	var kept []string
	seen := map[string]bool{}
	for _, k := range s.original {
		if b, ok := s.get(k); ok {
			kept = append(kept, b.Raw)
			seen[k] = true
		}
	}
	for _, k := range s.keys {
		if !seen[k] {
			kept = append(kept, s.m[k].Raw)
		}
	}
	var body []string
	if jsTrim(parts.preamble) != "" {
		body = append(body, jsTrimEnd(parts.preamble))
	}
	body = append(body, kept...)
	var doc []string
	for _, part := range []string{jsTrimEnd(parts.before), parts.headerLine, jsTrimEnd(strings.Join(body, "\n\n")), jsTrim(parts.after)} {
		if part != "" {
			doc = append(doc, part)
		}
	}
	a.text = jsTrimEnd(collapseBlankRuns(strings.Join(doc, "\n\n"))) + "\n"
	a.noBlocks = len(kept) == 0
	a.unaccounted = unaccountedContent(parts)
}

// specSkeleton is the spec of a new capability before its requirements.
func specSkeleton(capability, change, purpose string) string {
	body := jsTrim(purpose)
	if body == "" {
		body = purposePlaceholderPrefix + change + purposePlaceholderSuffix
	}
	return "# " + capability + " Specification\n\n## Purpose\n" + body + "\n\n## Requirements\n"
}

// readableOverview returns the Purpose of a new spec's skeleton, "" when a
// delta's Purpose would make the spec unreadable: an HTML comment, a
// heading or an open code fence in it.
func readableOverview(skeleton string) string {
	if strings.Contains(skeleton, "<!--") || len(structureIssues("", skeleton)) > 0 {
		return ""
	}
	return jsTrim(overview(skeleton))
}

// collapseBlankRuns makes every run of empty lines outside code fences one
// empty line. A line of spaces is not empty.
func collapseBlankRuns(s string) string {
	lines := strings.Split(s, "\n")
	mask := fenceMask(lines)
	kept := lines[:0:0]
	run := 0
	for i, l := range lines {
		switch {
		case mask[i]:
			run = 0
		case l == "":
			run++
			if run > 1 {
				continue
			}
		default:
			run = 0
		}
		kept = append(kept, l)
	}
	return strings.Join(kept, "\n")
}

func normalizeBlockRaw(raw string) string { return jsTrim(normalizeEOL(raw)) }

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// blockNames are the names of blocks, with their header lines.
func blockNames(blocks []RequirementBlock) []NamedLine {
	out := make([]NamedLine, len(blocks))
	for i, b := range blocks {
		out[i] = NamedLine{Name: b.Name, Line: b.Line}
	}
	return out
}

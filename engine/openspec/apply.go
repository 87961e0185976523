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
	warnings                          []string
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
func applyDelta(d *Delta, living string, exists bool, change, deltaFile, specFile string) (*applied, error) {
	a := &applied{}
	derr := func(line int, format string, args ...any) error {
		return diag.Errorf(deltaFile, line, format, args...)
	}
	serr := func(line int, format string, args ...any) error {
		return diag.Errorf(specFile, line, format, args...)
	}
	if len(d.unpaired) > 0 {
		u := d.unpaired[0]
		return nil, derr(u.line, "RENAMED %s: %q has no matching line; write each rename as a FROM: line followed by its TO: line", u.side, u.name)
	}
	for _, o := range d.orphans {
		where := "above the first ## section"
		if o.section != "" {
			where = "under \"## " + o.section + "\""
		}
		a.warnings = append(a.warnings, fmt.Sprintf("%s:%d: requirement %q is %s, which is not a delta section, so it was not applied", deltaFile, o.line, o.name, where))
	}

	// The delta must not contradict itself.
	names := func(section string, lines []NamedLine) (map[string]int, []string, error) {
		at, order := map[string]int{}, make([]string, 0, len(lines))
		for _, n := range lines {
			k := normalizeRequirementName(n.Name)
			if _, dup := at[k]; dup {
				return nil, nil, derr(n.Line, "duplicate requirement %q under ## %s Requirements", n.Name, section)
			}
			at[k] = n.Line
			order = append(order, k)
		}
		return at, order, nil
	}
	added, addedOrder, err := names("ADDED", blockNames(d.Added))
	if err != nil {
		return nil, err
	}
	modified, modifiedOrder, err := names("MODIFIED", blockNames(d.Modified))
	if err != nil {
		return nil, err
	}
	removed, removedOrder, err := names("REMOVED", d.Removed)
	if err != nil {
		return nil, err
	}
	from, to := map[string]bool{}, map[string]bool{}
	for _, r := range d.Renamed {
		fk, tk := normalizeRequirementName(r.From), normalizeRequirementName(r.To)
		if from[fk] {
			return nil, derr(r.Line, "requirement %q is renamed twice", r.From)
		}
		if to[tk] {
			return nil, derr(r.Line, "two requirements are renamed to %q", r.To)
		}
		from[fk], to[tk] = true, true
	}
	for _, r := range d.Renamed {
		fk, tk := normalizeRequirementName(r.From), normalizeRequirementName(r.To)
		for _, rk := range removedOrder {
			if foldRequirementName(rk) == foldRequirementName(fk) {
				return nil, derr(r.Line, "requirement %q is both RENAMED and REMOVED", r.From)
			}
		}
		if _, ok := modified[fk]; ok {
			return nil, derr(r.Line, "MODIFIED names %q, which RENAMED renames to %q; use the new name", r.From, r.To)
		}
		if _, ok := added[tk]; ok {
			return nil, derr(r.Line, "RENAMED target %q is also ADDED", r.To)
		}
	}
	for _, k := range modifiedOrder {
		if _, ok := removed[k]; ok {
			return nil, derr(modified[k], "requirement %q is under both ## MODIFIED and ## REMOVED Requirements", k)
		}
		if _, ok := added[k]; ok {
			return nil, derr(modified[k], "requirement %q is under both ## MODIFIED and ## ADDED Requirements", k)
		}
	}
	for _, k := range addedOrder {
		if _, ok := removed[k]; ok {
			return nil, derr(added[k], "requirement %q is under both ## ADDED and ## REMOVED Requirements", k)
		}
	}
	if d.ops() == 0 {
		return nil, derr(0, "no operations: want ## ADDED, ## MODIFIED, ## REMOVED or ## RENAMED Requirements with entries")
	}

	target := living
	isNew := !exists
	if exists {
		if d.purpose != "" {
			if p := purposeSection(living); p != "" && p != d.purpose {
				a.warnings = append(a.warnings, fmt.Sprintf("%s: the delta's ## Purpose is ignored: %s already has one", deltaFile, specFile))
			}
		}
	} else {
		if len(d.Modified) > 0 || len(d.Renamed) > 0 {
			return nil, serr(0, "does not exist; a new capability takes only ADDED requirements, not MODIFIED or RENAMED")
		}
		if len(d.Removed) > 0 {
			a.warnings = append(a.warnings, fmt.Sprintf("%s: %d REMOVED requirement(s) ignored: %s is new", deltaFile, len(d.Removed), specFile))
		}
		target = specSkeleton(d.Capability, change, d.purpose)
		if d.purpose != "" && readableOverview(target) == "" {
			target = specSkeleton(d.Capability, change, "")
			a.warnings = append(a.warnings, fmt.Sprintf("%s: the delta's ## Purpose is ignored (it would leave the new spec unreadable); the placeholder Purpose is used", deltaFile))
		}
	}
	if issues := structureIssues(specFile, target); len(issues) > 0 {
		return nil, issues[0]
	}

	parts := splitLiving(target)
	blocks := &orderedBlocks{m: map[string]RequirementBlock{}}
	order := make([]string, len(parts.blocks))
	for i, b := range parts.blocks {
		k := normalizeRequirementName(b.Name)
		blocks.set(k, b)
		order[i] = k
	}
	lineOf := func(k string) int { b, _ := blocks.get(k); return b.Line }

	for _, r := range d.Renamed {
		fk, tk := normalizeRequirementName(r.From), normalizeRequirementName(r.To)
		if _, ok := blocks.get(fk); !ok {
			if _, ok := blocks.get(tk); ok {
				// Already renamed, unless the source is only misspelt.
				if near, ok := blocks.nearMiss(fk, tk); ok {
					return nil, serr(near.Line, "RENAMED requirement %q does not exist, but %q does; write the name exactly as the spec does", r.From, near.Name)
				}
				continue
			}
			return nil, serr(0, "RENAMED requirement %q does not exist", r.From)
		}
		if _, ok := blocks.get(tk); ok {
			return nil, serr(lineOf(tk), "cannot rename %q to %q: %q already exists", r.From, r.To, r.To)
		}
		if near, ok := blocks.nearMiss(tk, fk); ok {
			return nil, serr(near.Line, "cannot rename %q to %q: %q differs from it only in case or spacing", r.From, r.To, near.Name)
		}
		b, _ := blocks.get(fk)
		lines := strings.Split(b.Raw, "\n")
		lines[0] = "### Requirement: " + tk
		blocks.del(fk)
		blocks.set(tk, RequirementBlock{Name: tk, Raw: strings.Join(lines, "\n"), Line: b.Line})
		for i, k := range order {
			if k == fk {
				order[i] = tk
				break
			}
		}
		a.renamed++
	}
	for _, r := range d.Removed {
		k := normalizeRequirementName(r.Name)
		if _, ok := blocks.get(k); !ok {
			if !isNew {
				if near, ok := blocks.nearMiss(k, ""); ok {
					return nil, serr(near.Line, "REMOVED requirement %q does not exist, but %q does; write the name exactly as the spec does", r.Name, near.Name)
				}
				a.warnings = append(a.warnings, fmt.Sprintf("%s: REMOVED requirement %q is not in the spec; treated as already removed", specFile, r.Name))
			}
			continue
		}
		blocks.del(k)
		a.removed++
	}
	for _, m := range d.Modified {
		k := normalizeRequirementName(m.Name)
		cur, ok := blocks.get(k)
		if !ok {
			return nil, serr(0, "MODIFIED requirement %q does not exist", m.Name)
		}
		h := reRequirementHeader.FindStringSubmatch(strings.Split(m.Raw, "\n")[0])
		if h == nil || normalizeRequirementName(h[1]) != k {
			return nil, derr(m.Line, "MODIFIED requirement %q: its header does not name it", m.Name)
		}
		if missing := missingScenarios(cur.Raw, m.Raw); len(missing) > 0 {
			return nil, derr(m.Line, "MODIFIED requirement %q drops the scenario(s) %s that %s has; a MODIFIED block replaces the whole requirement, so copy them into it", m.Name, quoteAll(missing), specFile)
		}
		if normalizeBlockRaw(cur.Raw) != normalizeBlockRaw(m.Raw) {
			a.modified++
		}
		blocks.set(k, m)
	}
	for _, ad := range d.Added {
		k := normalizeRequirementName(ad.Name)
		if cur, ok := blocks.get(k); ok {
			if normalizeBlockRaw(cur.Raw) == normalizeBlockRaw(ad.Raw) {
				continue // already added
			}
			return nil, serr(cur.Line, "ADDED requirement %q already exists (with other content)", ad.Name)
		}
		if near, ok := blocks.nearMiss(k, ""); ok {
			return nil, serr(near.Line, "ADDED requirement %q differs from the existing %q only in case or spacing; use MODIFIED with that exact name, or choose a distinct name", ad.Name, near.Name)
		}
		blocks.set(k, ad)
		a.added++
	}

	// Requirements keep their order; new ones follow.
	var kept []string
	seen := map[string]bool{}
	for i := range parts.blocks {
		if b, ok := blocks.get(order[i]); ok {
			kept = append(kept, b.Raw)
			seen[order[i]] = true
		}
	}
	for _, k := range blocks.keys {
		if !seen[k] {
			kept = append(kept, blocks.m[k].Raw)
		}
	}
	var body []string
	if jsTrim(parts.preamble) != "" {
		body = append(body, jsTrimEnd(parts.preamble))
	}
	body = append(body, kept...)
	var doc []string
	for _, s := range []string{jsTrimEnd(parts.before), parts.headerLine, jsTrimEnd(strings.Join(body, "\n\n")), jsTrim(parts.after)} {
		if s != "" {
			doc = append(doc, s)
		}
	}
	a.text = jsTrimEnd(collapseBlankRuns(strings.Join(doc, "\n\n"))) + "\n"
	a.noBlocks = len(kept) == 0
	a.unaccounted = unaccountedContent(parts)
	return a, nil
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

package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/openspec"
)

// ChangeRequirement is one requirement of a change, as its OpenSpec change
// folder carries it: where it stands against the living specs, and what it
// says (the spec's requirement; for a removed one, the living spec's).
type ChangeRequirement struct {
	Standing
	Requirement Requirement
}

// ChangeFolderInput is what a change's OpenSpec folder is written from.
type ChangeFolderInput struct {
	// Change is the change's name: the folder is openspec/changes/<Change>.
	Change string
	// SpecFiles are the spec files the requirements come from, named in
	// the proposal.
	SpecFiles []string
	// Scope lists the paths the change may touch; empty means any.
	Scope []string
	// Requirements are the change's requirements, in its order. Only
	// pending ones (new, changed, removed) make the delta.
	Requirements []ChangeRequirement
	// Purposes gives, by capability, the Purpose of a capability that has
	// no living spec yet: its delta carries it as "## Purpose", which the
	// archive puts in the living spec it creates.
	Purposes map[string]string
}

// ChangeFolder renders a change's OpenSpec change folder, as set writes it
// at dispatch: file path relative to openspec/changes/<change> → content.
//
//   - proposal.md: "## Why" (the spec asks for what main does not
//     implement), "## What Changes" (one line per requirement and
//     operation) and "## Scope".
//   - specs/<capability>/spec.md, one per capability the change touches:
//     "## ADDED Requirements" for new requirements, "## MODIFIED
//     Requirements" for changed ones whose text or scenarios changed,
//     "## REMOVED Requirements" for removed ones, "## RENAMED
//     Requirements" for changed ones whose title changed (renamed from
//     their living name, then modified under the new one when more
//     changed); blocks as FormatRequirement writes them. A capability
//     without a living spec gets a "## Purpose" first (Purposes).
//   - tasks.md: one numbered checkbox task per requirement, traced to it
//     by "[REQ: <ID>]", and the checks the change must pass.
//
// The agent implements against the folder; it may refine tasks.md and
// proposal.md, never the delta specs (the spec_verify gate compares them
// with what ChangeFolder writes). The same input gives the same bytes.
func ChangeFolder(in ChangeFolderInput) map[string][]byte {
	files := map[string][]byte{
		"proposal.md": []byte(proposal(in)),
		"tasks.md":    []byte(tasks(in)),
	}
	for capability, text := range deltas(in) {
		files[DeltaPath(capability)] = []byte(text)
	}
	return files
}

// DeltaPath is the path of a capability's delta spec in a change folder.
func DeltaPath(capability string) string { return "specs/" + capability + "/spec.md" }

// ChangeDir is the change folder of a change, relative to the project root.
func ChangeDir(change string) string { return "openspec/changes/" + change }

// pending returns the change's requirements that make its delta.
func (in ChangeFolderInput) pending() []ChangeRequirement {
	var out []ChangeRequirement
	for _, r := range in.Requirements {
		if r.Status.Pending() {
			out = append(out, r)
		}
	}
	return out
}

func proposal(in ChangeFolderInput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n## Why\n", in.Change)
	counts := map[Status]int{}
	for _, r := range in.pending() {
		counts[r.Status]++
	}
	var asks []string
	for _, s := range []Status{New, Changed, Removed} {
		if n := counts[s]; n > 0 {
			asks = append(asks, fmt.Sprintf("%d %s", n, s))
		}
	}
	from := "The spec"
	if len(in.SpecFiles) > 0 {
		from = "The spec (" + strings.Join(in.SpecFiles, ", ") + ")"
	}
	fmt.Fprintf(&b, "%s and the living specs on main (openspec/specs) differ: %s %s. This change brings main in line with the spec.\n",
		from, english.List(asks), map[bool]string{true: "requirement", false: "requirements"}[len(in.pending()) == 1])
	b.WriteString("\n## What Changes\n")
	for _, r := range in.pending() {
		name := OpenSpecName(r.Requirement)
		switch {
		case r.Status == New:
			fmt.Fprintf(&b, "- ADDED `%s` (%s)\n", name, r.Capability)
		case r.Status == Removed:
			fmt.Fprintf(&b, "- REMOVED `%s` (%s)\n", r.Living, r.Capability)
		default:
			if renamed(r) {
				fmt.Fprintf(&b, "- RENAMED `%s` to `%s` (%s)\n", r.Living, name, r.Capability)
			}
			if modified(r) {
				fmt.Fprintf(&b, "- MODIFIED `%s` (%s): its %s changed\n", name, r.Capability, english.List(slices.DeleteFunc(slices.Clone(r.Differs), func(d string) bool { return d == "title" })))
			}
		}
	}
	b.WriteString("\n## Scope\n")
	if len(in.Scope) == 0 {
		b.WriteString("Any file of the repository.\n")
	} else {
		b.WriteString("Only files matching these paths (globs, ** spans directories):\n")
		for _, s := range in.Scope {
			fmt.Fprintf(&b, "- `%s`\n", s)
		}
	}
	return b.String()
}

// renamed reports whether a changed requirement's name changed.
func renamed(r ChangeRequirement) bool {
	return r.Status == Changed && r.Living != OpenSpecName(r.Requirement)
}

// modified reports whether a changed requirement's text or scenarios
// changed (not only its title).
func modified(r ChangeRequirement) bool {
	return r.Status == Changed && slices.ContainsFunc(r.Differs, func(d string) bool { return d != "title" })
}

// deltas renders the delta spec of every capability the change touches.
func deltas(in ChangeFolderInput) map[string]string {
	type sections struct{ added, modified, removed, renamed []string }
	by := map[string]*sections{}
	var order []string
	for _, r := range in.pending() {
		s := by[r.Capability]
		if s == nil {
			s = &sections{}
			by[r.Capability] = s
			order = append(order, r.Capability)
		}
		switch {
		case r.Status == New:
			s.added = append(s.added, FormatRequirement(r.Requirement))
		case r.Status == Removed:
			s.removed = append(s.removed, "### Requirement: "+r.Living)
		default:
			if renamed(r) {
				s.renamed = append(s.renamed, fmt.Sprintf("- FROM: `### Requirement: %s`\n- TO: `### Requirement: %s`", r.Living, OpenSpecName(r.Requirement)))
			}
			if modified(r) {
				s.modified = append(s.modified, FormatRequirement(r.Requirement))
			}
		}
	}
	out := map[string]string{}
	for _, capability := range order {
		s := by[capability]
		var parts []string
		if p := strings.TrimSpace(in.Purposes[capability]); p != "" && len(s.added) > 0 {
			parts = append(parts, "## Purpose\n"+p)
		}
		for _, sec := range []struct {
			title  string
			blocks []string
		}{{"ADDED", s.added}, {"MODIFIED", s.modified}, {"REMOVED", s.removed}, {"RENAMED", s.renamed}} {
			if len(sec.blocks) > 0 {
				parts = append(parts, "## "+sec.title+" Requirements\n\n"+strings.Join(sec.blocks, "\n\n"))
			}
		}
		out[capability] = strings.Join(parts, "\n\n") + "\n"
	}
	return out
}

func tasks(in ChangeFolderInput) string {
	var b strings.Builder
	b.WriteString("# Tasks\n\n## 1. Requirements\n\n")
	n := 0
	for _, r := range in.pending() {
		n++
		req := r.Requirement
		var task string
		switch {
		case r.Status == New:
			task = fmt.Sprintf("Implement %s: %s, with a test for each of its scenarios", req.ID, req.Title)
		case r.Status == Removed:
			task = fmt.Sprintf("Remove %s: %s, its behaviour and the tests that name it", req.ID, req.Title)
		default:
			task = fmt.Sprintf("Bring %s: %s in line with its changed %s, and its tests", req.ID, req.Title, english.List(r.Differs))
		}
		fmt.Fprintf(&b, "- [ ] 1.%d %s [REQ: %s]\n", n, task, req.ID)
	}
	b.WriteString("\n## 2. Checks\n\n")
	b.WriteString("- [ ] 2.1 Every test that covers a requirement names its ID\n")
	b.WriteString("- [ ] 2.2 The delta specs under specs/ are left as set wrote them\n")
	return b.String()
}

// WriteChangeFolder writes the files of a change folder (see ChangeFolder)
// to openspec/changes/<change> under root, replacing whatever was there:
// the folder then holds exactly files. A symbolic link on the way, or in
// the folder, is refused (see openspec.CheckNoLinks) before anything is written.
func WriteChangeFolder(root, change string, files map[string][]byte) error {
	if err := openspec.CheckChangeName(change); err != nil {
		return err
	}
	return replaceDir(root, ChangeDir(change), files)
}

// WriteDeltaSpecs replaces the delta specs of the change folder
// openspec/changes/<change> under root with the specs/ files of files (a
// folder as ChangeFolder renders it): its specs/ directory then holds
// exactly those, and every other file of the folder (proposal.md,
// tasks.md, what the agent added) stays as it is. Links are refused as
// WriteChangeFolder refuses them.
func WriteDeltaSpecs(root, change string, files map[string][]byte) error {
	if err := openspec.CheckChangeName(change); err != nil {
		return err
	}
	specs := map[string][]byte{}
	for name, data := range files {
		if rest, ok := strings.CutPrefix(name, "specs/"); ok {
			specs[rest] = data
		}
	}
	return replaceDir(root, ChangeDir(change)+"/specs", specs)
}

// replaceDir makes the directory rel (a slash path under root) hold
// exactly files (paths relative to it), refusing symbolic links on the
// way and in it before anything is written.
func replaceDir(root, rel string, files map[string][]byte) error {
	if err := openspec.CheckNoLinks(root, rel); err != nil {
		return err
	}
	dir := filepath.Join(root, filepath.FromSlash(rel))
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			r, _ := filepath.Rel(root, p)
			return openspec.LinkRefused(filepath.ToSlash(r))
		}
		return nil
	}); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !fs.ValidPath(name) || path.Clean(name) != name {
			return fmt.Errorf("change folder file %q is not a plain relative path", name)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

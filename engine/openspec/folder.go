package openspec

import (
	"time"

	"github.com/set-engine/set/engine/diag"
)

// This file reads the change folders people write with OpenSpec
// (`openspec new change`, /opsx:propose, or by hand) as set plans from
// them: every folder under openspec/changes/ but archive/, its delta specs
// read and checked as `openspec validate --strict` and `openspec archive`
// would, and whether the folders, folded in a given order, are ones
// OpenSpec would archive.

// Tree is a project's openspec/ directory as files: slash paths relative
// to the project root ("openspec/specs/links/spec.md") to their bytes, as
// git.FilesAt(main, "openspec") returns them. Every position a function
// of this file reports is a file of the tree at a line.
type Tree map[string][]byte

// Folder is one open change folder, openspec/changes/<Name>/.
type Folder struct {
	// Name is the folder's name, the change's.
	Name string
	// Deltas are its delta specs, sorted by capability; DeltaFiles gives
	// each capability's file (root-relative slash path).
	Deltas     []*Delta
	DeltaFiles map[string]string
	// DependsOn are the names its .openspec.yaml lists under depends_on
	// (a field set documents and OpenSpec keeps without reading), each
	// with its line in that file; MetadataFile is that file's path, ""
	// when the folder has none.
	DependsOn    []NamedLine
	MetadataFile string
	// Proposal, Design and Tasks are proposal.md, design.md and tasks.md,
	// nil when the folder has no such file.
	Proposal, Design, Tasks []byte
	// Files are every file of the folder, keyed by their slash path
	// relative to the folder (".openspec.yaml", "specs/links/spec.md").
	Files map[string][]byte
}

// OpenChanges reads every change folder of t under openspec/changes/
// (archive/ and dot directories aside), sorted by name. A folder OpenSpec
// would refuse to validate (`openspec validate <name> --strict`: a delta
// without operations, a requirement without a scenario or without SHALL
// or MUST, a malformed .openspec.yaml, a name that is not kebab-case) is
// left out and its problems reported at their file and line; a
// depends_on that is not a list of change names is one such problem.
func OpenChanges(t Tree) ([]*Folder, diag.List) {
	panic("contract: engine/openspec part")
}

// CheckArchivable folds the folders of t into a copy of t's living specs
// in order, as `openspec archive <name> --yes` run on each in turn would,
// and returns, by folder name, why OpenSpec would refuse one: a MODIFIED,
// REMOVED or RENAMED requirement that does not exist by then, or a
// capability that does not exist yet, at the delta's file and line. A
// refused folder is skipped, so that every refusal is reported; an
// archivable one has no entry. t is never changed.
func CheckArchivable(t Tree, order []string, now time.Time) map[string]diag.List {
	panic("contract: engine/openspec part")
}

// NormalizeName is the name OpenSpec matches requirements by: trimmed of
// JavaScript white space. Two names name the same requirement when their
// NormalizeName are equal.
func NormalizeName(name string) string { return normalizeRequirementName(name) }

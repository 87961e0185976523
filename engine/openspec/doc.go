// Package openspec reimplements, byte for byte, what set needs of the
// OpenSpec CLI (@fission-ai/openspec, OpenSpecVersion): `openspec archive
// <change> --yes`, which folds a change's delta specs into the living
// specs and moves the change under openspec/changes/archive/
// (ArchiveChange), and the rules `openspec validate --strict` holds a main
// spec and a change's deltas to (CheckMainSpec, and validateDelta as the
// archive checks each delta).
//
// The CLI is written in JavaScript and reads markdown its own way, so this
// package does too: JavaScript's white space, trim and case folding
// (jstext.go), fences opened by any ``` or ~~~ line, headings never
// indented, HTML comments not special. Its files follow the CLI's steps:
// reading a change directory and its metadata (changedir.go,
// metadata.go), reading a delta (delta.go) and a living spec (living.go),
// folding one into the other (apply.go), deciding what a capability left
// without requirements loses (retire.go), and writing every spec or none
// (archive.go, undo.go). The change folders people write with OpenSpec
// are read as `openspec validate --strict` reads them, and checked to be
// archivable in a given order (folder.go), and their tasks.md counted as
// the CLI counts tasks (tasks.go). The differential tests (TestArchiveDiff,
// TestArchivableDiff, TestOpenChangesDiff, TestTaskProgressDiff) run the
// real CLI beside it and require the same trees, refusals and counts.
//
// OpenSpec names a requirement by its title; it knows nothing of set's
// requirement IDs, of set's spec files, or of where a requirement stands
// against main. Those belong to engine/spec, which imports this package
// and not the reverse: set's parser holds the main specs it reads to
// CheckMainSpec, and set writes change folders that ArchiveChange folds.
// A problem found in a spec or a delta is a diag.Diagnostic at its file
// and line.
package openspec

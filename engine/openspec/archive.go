package openspec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/set-engine/set/engine/diag"
)

// ErrNoDelta is returned by ArchiveChange for a change that has no
// openspec/changes/<change> directory.
var ErrNoDelta = errors.New("the change has no OpenSpec delta")

// OpenSpecVersion is the version of the OpenSpec CLI
// (@fission-ai/openspec) whose `openspec archive CHANGE --yes` ArchiveChange
// reproduces byte for byte; the differential tests run that version.
const OpenSpecVersion = "1.13.2"

// ArchiveResult is what ArchiveChange did.
type ArchiveResult struct {
	// Capabilities whose living spec openspec/specs/<capability>/spec.md
	// was created or updated, sorted. A capability may be a path
	// ("search/full-text").
	Capabilities []string
	// Retired lists the capabilities whose living spec was deleted, sorted.
	Retired []string
	// Specs is what happened to each capability the change has a delta
	// for, sorted by capability.
	Specs []SpecUpdate
	// ArchiveDir is where the change directory now is, a slash path
	// relative to root: "openspec/changes/archive/<date>-<change>", or
	// ".../archive/<change>" when the change's name starts with a date.
	ArchiveDir string
	// Warnings are what the archive did not apply or ignored, in the order
	// found, each at the root-relative file (and line) it concerns.
	Warnings diag.List
}

// SpecUpdate is the outcome for one capability.
type SpecUpdate struct {
	Capability string
	// Path is the living spec, a slash path relative to the root.
	Path string
	// Action is "created", "updated", "retired", or "unchanged" (every
	// operation was already applied).
	Action                            string
	Added, Modified, Removed, Renamed int
}

// ArchiveError is the refusal of ArchiveChange to archive a change: the
// tree is left as it was. Its message lists every problem, one per line.
type ArchiveError struct {
	Problems []error
}

func (e *ArchiveError) Error() string { return errors.Join(e.Problems...).Error() }

// Unwrap returns the problems, for errors.As and errors.Is.
func (e *ArchiveError) Unwrap() []error { return e.Problems }

func refuse(errs ...error) error { return &ArchiveError{Problems: errs} }

// reDatedName is a change name that already starts with a date, which the
// archive does not prefix again.
var reDatedName = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}-`)

// ArchiveName is the directory name under openspec/changes/archive/ that
// archiving change on day now gives it: "<yyyy-mm-dd>-<change>", or the
// change's own name when it starts with a date already.
func ArchiveName(change string, now time.Time) string {
	if reDatedName.MatchString(change) {
		return change
	}
	return now.Format("2006-01-02") + "-" + change
}

// ArchivedAs reports whether dir is a name ArchiveName gives change on
// some day.
func ArchivedAs(dir, change string) bool {
	if reDatedName.MatchString(change) {
		return dir == change
	}
	date, ok := strings.CutSuffix(dir, "-"+change)
	if !ok {
		return false
	}
	_, err := time.Parse("2006-01-02", date)
	return err == nil
}

// ArchiveChange archives the change openspec/changes/<change> under root as
// `openspec archive <change> --yes` of OpenSpec 1.13.2 does (OpenSpecVersion):
// it folds every delta spec of the change (openspec/changes/<change>/specs/
// <capability>/spec.md, where a capability may nest: specs/search/full-text/
// spec.md) into the living spec openspec/specs/<capability>/spec.md, and
// moves the change directory to openspec/changes/archive/ArchiveName(change,
// now). The resulting files are byte for byte those the CLI writes, and it
// refuses what the CLI refuses; see applyDelta for how one delta folds, and
// checkSpec for what a written spec must be.
//
// Before anything is written, the change is validated as the CLI validates
// it when it has delta specs (every delta readable, with operations,
// requirements with text and scenarios, no contradictions; no delta file
// outside a capability's spec.md; skip_specs honoured), every delta is
// applied in memory, every resulting spec is checked, and the archive
// directory is checked not to exist; a refusal is an *ArchiveError joining
// every problem found (Diagnostics naming root-relative files) and leaves
// the tree untouched. A capability whose last requirement the change
// removes is retired (its spec deleted, and the directories that leaves
// empty, up to openspec/specs) only if the change's .openspec.yaml declares
// `retire_capabilities: true`; otherwise the archive is refused. A change
// without delta specs (e.g. documentation only) is archived with no
// capability.
//
// Each spec file is written atomically (a temporary file renamed over it),
// keeping its mode and its CRLF line endings when it had them; the
// directory move comes last; if a write or the move fails, the files
// already written are restored and the directories created removed. No
// symbolic link is followed: one on any path the archive reads or writes is
// an error. If openspec/changes/<change> does not exist ArchiveChange
// returns (nil, ErrNoDelta). ArchiveChange does not run git: the caller
// commits the result.
func ArchiveChange(root, change string, now time.Time) (*ArchiveResult, error) {
	return archiveChange(root, change, now, os.Rename)
}

// archiveChange is ArchiveChange with the directory move as a parameter,
// so that a test can make it fail after the specs were written.
func archiveChange(root, change string, now time.Time, renameDir func(from, to string) error) (*ArchiveResult, error) {
	if err := CheckChangeName(change); err != nil {
		return nil, err
	}
	changeRel := "openspec/changes/" + change
	changeDir := filepath.Join(root, filepath.FromSlash(changeRel))
	if err := CheckNoLinks(root, changeRel); err != nil {
		return nil, err
	}
	switch fi, err := os.Lstat(changeDir); {
	case errors.Is(err, fs.ErrNotExist):
		return nil, ErrNoDelta
	case err != nil:
		return nil, err
	case !fi.IsDir():
		return nil, fmt.Errorf("%s is not a directory", changeRel)
	}
	if nested := namespaceFolder(changeDir); len(nested) > 0 {
		return nil, refuse(fmt.Errorf("%s is not a change: it is a folder holding the change(s) %s; a change must be a directory directly under openspec/changes/", changeRel, strings.Join(nested, ", ")))
	}
	archiveRel := "openspec/changes/archive/" + ArchiveName(change, now)
	archiveDir := filepath.Join(root, filepath.FromSlash(archiveRel))
	if err := CheckNoLinks(root, archiveRel); err != nil {
		return nil, err
	}

	scan, err := scanDeltas(root, changeRel)
	if err != nil {
		return nil, err
	}
	links := scan.links
	for _, d := range scan.deltas {
		if err := CheckNoLinks(root, "openspec/specs/"+d.capability+"/spec.md"); err != nil {
			links = append(links, err)
		}
	}
	if len(links) > 0 {
		return nil, refuse(links...)
	}
	retire, err := readMarker(root, changeRel, "retire_capabilities")
	if err != nil {
		return nil, err
	}
	problems, err := validateChange(root, changeRel, scan, false)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, refuse(problems...)
	}
	if err := checkAbsent(archiveDir, archiveRel); err != nil {
		return nil, refuse(err)
	}
	plan, warnings, problems, err := planArchive(root, change, scan, retire.declared)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, refuse(problems...)
	}

	res := &ArchiveResult{ArchiveDir: archiveRel, Warnings: warnings}
	var u undo
	for _, w := range plan {
		res.Specs = append(res.Specs, w.update)
		switch w.update.Action {
		case "created", "updated":
			if err := u.writeFile(w.path, w.data, w.old, w.mode); err != nil {
				return nil, u.rollback(fmt.Errorf("writing %s: %w", w.update.Path, err))
			}
			res.Capabilities = append(res.Capabilities, w.update.Capability)
		case "retired":
			if err := u.retire(w.path, w.old, w.mode, filepath.Join(root, "openspec", "specs")); err != nil {
				return nil, u.rollback(fmt.Errorf("retiring %s: %w", w.update.Path, err))
			}
			res.Retired = append(res.Retired, w.update.Capability)
		}
	}
	if err := u.mkdirAll(filepath.Dir(archiveDir)); err != nil {
		return nil, u.rollback(err)
	}
	// Checked again: the move must never replace a directory (rename(2)
	// replaces an empty one).
	if err := checkAbsent(archiveDir, archiveRel); err != nil {
		return nil, u.rollback(err)
	}
	if err := renameDir(changeDir, archiveDir); err != nil {
		return nil, u.rollback(fmt.Errorf("moving %s to %s: %w", changeRel, archiveRel, err))
	}
	return res, nil
}

// CheckChangeName rejects names that are not one plain path element, and
// "archive", the directory archived changes live in.
func CheckChangeName(change string) error {
	if change == "" || change == "." || change == ".." || change == "archive" ||
		strings.ContainsAny(change, `/\`) || change != strings.TrimSpace(change) {
		return fmt.Errorf("invalid change name %q", change)
	}
	return nil
}

// RefusedPathError is a path of a change folder set neither reads nor
// writes through, because a change put it there: a symbolic link (which
// could lead outside the project), or a file where a directory belongs.
// Refusing one is the change's failure, not the run's.
type RefusedPathError struct {
	Path   string // slash-separated, relative to the project
	Reason string // "is a symbolic link; …"
}

func (e *RefusedPathError) Error() string { return e.Path + " " + e.Reason }

// LinkRefused is the RefusedPathError of a symbolic link at rel (slash-
// separated, relative to the project).
func LinkRefused(rel string) error {
	return &RefusedPathError{Path: rel, Reason: "is a symbolic link; set does not follow links a change adds"}
}

// CheckNoLinks fails when rel (a slash path relative to root), or any
// directory on the way to it under root, is a symbolic link, or when one of
// those directories is not a directory (a RefusedPathError). A change
// could commit such a link to make the archive read or write outside the
// project; root itself may be a link. A missing component ends the check: nothing below it exists.
func CheckNoLinks(root, rel string) error {
	parts := strings.Split(rel, "/")
	p := root
	for i, part := range parts {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			return LinkRefused(path.Join(parts[:i+1]...))
		case i < len(parts)-1 && !fi.IsDir():
			return &RefusedPathError{Path: path.Join(parts[:i+1]...), Reason: "is not a directory"}
		}
	}
	return nil
}

// checkAbsent fails unless nothing exists at p (shown as rel).
func checkAbsent(p, rel string) error {
	_, err := os.Lstat(p)
	switch {
	case err == nil:
		return fmt.Errorf("archive directory %s already exists; not overwriting it", rel)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	default:
		return fmt.Errorf("checking archive directory %s: %w", rel, err)
	}
}

// specWrite is what the archive does to one living spec.
type specWrite struct {
	update SpecUpdate
	path   string
	data   []byte
	old    []byte // previous content; nil when the file is new
	mode   fs.FileMode
}

// planArchive applies every delta in memory and checks every spec it would
// write, without writing anything. It returns one specWrite per capability
// in capability order, the warnings, and the problems that refuse the
// archive.
func planArchive(root, change string, scan *deltaScan, retireDeclared bool) ([]specWrite, diag.List, []error, error) {
	var (
		plan     []specWrite
		warnings diag.List
		problems []error
	)
	for _, d := range scan.deltas {
		w := specWrite{update: SpecUpdate{Capability: d.capability, Path: "openspec/specs/" + d.capability + "/spec.md"}, mode: 0o644}
		w.path = filepath.Join(root, filepath.FromSlash(w.update.Path))
		if err := CheckNoLinks(root, w.update.Path); err != nil {
			return nil, nil, nil, err
		}
		exists := false
		switch fi, err := os.Lstat(w.path); {
		case err == nil && !fi.Mode().IsRegular():
			return nil, nil, nil, fmt.Errorf("%s is not a regular file", w.update.Path)
		case err == nil:
			exists, w.mode = true, fi.Mode().Perm()
			if w.old, err = os.ReadFile(w.path); err != nil {
				return nil, nil, nil, err
			}
		case !errors.Is(err, fs.ErrNotExist):
			return nil, nil, nil, err
		}
		living := decodeUTF8(w.old)
		delta := parseDelta(d.capability, d.src)
		a, err := applyDelta(delta, living, exists, change, d.rel, w.update.Path)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		warnings = append(warnings, a.warnings...)
		w.update.Added, w.update.Modified, w.update.Removed, w.update.Renamed = a.added, a.modified, a.removed, a.renamed
		errs, onlyEmpty := checkSpec(w.update.Path, a.text)
		retirable := retireDeclared && a.noBlocks && len(a.unaccounted) == 0 && onlyEmpty
		switch {
		case retirable && !exists:
			w.update.Action = "unchanged" // nothing to write or delete
		case retirable && a.removed > 0:
			w.update.Action = "retired"
		case len(errs) > 0:
			for _, e := range errs {
				problems = append(problems, e)
			}
			if exists && a.removed > 0 && a.noBlocks && onlyEmpty && !retireDeclared && len(a.unaccounted) == 0 {
				line := 0
				if len(delta.Removed) > 0 {
					line = delta.Removed[0].Line
				}
				problems = append(problems, diag.Errorf(d.rel, line, "the change removes the last requirement of %s (%s); to retire the capability and delete its spec, add `retire_capabilities: true` to the change's %s (beside its `schema:`)", d.capability, w.update.Path, metadataFile))
			}
			continue
		case !a.changed():
			w.update.Action = "unchanged" // already applied: the file is not rewritten
		default:
			w.update.Action = "updated"
			if !exists {
				w.update.Action = "created"
			}
			text := a.text
			if exists {
				text = matchLineEnding(text, living)
			}
			w.data = []byte(text)
		}
		plan = append(plan, w)
	}
	return plan, warnings, problems, nil
}

// matchLineEnding gives text (lines ending in "\n") the line ending that
// dominates original: CRLF when it has at least as many CRLF as lone LF.
func matchLineEnding(text, original string) string {
	crlf := strings.Count(original, "\r\n")
	lf := strings.Count(original, "\n") - crlf
	if crlf == 0 && lf == 0 || crlf < lf {
		return text
	}
	return strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\n", "\r\n")
}

package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// ErrNoDelta is returned by ArchiveChange for a change that has no
// openspec/changes/<change> directory.
var ErrNoDelta = errors.New("the change has no OpenSpec delta")

// ArchiveResult is what ArchiveChange did.
type ArchiveResult struct {
	// Capabilities whose living spec openspec/specs/<capability>/spec.md
	// was created or updated, sorted.
	Capabilities []string
	// ArchiveDir is where the change directory now is, a slash path
	// relative to root: "openspec/changes/archive/<date>-<change>".
	ArchiveDir string
}

// ArchiveChange folds every capability delta of the change,
// openspec/changes/<change>/specs/<capability>/spec.md under root, into the
// living spec openspec/specs/<capability>/spec.md (see ApplyDelta), then
// moves openspec/changes/<change> to
// openspec/changes/archive/<now as 2006-01-02>-<change>.
//
// It is all-or-nothing. Every delta is parsed and applied in memory, and the
// archive directory is checked not to exist, before anything is written; the
// error then joins every problem found (each delta or spec problem is a
// Diagnostic naming its root-relative file). Each spec file is written
// atomically (a temporary file renamed over it) and the directory move comes
// last; if a write or the move fails, the files already written are restored
// and directories created are removed.
//
// A change directory without deltas (e.g. a documentation-only change) is
// still archived, with no capability. Capability directories whose name
// starts with "." or that hold no spec.md are ignored, and so is a delta with
// no operation. If openspec/changes/<change> does not exist ArchiveChange
// returns (nil, ErrNoDelta). ArchiveChange does not run git: the caller
// commits the result.
func ArchiveChange(root, change string, now time.Time) (*ArchiveResult, error) {
	return archiveChange(root, change, now, os.Rename)
}

// archiveChange is ArchiveChange with the directory move as a parameter,
// so that a test can make it fail after the specs were written.
func archiveChange(root, change string, now time.Time, renameDir func(from, to string) error) (*ArchiveResult, error) {
	if err := checkChangeName(change); err != nil {
		return nil, err
	}
	changeRel := "openspec/changes/" + change
	changeDir := filepath.Join(root, filepath.FromSlash(changeRel))
	if err := checkNoLinks(root, changeRel); err != nil {
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
	archiveRel := "openspec/changes/archive/" + now.Format("2006-01-02") + "-" + change
	archiveDir := filepath.Join(root, filepath.FromSlash(archiveRel))
	if err := checkNoLinks(root, archiveRel); err != nil {
		return nil, err
	}
	if err := checkAbsent(archiveDir, archiveRel); err != nil {
		return nil, err
	}

	writes, errs := planArchive(root, changeRel, change)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	res := &ArchiveResult{ArchiveDir: archiveRel}
	var u undo
	for _, w := range writes {
		if err := u.writeFile(w.path, w.data, w.old, w.mode); err != nil {
			return nil, u.rollback(fmt.Errorf("writing %s: %w", w.rel, err))
		}
		res.Capabilities = append(res.Capabilities, w.capability)
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

// checkChangeName rejects names that are not one plain path element, and
// "archive", the directory archived changes live in.
func checkChangeName(change string) error {
	if change == "" || change == "." || change == ".." || change == "archive" ||
		strings.ContainsAny(change, `/\`) || change != strings.TrimSpace(change) {
		return fmt.Errorf("invalid change name %q", change)
	}
	return nil
}

// checkNoLinks fails when rel (a slash path relative to root), or any
// directory on the way to it under root, is a symbolic link, or when one of
// those directories is not a directory. A change could commit such a link
// to make the archive read or write outside the project; root itself may
// be a link. A missing component ends the check: nothing below it exists.
func checkNoLinks(root, rel string) error {
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
			return fmt.Errorf("%s is a symbolic link; set does not follow links a change adds", path.Join(parts[:i+1]...))
		case i < len(parts)-1 && !fi.IsDir():
			return fmt.Errorf("%s is not a directory", path.Join(parts[:i+1]...))
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

// specWrite is one living spec to write.
type specWrite struct {
	capability string
	rel        string // slash path relative to root
	path       string
	data       []byte
	old        []byte // previous content; nil when the file is new
	mode       fs.FileMode
}

// planArchive reads, parses and applies every delta of the change without
// writing anything, and returns the files to write in capability order.
func planArchive(root, changeRel, change string) ([]specWrite, []error) {
	specsDir := filepath.Join(root, filepath.FromSlash(changeRel), "specs")
	entries, err := os.ReadDir(specsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{err}
	}
	var (
		writes []specWrite
		errs   []error
	)
	for _, e := range entries { // sorted by name
		capability := e.Name()
		if strings.HasPrefix(capability, ".") {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			errs = append(errs, checkNoLinks(root, path.Join(changeRel, "specs", capability)))
			continue
		}
		if !e.IsDir() {
			continue
		}
		deltaRel := path.Join(changeRel, "specs", capability, "spec.md")
		if err := checkNoLinks(root, deltaRel); err != nil {
			errs = append(errs, err)
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(deltaRel)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		d, err := parseDelta(deltaRel, capability, src)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if d.empty() {
			continue
		}
		w := specWrite{capability: capability, rel: path.Join("openspec/specs", capability, "spec.md"), mode: 0o644}
		w.path = filepath.Join(root, filepath.FromSlash(w.rel))
		if err := checkNoLinks(root, w.rel); err != nil {
			errs = append(errs, err)
			continue
		}
		switch fi, err := os.Lstat(w.path); {
		case err == nil && !fi.Mode().IsRegular():
			errs = append(errs, fmt.Errorf("%s is not a regular file", w.rel))
			continue
		case err == nil:
			w.mode = fi.Mode().Perm()
			if w.old, err = os.ReadFile(w.path); err != nil {
				errs = append(errs, err)
				continue
			}
		case !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, err)
			continue
		}
		w.data, err = ApplyDelta(w.old, d, change)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if w.old != nil && bytes.Equal(w.data, w.old) {
			continue
		}
		writes = append(writes, w)
	}
	return writes, errs
}

// undo records how to revert the filesystem changes made so far.
type undo struct {
	steps []func() error
}

// rollback reverts every recorded change, newest first, and returns err
// joined with any failure to revert.
func (u *undo) rollback(err error) error {
	errs := []error{err}
	for i := len(u.steps) - 1; i >= 0; i-- {
		if e := u.steps[i](); e != nil {
			errs = append(errs, fmt.Errorf("rolling back: %w", e))
		}
	}
	u.steps = nil
	return errors.Join(errs...)
}

// mkdirAll creates dir and its missing parents, recording each one created.
func (u *undo) mkdirAll(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		if err := os.Mkdir(d, 0o755); err != nil {
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			return err
		}
		u.steps = append(u.steps, func() error { return os.Remove(d) })
	}
	return nil
}

// writeFile writes data to p atomically, creating its directory, and records
// how to restore old (nil: remove the file).
func (u *undo) writeFile(p string, data, old []byte, mode fs.FileMode) error {
	if err := u.mkdirAll(filepath.Dir(p)); err != nil {
		return err
	}
	if err := writeFileAtomic(p, data, mode); err != nil {
		return err
	}
	if old == nil {
		u.steps = append(u.steps, func() error { return os.Remove(p) })
	} else {
		u.steps = append(u.steps, func() error { return writeFileAtomic(p, old, mode) })
	}
	return nil
}

// writeFileAtomic writes data to a temporary file in p's directory, syncs it
// and renames it over p, so readers see the old or the new content, never a
// mix.
func writeFileAtomic(p string, data []byte, mode fs.FileMode) (err error) {
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

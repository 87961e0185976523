package openspec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

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

// retire deletes the spec p (whose content is old) and then each directory
// above it that this leaves empty, up to but not including specsRoot,
// recording how to restore them.
func (u *undo) retire(p string, old []byte, mode fs.FileMode, specsRoot string) error {
	if err := os.Remove(p); err != nil {
		return err
	}
	u.steps = append(u.steps, func() error { return writeFileAtomic(p, old, mode) })
	for dir := filepath.Dir(p); dir != specsRoot && strings.HasPrefix(dir, specsRoot+string(filepath.Separator)); dir = filepath.Dir(dir) {
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) > 0 {
			return nil
		}
		fi, err := os.Lstat(dir)
		if err != nil {
			return nil
		}
		if err := os.Remove(dir); err != nil {
			return nil
		}
		u.steps = append(u.steps, func() error { return os.Mkdir(dir, fi.Mode().Perm()) })
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

package spec

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Load reads and parses the given files (paths relative to root,
// slash-separated), then checks across files as ParseAll does. The error is
// only for I/O: it joins one *fs.PathError per unreadable file, whose path is
// the name as given (e.g. "open docs/spec.md: no such file or directory").
// Problems in the specs themselves are Diagnostics of the returned Spec.
func Load(root string, files []string, opts Options) (*Spec, error) {
	contents := make(map[string][]byte, len(files))
	var errs []error
	for _, f := range files {
		p := filepath.FromSlash(f)
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = &fs.PathError{Op: pe.Op, Path: f, Err: pe.Err}
			}
			errs = append(errs, err)
			continue
		}
		contents[f] = b
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return ParseAll(files, contents, opts), nil
}

// Lookup returns the first requirement with the given ID.
func (s *Spec) Lookup(id string) (Requirement, bool) {
	if s == nil {
		return Requirement{}, false
	}
	for _, r := range s.Requirements {
		if r.ID == id {
			return r, true
		}
	}
	return Requirement{}, false
}

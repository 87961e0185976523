package load

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"cuelang.org/go/mod/modconfig"
	"cuelang.org/go/mod/modfile"
	"cuelang.org/go/mod/module"
)

// Registry serves one module from an embedded file tree, at one version,
// and hands every other module to a fallback registry (CUE_REGISTRY, as the
// cue tool does). The embedded module is never fetched from the fallback:
// asked for another version of it, the registry serves the embedded tree
// (Load refuses a project that requires a newer version and warns about
// an older one before loading), so what a project is checked against is
// always the binary's own bytes. The fallback is built on first use, so a project that only
// imports the embedded module never touches the network or its settings.
//
// The embedded tree is extracted once into a content-addressed directory
// below the cache directory: the same bytes always land in the same place,
// and an extraction is moved into place only when complete.
type Registry struct {
	version  module.Version
	tree     fs.FS
	cacheDir string

	extractOnce sync.Once
	extracted   string
	extractErr  error

	modFileOnce sync.Once
	modFile     *modfile.File
	modFileErr  error

	fallbackOnce sync.Once
	fallback     modconfig.Registry
	fallbackErr  error
	env          []string
}

// NewRegistry returns a registry that serves tree as modulePath at version.
// tree must hold cue.mod/module.cue at its root. cacheDir is where the tree
// is extracted; env is the environment the fallback registry reads
// (CUE_REGISTRY, CUE_CACHE_DIR, …), nil meaning the process environment.
func NewRegistry(modulePath, version string, tree fs.FS, cacheDir string, env []string) (*Registry, error) {
	mv, err := module.NewVersion(modulePath, version)
	if err != nil {
		return nil, fmt.Errorf("embedded module: %w", err)
	}
	return &Registry{version: mv, tree: tree, cacheDir: cacheDir, env: env}, nil
}

var _ modconfig.Registry = (*Registry)(nil)

// ModFile implements modconfig.Registry.
func (r *Registry) ModFile(ctx context.Context, mv module.Version) (*modfile.File, error) {
	if mv.Path() != r.version.Path() {
		fb, err := r.fallbackRegistry()
		if err != nil {
			return nil, err
		}
		return fb.ModFile(ctx, mv)
	}
	r.modFileOnce.Do(func() {
		data, err := fs.ReadFile(r.tree, "cue.mod/module.cue")
		if err != nil {
			r.modFileErr = fmt.Errorf("embedded module: %w", err)
			return
		}
		r.modFile, r.modFileErr = modfile.Parse(data, "cue.mod/module.cue")
	})
	return r.modFile, r.modFileErr
}

// Fetch implements modconfig.Registry.
func (r *Registry) Fetch(ctx context.Context, mv module.Version) (module.SourceLoc, error) {
	if mv.Path() != r.version.Path() {
		fb, err := r.fallbackRegistry()
		if err != nil {
			return module.SourceLoc{}, err
		}
		return fb.Fetch(ctx, mv)
	}
	dir, err := r.Dir()
	if err != nil {
		return module.SourceLoc{}, err
	}
	return module.SourceLoc{FS: module.OSDirFS(dir), Dir: "."}, nil
}

// ModuleVersions implements modconfig.Registry. For the embedded module's
// path it lists the embedded version alone.
func (r *Registry) ModuleVersions(ctx context.Context, mpath string) ([]string, error) {
	if mpath != r.version.Path() {
		fb, err := r.fallbackRegistry()
		if err != nil {
			return nil, err
		}
		return fb.ModuleVersions(ctx, mpath)
	}
	return []string{r.version.Version()}, nil
}

func (r *Registry) fallbackRegistry() (modconfig.Registry, error) {
	r.fallbackOnce.Do(func() {
		r.fallback, r.fallbackErr = modconfig.NewRegistry(&modconfig.Config{Env: r.env, ClientType: "set"})
	})
	return r.fallback, r.fallbackErr
}

// Dir extracts the embedded tree (once) and returns its directory.
func (r *Registry) Dir() (string, error) {
	r.extractOnce.Do(func() {
		r.extracted, r.extractErr = extract(r.tree, r.cacheDir)
	})
	return r.extracted, r.extractErr
}

// extract writes tree below cacheDir/set-modules/<hash> and returns that
// directory. The hash covers every path and byte of the tree, so an existing
// directory of that name is complete and identical: it is reused as is.
func extract(tree fs.FS, cacheDir string) (string, error) {
	var paths []string
	err := fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("embedded module: %w", err)
	}
	sort.Strings(paths)
	h := sha256.New()
	contents := make([][]byte, len(paths))
	for i, p := range paths {
		data, err := fs.ReadFile(tree, p)
		if err != nil {
			return "", fmt.Errorf("embedded module: %w", err)
		}
		contents[i] = data
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(data))
		h.Write(data)
	}
	final := filepath.Join(cacheDir, "set-modules", hex.EncodeToString(h.Sum(nil))[:32])
	if _, err := os.Stat(final); err == nil {
		return final, nil
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", fmt.Errorf("module cache: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(final), ".extract-*")
	if err != nil {
		return "", fmt.Errorf("module cache: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	for i, p := range paths {
		dst := filepath.Join(tmp, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", fmt.Errorf("module cache: %w", err)
		}
		if err := writeSynced(dst, contents[i]); err != nil {
			return "", fmt.Errorf("module cache: %w", err)
		}
	}
	if err := os.Rename(tmp, final); err != nil {
		// Another process may have extracted the same tree first.
		if _, statErr := os.Stat(final); statErr == nil {
			return final, nil
		}
		return "", fmt.Errorf("module cache: %w", err)
	}
	return final, nil
}

// writeSynced writes a read-only file and syncs it, so that a directory
// renamed into place after its files is complete even after a crash.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o444)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

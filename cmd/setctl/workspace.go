package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/config/decode"
	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/load"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/spec"
)

// workspace is a loaded project: its configuration and its spec.
type workspace struct {
	root     string
	cfg      *config.Project
	spec     *spec.Spec
	specData map[string][]byte // spec file (slash path relative to root) → content
}

// loadWorkspace loads the project that dir is in (load.FindRoot: dir or
// the nearest parent with set.cue and cue.mod) and the spec files it
// names. Configuration errors come back as CUE errors (print them with
// load.Details); spec errors as one error listing every diagnostic.
func loadWorkspace(dir string) (*workspace, error) {
	root, err := load.FindRoot(dir)
	if err != nil {
		return &workspace{root: dir}, err
	}
	cfg, root, err := decode.Load(root, load.Options{})
	if err != nil {
		return &workspace{root: root}, err
	}
	ws := &workspace{root: root, cfg: cfg, specData: map[string][]byte{}}
	names, err := expandSpecs(root, cfg)
	if err != nil {
		return ws, err
	}
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			return ws, cfg.FieldError([]string{"spec"}, "spec file %s: %v", name, errNotExist(err))
		}
		ws.specData[name] = data
	}
	ws.spec = spec.ParseAll(names, ws.specData, spec.Options{Strict: cfg.Strict})
	return ws, ws.spec.Err()
}

// expandSpecs resolves the spec entries of set.cue (paths or globs,
// relative to the root) to a sorted, duplicate-free list of files.
func expandSpecs(root string, cfg *config.Project) ([]string, error) {
	seen := map[string]bool{}
	var names []string
	for _, pattern := range cfg.Spec {
		matches := []string{pattern}
		if strings.ContainsAny(pattern, "*?[") {
			var err error
			matches, err = filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
			if err != nil {
				return nil, cfg.FieldError([]string{"spec"}, "spec pattern %q: %v", pattern, err)
			}
			if len(matches) == 0 {
				return nil, cfg.FieldError([]string{"spec"}, "spec pattern %q matches no file", pattern)
			}
			for i, m := range matches {
				rel, _ := filepath.Rel(root, m)
				matches[i] = filepath.ToSlash(rel)
			}
		}
		for _, m := range matches {
			if !seen[m] {
				seen[m] = true
				names = append(names, m)
			}
		}
	}
	return names, nil
}

func errNotExist(err error) error {
	if os.IsNotExist(err) {
		return fmt.Errorf("no such file")
	}
	return err
}

// makePlan plans the workspace with its configured strategy and
// fingerprints the inputs.
func (ws *workspace) makePlan(ctx context.Context) (*plan.Plan, error) {
	fp, err := plan.NewFingerprint(ws.cfg, ws.specData, git.Head(ctx, ws.root))
	if err != nil {
		return nil, err
	}
	return plan.Make(ws.cfg, ws.spec, fp)
}

// printWarnings presents the spec's warnings.
func (ws *workspace) printWarnings(e *env, cmd string) {
	if ws.spec == nil {
		return
	}
	var list diag.List
	for _, w := range ws.spec.Warnings() {
		list = append(list, w.Diagnostics()...)
	}
	e.present(cmd, list, ws.root)
}

// report presents err (load.Diagnostics lists it), with positions
// relative to the project, and returns exitError.
func (ws *workspace) report(e *env, cmd string, err error) int {
	e.present(cmd, load.Diagnostics(err), ws.root)
	return exitError
}

package main

import (
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/load"
	"github.com/set-engine/set/engine/project"
	"github.com/set-engine/set/engine/spec"
)

// workspace is a loaded project (project.Project) under the names the
// commands use.
type workspace struct {
	proj     *project.Project
	root     string
	cfg      *config.Project
	spec     *spec.Spec
	specData map[string][]byte // spec file (slash path relative to root) → content
}

// workspaceOf is p as a workspace.
func workspaceOf(p *project.Project) *workspace {
	return &workspace{proj: p, root: p.Root, cfg: p.Config, spec: p.Spec, specData: p.SpecData}
}

// loadWorkspace loads the project that dir is in (project.Load).
func loadWorkspace(dir string) (*workspace, error) {
	p, err := project.Load(dir)
	return workspaceOf(p), err
}

// report presents err (load.Diagnostics lists it), with positions
// relative to the project, and returns exitError.
func (ws *workspace) report(e *env, cmd string, err error) int {
	e.present(cmd, load.Diagnostics(err), ws.root)
	return exitError
}

// Package project prepares a project for the commands that read it: it
// loads set.cue and the spec, refuses what this build cannot run, makes
// (or reads, and refuses when stale) the plan, builds its execution graph,
// chooses the agents and checks that the gate runners answer. vet, plan,
// apply and doctor all go through Prepare, so that what vet accepts apply
// runs; the CLI keeps only its flags, its questions and its views.
package project

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/config/decode"
	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/llm"
	"github.com/set-engine/set/engine/load"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/plan/planner"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/spec"
)

// Project is a loaded project: its configuration and its spec.
type Project struct {
	// Root is the project directory, which diagnostics are shown relative
	// to. It is set even when loading fails (to the directory asked for
	// when no project was found).
	Root   string
	Config *config.Project
	Spec   *spec.Spec
	// SpecData maps every spec file (slash path relative to Root) to its
	// content.
	SpecData map[string][]byte
	// ConfigFiles are the project's CUE files that set.cue's load read
	// (load.Instance.Inputs), slash paths relative to Root.
	ConfigFiles []string
	// FolderFiles are, for the openspec strategy, the files of the
	// checkout's open change folders (openspec/changes/<name>/, see
	// plan.OpenFolderOf), slash paths relative to Root, sorted: the run
	// plans from those folders as main holds them, so they are inputs
	// (Inputs). Empty for the other strategies. The openspec strategy
	// takes no spec: its Spec has no requirement and SpecData no file.
	FolderFiles []string

	// loadWarnings are load.Instance's: the set module version the project
	// requires, when older than the embedded one.
	loadWarnings diag.List
}

// Load loads the project that dir is in (load.FindRoot: dir or the
// nearest parent with set.cue and cue.mod) and the spec files it names,
// or, for the openspec strategy, lists the files of its open change
// folders (FolderFiles).
// Configuration errors come back as CUE errors, spec errors as the
// errors.Join of their diagnostics; load.Diagnostics lists both. The
// Project is never nil; its Spec is set once the spec files were read,
// with its warnings, even when it has errors.
func Load(dir string) (*Project, error) {
	root, err := load.FindRoot(dir)
	if err != nil {
		return &Project{Root: dir}, err
	}
	lp, err := load.Load(root, load.Options{})
	if err != nil {
		return &Project{Root: root}, err
	}
	root = lp.Root
	cfg, err := decode.Project(lp)
	if err != nil {
		return &Project{Root: root, loadWarnings: lp.Warnings}, err
	}
	p := &Project{Root: root, Config: cfg, SpecData: map[string][]byte{}, ConfigFiles: lp.Inputs(), loadWarnings: lp.Warnings}
	if cfg.Planner.FromFolders() {
		if p.FolderFiles, err = folderFiles(root); err != nil {
			return p, err
		}
	}
	names, err := expandSpecs(root, cfg)
	if err != nil {
		return p, err
	}
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			return p, cfg.FieldError([]string{"spec"}, "spec file %s: %v", name, errNotExist(err))
		}
		p.SpecData[name] = data
	}
	p.Spec = spec.ParseAll(names, p.SpecData, spec.Options{Strict: cfg.Strict})
	return p, p.Spec.Err()
}

// expandSpecs resolves the spec entries of set.cue (paths or globs,
// relative to the root) to a sorted, duplicate-free list of files, each
// inside the project (see insideRoot).
func expandSpecs(root string, cfg *config.Project) ([]string, error) {
	seen := map[string]bool{}
	var names []string
	for _, pattern := range cfg.Spec {
		if err := insideRoot(root, pattern); err != nil {
			return nil, cfg.FieldError([]string{"spec"}, "spec %q: %v", pattern, err)
		}
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
			if err := insideRoot(root, m); err != nil {
				return nil, cfg.FieldError([]string{"spec"}, "spec file %s: %v", m, err)
			}
			if !seen[m] {
				seen[m] = true
				names = append(names, m)
			}
		}
	}
	return names, nil
}

// insideRoot fails unless name, a slash path relative to root, stays in
// the project: it is not absolute, does not climb out with "..", and, when
// it exists, does not resolve (through symbolic links) to a file outside
// root. set reads only the project's own files.
func insideRoot(root, name string) error {
	if path.IsAbs(name) || filepath.IsAbs(filepath.FromSlash(name)) {
		return errors.New("an absolute path; spec paths are relative to the project root")
	}
	if c := path.Clean(name); c == ".." || strings.HasPrefix(c, "../") {
		return errors.New("outside the project; spec files must be under the project root")
	}
	resolved, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		return nil // a glob, or a missing file (reported when it is read)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(realRoot, resolved); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("a link to %s, outside the project; spec files must be under the project root", resolved)
	}
	return nil
}

func errNotExist(err error) error {
	if os.IsNotExist(err) {
		return fmt.Errorf("no such file")
	}
	return err
}

// Warnings are the warnings of loading set.cue, then the spec's, as
// diagnostics.
func (p *Project) Warnings() diag.List {
	out := slices.Clone(p.loadWarnings)
	if p.Spec == nil {
		return out
	}
	return append(out, p.Spec.Warnings()...)
}

// MakePlan plans what the spec asks for beyond what main implements (see
// Record) with the configured strategy (or takes its explicit plan), and
// fingerprints the inputs. A strategy that asks a model asks the plan
// role's (llm.ForProject), unless the run's plan (.set/plan.json) was made
// by a model from the same configuration and spec files: then its
// changes are the plan's (plan.Reuse), so that the run continues them.
func (p *Project) MakePlan(ctx context.Context) (*plan.Plan, error) {
	return p.makePlan(ctx, true)
}

// PlanWithoutModel is MakePlan where planning would ask a model: it
// returns a *plan.NeedsModelError instead (setctl vet and doctor ask no
// model).
func (p *Project) PlanWithoutModel(ctx context.Context) (*plan.Plan, error) {
	return p.makePlan(ctx, false)
}

func (p *Project) makePlan(ctx context.Context, ask bool) (*plan.Plan, error) {
	rec, fp, err := p.fingerprint(ctx)
	if err != nil {
		return nil, err
	}
	var m plan.Modeler
	if p.Config.Plan == nil && p.Config.Planner.NeedsModel() {
		var model plan.Modeler
		if ask {
			if model, err = p.Planner(ctx); err != nil {
				return nil, err
			}
		}
		prev, _ := plan.Read(rundir.New(p.Root).Plan()) // none, or unreadable: plan anew
		m = plan.Reuse(prev, fp, model)
	}
	return plan.MakeWith(ctx, p.Config, p.Spec, rec, fp, m)
}

// fingerprint reads what main records (Record) and fingerprints the
// inputs of a plan.
func (p *Project) fingerprint(ctx context.Context) (plan.Record, plan.Fingerprint, error) {
	rec, living, err := p.Record(ctx)
	if err != nil {
		return rec, plan.Fingerprint{}, err
	}
	fp, err := plan.NewFingerprint(p.Config, p.SpecData, git.Head(ctx, p.Root), living, rec.OpenSpec)
	return rec, fp, err
}

// Planner is the model planner of the project (engine/plan/planner): the
// plan role's route (llm.ForProject), answers checked against the
// schema's #PlannedChanges, main's tree as the files. A replan asks it
// for changes covering some requirements beside the run's changes
// (plan.Modeler's Changes with those IDs and the existing changes).
func (p *Project) Planner(ctx context.Context) (plan.Modeler, error) {
	check, err := load.NewChecker(load.PlannedChangesDef)
	if err != nil {
		return nil, err
	}
	var files []string
	if git.InRepository(ctx, p.Root) && git.BranchExists(ctx, p.Root, p.Config.MainBranch) {
		if files, err = git.TreeFiles(ctx, p.Root, "refs/heads/"+p.Config.MainBranch); err != nil {
			return nil, err
		}
	}
	return planner.New(planner.Options{
		Project:     p.Config.Name,
		Conventions: p.Config.ConventionList(),
		Learnings:   p.Config.PlannerLearnings(),
		Planner:     p.Config.Planner,
		LLM:         llm.ForProject(p.Config, p.Root),
		Files:       planner.FilesOf(files),
		Check:       check.Check,
	})
}

// Options say how far Prepare goes.
type Options struct {
	// PlanFile, when set, is a plan saved by `setctl plan --out` to use
	// instead of planning now; it is refused when its inputs changed.
	// PlanFileShown is how to name it in messages (as the user typed it).
	PlanFile, PlanFileShown string
	// NoModel makes the plan only where that asks no model
	// (PlanWithoutModel); otherwise Prepared has no plan and no graph, and
	// NeedsModel says why.
	NoModel bool
	// MovesMain is set by what moves main (setctl apply): main must exist
	// (CheckMainBranch) and hold every input of the run
	// (CheckInputsCommitted), both checked before a model is asked for
	// the plan (see prepareToMoveMain).
	MovesMain bool
}

// Prepared is a project ready to show or run: loaded, planned, and its
// execution graph built. What set.cue may ask for is exactly what this
// build runs: the schema offers nothing else.
type Prepared struct {
	*Project
	// Plan and Graph are nil when a step before them failed, or when
	// Options.NoModel kept the planner's model from being asked.
	Plan  *plan.Plan
	Graph *graph.Graph
	// NeedsModel is set when Options.NoModel left the plan unmade: the
	// strategy asks a model.
	NeedsModel *plan.NeedsModelError
}

// Prepare loads the project dir is in and prepares it (see
// Project.Prepare). The Prepared is never nil; its Root is where to show
// the diagnostics relative to.
func Prepare(ctx context.Context, dir string, opts Options) (*Prepared, diag.List) {
	p, err := Load(dir)
	ds := p.Warnings()
	if err != nil {
		return &Prepared{Project: p}, append(ds, load.Diagnostics(err)...)
	}
	var pr *Prepared
	var more diag.List
	if opts.MovesMain {
		pr, more = p.prepareToMoveMain(ctx, opts)
	} else {
		pr, more = p.Prepare(ctx, opts)
	}
	return pr, append(ds, more...)
}

// prepareToMoveMain is Prepare for what moves main, in the order that
// costs the user least: what is wrong with the inputs themselves first
// (everything but a model's plan), then whether main exists and holds
// them (checkMovesMain), and only then is a model asked for the plan.
func (p *Project) prepareToMoveMain(ctx context.Context, opts Options) (*Prepared, diag.List) {
	first := opts
	first.NoModel = true
	pr, ds := p.Prepare(ctx, first)
	if ds.HasErrors() {
		return pr, ds
	}
	if d, ok := p.checkMovesMain(ctx); !ok {
		return &Prepared{Project: p}, append(ds, d)
	}
	if pr.NeedsModel == nil {
		return pr, ds
	}
	return p.Prepare(ctx, opts)
}

// checkMovesMain checks what a run that moves main needs of the
// repository: main exists (a warning of CheckMainBranch is an error
// here) and holds every input of the run. ok is false with the error d
// otherwise.
func (p *Project) checkMovesMain(ctx context.Context) (d diag.Diagnostic, ok bool) {
	if d, ok := CheckMainBranch(ctx, p.Root, p.Config); !ok {
		d.Severity = diag.Error
		return d, false
	}
	if d, ok := p.followRemote(ctx); !ok {
		return d, false
	}
	d, ok, err := CheckInputsCommitted(ctx, p)
	if err != nil {
		return diag.Diagnostic{Severity: diag.Error, Summary: err.Error()}, false
	}
	return d, ok
}

// Prepare makes the project's plan, or reads and checks the saved one,
// builds the execution graph, and checks that every model-graded gate the
// graph runs has a model to ask (checkModels). It stops at the first step that fails and
// returns its diagnostics; the spec's warnings are Warnings', the plan's
// (planWarnings) come back when it succeeds.
func (p *Project) Prepare(ctx context.Context, opts Options) (*Prepared, diag.List) {
	pr := &Prepared{Project: p}
	var pl *plan.Plan
	var err error
	switch {
	case opts.PlanFile != "":
		var fp plan.Fingerprint
		if _, fp, err = p.fingerprint(ctx); err == nil {
			pl, err = p.SavedPlan(ctx, opts.PlanFile, opts.PlanFileShown, fp)
		}
	case opts.NoModel:
		pl, err = p.PlanWithoutModel(ctx)
		if nm := (*plan.NeedsModelError)(nil); errors.As(err, &nm) {
			pr.NeedsModel = nm
			return pr, nil
		}
	default:
		pl, err = p.MakePlan(ctx)
	}
	if err != nil {
		return pr, load.Diagnostics(err)
	}
	g, err := graph.Build(pl, p.Config)
	if err != nil {
		return pr, load.Diagnostics(err)
	}
	if err := checkModels(p.Config, g, p.Root); err != nil {
		return pr, load.Diagnostics(err)
	}
	pr.Plan, pr.Graph = pl, g
	return pr, planWarnings(pl)
}

// planWarnings are the warnings of a plan: a changed requirement whose
// delta OpenSpec will refuse (spec.DropWarning), at the requirement.
func planWarnings(pl *plan.Plan) diag.List {
	var out diag.List
	for _, st := range pl.Standings {
		if msg := spec.DropWarning(st); msg != "" {
			r, _ := pl.Requirement(st.ID)
			out = append(out, diag.Diagnostic{Severity: diag.Warning, Summary: msg, Pos: config.Pos{File: r.File, Line: r.Line}})
		}
	}
	return out
}

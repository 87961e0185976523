// Package load is the only importer of cue/load. It loads a project's CUE
// package with the embedded root module served offline, unifies the
// project with the embedded schema, and formats CUE errors with positions
// relative to the project.
package load

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/cue/token"

	set "github.com/set-engine/set"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/proc"
)

// Paths the engine reads from a project's package, named once.
const (
	// ProjectField is the field of set.cue that holds the pipeline.
	ProjectField = "project"
	// ProjectDef is the schema definition every project is unified with.
	ProjectDef = "#Project"
	// ConfigFile is the file a project directory must contain.
	ConfigFile = "set.cue"
	// LearningsField is the field of the project that keys its learnings
	// by a #Name.
	LearningsField = "learnings"
)

// Options tune Load. The zero value uses the process environment. Each
// engine package whose entry point takes settings names them Options
// (project.Options, dashboard.Options, planner.Options): the package says
// whose they are.
type Options struct {
	// Env is the environment for CUE_REGISTRY and CUE_CACHE_DIR; nil means
	// os.Environ().
	Env []string
	// Overlay maps absolute file paths to contents that replace (or add
	// to) what is on disk, so that files can be checked before they are
	// written.
	Overlay map[string][]byte
}

// Instance is a loaded, schema-checked project as CUE holds it: set.cue's
// package, its `project` field unified with schema.#Project and validated
// as concrete. It is not the project set works with: engine/config/decode
// turns it into a config.Project, and project.Project holds that with the
// spec; only engine/load and engine/config handle the cue.Value.
type Instance struct {
	// Root is the absolute project directory.
	Root string
	// Value is the `project` field unified with schema.#Project, validated
	// as concrete.
	Value cue.Value

	// Warnings are about how the project loads: a cue.mod/module.cue
	// that requires an older set module than the embedded one.
	Warnings diag.List

	// files are the project package's own parsed files.
	files []*ast.File
	// inputs are the files of the project that the load read (see Inputs).
	inputs []string
}

// Inputs lists the files inside Root that the load read, as slash paths
// relative to Root: set.cue and the other .cue files of its package,
// cue.mod/module.cue, then, sorted, the files of every package it
// imports from the project itself or vendored under cue.mod/pkg,
// cue.mod/usr or cue.mod/gen.
// Modules fetched from a registry, and the embedded set module, are read
// from the cache directory, never from the project: they are not listed,
// even when that directory is inside Root.
func (in *Instance) Inputs() []string { return in.inputs }

// Load loads the CUE package in dir (which must hold set.cue and
// cue.mod/module.cue), unifies its `project` field with the embedded
// schema.#Project and validates it as concrete. Errors keep their CUE
// positions; print them with Details.
func Load(dir string, opts Options) (*Instance, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if !opts.exists(filepath.Join(root, ConfigFile)) {
		return nil, fmt.Errorf("no %s in %s (run `setctl init` to create one)", ConfigFile, root)
	}
	if !opts.exists(ModuleFilePath(root)) {
		return nil, fmt.Errorf("no cue.mod/module.cue in %s (run `setctl init` to create one)", root)
	}
	modPath, modData, err := opts.readModuleFile(root)
	if err != nil {
		return nil, err
	}
	warning, err := checkSetVersion(modPath, modData)
	if err != nil {
		return nil, err
	}
	env := opts.environ()
	reg, err := embeddedRegistry(env)
	if err != nil {
		return nil, err
	}
	if err := checkDepsSetVersion(context.Background(), reg, modPath, modData); err != nil {
		return nil, err
	}
	ctx := cuecontext.New()

	var overlay map[string]load.Source
	for path, data := range opts.Overlay {
		if overlay == nil {
			overlay = map[string]load.Source{}
		}
		overlay[path] = load.FromBytes(data)
	}
	insts := load.Instances([]string{"."}, &load.Config{
		Dir:        root,
		ModuleRoot: root,
		Registry:   reg,
		Env:        env,
		Overlay:    overlay,
	})
	if len(insts) != 1 {
		return nil, fmt.Errorf("%s: expected one CUE package, found %d", root, len(insts))
	}
	if err := insts[0].Err; err != nil {
		return nil, err
	}
	pkg := ctx.BuildInstance(insts[0])
	if err := pkg.Err(); err != nil {
		return nil, userErrors(err, insts[0].Files, insts[0])
	}
	project := pkg.LookupPath(cue.ParsePath(ProjectField))
	if !project.Exists() {
		return nil, errors.Newf(token.NoPos, "%s: no `%s` field (want `%s: golang.#Project & {...}`)", ConfigFile, ProjectField, ProjectField)
	}

	schema, err := loadSchema(ctx, reg, env)
	if err != nil {
		return nil, err
	}
	project = project.Unify(schema.LookupPath(cue.MakePath(cue.Def(ProjectDef))))
	if err := project.Validate(cue.Concrete(true)); err != nil {
		return nil, userErrors(explainDefaults(project, err), insts[0].Files, insts[0])
	}
	cacheDir, err := CacheDir(env)
	if err != nil {
		return nil, err
	}
	if cacheDir, err = filepath.Abs(cacheDir); err != nil {
		return nil, err
	}
	lp := &Instance{Root: root, Value: project, files: insts[0].Files, inputs: inputsOf(root, cacheDir, insts[0])}
	if warning != nil {
		lp.Warnings = diag.List{*warning}
	}
	return lp, nil
}

// exists reports whether path is in the overlay or on disk.
func (o Options) exists(path string) bool {
	if _, ok := o.Overlay[path]; ok {
		return true
	}
	_, err := os.Stat(path)
	return err == nil
}

// loadSchema builds the embedded schema package from the extracted module.
func loadSchema(ctx *cue.Context, reg *Registry, env []string) (cue.Value, error) {
	return loadEmbedded(ctx, reg, env, "schema")
}

// Stdlib builds the embedded stdlib package, for what it holds beside a
// project's defaults: the pinned agent CLIs' model tables
// (ModelTablesField), which engine/config/decode decodes.
func Stdlib(opts Options) (cue.Value, error) {
	env := opts.environ()
	reg, err := embeddedRegistry(env)
	if err != nil {
		return cue.Value{}, err
	}
	return loadEmbedded(cuecontext.New(), reg, env, "stdlib")
}

// ModelTablesField is the field of the stdlib package that holds the
// agent CLIs' model tables.
const ModelTablesField = "modelTables"

// loadEmbedded builds the package in directory dir of the extracted
// embedded module.
func loadEmbedded(ctx *cue.Context, reg *Registry, env []string, pkg string) (cue.Value, error) {
	dir, err := reg.Dir()
	if err != nil {
		return cue.Value{}, err
	}
	insts := load.Instances([]string{"./" + pkg}, &load.Config{
		Dir:        dir,
		ModuleRoot: dir,
		Registry:   reg,
		Env:        env,
	})
	if err := insts[0].Err; err != nil {
		return cue.Value{}, fmt.Errorf("embedded %s: %w", pkg, err)
	}
	v := ctx.BuildInstance(insts[0])
	if err := v.Err(); err != nil {
		return cue.Value{}, fmt.Errorf("embedded %s: %w", pkg, err)
	}
	return v, nil
}

// embeddedRegistry serves the binary's root module from the cache directory
// named by CUE_CACHE_DIR, or the user cache directory.
func embeddedRegistry(env []string) (*Registry, error) {
	cacheDir, err := CacheDir(env)
	if err != nil {
		return nil, err
	}
	return NewRegistry(set.ModulePath, set.ModuleVersion, set.Module, cacheDir, env)
}

// CacheDir is $CUE_CACHE_DIR from env, or the cue directory below the user
// cache directory, as the cue tool chooses it.
func CacheDir(env []string) (string, error) {
	if d := proc.Getenv(env, "CUE_CACHE_DIR"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory: set CUE_CACHE_DIR (%w)", err)
	}
	return filepath.Join(d, "cue"), nil
}

// Details is err's Diagnostics in their text form (diag.Diagnostic.Text),
// one after the other, each ending in a newline, positions relative to
// root: `project.gates.fmt.mode: "warning" is not one of "run", "warn",
// "skip": set.cue:16:20`. Tests and messages that embed a configuration
// error use it; the CLI prints diagnostics through its one presenter.
func Details(err error, root string) string {
	if err == nil {
		return ""
	}
	var b strings.Builder
	for _, d := range Diagnostics(err) {
		b.WriteString(d.Text(root) + "\n")
	}
	return b.String()
}

// Diagnostics is err as the diagnostics set shows the user: the errors of
// the CUE evaluator and every config.FieldError sorted by position with
// duplicates dropped, as cue prints them, then any other error (a spec's
// diagnostics, an invalid plan's problems, an archive's refusal) as
// fromError lists it. It is the one place that turns an error into
// diagnostics. Positions inside
// the extracted embedded module are shown as
// github.com/set-engine/set@<version>/<file>, not as cache paths.
func Diagnostics(err error) diag.List {
	if err == nil {
		return nil
	}
	var all errors.Error
	var others diag.List
	positions := map[config.Pos]token.Pos{}
	for _, e := range leaves(err) {
		if isCUE(e) {
			for _, ce := range cueErrors(e, positions) {
				all = errors.Append(all, ce)
			}
			continue
		}
		others = append(others, fromError(e)...)
	}
	var out diag.List
	for _, e := range errors.Errors(errors.Sanitize(all)) {
		out = append(out, cueDiagnostic(e))
	}
	return append(out, others...)
}

// fromError is an error that is not CUE's as diagnostics: a diag.List or
// a diag.Diagnostic as it is, a diag.Lister's diagnostics, the members of
// an errors.Join in order, and any other error as one error diagnostic
// whose summary is its first line and whose detail is the lines below.
func fromError(err error) diag.List {
	switch e := err.(type) {
	case diag.List:
		return e
	case diag.Diagnostic:
		return diag.List{e}
	case *diag.Diagnostic:
		return diag.List{*e}
	case diag.Lister:
		return e.Diagnostics()
	case interface{ Unwrap() []error }:
		var out diag.List
		for _, m := range e.Unwrap() {
			out = append(out, fromError(m)...)
		}
		return out
	}
	var l diag.Lister
	if errors.As(err, &l) {
		return l.Diagnostics()
	}
	summary, detail, _ := strings.Cut(err.Error(), "\n")
	return diag.List{{Severity: diag.Error, Summary: summary, Detail: detail}}
}

// leaves are the members of err when it is an errors.Join (of joins),
// or err itself.
func leaves(err error) []error {
	if _, ok := err.(errors.Error); !ok {
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			var out []error
			for _, e := range joined.Unwrap() {
				out = append(out, leaves(e)...)
			}
			return out
		}
	}
	return []error{err}
}

// isCUE reports whether err is an error of the CUE evaluator or a
// config.FieldError, which Diagnostics sorts among them.
func isCUE(err error) bool {
	if _, ok := err.(errors.Error); ok {
		return true
	}
	var fe *config.FieldError
	return errors.As(err, &fe)
}

// moduleDir is how a file of the extracted embedded module is shown.
var moduleDir = set.ModulePath[:len(set.ModulePath)-len("@v0")] + "@" + set.ModuleVersion + "/"

// cueDiagnostic is one CUE error as a diagnostic.
func cueDiagnostic(e errors.Error) diag.Diagnostic {
	format, args := e.Msg()
	msg := extractedDir.ReplaceAllString(fmt.Sprintf(format, args...), moduleDir)
	summary, detail, _ := strings.Cut(msg, "\n")
	d := diag.Diagnostic{Severity: diag.Error, Summary: summary, Detail: detail, Path: e.Path()}
	var ps []config.Pos
	for _, p := range errors.Positions(e) {
		pos := Position(p)
		pos.File = extractedDir.ReplaceAllString(pos.File, moduleDir)
		ps = append(ps, pos)
	}
	switch len(ps) {
	case 0:
	case 1:
		d.Pos = ps[0]
	default:
		d.More = ps
	}
	return d
}

// cueErrors lists the errors in err as CUE errors: the members of a CUE
// error list or of an errors.Join, and each config.FieldError as a
// FieldError at its path below `project`. positions keeps one token.Pos
// per config.Pos, so that errors at one place compare equal as CUE's own
// do.
func cueErrors(err error, positions map[config.Pos]token.Pos) []errors.Error {
	if _, ok := err.(errors.Error); !ok {
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			var out []errors.Error
			for _, e := range joined.Unwrap() {
				out = append(out, cueErrors(e, positions)...)
			}
			return out
		}
		var fe *config.FieldError
		if errors.As(err, &fe) {
			pos, ok := positions[fe.Pos]
			if !ok {
				pos = tokenPos(fe.Pos)
				positions[fe.Pos] = pos
			}
			path := append([]string{ProjectField}, fe.Path...)
			return []errors.Error{NewFieldError(path, pos, "%s", fe.Msg)}
		}
	}
	return errors.Errors(err)
}

// InSchema reports whether pos lies in set's schema (the schema/ files of
// the embedded module): there a field is declared, while a profile, a
// team profile or the project gives its value.
func InSchema(pos token.Pos) bool {
	file := pos.Filename()
	loc := extractedDir.FindStringIndex(file)
	return loc != nil && strings.HasPrefix(file[loc[1]:], "schema/")
}

// extractedDir matches the directory prefix of a file in an extracted
// embedded module (see extract), in relative or absolute form.
var extractedDir = regexp.MustCompile(`[^\s:]*set-modules/[0-9a-f]{32}/`)

// inputsOf lists the files inside root, and outside cacheDir, that inst
// and the packages it imports (transitively) were built from, as
// slash paths relative to root, in the order Instance.Inputs says.
func inputsOf(root, cacheDir string, inst *build.Instance) []string {
	inside := func(dir, file string) (string, bool) {
		rel, err := filepath.Rel(dir, file)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			return "", false
		}
		return filepath.ToSlash(rel), true
	}
	seen := map[string]bool{}
	var files []string
	visited := map[*build.Instance]bool{}
	var walk func(*build.Instance)
	walk = func(i *build.Instance) {
		if visited[i] {
			return
		}
		visited[i] = true
		for _, f := range i.BuildFiles {
			name := f.Filename
			if !filepath.IsAbs(name) {
				name = filepath.Join(root, name)
			}
			if _, cached := inside(cacheDir, name); cached && cacheDir != "" {
				continue
			}
			if rel, ok := inside(root, name); ok && !seen[rel] {
				seen[rel] = true
				files = append(files, rel)
			}
		}
		for _, imp := range i.Imports {
			walk(imp)
		}
	}
	walk(inst)
	// set.cue first, then the package's other files, then what they
	// import: the order a reader meets them in.
	own := func(f string) bool { return !strings.Contains(f, "/") }
	sort.SliceStable(files, func(i, j int) bool {
		a, b := files[i], files[j]
		if (a == ConfigFile) != (b == ConfigFile) {
			return a == ConfigFile
		}
		if own(a) != own(b) {
			return own(a)
		}
		return a < b
	})
	n := 0
	for n < len(files) && own(files[n]) {
		n++
	}
	return slices.Concat(files[:n], []string{"cue.mod/module.cue"}, files[n:])
}

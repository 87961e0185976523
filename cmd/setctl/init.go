package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/set-engine/set/engine/atomicfile"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/config/decode"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/load"
	"github.com/set-engine/set/engine/openspec"
	"github.com/set-engine/set/engine/plan"
)

func initCommand() command {
	return command{
		name:    "init",
		summary: "write set.cue, cue.mod and a spec template for a project",
		arg:     "directory",
		usage: fmt.Sprintf(`Usage: setctl init [--profile PROFILE] [--name NAME] [--force] [DIR]

Init prepares DIR (default: the current directory) for set:
  set.cue              the project's pipeline, built on the profile; its
                       comment names the gates a feature change runs
  cue.mod/module.cue   a CUE module depending on github.com/set-engine/set@v0
                       and on the profile's module
  docs/spec.md         a spec template (left alone if it exists), or
                       spec/spec.md (see below)
  .gitignore           gains a line for .set/, where runs keep their state

PROFILE is a built-in profile or a CUE package in the registry
CUE_REGISTRY names, such as a team's shared profile. The built-in ones:
%s
Without --profile, init picks the built-in profile from DIR's files, and
says which file decided:
  go.mod                                        golang
  Cargo.toml                                    rust
  pyproject.toml, setup.py or requirements.txt  python
  package.json that depends on next             web
  package.json                                  node
A team's profile, from the registry:
  example.com/acme/profiles/gotools          its module's latest v0 release
  example.com/acme/profiles/gotools@v1       its module's latest v1 release
  example.com/acme/profiles/gotools@v0.3.1   that version of its module

Without --name, the project's name is the one its manifest declares, in
kebab-case: go.mod's module path's last element (app for
example.com/app/v2), Cargo.toml's [package] name, pyproject.toml's
[project] name or else [tool.poetry] name, setup.cfg's [metadata] name,
package.json's name without its npm scope (@acme/); the first of these
that names the project decides, the profile's own manifest first.
Else (a Cargo workspace, none there), the name is DIR's.

A project whose people write OpenSpec change folders plans from them: when
DIR has open folders under openspec/changes/ (archive/ aside), set.cue says
planner: strategy: "openspec" instead of naming a spec, and init writes no
spec template (docs/openspec.md).

The spec goes to docs/spec.md, unless DIR's docs/ is a manual that the
project builds or its package ships, where set's spec would be
published with it; then it goes to spec/spec.md, and init says why.
docs/ is such a manual when DIR has:
  docs/conf.py                              Sphinx builds docs/
  mkdocs.yml, docs_dir docs (its default)   MkDocs builds docs/
  package.json, files naming docs/          npm publishes docs/
  MANIFEST.in, graft or include of docs/    the sdist ships docs/

set.cue's mainBranch is the repository's likely main branch: the branch
origin's HEAD names, git's init.defaultBranch, main or master, whichever
the repository has; else the branch checked out.

Init checks everything it would write (set.cue must load with its
profile) before it writes anything: an error leaves DIR as it was. An
existing cue.mod/module.cue keeps its contents and gains the
dependencies. An existing set.cue is never overwritten without --force.

Examples:
  setctl init --profile golang
  setctl init --profile golang --name payments services/payments
  CUE_REGISTRY=registry.acme.com setctl init --profile acme.com/profiles/gotools@v0
`, builtinProfilesHelp()),
		run: runInit,
	}
}

func runInit(e *env, args []string) int {
	c := initCommand()
	fs := c.flagSet(e)
	profile := fs.String("profile", "", "a built-in profile ("+strings.Join(load.BuiltinProfiles(), ", ")+") or a CUE package path")
	name := fs.String("name", "", "project name (default: the name the project's manifest declares, else the directory's, in kebab-case)")
	force := fs.Bool("force", false, "overwrite an existing set.cue")
	if code, done := c.parse(e, fs, args); done {
		return code
	}
	ctx := context.Background()
	dir := e.dir
	if fs.NArg() == 1 {
		dir = resolveDir(e.dir, fs.Arg(0))
	}
	var detected string
	if *profile == "" {
		name, why, err := detectProfile(dir)
		if err != nil {
			return e.errorf(c.name, "%v", err)
		}
		if name == "" {
			return c.usageError(e, "no go.mod, Cargo.toml, pyproject.toml, setup.py, requirements.txt or package.json says what kind of project this is: pass --profile (built-in: %s; or a CUE package path such as example.com/acme/profiles/gotools@v0)", strings.Join(load.BuiltinProfiles(), ", "))
		}
		*profile, detected = name, fmt.Sprintf("setctl init: profile %s (%s)\n", name, why)
	}
	projectName, named := *name, ""
	if projectName == "" {
		declared, why, err := declaredName(dir, *profile)
		if err != nil {
			return e.errorf(c.name, "%v", err)
		}
		projectName, named = declared, fmt.Sprintf("setctl init: project name %s (%s)\n", declared, why)
	}
	if !plan.ValidName(projectName) {
		return e.errorf(c.name, "project name %q is not kebab-case (want e.g. \"my-app\"); pass --name", projectName)
	}
	prof, err := load.ResolveProfile(ctx, *profile, load.Options{})
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	setCUE := filepath.Join(dir, load.ConfigFile)
	if _, err := os.Stat(setCUE); err == nil && !*force {
		return e.errorf(c.name, "%s already exists (use --force to overwrite it)", setCUE)
	}
	branch, source := git.DefaultBranch(ctx, existingDir(dir))
	spec, specWhy := specLocation(dir)
	folders := openChangeFolders(dir)
	if len(folders) > 0 {
		spec, specWhy = "", ""
	}
	files, err := initFiles(dir, projectName, spec, prof, branch)
	if err != nil {
		return e.errorf(c.name, "%s\nNothing was written.", strings.TrimRight(err.Error(), "\n"))
	}
	if err := writeAll(files); err != nil {
		return e.errorf(c.name, "%v\nNothing was written.", err)
	}
	fmt.Fprint(e.stdout, detected, named)
	if specWhy != "" {
		fmt.Fprintf(e.stdout, "setctl init: spec in %s, not %s (%s)\n", spec, defaultSpec, specWhy)
	}
	if len(folders) > 0 {
		fmt.Fprintf(e.stdout, "setctl init: planner strategy openspec, no spec (openspec/changes/ has %s: %s)\n",
			english.Plural(len(folders), "open change folder"), strings.Join(english.Cut(folders, 3), ", "))
	}
	var written []string
	for _, f := range files {
		fmt.Fprintf(e.stdout, "setctl init: %s\n", f.done)
		rel, _ := filepath.Rel(dir, f.path)
		written = append(written, filepath.ToSlash(rel))
	}
	if prof.Module != "" {
		fmt.Fprintf(e.stdout, "setctl init: profile %s from %s %s\n", prof.ImportPath, prof.Module, prof.Version)
	}
	fmt.Fprintf(e.stdout, "setctl init: main branch %s (%s)\n", branch, source)

	if spec == "" {
		fmt.Fprintf(e.stdout, "\nNext: each open change folder is a change to implement; run\n")
	} else {
		fmt.Fprintf(e.stdout, "\nNext: describe the product in %s, then run\n", spec)
	}
	if rel, err := filepath.Rel(e.dir, dir); err == nil && rel != "." {
		fmt.Fprintf(e.stdout, "  cd %s\n", filepath.ToSlash(rel))
	}
	if spec == "" {
		fmt.Fprintf(e.stdout, "  setctl vet     # check set.cue and the change folders\n")
	} else {
		fmt.Fprintf(e.stdout, "  setctl vet     # check set.cue and the spec\n")
	}
	fmt.Fprintf(e.stdout, "  setctl plan    # see what a run would do\n")
	if !git.InRepository(ctx, existingDir(dir)) {
		fmt.Fprintf(e.stdout, "  git init -b %s\n", branch)
	}
	if len(written) > 0 {
		fmt.Fprintf(e.stdout, "  git add %s && git commit -m \"Set up setctl\"\n", strings.Join(written, " "))
	}
	fmt.Fprintf(e.stdout, "  setctl apply   # agents implement the plan; %s moves when its gates pass\n", branch)
	return exitOK
}

// initFile is one file init writes, computed in full before any is.
type initFile struct {
	path string // absolute
	data []byte
	done string // what writing it does, as init reports it
}

// initFiles computes every file init writes into dir, with the spec at
// spec (relative to dir, with a slash). set.cue and cue.mod/module.cue
// are loaded as they would be written, so a profile that does not load,
// or a module path CUE refuses, fails here. set.cue names mainBranch only
// where the profile's value would differ.
func initFiles(dir, name, spec string, prof *load.Profile, branch string) ([]initFile, error) {
	setCUE := filepath.Join(dir, load.ConfigFile)
	var exact map[string]string
	if prof.Module != "" {
		exact = map[string]string{prof.Module: prof.Version}
	}
	modData, modRes, err := load.ModuleFile(dir, cueModulePath(dir, name), exact, prof.Requires)
	if err != nil {
		return nil, err
	}
	// Loaded until what it would write is what it says: the comment
	// names the gates of the configuration it loads to (a comment does
	// not change that), and mainBranch is written when the profile's
	// would differ. A set.cue that does not load is reported as it would
	// be written, with the comment that names no gates.
	mainBranch, comment := "", setCUEComment(prof, nil)
	var setData []byte
	for {
		setData = []byte(setCUETemplate(name, spec, prof, mainBranch, comment))
		cfg, _, err := decode.Load(dir, load.Options{Overlay: map[string][]byte{setCUE: setData, load.ModuleFilePath(dir): modData}})
		if err != nil {
			return nil, fmt.Errorf("the set.cue it would write does not load:\n%s", load.Details(err, dir))
		}
		if c := setCUEComment(prof, cfg); c != comment {
			comment = c
			continue
		}
		if cfg.MainBranch == branch {
			break
		}
		if mainBranch != "" {
			return nil, fmt.Errorf("set.cue would set mainBranch to %q, but the profile makes it %q", branch, cfg.MainBranch)
		}
		mainBranch = branch
	}
	files := []initFile{{setCUE, setData, "wrote set.cue"}}
	switch modRes {
	case load.ModuleFileCreated:
		files = append(files, initFile{load.ModuleFilePath(dir), modData, "wrote cue.mod/module.cue"})
	case load.ModuleFileUpdated:
		files = append(files, initFile{load.ModuleFilePath(dir), modData, "added dependencies to cue.mod/module.cue"})
	}
	if spec != "" {
		specPath := filepath.Join(dir, filepath.FromSlash(spec))
		if _, err := os.Stat(specPath); os.IsNotExist(err) {
			files = append(files, initFile{specPath, []byte(specTemplate), "wrote " + spec})
		}
	}
	ignore := filepath.Join(dir, ".gitignore")
	data, err := os.ReadFile(ignore)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	if data, added := withLine(data, ".set/"); added {
		files = append(files, initFile{ignore, data, "added .set/ to .gitignore"})
	}
	return files, nil
}

// writeAll writes files in order. When one cannot be written, those
// already written get their old content back (or are removed) and the
// directories it made are removed: the tree is as it was.
func writeAll(files []initFile) (err error) {
	type undo struct {
		path    string
		old     []byte
		existed bool
	}
	var undos []undo
	var madeDirs []string
	defer func() {
		if err == nil {
			return
		}
		for i := len(undos) - 1; i >= 0; i-- {
			if u := undos[i]; u.existed {
				atomicfile.Write(u.path, u.old, 0o644)
			} else {
				os.Remove(u.path)
			}
		}
		for i := len(madeDirs) - 1; i >= 0; i-- {
			os.Remove(madeDirs[i])
		}
	}()
	for _, f := range files {
		for _, d := range missingDirs(filepath.Dir(f.path)) {
			if err := os.Mkdir(d, 0o755); err != nil {
				return err
			}
			madeDirs = append(madeDirs, d)
		}
		old, readErr := os.ReadFile(f.path)
		if readErr != nil && !os.IsNotExist(readErr) {
			return readErr
		}
		if err := atomicfile.Write(f.path, f.data, 0o644); err != nil {
			return err
		}
		undos = append(undos, undo{f.path, old, readErr == nil})
	}
	return nil
}

// missingDirs are dir and its ancestors that do not exist, outermost first.
func missingDirs(dir string) []string {
	var out []string
	for {
		if _, err := os.Stat(dir); err == nil {
			break
		}
		out = append([]string{dir}, out...)
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return out
}

// cueModulePath is the CUE module path for a new cue.mod: derived from the
// Go module's path when dir has a go.mod and that gives a valid CUE module
// path, otherwise one under example.com.
func cueModulePath(dir, name string) string {
	if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
		if p, ok := load.ModulePathFromGo(modfile.ModulePath(data)); ok {
			return p
		}
	}
	return "example.com/" + name + "@v0"
}

// setCUETemplate is a new set.cue on prof whose spec is at spec, or,
// when spec is "", that plans from the OpenSpec change folders (planner
// strategy openspec); mainBranch is written only when not empty, and
// comment, the lines above project (setCUEComment), only when not empty.
func setCUETemplate(name, spec string, prof *load.Profile, mainBranch, comment string) string {
	source := fmt.Sprintf("spec: [%q]", spec)
	if spec == "" {
		source = fmt.Sprintf("planner: strategy: %q", config.StrategyOpenSpec)
	}
	var branch string
	if mainBranch != "" {
		branch = fmt.Sprintf("\n\tmainBranch: %q", mainBranch)
	}
	return fmt.Sprintf(`package %s

import "%s"

%sproject: %s.#Project & {
	name: %q
	%s%s
}
`, strings.ReplaceAll(name, "-", "_"), prof.ImportPath, comment, prof.Package, name, source, branch)
}

// openChangeFolders lists, sorted, the open OpenSpec change folders in
// dir's checkout (openspec.OpenFolderOf): a project whose people write
// them plans from them, so init sets the openspec strategy and writes no
// spec template.
func openChangeFolders(dir string) []string {
	entries, _ := os.ReadDir(filepath.Join(dir, "openspec", "changes"))
	var names []string
	for _, e := range entries { // sorted by name
		if !e.IsDir() {
			continue
		}
		if name, ok := openspec.OpenFolderOf("openspec/changes/" + e.Name() + "/"); ok {
			names = append(names, name)
		}
	}
	return names
}

// setCUEComment is the comment above project in a new set.cue on prof,
// whose configuration is cfg (nil when not known): the command gates a
// feature change runs, by name in the order they run, and overrides that
// fit the profile's ecosystem (builtinProfiles; for a registry profile,
// making its first command gate warn).
func setCUEComment(prof *load.Profile, cfg *config.Project) string {
	var gates []string
	if cfg == nil {
		cfg = &config.Project{}
	}
	for name, entry := range cfg.Stacks["feature"] {
		if g, ok := cfg.Gates[name]; ok && g.Kind == config.KindExec && entry.Mode != config.ModeSkip {
			gates = append(gates, name)
		}
	}
	order := func(name string) int {
		if o := cfg.Stacks["feature"][name].Order; o != nil {
			return *o
		}
		return cfg.Gates[name].Order
	}
	slices.SortFunc(gates, func(a, b string) int { return cmp.Or(cmp.Compare(order(a), order(b)), cmp.Compare(a, b)) })
	var override, warn string
	if len(gates) > 0 {
		warn = gates[0]
	}
	if prof.Module == "" {
		for _, p := range builtinProfiles {
			if p.name == prof.Package {
				override, warn = p.override, p.warn
			}
		}
	}
	what := "gates"
	if len(gates) > 0 {
		what = "gates (a feature change runs " + english.List(gates) + ")"
	}
	var b strings.Builder
	b.WriteString(wrap("// ", fmt.Sprintf("project is this repository's pipeline: the %s profile's %s, stacks and budgets, customised by unification. For example:", prof.Package, what), 76))
	b.WriteString("//\n")
	if override != "" {
		fmt.Fprintf(&b, "//\t%s\n", override)
	}
	if warn != "" {
		fmt.Fprintf(&b, "//\tstacks: feature: %s: mode: %q\n", warn, config.ModeWarn)
	}
	b.WriteString("//\tbudgets: retries: verify: 4\n//\n")
	b.WriteString("// setctl vet checks this file; setctl plan shows what a run would do.\n")
	return b.String()
}

const specTemplate = `# Product spec

Each requirement has an ID (REQ-<DOMAIN>-<NUMBER>), a title, a sentence
that says what the program SHALL do, and at least one WHEN/THEN scenario.
A line "Depends on: REQ-…" orders requirements. setctl plan groups
requirements into changes by domain.

## Greeting

### REQ-GREET-01: Greet by name
The program SHALL print a greeting for the name it is given.

#### Scenario: a name is given
- **WHEN** the program runs with the argument "Ada"
- **THEN** it prints "Hello, Ada!"

### REQ-GREET-02: Default greeting
Depends on: REQ-GREET-01
The program SHALL greet the world when it is given no name.

#### Scenario: no name is given
- **WHEN** the program runs without arguments
- **THEN** it prints "Hello, world!"
`

// withLine is data with line appended, unless a line equal to it (or to
// it without its trailing slash) is there already; added says which.
func withLine(data []byte, line string) (_ []byte, added bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); t == line || t == strings.TrimSuffix(line, "/") {
			return data, false
		}
	}
	out := bytes.Clone(data)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(out, line+"\n"...), true
}

// existingDir is dir or its nearest existing ancestor, for asking git
// about a directory init is about to create.
func existingDir(dir string) string {
	for {
		if info, err := os.Stat(dir); err == nil && info.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}

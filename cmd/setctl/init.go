package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/set-engine/set/engine/atomicfile"
	"github.com/set-engine/set/engine/load"
	"github.com/set-engine/set/engine/plan"
)

func initCommand() command {
	return command{
		name:    "init",
		summary: "write set.cue, cue.mod and a spec template for a project",
		usage: `Usage: setctl init --profile PROFILE [--name NAME] [--force] [DIR]

Init prepares DIR (default: the current directory) for set:
  set.cue              the project's pipeline, built on the profile
  cue.mod/module.cue   a CUE module depending on github.com/set-engine/set@v0
  docs/spec.md         a spec template (left alone if it exists)
  .gitignore           gains a line for .set/, where runs keep their state

An existing cue.mod/module.cue keeps its contents and gains the
dependency. An existing set.cue is never overwritten without --force.

Profiles: golang

Examples:
  setctl init --profile golang
  setctl init --profile golang --name payments services/payments
`,
		run: runInit,
	}
}

// profiles are the project types init can write a set.cue for.
var profiles = map[string]string{
	"golang": "github.com/set-engine/set/profiles/golang",
}

func runInit(e *env, args []string) int {
	c := initCommand()
	fs := c.flagSet(e)
	profile := fs.String("profile", "", "project type: golang")
	name := fs.String("name", "", "project name (default: the directory's name, in kebab-case)")
	force := fs.Bool("force", false, "overwrite an existing set.cue")
	if code, done := c.parse(e, fs, args); done {
		return code
	}
	if fs.NArg() > 1 {
		return e.errorf(c.name, "expected at most one directory, got %d arguments", fs.NArg())
	}
	importPath, ok := profiles[*profile]
	if !ok {
		if *profile == "" {
			return e.errorf(c.name, "--profile is required (available: %s)", strings.Join(sortedNames(profiles), ", "))
		}
		return e.errorf(c.name, "unknown profile %q (available: %s)", *profile, strings.Join(sortedNames(profiles), ", "))
	}
	dir := e.dir
	if fs.NArg() == 1 {
		dir = resolveDir(e.dir, fs.Arg(0))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return e.errorf(c.name, "%v", err)
	}
	projectName := *name
	if projectName == "" {
		projectName = plan.Kebab(filepath.Base(dir), "project-")
	}
	if !plan.ValidName(projectName) {
		return e.errorf(c.name, "project name %q is not kebab-case (want e.g. \"my-app\"); pass --name", projectName)
	}

	setCUE := filepath.Join(dir, load.ConfigFile)
	if _, err := os.Stat(setCUE); err == nil && !*force {
		return e.errorf(c.name, "%s already exists (use --force to overwrite it)", setCUE)
	}
	var done []string
	if err := atomicfile.Write(setCUE, []byte(setCUETemplate(projectName, *profile, importPath)), 0o644); err != nil {
		return e.errorf(c.name, "%v", err)
	}
	done = append(done, "wrote set.cue")

	res, err := load.EnsureModuleFile(dir, cueModulePath(dir, projectName))
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	switch res {
	case load.ModuleFileCreated:
		done = append(done, "wrote cue.mod/module.cue")
	case load.ModuleFileUpdated:
		done = append(done, "added github.com/set-engine/set@v0 to cue.mod/module.cue")
	}

	specPath := filepath.Join(dir, "docs", "spec.md")
	if _, err := os.Stat(specPath); os.IsNotExist(err) {
		if err := os.MkdirAll(filepath.Dir(specPath), 0o755); err != nil {
			return e.errorf(c.name, "%v", err)
		}
		if err := atomicfile.Write(specPath, []byte(specTemplate), 0o644); err != nil {
			return e.errorf(c.name, "%v", err)
		}
		done = append(done, "wrote docs/spec.md")
	}

	added, err := ensureLine(filepath.Join(dir, ".gitignore"), ".set/")
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	if added {
		done = append(done, "added .set/ to .gitignore")
	}
	for _, d := range done {
		fmt.Fprintf(e.stdout, "setctl init: %s\n", d)
	}
	fmt.Fprintf(e.stdout, "\nNext: describe the product in docs/spec.md, then run\n  setctl vet     # check set.cue and the spec\n  setctl plan    # see what a run would do\n")
	return exitOK
}

var goModule = regexp.MustCompile(`(?m)^module\s+"?([^\s"]+)"?\s*$`)

// cueModulePath is the CUE module path for a new cue.mod: the Go module's
// path when dir has a go.mod, otherwise one under example.com.
func cueModulePath(dir, name string) string {
	if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
		if m := goModule.FindSubmatch(data); m != nil && strings.Contains(strings.SplitN(string(m[1]), "/", 2)[0], ".") {
			return string(m[1]) + "@v0"
		}
	}
	return "example.com/" + name + "@v0"
}

func setCUETemplate(name, profile, importPath string) string {
	return fmt.Sprintf(`package %s

import "%s"

// project is this repository's pipeline: the %s profile's gates, stacks and
// budgets, customised by unification. For example:
//
//	gates: test: run: ["go", "test", "-race", "./..."]
//	stacks: feature: review: mode: "warn"
//	budgets: retries: verify: 4
//
// setctl vet checks this file; setctl plan shows what a run would do.
project: %s.#Project & {
	name: %q
	spec: ["docs/spec.md"]
}
`, strings.ReplaceAll(name, "-", "_"), importPath, profile, filepath.Base(importPath), name)
}

const specTemplate = `# Product spec

Each requirement has an ID (REQ-<DOMAIN>-<NUMBER>), a title, a short
description and at least one WHEN/THEN scenario. A line "Depends on: REQ-…"
orders requirements. setctl plan groups requirements into changes by domain.

## Greeting

### REQ-GREET-01: Greet by name
The program prints a greeting for the name it is given.

#### Scenario: a name is given
- **WHEN** the program runs with the argument "Ada"
- **THEN** it prints "Hello, Ada!"

### REQ-GREET-02: Default greeting
Depends on: REQ-GREET-01

#### Scenario: no name is given
- **WHEN** the program runs without arguments
- **THEN** it prints "Hello, world!"
`

// ensureLine appends line to the file at path unless a line equal to it is
// there already; it reports whether it appended.
func ensureLine(path, line string) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return false, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == line || strings.TrimSpace(sc.Text()) == strings.TrimSuffix(line, "/") {
			return false, nil
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	data = append(data, line+"\n"...)
	return true, atomicfile.Write(path, data, 0o644)
}

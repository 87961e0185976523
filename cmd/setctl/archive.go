package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/load"
	"github.com/set-engine/set/engine/openspec"
)

func archiveCommand() command {
	return command{
		name:    "archive",
		summary: "fold an OpenSpec change into openspec/specs, as openspec archive does",
		arg:     "change",
		usage: `Usage: setctl archive CHANGE [--yes]

Archive folds the OpenSpec change openspec/changes/CHANGE into the living
specs: each delta specs/<capability>/spec.md of the change (a capability may
nest, as search/full-text) is applied to openspec/specs/<capability>/spec.md,
and the change's folder moves to openspec/changes/archive/<date>-CHANGE (a
CHANGE that starts with a date keeps its name). The files it writes are
byte for byte those of ` + "`openspec archive CHANGE --yes`" + ` of OpenSpec ` + openspec.OpenSpecVersion + `,
and it refuses what that command refuses, leaving every file as it was:
a delta with no operation, a requirement without text or without a
"#### Scenario:", a name that differs from an existing one only in case or
spacing, a MODIFIED requirement that drops a scenario, a spec it could not
write back. A capability whose last requirement is removed is retired (its
spec deleted) only when the change's .openspec.yaml says
` + "`retire_capabilities: true`" + `.

The project is the nearest directory up from the current one (or -C DIR)
that holds openspec/, looking no higher than the top of the git work tree.
Archive does not run git; commit the result. setctl apply archives each
change this way when it merges it.

Examples:
  setctl archive add-mfa
  setctl -C ~/src/myapp archive 2026-03-04-add-mfa
`,
		run: runArchive,
	}
}

func runArchive(e *env, args []string) int {
	c := archiveCommand()
	fs := c.flagSet(e)
	// Archive asks nothing; --yes is accepted so that scripts written for
	// `openspec archive CHANGE --yes` run unchanged.
	fs.BoolP("yes", "y", false, "accepted as openspec archive accepts it; archive asks nothing")
	if code, done := c.parse(e, fs, args); done {
		return code
	}
	if fs.NArg() == 0 {
		return c.usageError(e, "expected the name of a change (a directory of openspec/changes)")
	}
	change := fs.Arg(0)
	root, err := openspecRoot(e.dir)
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	res, err := openspec.ArchiveChange(root, change, time.Now())
	if errors.Is(err, openspec.ErrNoDelta) {
		return e.errorf(c.name, "no change %s: openspec/changes/%s does not exist", change, change)
	}
	if err != nil {
		e.present(c.name, load.Diagnostics(err), root)
		return e.errorf(c.name, "openspec/changes/%s was not archived; nothing was changed", change)
	}
	for _, w := range res.Warnings {
		// An archive's warning shows its file first, as it always has.
		e.present(c.name, diag.List{{Severity: diag.Warning, Summary: diag.Rel(w.Pos, root) + ": " + w.Summary}}, root)
	}
	for _, u := range res.Specs {
		fmt.Fprintf(e.stdout, "%s: %s\n", u.Path, describeSpecUpdate(u))
	}
	fmt.Fprintf(e.stdout, "archived openspec/changes/%s as %s\n", change, res.ArchiveDir)
	return exitOK
}

// describeSpecUpdate says what the archive did to one living spec:
// "updated: 1 added, 2 modified".
func describeSpecUpdate(u openspec.SpecUpdate) string {
	var ops []string
	for _, op := range []struct {
		n    int
		verb string
	}{{u.Added, "added"}, {u.Modified, "modified"}, {u.Removed, "removed"}, {u.Renamed, "renamed"}} {
		if op.n > 0 {
			ops = append(ops, fmt.Sprintf("%d %s", op.n, op.verb))
		}
	}
	switch {
	case u.Action == "unchanged":
		return "unchanged (the change was already applied to it)"
	case len(ops) == 0:
		return u.Action
	}
	return u.Action + ": " + strings.Join(ops, ", ")
}

// openspecRoot is the nearest directory from dir up that holds openspec/,
// looking no higher than the top of the git work tree dir is in.
func openspecRoot(dir string) (string, error) {
	start, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := start; ; {
		if fi, err := os.Stat(filepath.Join(d, "openspec")); err == nil && fi.IsDir() {
			return d, nil
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return "", fmt.Errorf("no openspec/ directory in %s or a parent directory up to the git work tree's top %s", start, d)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no openspec/ directory in %s or a parent directory", start)
		}
		d = parent
	}
}

package project

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/openspec"
	"github.com/set-engine/set/engine/shellquote"
)

// Inputs lists the files a run of the project reads, as slash paths
// relative to Root: the CUE files of its configuration (ConfigFiles),
// then its spec files, sorted, then, for the openspec strategy, the files
// of its open change folders (FolderFiles).
func (p *Project) Inputs() []string {
	out := append(slices.Clone(p.ConfigFiles), slices.Sorted(maps.Keys(p.SpecData))...)
	return append(out, p.FolderFiles...)
}

// folderFiles lists the regular files of the open change folders in the
// checkout under root (openspec.OpenFolderOf), as slash paths relative to
// root, sorted; none when root has no openspec/changes/.
func folderFiles(root string) ([]string, error) {
	var out []string
	dir := filepath.Join(root, openSpecDir, "changes")
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == dir {
				return fs.SkipAll
			}
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			rel += "/"
		}
		_, open := openspec.OpenFolderOf(rel)
		switch {
		case d.IsDir() && path != dir && !open:
			return fs.SkipDir // archive/ and dot directories
		case d.Type().IsRegular() && open:
			out = append(out, rel)
		}
		return nil
	})
	return out, err
}

// CheckInputsCommitted checks that main's tree holds every input of p's
// run (Inputs) with the content the run reads from the project: a run
// puts on main the code and living specs it makes of its inputs, so main
// must hold the inputs that made them, and a fresh clone of main plans
// what this run planned. It is the one rule for every input, whatever is
// wrong with it (untracked, staged or committed elsewhere, or edited);
// setctl apply checks it before it plans, since it moves main. ok is
// true when every input is committed; otherwise d is an error naming
// each file and what is wrong with it, with the git commands that fix
// it. The main branch must exist (CheckMainBranch).
//
// A change folder the checkout has open but branch has archived, and not
// open again, is no input: a run archived it on branch as its change
// merged (a checkout on another branch keeps it), so resuming that run
// is not refused for it.
func CheckInputsCommitted(ctx context.Context, p *Project) (d diag.Diagnostic, ok bool, err error) {
	branch := p.Config.MainBranch
	archived, err := archivedOn(ctx, p.Root, branch)
	if err != nil {
		return diag.Diagnostic{}, false, err
	}
	inputs := slices.DeleteFunc(p.Inputs(), func(path string) bool {
		name, ok := openspec.OpenFolderOf(path)
		return ok && archived(name)
	})
	drift, err := git.NotCommittedOn(ctx, p.Root, branch, inputs)
	if err != nil || len(drift) == 0 {
		return diag.Diagnostic{}, err == nil, err
	}
	var names, lines []string
	for _, name := range inputs {
		what, found := drift[name]
		if !found {
			continue
		}
		names = append(names, name)
		lines = append(lines, fmt.Sprintf("    %s: %s", name, driftWords(what, branch)))
	}
	what := "spec"
	if p.Config.Planner.FromFolders() {
		what = "OpenSpec change folders"
	}
	fix, err := inputsFix(ctx, p.Root, branch, names, what)
	if err != nil {
		return diag.Diagnostic{}, false, err
	}
	lines = append(lines, "commit them before setctl apply:", "    "+fix)
	return diag.Diagnostic{
		Severity: diag.Error,
		Summary:  fmt.Sprintf("set.cue, cue.mod and the %s must be committed on %s as the run reads them, since the run puts on %s what it makes of them:", what, branch, branch),
		Detail:   strings.Join(lines, "\n"),
	}, false, nil
}

// inputsFix is the git command line that puts the inputs names (not
// committed on branch as on disk) on branch. From another branch that has
// committed some of them, switching first would take those away from the
// working tree (git add then finds nothing): the rest is committed there
// and the branch merged into branch instead.
func inputsFix(ctx context.Context, root, branch string, names []string, what string) (string, error) {
	commit := func(names []string) string {
		return fmt.Sprintf("git add %s && git commit -m \"%s and set.cue\"", shellquote.Words(names), what)
	}
	current := git.CurrentBranch(ctx, root)
	if current == branch {
		return commit(names), nil
	}
	switchTo := "git switch " + shellquote.Word(branch)
	if current == "" { // a detached HEAD: nothing to merge by name
		return switchTo + " && " + commit(names), nil
	}
	here, err := git.NotCommittedOn(ctx, root, current, names)
	if err != nil {
		return "", err
	}
	if len(here) == len(names) { // none committed on current: edits carry over a switch
		return switchTo + " && " + commit(names), nil
	}
	merge := switchTo + " && git merge " + shellquote.Word(current)
	var rest []string
	for _, name := range names {
		if _, found := here[name]; found {
			rest = append(rest, name)
		}
	}
	if len(rest) == 0 {
		return merge, nil
	}
	return commit(rest) + " && " + merge, nil
}

// archivedOn is the set of the change folders that commit rev archived
// (openspec/changes/archive/<date>-<name>/) and has not open again.
func archivedOn(ctx context.Context, root, rev string) (func(name string) bool, error) {
	archive, err := git.DirsAt(ctx, root, rev, openSpecDir+"/changes/archive")
	if err != nil {
		return nil, err
	}
	open, err := git.DirsAt(ctx, root, rev, openSpecDir+"/changes")
	if err != nil {
		return nil, err
	}
	return func(name string) bool {
		return !slices.Contains(open, name) && slices.ContainsFunc(archive, func(dir string) bool { return openspec.ArchivedAs(dir, name) })
	}, nil
}

// driftWords says what is wrong with an input, in terms of the branch.
func driftWords(d git.Drift, branch string) string {
	switch d {
	case git.Untracked:
		return "untracked"
	case git.NotOnBranch:
		return "not on " + branch
	}
	return "differs from " + branch
}

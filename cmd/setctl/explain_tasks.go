package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/openspec"
	"github.com/set-engine/set/engine/report"
	"github.com/set-engine/set/engine/spec"
	"github.com/set-engine/set/engine/state"
)

// tasksFile is a change's tasks.md where explain read it: its path
// relative to the project root, the branch it was read on and its bytes.
type tasksFile struct {
	Path, On string
	Data     []byte
}

// changeTasks finds the tasks.md of change in the repository at root,
// where the change's work stands: on its branch's tip while the branch
// exists (the agent checks tasks off there), else on main before
// dispatch (openspec/changes/<change>/tasks.md), else in the change's
// archived folder on main after its merge (the latest of them, should the
// name have been archived more than once). ok is false when none of them
// holds a tasks.md: a change without one has no task progress.
func changeTasks(ctx context.Context, root, main, branch, change string) (f tasksFile, ok bool, err error) {
	open := spec.ChangeDir(change) + "/tasks.md"
	read := func(rev, p string) (bool, error) {
		data, err := git.FileAt(ctx, root, rev, p)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		f = tasksFile{Path: p, On: rev, Data: data}
		return true, nil
	}
	if branch != "" && git.BranchExists(ctx, root, branch) {
		if found, err := read(branch, open); found || err != nil {
			return f, found, err
		}
	}
	if !git.BranchExists(ctx, root, main) {
		return f, false, nil
	}
	if found, err := read(main, open); found || err != nil {
		return f, found, err
	}
	const archive = "openspec/changes/archive"
	archived, err := git.DirsAt(ctx, root, main, archive)
	if err != nil {
		return f, false, err
	}
	archived = slices.DeleteFunc(archived, func(dir string) bool { return !openspec.ArchivedAs(dir, change) })
	if len(archived) == 0 {
		return f, false, nil
	}
	found, err := read(main, path.Join(archive, slices.Max(archived), "tasks.md"))
	return f, found, err
}

// userFolders reports whether the change folders of the run v shows are
// the ones people wrote (its latest plan's strategy is "openspec"), whose
// tasks.md the agent checks off. The folders set writes for a markdown
// spec have task lines too, which no one is asked to check: their
// progress would say nothing.
func (v *runView) userFolders() bool {
	if len(v.Runs) == 0 {
		return false
	}
	events := v.Run.Through(v.Journal)
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == journal.PlanCreated {
			d, err := journal.Decode[journal.PlanCreatedData](events[i])
			return err == nil && d.Strategy == config.StrategyOpenSpec
		}
	}
	return false
}

// tasksLine is explain's line of change ch's task progress, as OpenSpec
// counts it (`openspec list`): "tasks: 3/5 checked (openspec/changes/
// add-links/tasks.md on set/add-links)"; "" for a change without a
// tasks.md.
func (v *runView) tasksLine(ch *state.Change) string {
	f, ok, err := changeTasks(context.Background(), v.layout.Root(), v.mainBranch(), cmp.Or(ch.Branch, git.ChangeBranch(ch.Name)), ch.Name)
	switch {
	case err != nil:
		return fmt.Sprintf("tasks: cannot be read: %v", err)
	case !ok:
		return ""
	}
	done, total := openspec.TaskProgress(f.Data)
	return fmt.Sprintf("tasks: %d/%d checked (%s on %s)", done, total, f.Path, f.On)
}

// addTasks fills in the task progress of r's changes that have a
// tasks.md (report.Change.Tasks), read where each change's work stands
// in the repository at root whose main branch is main. A change whose
// tasks.md cannot be read is left without.
func addTasks(ctx context.Context, root, main string, r *report.Report) {
	for i := range r.Changes {
		c := &r.Changes[i]
		// The branch by its name, not the state's: --watch's projection
		// changes under another goroutine while r is shown.
		if f, ok, err := changeTasks(ctx, root, main, git.ChangeBranch(c.Name), c.Name); err == nil && ok {
			done, total := openspec.TaskProgress(f.Data)
			c.Tasks = &report.Tasks{Done: done, Total: total}
		}
	}
}

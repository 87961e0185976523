package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/set-engine/set/engine/coverage"
	"github.com/set-engine/set/engine/dashboard"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/project"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/state"
)

// dashboardRequirements is where every requirement of the project at root
// stands on main now, as setctl plan prints it, for the dashboard's
// requirements page (dashboard.RequirementsFunc).
func dashboardRequirements(root string) dashboard.RequirementsFunc {
	c := &requirementsCache{root: root}
	return c.rows
}

// requirementsCache keeps the costly part of the requirements' rows (the
// project loaded, its plan made without a model, main read for landed
// changes and the tests that name each requirement) for as long as its
// key holds: main's commit, HEAD, the content of the project's inputs
// (set.cue's CUE files and the spec files, as the last load found them)
// and the run's saved plan (a model's plan is reused from it). Only the
// run's statuses are applied anew at every call; a call whose key holds
// costs two rev-parses and reading the inputs.
//
// A spec file a glob of set.cue matches only once it appears is seen at
// the next change of main or of an input.
type requirementsCache struct {
	root string

	mu  sync.Mutex
	key string
	// inputs are the files the key hashes (slash paths relative to root);
	// mainBranch the branch it reads, as the last load found them.
	inputs     []string
	mainBranch string
	plan       *plan.Plan
	in         coverage.Input
	err        error
}

func (c *requirementsCache) rows(st *state.State) ([]coverage.Row, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx := context.Background()
	if c.key == "" || c.key != c.keyNow(ctx) {
		c.read(ctx)
	}
	if c.err != nil {
		return nil, c.err
	}
	in := c.in
	in.Statuses = runStatuses(c.plan, st)
	return coverage.Rows(in), nil
}

// read loads the project and reads main, and keeps what it found under
// the key of the inputs it read.
func (c *requirementsCache) read(ctx context.Context) {
	c.plan, c.in, c.err = nil, coverage.Input{}, nil
	p, err := project.Load(c.root)
	if err != nil || p.Config == nil {
		// What the key hashes is then every CUE file set.cue's load may
		// read at the root: its next edit is read anew.
		c.inputs, _ = filepath.Glob(filepath.Join(c.root, "*.cue"))
		for i, f := range c.inputs {
			c.inputs[i] = filepath.Base(f)
		}
		c.inputs = append(c.inputs, "cue.mod/module.cue")
		c.err = fmt.Errorf("the project does not load (`setctl vet` says why): %v", err)
		c.key = c.keyNow(ctx)
		return
	}
	c.inputs, c.mainBranch = p.Inputs(), p.Config.MainBranch
	c.key = c.keyNow(ctx)
	if c.plan, c.err = p.PlanWithoutModel(ctx); c.err != nil {
		c.err = fmt.Errorf("the plan of the spec (`setctl plan` makes it): %v", c.err)
		return
	}
	c.in, c.err = coverage.Read(ctx, c.root, p.Config, c.plan)
}

// keyNow is the key of what read would find now.
func (c *requirementsCache) keyNow(ctx context.Context) string {
	h := sha256.New()
	main, _ := git.BranchHead(ctx, c.root, c.mainBranch)
	fmt.Fprintf(h, "main %s\nHEAD %s\n", main, git.Head(ctx, c.root))
	files := make([]string, 0, len(c.inputs)+1)
	for _, name := range c.inputs {
		files = append(files, filepath.Join(c.root, filepath.FromSlash(name)))
	}
	for _, name := range append(files, rundir.New(c.root).Plan()) {
		data, err := os.ReadFile(name)
		if err != nil {
			data = []byte("(unreadable: " + err.Error() + ")")
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(h, "%s %x\n", name, sum)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// runStatuses are where the changes of p stand in the run st projects,
// as setctl plan says it (addStatuses); nil before any run.
func runStatuses(p *plan.Plan, st *state.State) map[string]state.Status {
	if st == nil || st.LastSeq == 0 {
		return nil
	}
	out := map[string]state.Status{}
	for _, c := range p.Changes {
		out[c.Name] = statusInRun(st, p, c.Name)
	}
	return out
}

// statusInRun is where change name of p stands in the run st projects:
// pending for a change the run does not know, or asked for other work
// (its Work differs), or says is on main (p names only work main lacks).
func statusInRun(st *state.State, p *plan.Plan, name string) state.Status {
	if sc := st.Changes[name]; sc != nil && sc.Work == p.Work(name) && sc.Status != state.Merged && sc.Status != state.Archived {
		return sc.Status
	}
	return state.Pending
}

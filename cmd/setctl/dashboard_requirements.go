package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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
	c := &requirementsCache{inputs: projectInputs{root: root}}
	return c.rows
}

// requirementsCache keeps the costly part of the requirements' rows (the
// project loaded, its plan made without a model, main read for landed
// changes and the tests that name each requirement) for as long as its
// key holds: main's commit, HEAD, the project's inputs (projectInputs:
// set.cue's CUE files and the spec files, as the last load found them)
// and the run's saved plan (a model's plan is reused from it). Only the
// run's statuses are applied anew at every call; a call whose key holds
// costs two rev-parses and reading the inputs.
//
// A spec file a glob of set.cue matches only once it appears is seen at
// the next change of main or of an input.
type requirementsCache struct {
	mu     sync.Mutex
	key    string
	inputs projectInputs
	// mainBranch is the branch the key reads, as the last load found it.
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
	root := c.inputs.root
	p, err := project.Load(root)
	if err != nil || p.Config == nil {
		c.inputs.failed()
		c.err = fmt.Errorf("the project does not load (`setctl vet` says why): %v", err)
		c.key = c.keyNow(ctx)
		return
	}
	c.inputs.loaded(p.Inputs())
	c.mainBranch = p.Config.MainBranch
	c.key = c.keyNow(ctx)
	if c.plan, c.err = p.PlanWithoutModel(ctx); c.err != nil {
		c.err = fmt.Errorf("the plan of the spec (`setctl plan` makes it): %v", c.err)
		return
	}
	c.in, c.err = coverage.Read(ctx, root, p.Config, c.plan)
}

// keyNow is the key of what read would find now.
func (c *requirementsCache) keyNow(ctx context.Context) string {
	h := sha256.New()
	main, _ := git.BranchHead(ctx, c.inputs.root, c.mainBranch)
	fmt.Fprintf(h, "main %s\nHEAD %s\n", main, git.Head(ctx, c.inputs.root))
	c.inputs.sum(h)
	plan := rundir.New(c.inputs.root).Plan()
	fileSum(h, plan, plan)
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

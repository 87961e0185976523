package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/config/decode"
	"github.com/set-engine/set/engine/dashboard"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/load"
)

// dashboardLearnings is what setctl learn and setctl learn --report say
// of the project at root and its journal, for the dashboard's learnings
// page (dashboard.LearningsFunc).
func dashboardLearnings(root string) dashboard.LearningsFunc {
	c := &learningsCache{inputs: projectInputs{root: root}}
	return c.learnings
}

// learningsCache keeps the project's configuration, which names the
// learnings it adopts and its learn settings, for as long as its inputs
// (projectInputs) are as they were; the journal's episodes are read anew
// at every call.
type learningsCache struct {
	mu     sync.Mutex
	key    string
	inputs projectInputs
	cfg    *config.Project
	err    error
}

func (c *learningsCache) learnings(events []journal.Event) (dashboard.Learnings, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.key == "" || c.key != c.keyNow() {
		c.read()
	}
	if c.err != nil {
		return dashboard.Learnings{}, c.err
	}
	return projectLearnings(c.cfg, events)
}

// read loads the project's configuration and keeps it under the key of
// the files it read.
func (c *learningsCache) read() {
	c.cfg, c.err = nil, nil
	lp, err := load.Load(c.inputs.root, load.Options{})
	if err == nil {
		c.cfg, err = decode.Project(lp)
	}
	if err != nil {
		c.inputs.failed()
		c.err = fmt.Errorf("the project does not load (`setctl vet` says why): %v", err)
	} else {
		c.inputs.loaded(lp.Inputs())
	}
	c.key = c.keyNow()
}

// keyNow is the key of what read would find now.
func (c *learningsCache) keyNow() string {
	h := sha256.New()
	c.inputs.sum(h)
	return hex.EncodeToString(h.Sum(nil))
}

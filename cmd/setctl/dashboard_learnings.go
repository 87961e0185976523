package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
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
	c := &learningsCache{root: root}
	return c.learnings
}

// learningsCache keeps the project's configuration, which names the
// learnings it adopts and its learn settings, for as long as the content
// of the CUE files set.cue's load read is as it was; the journal's
// episodes are read anew at every call.
type learningsCache struct {
	root string

	mu  sync.Mutex
	key string
	// inputs are the files the key hashes (slash paths relative to
	// root), as the last load found them.
	inputs []string
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
	lp, err := load.Load(c.root, load.Options{})
	if err == nil {
		c.cfg, err = decode.Project(lp)
	}
	if err != nil {
		// What the key hashes is then every CUE file set.cue's load may
		// read at the root: its next edit is read anew.
		c.inputs, _ = filepath.Glob(filepath.Join(c.root, "*.cue"))
		for i, f := range c.inputs {
			c.inputs[i] = filepath.Base(f)
		}
		c.inputs = append(c.inputs, "cue.mod/module.cue")
		c.cfg, c.err = nil, fmt.Errorf("the project does not load (`setctl vet` says why): %v", err)
	} else {
		c.inputs = lp.Inputs()
	}
	c.key = c.keyNow()
}

// keyNow is the key of what read would find now: the content of its
// inputs, and the names of the CUE files at the root, so that a file the
// last load could not read because it was not there yet (learnings.cue,
// which setctl learn --write creates) is read once it is.
func (c *learningsCache) keyNow() string {
	h := sha256.New()
	here, _ := filepath.Glob(filepath.Join(c.root, "*.cue"))
	for _, f := range here {
		fmt.Fprintf(h, "at the root: %s\n", filepath.Base(f))
	}
	for _, name := range c.inputs {
		data, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(name)))
		if err != nil {
			data = []byte("(unreadable: " + err.Error() + ")")
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(h, "%s %x\n", name, sum)
	}
	return hex.EncodeToString(h.Sum(nil))
}

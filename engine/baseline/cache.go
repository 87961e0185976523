package baseline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"slices"
	"time"

	"github.com/set-engine/set/engine/atomicfile"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/graph"
)

// cacheVersion is the version of the cache file this build reads and writes; a
// file of another version is ignored (and replaced on the next write).
const cacheVersion = 1

// keepTrees is how many trees the cache remembers: the most recently
// judged ones. main moves with every merge, so older trees rarely return.
const keepTrees = 16

// cache holds verdicts by (tree, gate, definition). It is a cache: a file
// that cannot be read or parsed is treated as empty, and the worst that
// follows is that gates run again.
type cache struct {
	Version  int          `json:"version"`
	Verdicts []cacheEntry `json:"verdicts"`
}

type cacheEntry struct {
	Tree       string    `json:"tree"`
	Gate       string    `json:"gate"`
	Definition string    `json:"definition"`
	Result     string    `json:"result"`
	ExitCode   int       `json:"exitCode"`
	Reason     string    `json:"reason,omitempty"`
	Command    string    `json:"command,omitempty"`
	Missing    string    `json:"missing,omitempty"`
	Failures   []string  `json:"failures,omitempty"`
	Tail       string    `json:"tail,omitempty"`
	Log        string    `json:"log,omitempty"`
	Base       string    `json:"base,omitempty"`
	OnHost     string    `json:"onHost,omitempty"`
	HostLog    string    `json:"hostLog,omitempty"`
	DurationMS int64     `json:"durationMs"`
	Judged     time.Time `json:"judged"`
}

func loadCache(path string) *cache {
	c := &cache{Version: cacheVersion}
	data, err := os.ReadFile(path)
	if err != nil {
		return c
	}
	var read cache
	if json.Unmarshal(data, &read) != nil || read.Version != cacheVersion {
		return c
	}
	return &read
}

func (c *cache) lookup(tree, gate, def string) (Verdict, bool) {
	for _, e := range c.Verdicts {
		if e.Tree == tree && e.Gate == gate && e.Definition == def {
			return Verdict{
				Result: e.Result, ExitCode: e.ExitCode, Reason: e.Reason, Command: e.Command, Missing: e.Missing, Failures: e.Failures,
				Tail: e.Tail, Log: e.Log, Base: e.Base, OnHost: e.OnHost, HostLog: e.HostLog, Duration: time.Duration(e.DurationMS) * time.Millisecond, Cached: true,
			}, true
		}
	}
	return Verdict{}, false
}

// put records v as the verdict of gate definition def on tree, replacing
// an earlier one, and forgets the trees beyond the keepTrees most
// recently judged.
func (c *cache) put(tree, def string, v Verdict, at time.Time) {
	c.Verdicts = slices.DeleteFunc(c.Verdicts, func(e cacheEntry) bool {
		return e.Tree == tree && e.Gate == v.Gate && e.Definition == def
	})
	c.Verdicts = append(c.Verdicts, cacheEntry{
		Tree: tree, Gate: v.Gate, Definition: def, Result: v.Result, ExitCode: v.ExitCode,
		Reason: v.Reason, Command: v.Command, Missing: v.Missing, Failures: v.Failures, Tail: v.Tail, Log: v.Log,
		Base: v.Base, OnHost: v.OnHost, HostLog: v.HostLog, DurationMS: v.Duration.Milliseconds(), Judged: at.UTC(),
	})
	latest := map[string]time.Time{}
	for _, e := range c.Verdicts {
		if e.Judged.After(latest[e.Tree]) {
			latest[e.Tree] = e.Judged
		}
	}
	if len(latest) <= keepTrees {
		return
	}
	trees := make([]string, 0, len(latest))
	for t := range latest {
		trees = append(trees, t)
	}
	// Newest first; the tree just judged stays whatever the clock says.
	slices.SortFunc(trees, func(a, b string) int {
		switch {
		case a == tree:
			return -1
		case b == tree:
			return 1
		}
		return latest[b].Compare(latest[a])
	})
	keep := map[string]bool{}
	for _, t := range trees[:keepTrees] {
		keep[t] = true
	}
	c.Verdicts = slices.DeleteFunc(c.Verdicts, func(e cacheEntry) bool { return !keep[e.Tree] })
}

// save writes the cache atomically.
func (c *cache) save(path string) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'), 0o644)
}

// definition identifies what a gate runs: a change to any of it makes
// earlier verdicts say nothing about the gate. The mode is not part of
// it (it decides what a verdict means, not what it is), nor the timeout
// (a timed-out run is never cached).
func definition(cfg *config.Project, step graph.GateStep) string {
	g := cfg.Gates[step.Gate]
	d := struct {
		Run      []string             `json:"run"`
		Env      map[string]string    `json:"env"`
		Runner   string               `json:"runner"`
		Failures string               `json:"failures"`
		Dagger   *config.DaggerRunner `json:"dagger,omitempty"`
	}{Run: g.Run, Env: g.Env, Runner: step.Runner, Failures: g.Failures}
	if step.Runner == config.RunnerDagger {
		// The container's base, mounts and variables shape the result too.
		d.Dagger = cfg.Runner.Dagger
	}
	data, _ := json.Marshal(d) // plain data; map keys come out sorted
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// ForgetLogs removes from the cache at path the verdicts whose log (or
// host log) gone reports: setctl prune removes the logs of the runs it
// removes, and a verdict the cache gave again would name a log that is
// no more. The tree is judged again if main comes back to it. A missing
// or unreadable cache is left alone.
func ForgetLogs(path string, gone func(log string) bool) error {
	c := loadCache(path)
	n := len(c.Verdicts)
	c.Verdicts = slices.DeleteFunc(c.Verdicts, func(e cacheEntry) bool {
		return (e.Log != "" && gone(e.Log)) || (e.HostLog != "" && gone(e.HostLog))
	})
	if len(c.Verdicts) == n {
		return nil
	}
	return c.save(path)
}

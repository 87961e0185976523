// Package prune removes whole runs from a project's run directory: their
// events from the journal, their folder (.set/runs/<id>: report, plan,
// baseline logs), the logs and prompts only their events name, and the
// files no event names that only they own (see unnamed: regeneration
// logs, agent sessions' totals, dashboard apply logs). It is
// setctl prune, and the history.keep retention a new apply applies
// before it starts.
//
// Invariants:
//   - The latest run is never removed: it may be resumed, and it is the
//     one every view shows by default.
//   - A run is removed whole or not at all, and the runs kept tell the
//     story they told: their events stay the lines they were, Seqs
//     included (journal.Remove), and a run is not removed when the
//     latest run carries on a change of it with its progress (a retry
//     of a failed change, the same work asked again), since the latest
//     run would then stand elsewhere (a change in flight in the latest
//     run that an earlier run numbered keeps that run too, until the
//     latest run is over: its iteration budget counts from those
//     numbers), nor when a kept run's events move a change from where
//     only it left it (a run stopped in flight, then a new run). Only
//     the numbers that name a change's logs may start lower after a
//     removal; they name no file a kept run's event names.
//   - A file is removed only when an event of a removed run (or the
//     removed run's folder) holds it, or it belongs to a removed run
//     (unnamed), no kept event names it nor does it belong to a kept
//     run, and it is a regular file under .set/logs, .set/changes,
//     .set/runs or .set/sessions: never a worktree, never a file outside
//     .set. The baseline cache forgets
//     the verdicts whose logs go (baseline.ForgetLogs), before they go.
//   - A prune killed at any point leaves the runs kept whole; the next
//     prune of the same runs finishes what it began (the cache, the
//     files, then the events: see journal.Remove).
//   - The caller holds the run lock (state.AcquireLock), so no apply
//     writes the journal meanwhile.
package prune

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/set-engine/set/engine/baseline"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/history"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/state"
)

// Options say which runs to remove: those beyond the newest Keep, and
// those named in Runs.
type Options struct {
	// Keep, when above 0, keeps the newest Keep runs and removes the
	// older ones, except those the latest run carries changes on (they
	// are Held).
	Keep int
	// Runs are IDs of runs to remove; one the latest run carries changes
	// on, or the latest itself, is an error.
	Runs []string
	// DryRun says what would be removed and removes nothing.
	DryRun bool
}

// Result is what Prune removed, or would remove with DryRun.
type Result struct {
	DryRun bool `json:"dryRun"`
	// Runs are the runs removed, oldest first.
	Runs []Run `json:"runs"`
	// Held are runs beyond Keep that stay, and why.
	Held []Held `json:"held,omitempty"`
	// JournalBytes are the bytes of the removed events' lines in
	// events.jsonl; Bytes all the bytes freed, files included (the
	// change journals' copies of the lines are not counted).
	JournalBytes int64 `json:"journalBytes"`
	Bytes        int64 `json:"bytes"`
}

// Run is one removed run.
type Run struct {
	ID     string `json:"id"`
	Events int    `json:"events"`
	// Files are its files removed: those its events name, and its folder's.
	Files []File `json:"files"`
}

// File is a removed file: its slash path relative to the project root.
type File struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// Held is a run Keep would remove that stays.
type Held struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Prune removes the runs opts names from the run directory of layout.
// A journal without runs, or with no run to remove, removes nothing; a
// run opts.Runs names that the journal does not have is an error
// (history.ErrNoRun when it has none).
func Prune(layout rundir.Layout, opts Options) (Result, error) {
	res := Result{DryRun: opts.DryRun, Runs: []Run{}}
	events, err := journal.ReadFile(layout.Events())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return res, err
	}
	runs := history.Runs(events)
	if len(runs) == 0 {
		if len(opts.Runs) > 0 {
			// A run named where there is none is an error, as it is
			// when the journal has runs but not that one.
			return res, history.ErrNoRun
		}
		return res, nil
	}
	latest := runs[len(runs)-1].ID
	// chosen are the runs to remove: explicit ones (named in opts.Runs)
	// and those beyond Keep.
	chosen, explicit := map[string]bool{}, map[string]bool{}
	for _, id := range opts.Runs {
		r, err := history.Find(runs, id)
		if err != nil {
			return res, err
		}
		if r.ID == latest {
			return res, fmt.Errorf("run %s is the latest run: prune never removes it (it may be resumed)", id)
		}
		chosen[id], explicit[id] = true, true
	}
	if opts.Keep > 0 {
		for _, r := range runs[:max(len(runs)-opts.Keep, 0)] {
			chosen[r.ID] = true
		}
	}
	// A journal from before run IDs were unique (orchestrator.newRunID)
	// may have an earlier run under the latest's ID: removing it would
	// remove the latest run's events too.
	delete(chosen, latest)
	full, err := state.Rebuild(events)
	if err != nil {
		return res, err
	}
	var kept []journal.Event
	for {
		kept = kept[:0]
		for _, e := range events {
			if !chosen[e.Run] {
				kept = append(kept, e)
			}
		}
		problem := carried(full, kept)
		if problem == "" {
			break
		}
		// Keep the newest run chosen by count, and try again.
		var newest string
		for _, r := range runs {
			if chosen[r.ID] && !explicit[r.ID] {
				newest = r.ID
			}
		}
		if newest == "" {
			return res, fmt.Errorf("cannot remove %s: %s", english.List(chosenIDs(runs, chosen)), problem)
		}
		delete(chosen, newest)
		res.Held = append(res.Held, Held{ID: newest, Reason: problem})
	}
	slices.Reverse(res.Held) // oldest first
	if len(chosen) == 0 {
		return res, nil
	}

	files, gone, err := filesOf(layout, runs, events, chosen, kept)
	if err != nil {
		return res, err
	}
	for _, r := range runs {
		if !chosen[r.ID] {
			continue
		}
		run := Run{ID: r.ID, Events: len(r.Own(events)), Files: files[r.ID]}
		if run.Files == nil {
			run.Files = []File{}
		}
		for _, f := range run.Files {
			res.Bytes += f.Bytes
		}
		res.Runs = append(res.Runs, run)
	}
	drop := func(e journal.Event) bool { return chosen[e.Run] }
	if opts.DryRun {
		counted, err := journal.Count(layout.Dir(), drop)
		res.JournalBytes = counted.Bytes
		res.Bytes += res.JournalBytes
		return res, err
	}
	// The baseline cache forgets first, then the files go, then the
	// events: a prune stopped half-way leaves runs whose logs are partly
	// gone, which the next prune removes, rather than files no event
	// names any more, which nothing would, or a cached verdict naming a
	// log that is gone (gone holds what the removed runs name and had,
	// whether or not it is still there).
	if err := baseline.ForgetLogs(layout.BaselineCache(), gone); err != nil {
		return res, err
	}
	for _, r := range res.Runs {
		for _, f := range r.Files {
			if err := os.Remove(filepath.Join(layout.Root(), filepath.FromSlash(f.Path))); err != nil && !errors.Is(err, os.ErrNotExist) {
				return res, err
			}
			removeEmptyParents(layout, f.Path)
		}
	}
	removed, err := journal.Remove(layout.Dir(), drop)
	if err != nil {
		return res, err
	}
	res.JournalBytes = removed.Bytes
	res.Bytes += res.JournalBytes
	// The snapshot follows the journal (state.json is its projection).
	st, err := state.Rebuild(kept)
	if err != nil {
		return res, err
	}
	data, err := state.Encode(st)
	if err != nil {
		return res, err
	}
	return res, state.WriteEncoded(layout.State(), data)
}

func chosenIDs(runs []history.Run, chosen map[string]bool) []string {
	var ids []string
	for _, r := range runs {
		if chosen[r.ID] {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// carried says why the journal kept cannot stand without the removed
// runs: its events do not project (an event of a kept run names a change
// only a removed run planned, or moves a change from where only a removed
// run left it), or a change of the latest run's plan stands elsewhere
// than in full, the projection of the whole journal, beyond the numbers
// that name its logs. "" when it can.
func carried(full *state.State, kept []journal.Event) string {
	st, err := state.Rebuild(kept)
	if err != nil {
		return needed(kept, full.Run, err)
	}
	var moved []string
	for _, name := range full.Plan.Changes {
		if !sameStand(full.Changes[name], st.Changes[name]) {
			moved = append(moved, name)
		}
	}
	if len(moved) > 0 {
		return fmt.Sprintf("the latest run, %s, carries on %s from it", full.Run, english.List(moved))
	}
	return ""
}

// needed says why kept, events that do not project (err), need the
// events of the runs removed: the run of the first event that fails
// (latest, or an earlier one) carries its change on from them.
func needed(kept []journal.Event, latest string, err error) string {
	st := state.New()
	for _, e := range kept {
		if state.Apply(st, e) == nil {
			continue
		}
		switch {
		case e.Change != "" && e.Run == latest:
			return fmt.Sprintf("the latest run, %s, carries on %s from it (%v)", e.Run, e.Change, err)
		case e.Change != "":
			return fmt.Sprintf("run %s carries on %s from it (%v)", e.Run, e.Change, err)
		}
		break
	}
	return fmt.Sprintf("the runs kept need its events (%v)", err)
}

// sameStand reports whether a and b, one change in two projections,
// stand in the same place: equal but for the numbers that name its logs
// and prompts (the iterations, verify rounds and integration attempts of
// earlier runs), of which only the iterations its budget still counts
// matter: none once it is on main or done for the run (a retry from
// pending counts from its last iteration, whatever the numbers).
func sameStand(a, b *state.Change) bool {
	if a == nil || b == nil {
		return a == b
	}
	norm := func(c state.Change) state.Change {
		base := c.IterationBase
		c.Iteration -= base
		c.StartedIteration = max(c.StartedIteration-base, 0)
		if c.Status == state.Merged || c.Status.Terminal() {
			c.Iteration, c.StartedIteration = 0, 0
		}
		c.IterationBase, c.VerifyRound, c.IntegrationTries = 0, 0, 0
		return c
	}
	return reflect.DeepEqual(norm(*a), norm(*b))
}

// filesOf are, by run, the files removing the chosen runs removes: those
// their events name and their folders hold, less what the kept events
// name, each with the first run that names it. gone reports the paths
// removing them takes away, whether their files are there or not (an
// earlier prune may have removed them before it was stopped): those
// files, and any other the runs' events name or that was in their
// folders, that no kept event names.
func filesOf(layout rundir.Layout, runs []history.Run, events []journal.Event, chosen map[string]bool, kept []journal.Event) (files map[string][]File, gone func(string) bool, err error) {
	found, err := findUnnamed(layout, runs, events)
	if err != nil {
		return nil, nil, err
	}
	keep := map[string]bool{}
	for _, e := range kept {
		found.namedBy(layout, e, keep)
	}
	for _, r := range runs {
		if !chosen[r.ID] {
			for _, rel := range found.dashboard[r.ID] {
				keep[rel] = true
			}
		}
	}
	var folders []string
	for _, r := range runs {
		if chosen[r.ID] {
			folders = append(folders, rundir.Name+"/"+rundir.RunsDir+"/"+r.ID+"/")
		}
	}
	seen := map[string]bool{}
	gone = func(rel string) bool {
		if keep[rel] || !removable(rel) {
			return false
		}
		return seen[rel] || slices.ContainsFunc(folders, func(f string) bool { return strings.HasPrefix(rel, f) })
	}
	out := map[string][]File{}
	add := func(run, rel string) error {
		if seen[rel] || keep[rel] || !removable(rel) {
			return nil
		}
		seen[rel] = true
		info, err := os.Lstat(filepath.Join(layout.Root(), filepath.FromSlash(rel)))
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			out[run] = append(out[run], File{Path: rel, Bytes: info.Size()})
		}
		return nil
	}
	for _, r := range runs {
		if !chosen[r.ID] {
			continue
		}
		named := map[string]bool{}
		for _, e := range r.Own(events) {
			found.namedBy(layout, e, named)
		}
		for _, rel := range found.dashboard[r.ID] {
			named[rel] = true
		}
		folder := layout.Run(r.ID)
		err := filepath.WalkDir(folder, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(layout.Root(), p)
			if err == nil {
				named[filepath.ToSlash(rel)] = true
			}
			return err
		})
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, nil, err
		}
		for _, rel := range sortedKeys(named) {
			if err := add(r.ID, rel); err != nil {
				return nil, nil, err
			}
		}
	}
	return out, gone, nil
}

// removableDirs are the folders of the run directory prune removes files
// from: the changes' logs and prompts, the runs' folders, and the agents'
// session totals.
var removableDirs = []string{"logs", "changes", rundir.RunsDir, sessionsDir}

// sessionsDir is the folder, below .set, of the agents' session totals
// (rundir.Layout.Sessions).
const sessionsDir = "sessions"

// unnamed are the files of the run directory that belong to a run though
// no event names them, found where they are:
//   - a session's totals, .set/sessions/<adapter>-<session>.json, belong
//     to every run whose events name the session (sessionId): a session
//     resumed in a kept run keeps its file;
//   - a dashboard's apply log, .set/logs/_dashboard/apply-<stamp>.log,
//     belongs to the first run with an event at or after its stamp: the
//     run that apply started or resumed (or, when it started none, the
//     next run); a log after the latest run's last event belongs to none
//     and stays.
//
// A regeneration log is found from its integration attempt's event
// instead (namedBy).
type unnamed struct {
	sessions  map[string][]string // session ID -> its files
	dashboard map[string][]string // run ID -> its apply logs
}

// findUnnamed lists the session files and dashboard apply logs of
// layout's run directory, by session and by run.
func findUnnamed(layout rundir.Layout, runs []history.Run, events []journal.Event) (unnamed, error) {
	u := unnamed{sessions: map[string][]string{}, dashboard: map[string][]string{}}
	entries, err := os.ReadDir(layout.Sessions())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return u, err
	}
	for _, d := range entries {
		// <adapter>-<session>.json; an adapter's name has no dash.
		_, id, ok := strings.Cut(strings.TrimSuffix(d.Name(), ".json"), "-")
		if !ok || id == "" || !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".json") {
			continue
		}
		u.sessions[id] = append(u.sessions[id], rundir.Name+"/"+sessionsDir+"/"+d.Name())
	}
	entries, err = os.ReadDir(filepath.Join(layout.Root(), rundir.Name, "logs", rundir.DashboardLogs))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return u, err
	}
	for _, d := range entries {
		stamp, ok := strings.CutPrefix(strings.TrimSuffix(d.Name(), ".log"), "apply-")
		if !ok || !strings.HasSuffix(d.Name(), ".log") {
			continue
		}
		at, err := time.Parse(rundir.DashboardApplyStamp, stamp)
		if err != nil {
			continue
		}
		for _, r := range runs {
			if !events[r.Last].Time.Before(at) {
				_, rel := layout.DashboardApplyLog(stamp)
				u.dashboard[r.ID] = append(u.dashboard[r.ID], rel)
				break
			}
		}
	}
	return u, nil
}

// namedBy adds to paths the files of the run directory e names: the paths
// in its payload (pathsIn), the regeneration log of an integration
// attempt, and the totals of the session it names.
func (u unnamed) namedBy(layout rundir.Layout, e journal.Event, paths map[string]bool) {
	pathsIn(e.Data, paths)
	var d struct {
		Attempt   int    `json:"attempt"`
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(e.Data, &d) != nil {
		return
	}
	if e.Type == journal.IntegrationAttempt && e.Change != "" {
		_, rel := layout.RegenerateLog(e.Change, d.Attempt)
		paths[rel] = true
	}
	for _, rel := range u.sessions[d.SessionID] {
		paths[rel] = true
	}
}

// removable reports whether rel, a slash path relative to the project
// root, may be removed: clean, below one of removableDirs of .set.
func removable(rel string) bool {
	if path.Clean(rel) != rel || strings.Contains(rel, "\\") {
		return false
	}
	for _, dir := range removableDirs {
		if strings.HasPrefix(rel, rundir.Name+"/"+dir+"/") {
			return true
		}
	}
	return false
}

// removeEmptyParents removes the folders of rel that its removal left
// empty, up to (not including) the removable folder it is in.
func removeEmptyParents(layout rundir.Layout, rel string) {
	for dir := path.Dir(rel); strings.Count(dir, "/") > 1; dir = path.Dir(dir) {
		if os.Remove(filepath.Join(layout.Root(), filepath.FromSlash(dir))) != nil {
			return // not empty, or gone
		}
	}
}

// pathsIn adds to paths every string of the JSON data that is a path in
// the run directory (".set/…"): the logs, prompts and folders an event's
// payload names, whatever its field.
func pathsIn(data []byte, paths map[string]bool) {
	var v any
	if json.Unmarshal(data, &v) != nil {
		return
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			if strings.HasPrefix(v, rundir.Name+"/") {
				paths[v] = true
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

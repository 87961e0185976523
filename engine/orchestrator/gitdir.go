package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/set-engine/set/engine/agent"
	"github.com/set-engine/set/engine/atomicfile"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/shellquote"
	"github.com/set-engine/set/engine/state"
)

// gitDirGuard keeps what makes git run programs in the repository's
// shared git directory (its hooks and the configuration keys that name a
// program or include a file, see git.ExecSnapshot) as the run found it.
// An agent's worktree shares that directory with the user's checkout:
// a hook planted there would run on the user's next commit, long after
// the run. (set's own git commands never run hooks, see git.run.)
//
// Invariants: the snapshot is taken once, before the first dispatch, and
// every check compares with it under mu, so two checks never undo the
// same thing twice. Whatever a check finds changed is undone at once,
// journaled, and fails every suspect: the change whose agent iteration or
// verify gate had just ended, and each other change whose agent or
// verify gates ran since the last check that found nothing (with one
// change at work at a time, the one that did it). A change found at the
// end of the run, which no such check saw, fails the run.
//
// The snapshot lives in the run directory too (rundir.Layout.
// GitDirSnapshot), from take until the run's last check, so that a run
// killed (SIGKILL, a crash) before that check leaves it behind: the next
// run compares the repository with it before it takes its own (see
// take), and what an agent of the killed run did after the last check
// cannot outlive the run unseen.
//
// It is one of the run's services: the recorder shows it every event
// before the sentinel sees it (see newServices), and it stops a suspect
// through the change's watch and reports what ends the run to the loop
// through watches.fail.
type gitDirGuard struct {
	// root is the project's root; file where the snapshot is kept.
	root, file string
	rec        *recorder
	watches    *watches

	mu     sync.Mutex
	before *git.ExecSnapshot // nil until the run took it
	// working are the changes whose agent iteration or verify gate runs
	// now (from its start event to its end event); ranSince those that
	// worked at any moment since the last check that found nothing.
	working, ranSince map[string]bool
}

// gitDirRule names the guard where the journal names a sentinel rule
// (SENTINEL_ACTION): no rule of a project can have the name, which the
// schema allows no dot in.
const gitDirRule = "set.git_dir"

// take takes the snapshot the run's checks compare with, and keeps it in
// the guard's file until the run's last check (see checkAtEnd).
//
// A snapshot already in the file was taken by a run killed before its
// last check. What changed since is either what an agent of that run
// did after the run's last check, or what the user did while no run was
// going (a hook a tool installed, an alias), and nothing tells the two
// apart: the mtime of a hook is whatever its writer made it (touch -d,
// cp -p), and a configuration key has none of its own. So take neither
// undoes it, which could remove the user's own work, nor charges it to a
// change: it journals GIT_DIR_CHANGED, which names each change with its
// path and what to do if it is not the user's (apply shows it above its
// rows, as do setctl events and the dashboard), and then takes the
// run's snapshot of the repository as it stands, so the run neither
// undoes those changes later nor names them again. The event is
// journaled before the new snapshot replaces the old one: a run killed
// in between names them again, never not at all.
func (g *gitDirGuard) take(ctx context.Context) error {
	unwatched, err := g.sinceKilled(ctx)
	if err != nil {
		return err
	}
	s, err := git.TakeExecSnapshot(ctx, g.root)
	if err != nil {
		return fmt.Errorf("reading the hooks and configuration of the repository's git directory: %w", err)
	}
	if len(unwatched) > 0 {
		if err := g.rec.emit("", journal.GitDirChangedData{Changes: unwatched}); err != nil {
			return err
		}
	}
	data, err := s.Encode()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(g.file, data, 0o644); err != nil {
		return fmt.Errorf("keeping the snapshot of the repository's git directory: %w", err)
	}
	g.mu.Lock()
	g.before = s
	g.mu.Unlock()
	return nil
}

// sinceKilled is what changed in the repository since the snapshot a
// killed run left in the guard's file (nothing when there is none), each
// with its path and what to do about it.
func (g *gitDirGuard) sinceKilled(ctx context.Context) ([]journal.GitDirChange, error) {
	data, err := os.ReadFile(g.file)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	saved, err := git.DecodeExecSnapshot(ctx, g.root, data)
	if err != nil {
		return nil, fmt.Errorf("%s, the snapshot of the repository's git directory a killed run took: %w; look at the git directory's hooks and config, then remove the file", g.file, err)
	}
	now, err := saved.Now(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the hooks and configuration of the repository's git directory: %w", err)
	}
	var out []journal.GitDirChange
	for _, c := range saved.Diff(now) {
		path := saved.Where(c)
		out = append(out, journal.GitDirChange{What: c.String(), Path: path, Do: advice(c, path)})
	}
	return out, nil
}

// advice says what the user does about change c, in the file at path
// (relative to the repository's top), when it is not their own. An agent
// chose the names in it, so every name is one quoted shell word: pasting
// the command runs nothing else.
func advice(c git.ExecChange, path string) string {
	switch {
	case c.Hook != "" && c.What == "added":
		return "if you did not add it, remove it: rm " + shellquote.Word(path)
	case c.Hook != "" && c.What == "changed":
		return "if you did not change it, read it before your next commit, which runs it"
	case c.Hook != "":
		return "if you did not remove it, write it back"
	case c.What == "added":
		return "if you did not set it, remove it: git config --file " + shellquote.Word(path) + " --unset-all " + shellquote.Word(c.KeyName())
	case c.What == "changed":
		return "if you did not change it, set it back: git config --file " + shellquote.Word(path) + " --edit"
	}
	return "if you did not remove it, set it again: git config --file " + shellquote.Word(path) + " --edit"
}

// forget removes the guard's file once the run's last check left the
// repository as the snapshot has it. A file the run did not take (its
// run ended before the first dispatch) is a killed run's, kept for the
// next run to compare with.
func (g *gitDirGuard) forget() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.before == nil {
		return nil
	}
	if err := os.Remove(g.file); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// restore undoes what changed since the snapshot, and returns it
// with the changes suspected of it (see gitDirGuard); the suspects start
// again from the changes at work now.
func (g *gitDirGuard) restore(ctx context.Context) (changes []git.ExecChange, suspects []string, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.before == nil {
		return nil, nil, nil
	}
	changes, err = g.before.Restore(ctx)
	if len(changes) > 0 {
		suspects = slices.Sorted(maps.Keys(g.ranSince))
	}
	g.ranSince = maps.Clone(g.working)
	return changes, suspects, err
}

// noteWork keeps gitDirGuard.working and ranSince up to date with event
// e, and reports whether e ends a change's agent iteration or verify
// gate: what ran code of the change's agent.
func (g *gitDirGuard) noteWork(e journal.Event) (ended bool) {
	var start bool
	switch e.Type {
	case journal.AgentSessionDecision:
		start = true
	case journal.AgentIteration:
		ended = true
	case journal.GateStarted:
		d, err := journal.Decode[journal.GateStartedData](e)
		start = err == nil && d.Stage == "verify"
	case journal.VerifyGate:
		d, err := journal.Decode[journal.VerifyGateData](e)
		ended = err == nil && d.Stage == "verify"
	}
	if e.Change == "" || !(start || ended) {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.working == nil {
		g.working, g.ranSince = map[string]bool{}, map[string]bool{}
	}
	// A worker does one thing at a time: a start or an end of its
	// change's work replaces an end an interrupted iteration or a stopped
	// stack never recorded.
	if start {
		g.working[e.Change] = true
	} else {
		delete(g.working, e.Change)
	}
	g.ranSince[e.Change] = true
	return ended
}

// check checks the shared git directory after event e of a change
// was recorded (see newServices), when e ends an agent iteration or
// a verify gate: what changed there is undone, journaled as a
// SENTINEL_ACTION of gitDirRule for each suspect (see gitDirGuard), and
// each suspect still at work fails as failed:agent_error with a security
// message, through the sentinel's stop: the loop takes it at the next
// iteration boundary, the worker as soon as the agent is done, a running
// iteration or verify stack stops at once. failed:agent_error is
// terminal, spends no retry budget, and a new setctl apply retries it
// only when the user runs one. A check that cannot read the repository
// ends the run (see watches.fail).
//
// The checks run in the goroutine that recorded e, on a context of their
// own: they read a few files, and run git only when a configuration file
// changed.
func (g *gitDirGuard) check(e journal.Event) {
	if !g.noteWork(e) {
		return
	}
	changes, suspects, err := g.restore(context.Background())
	if err != nil {
		g.watches.fail(fmt.Errorf("checking the repository's git directory after %s: %w", e.Change, err))
		return
	}
	if len(changes) == 0 {
		return
	}
	var failing []string
	for _, c := range suspects {
		// A change that failed or waits in the merge queue has no agent
		// or gate at work: its worker recorded no end of what it ran.
		if s := g.rec.status(c); c == e.Change || (s.Active() && s != state.Queued && s != state.Integrating) {
			failing = append(failing, c)
		}
	}
	if len(failing) == 0 {
		// Nothing of an agent's ran since the last check: it is the
		// run's, as at its end (checkAtEnd).
		g.watches.fail(fmt.Errorf("security: the repository's git directory, which every worktree shares, changed while no agent worked: %s; set undid it", strings.Join(names(changes), "; ")))
		return
	}
	msg := securityMessage(failing, changes)
	facts, err := json.Marshal(map[string]any{"changes": names(changes), "suspects": failing, "undone": true})
	if err != nil {
		g.watches.fail(err)
		return
	}
	for _, c := range failing {
		if err := g.rec.emit(c, journal.SentinelActionData{Rule: gitDirRule, Action: "fail", Step: 1, Steps: 1, When: msg, Facts: facts}); err != nil {
			g.watches.fail(err)
			return
		}
		g.watches.stop(c, &agent.Stop{Action: "fail", Rule: gitDirRule, Fails: "agent_error", Reason: msg})
	}
}

// checkAtEnd is the run's last check, whatever its result: a change
// no check after an iteration or a gate saw (a gate of the merge queue, a
// process an agent left behind) is undone, and fails the run with a
// security message, after runErr when the run failed already. Once the
// repository is as the snapshot has it, the guard's file goes (see
// forget); a check that could not undo everything leaves it for the
// next run.
func (g *gitDirGuard) checkAtEnd(ctx context.Context, result string, runErr error) (string, error) {
	changes, _, err := g.restore(context.WithoutCancel(ctx))
	if err == nil {
		err = g.forget()
	}
	switch {
	case err != nil:
		err = fmt.Errorf("checking the repository's git directory at the end of the run: %w", err)
	case len(changes) > 0:
		err = fmt.Errorf("security: the repository's git directory, which every worktree shares, changed during the run: %s; set undid it", strings.Join(names(changes), "; "))
	default:
		return result, runErr
	}
	return "failed", errors.Join(runErr, err)
}

// securityMessage is the reason the suspected changes fail for the
// changes found in the shared git directory.
func securityMessage(suspects []string, changes []git.ExecChange) string {
	who := suspects[0] + "'s agent worked, outside its worktree"
	if len(suspects) > 1 {
		who = "the agents of " + english.List(suspects) + " worked, outside their worktrees (set cannot tell which of them did it)"
	}
	return fmt.Sprintf("security: the repository's git directory, which every worktree shares, changed while %s: %s; set undid it",
		who, strings.Join(names(changes), "; "))
}

// names are the changes as messages name them.
func names(changes []git.ExecChange) []string {
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = c.String()
	}
	return out
}

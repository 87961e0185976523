package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/set-engine/set/engine/agent"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/journal"
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
// journaled, and fails the change whose agent iteration or verify gate
// had just ended; a change found at the end of the run, which no such
// check saw, fails the run.
type gitDirGuard struct {
	mu     sync.Mutex
	before *git.ExecSnapshot // nil until the run took it
}

// gitDirRule names the guard where the journal names a sentinel rule
// (SENTINEL_ACTION): no rule of a project can have the name, which the
// schema allows no dot in.
const gitDirRule = "set.git_dir"

// guardGitDir takes the snapshot the run's checks compare with.
func (r *run) guardGitDir(ctx context.Context) error {
	s, err := git.TakeExecSnapshot(ctx, r.opts.Root)
	if err != nil {
		return fmt.Errorf("reading the hooks and configuration of the repository's git directory: %w", err)
	}
	r.gitDir.mu.Lock()
	r.gitDir.before = s
	r.gitDir.mu.Unlock()
	return nil
}

// restoreGitDir undoes what changed since the snapshot, and returns it.
func (r *run) restoreGitDir(ctx context.Context) ([]git.ExecChange, error) {
	r.gitDir.mu.Lock()
	defer r.gitDir.mu.Unlock()
	if r.gitDir.before == nil {
		return nil, nil
	}
	return r.gitDir.before.Restore(ctx)
}

// checkGitDir checks the shared git directory after event e of a change
// was recorded (see recorder.observe), when e ends an agent iteration or
// a verify gate: what that agent or gate, or anything running meanwhile,
// changed there is undone, journaled as a SENTINEL_ACTION of gitDirRule,
// and the change fails as failed:agent_error with a security message,
// through the sentinel's stop: the loop takes it at the next iteration
// boundary, the worker as soon as the agent is done, a verify stack stops
// at once. failed:agent_error is terminal, spends no retry budget, and a
// new setctl apply retries it only when the user runs one. A check that
// cannot read the repository ends the run (see run.sentinelErr).
//
// The checks run in the goroutine that recorded e, on a context of their
// own: they read a few files, and git only when a configuration file
// changed.
func (r *run) checkGitDir(e journal.Event) {
	if e.Change == "" || !endsAgentWork(e) {
		return
	}
	changes, err := r.restoreGitDir(context.Background())
	if err != nil {
		r.sentinelErr(fmt.Errorf("checking the repository's git directory after %s: %w", e.Change, err))
		return
	}
	if len(changes) == 0 {
		return
	}
	msg := securityMessage(e.Change, changes)
	facts, err := json.Marshal(map[string]any{"changes": names(changes), "undone": true})
	if err == nil {
		err = r.rec.emit(e.Change, journal.SentinelActionData{Rule: gitDirRule, Action: "fail", Step: 1, Steps: 1, When: msg, Facts: facts})
	}
	if err != nil {
		r.sentinelErr(err)
		return
	}
	r.watchOf(e.Change).stop(&agent.Stop{Action: "fail", Rule: gitDirRule, Fails: "agent_error", Reason: msg})
}

// endsAgentWork reports whether e ends an agent iteration or a gate of
// the verify stage, which run code of the change's agent.
func endsAgentWork(e journal.Event) bool {
	switch e.Type {
	case journal.AgentIteration:
		return true
	case journal.VerifyGate:
		d, err := journal.Decode[journal.VerifyGateData](e)
		return err == nil && d.Stage == "verify"
	}
	return false
}

// checkGitDirAtEnd is the run's last check, whatever its result: a change
// no check after an iteration or a gate saw (a gate of the merge queue, a
// process an agent left behind) is undone, and fails the run with a
// security message; runErr, when there is one, stays the run's error.
func (r *run) checkGitDirAtEnd(ctx context.Context, result string, runErr error) (string, error) {
	changes, err := r.restoreGitDir(context.WithoutCancel(ctx))
	switch {
	case runErr != nil:
		return result, runErr
	case err != nil:
		return "failed", fmt.Errorf("checking the repository's git directory at the end of the run: %w", err)
	case len(changes) > 0:
		return "failed", fmt.Errorf("security: the repository's git directory, which every worktree shares, changed during the run: %s; set undid it", strings.Join(names(changes), "; "))
	}
	return result, nil
}

// securityMessage is the reason a change fails for changes found in the
// shared git directory after its agent's work.
func securityMessage(change string, changes []git.ExecChange) string {
	return fmt.Sprintf("security: the repository's git directory, which every worktree shares, changed while %s's agent worked, outside its worktree: %s; set undid it",
		change, strings.Join(names(changes), "; "))
}

// names are the changes as messages name them.
func names(changes []git.ExecChange) []string {
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = c.String()
	}
	return out
}

package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/set-engine/set/engine/llm/usage"
	"github.com/set-engine/set/engine/proc"
)

// Replay plays recorded iterations back: iteration n of change C applies
// <Dir>/C/<n>.patch at the worktree root and commits it. The optional
// <Dir>/C/<n>.json gives the iteration's duration, usage and outcome
// (replayMeta). Order of an iteration:
//
//  1. sleep durationMs, calling OnActivity every 100 ms (ctx ends it);
//  2. `git apply`, else `git apply --3way`; a patch that is already in
//     the tree (its reverse applies) is accepted as applied, so a
//     re-run after a crash is harmless;
//  3. `git add -A`, then `git commit -m "<change>: iteration <n> (replay)"`,
//     or `git commit --no-edit` when a merge is in progress (MERGE_HEAD),
//     which completes the merge; nothing staged outside a merge → no
//     commit, and no error.
//
// Commits get the identity "set <set@localhost>" only where git config
// has no user.email for the worktree.
type Replay struct {
	// Dir is the absolute recordings directory.
	Dir string
}

// Name is "replay".
func (r *Replay) Name() string { return "replay" }

// replayMeta is <n>.json.
type replayMeta struct {
	DurationMs int64        `json:"durationMs"`
	Tokens     usage.Tokens `json:"tokens"`
	Model      string       `json:"model"`
	CostUSD    float64      `json:"costUsd"`
	Done       *bool        `json:"done"`
	Summary    string       `json:"summary"`
}

// Run replays iteration req.Iteration of req.Change.
func (r *Replay) Run(ctx context.Context, req Request) (Result, error) {
	start := time.Now()
	res := Result{SessionID: req.SessionID}
	finish := func(err error) (Result, error) {
		res.Duration = time.Since(start)
		if err != nil {
			res.Done = false
		}
		return res, err
	}
	dir := filepath.Join(r.Dir, req.Change)
	n := strconv.Itoa(req.Iteration)
	patchPath := filepath.Join(dir, n+".patch")
	patch, err := os.ReadFile(patchPath)
	if errors.Is(err, fs.ErrNotExist) {
		return finish(fmt.Errorf("agent replay: no recording for iteration %d of %s (%s)", req.Iteration, req.Change, patchPath))
	}
	if err != nil {
		return finish(fmt.Errorf("agent replay: %w", err))
	}
	meta, err := readMeta(filepath.Join(dir, n+".json"))
	if err != nil {
		return finish(err)
	}
	log := newSyncWriter(req.Log)
	fmt.Fprintf(log, "replay: %s iteration %d from %s\n", req.Change, req.Iteration, patchPath)

	if err := sleepActive(ctx, time.Duration(meta.DurationMs)*time.Millisecond, req.OnActivity); err != nil {
		return finish(runErr(ctx, "replay"))
	}
	g := gitRunner{ctx: ctx, dir: req.Worktree, env: req.Env, log: log}
	if len(bytes.TrimSpace(patch)) > 0 {
		if err := g.apply(patchPath); err != nil {
			return finish(err)
		}
	} else {
		fmt.Fprintln(log, "replay: empty patch, nothing to apply")
	}
	if err := g.commit(fmt.Sprintf("%s: iteration %d (replay)", req.Change, req.Iteration)); err != nil {
		return finish(err)
	}
	if req.OnActivity != nil {
		req.OnActivity()
	}

	res.Done = meta.Done == nil || *meta.Done
	res.Summary = truncate(meta.Summary, maxSummary)
	if res.Summary == "" {
		res.Summary = fmt.Sprintf("replayed %s/%s.patch", req.Change, n)
	}
	if meta.present {
		res.Calls = []CallUsage{{Model: meta.Model, Tokens: meta.Tokens, CostUSD: meta.CostUSD}}
	}
	return finish(nil)
}

type metaFile struct {
	replayMeta
	present bool
}

// readMeta reads an optional <n>.json; a missing file is the zero meta.
func readMeta(path string) (metaFile, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return metaFile{}, nil
	}
	if err != nil {
		return metaFile{}, fmt.Errorf("agent replay: %w", err)
	}
	var m replayMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return metaFile{}, fmt.Errorf("agent replay: %s: %v", path, err)
	}
	if m.DurationMs < 0 {
		return metaFile{}, fmt.Errorf("agent replay: %s: durationMs is negative", path)
	}
	return metaFile{replayMeta: m, present: true}, nil
}

// sleepActive waits d, calling onActivity every 100 ms; it returns
// ctx.Err() if ctx ends first.
func sleepActive(ctx context.Context, d time.Duration, onActivity func()) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	if onActivity != nil {
		onActivity()
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			return nil
		case <-tick.C:
			if onActivity != nil {
				onActivity()
			}
		}
	}
}

// gitRunner runs git in one worktree through proc, logging each command
// and its output. It is the replayed agent's git, not set's (which is
// engine/git's alone): like a coding agent's, it runs in the agent's
// process group, with the agent's environment, into the agent's log, and
// its hooks and configuration are the user's.
type gitRunner struct {
	ctx context.Context
	dir string
	env []string
	log io.Writer
}

// run returns git's trimmed combined output and exit code; err is set only
// when git could not run or ctx ended.
func (g gitRunner) run(args ...string) (string, int, error) {
	var buf bytes.Buffer
	out, err := proc.Run(g.ctx, proc.Spec{
		Argv:   append([]string{"git"}, args...),
		Dir:    g.dir,
		Env:    g.env,
		Stdout: &buf,
		Stderr: &buf,
	})
	fmt.Fprintf(g.log, "$ git %s\n%s", strings.Join(args, " "), buf.String())
	if err != nil {
		return "", -1, fmt.Errorf("agent replay: git: %w", err)
	}
	if out.Canceled {
		return "", -1, runErr(g.ctx, "replay")
	}
	return strings.TrimSpace(buf.String()), out.ExitCode, nil
}

// must runs git and turns a non-zero exit into an error.
func (g gitRunner) must(args ...string) (string, error) {
	s, code, err := g.run(args...)
	if err == nil && code != 0 {
		err = fmt.Errorf("agent replay: git %s: exit %d: %s", strings.Join(args, " "), code, head([]byte(s), 1000))
	}
	return s, err
}

// apply applies the patch at path: plainly, then with --3way; a patch
// whose reverse applies is already there.
func (g gitRunner) apply(path string) error {
	out, code, err := g.run("apply", "--whitespace=nowarn", path)
	if err != nil || code == 0 {
		return err
	}
	_, code3, err := g.run("apply", "--3way", "--whitespace=nowarn", path)
	if err != nil || code3 == 0 {
		return err
	}
	if _, codeR, err := g.run("apply", "--reverse", "--check", path); err != nil || codeR == 0 {
		if err == nil {
			fmt.Fprintln(g.log, "replay: the patch is already applied")
		}
		return err
	}
	return fmt.Errorf("agent replay: git apply %s failed: %s", path, head([]byte(out), 1000))
}

// commit stages everything and commits it with msg, or completes a merge
// in progress. Nothing to commit outside a merge is not an error.
func (g gitRunner) commit(msg string) error {
	if _, err := g.must("add", "-A"); err != nil {
		return err
	}
	_, code, err := g.run("rev-parse", "-q", "--verify", "MERGE_HEAD")
	if err != nil {
		return err
	}
	merging := code == 0
	if !merging {
		_, code, err := g.run("diff", "--cached", "--quiet")
		if err != nil {
			return err
		}
		if code == 0 {
			fmt.Fprintln(g.log, "replay: nothing changed, no commit")
			return nil
		}
	}
	args, err := g.identity()
	if err != nil {
		return err
	}
	if merging {
		args = append(args, "commit", "--no-edit")
	} else {
		args = append(args, "commit", "-m", msg)
	}
	_, err = g.must(args...)
	return err
}

// identity is the -c flags that give a commit an author where git config
// has none: "set <set@localhost>" when user.email is unset, only the name
// when just user.name is.
func (g gitRunner) identity() ([]string, error) {
	email, _, err := g.run("config", "user.email")
	if err != nil {
		return nil, err
	}
	if email == "" {
		return []string{"-c", "user.name=set", "-c", "user.email=set@localhost"}, nil
	}
	name, _, err := g.run("config", "user.name")
	if err != nil || name != "" {
		return nil, err
	}
	return []string{"-c", "user.name=set"}, nil
}

package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm"
	"github.com/set-engine/set/engine/llm/usage"
	"github.com/set-engine/set/engine/redact"
	"github.com/set-engine/set/engine/rundir"
)

// LoopInput configures the iterations of one change until it is done.
type LoopInput struct {
	Adapter Adapter
	Prompt  PromptInput   // Iteration is set per iteration
	Layout  rundir.Layout // the run directory: prompts and logs
	// Worktree is the change's worktree of the repository at
	// Layout.Root(), on branch set/<change>; the loop proves it is before
	// each iteration and before committing what the agent left, and ends
	// with a *git.NotWorktreeError when it is not.
	Worktree string
	// MainBranch is merged into the branch at each iteration boundary when
	// it moved and merges cleanly.
	MainBranch string
	// Done is the number of iterations already recorded for the change;
	// the loop continues from Done+1, so an interrupted iteration is run
	// again.
	Done int
	// Fresh says the worktree was made for this loop just now: a new
	// branch at main's head, clean, with nothing on it but set's folder
	// commit. Before the first iteration the loop then skips what only
	// an earlier run or iteration leaves (uncommitted work, work of the
	// agent's to count, a branch behind main), three git processes on
	// the way from dispatch to the agent.
	Fresh         bool
	MaxIterations int
	Model         string
	// ModelField is the set.cue field that names Model, with its
	// position when the project declares it
	// ("project.agent.models.implement (set.cue:9:22)"): a model the
	// endpoint does not serve ends the loop with an error that says to
	// change it.
	ModelField  string
	SessionID   string
	TokensUsed  int64
	TokenBudget int64
	// TokenField is the set.cue field of TokenBudget
	// ("budgets.tokens.M"), which BUDGET_EXCEEDED names when the change's
	// tokens reach it.
	TokenField string
	// Steer is the sentinel's steering of the change (nil: none): it
	// stops iterations, restarts them, and ends the loop with a Stop.
	Steer Steering
	Env   []string
	// Redact masks secrets in the prompts and the agent's logs (nil: none
	// are masked).
	Redact *redact.Redactor
	// Siblings gives what iteration n's prompt hands on of what the run's
	// other changes learned (nil: nothing); the iteration's
	// AGENT_SESSION_DECISION records their signatures. It is asked once
	// per iteration, before the prompt is written.
	Siblings func(n int) []SiblingNote
	// Emit records an event of the change.
	Emit func(journal.Payload) error
	// Budget, derived from Loop's context, ends the agent's work (the
	// change's wall-time budget): the agent is stopped and the loop ends
	// as interrupted. Git and the journal run on Loop's context, so a
	// budget ending mid-call never turns into a run error. Nil means
	// Loop's context.
	Budget context.Context
}

// SiblingNote is an episode of another change of the run that a prompt
// hands on (learn.Siblings): its signature and the line the prompt shows
// (learn.SiblingNote).
type SiblingNote struct{ Signature, Note string }

// FolderTrailer ("Set-Folder: <change>") ends the commit in which set puts
// the change's OpenSpec change folder on its branch at dispatch: the loop
// never counts it as the agent's work.
const FolderTrailer = "Set-Folder"

// Ending says how the loop ended.
type Ending string

const (
	// EndDone: the agent reported success and the branch has commits
	// of its own beyond main (set's FolderTrailer commit does not count),
	// with no merge in progress.
	EndDone        Ending = "done"
	EndIterations  Ending = "iterations"  // the iteration budget is spent
	EndAgentError  Ending = "agent-error" // the agent failed to run twice in a row, or failed the same way three times (see sameFailure)
	EndInterrupted Ending = "interrupted" // the context ended
	// EndStopped: the sentinel ended the loop (LoopResult.Stop says how:
	// redispatch, fail or pause).
	EndStopped Ending = "stopped"
)

// LoopResult is how the loop ended and where it left the change.
type LoopResult struct {
	Ending     Ending
	Reason     string
	Iterations int // iterations recorded, in total
	Tokens     int64
	SessionID  string
	// Stop is the sentinel's stop that ended the loop (EndStopped).
	Stop *Stop
}

// maxConsecutiveErrors is how many iterations in a row may fail to run
// before the change fails with an agent error.
const maxConsecutiveErrors = 2

// maxSameFailures is how many iterations in a row may end the same way
// (the same non-zero exit code, the same last line of output, no commit)
// before the change fails with an agent error: an agent that fails at once
// (its script missing, no API key) fails again on every retry, and
// running out the iteration budget would only bury the reason.
const maxSameFailures = 3

// maxLastLine bounds the last line of an agent's output that an
// iteration's event carries.
const maxLastLine = 200

// Loop runs agent iterations until the change is done or a budget ends it.
// Every iteration writes its prompt to .set/changes/<change>/prompt-<n>.md
// and its output to .set/logs/<change>/agent-<n>.log, commits what the
// agent left uncommitted, and records AGENT_ITERATION and LLM_CALL events.
// A run error (the journal or git failing) is returned as an error.
func Loop(ctx context.Context, in LoopInput) (LoopResult, error) {
	budget := in.Budget
	if budget == nil {
		budget = ctx
	}
	if in.Steer == nil {
		in.Steer = unsteered{}
	}
	res := LoopResult{Iterations: in.Done, Tokens: in.TokensUsed, SessionID: in.SessionID}
	var streak streaks
	var same sameFailure
	retryContext := in.Prompt.RetryContext
	// Leftovers are committed only in the change's own worktree: git in
	// any other directory could commit onto main.
	if err := in.checkWorktree(ctx); err != nil {
		return res, err
	}
	if !in.Fresh {
		if err := commitLeftovers(ctx, in); err != nil {
			return res, err
		}
	}
	for n := in.Done + 1; ; n++ {
		fresh := in.Fresh && n == in.Done+1
		if stop := in.Steer.Take(); stop != nil {
			if stop.Action != "restart" {
				res.Ending, res.Reason, res.Stop = EndStopped, stop.Reason, stop
				return res, nil
			}
			streak.restart()
			if !wait(budget, stop.Backoff) {
				res.Ending = EndInterrupted
				return res, nil
			}
		}
		if n > in.MaxIterations {
			res.Ending, res.Reason = EndIterations, english.Plural(in.MaxIterations, "iteration")+" without finishing"
			return res, in.Emit(journal.BudgetExceededData{Budget: "iterations", Used: int64(n - 1), Limit: int64(in.MaxIterations), Field: "budgets.iterations"})
		}
		if budget.Err() != nil {
			res.Ending = EndInterrupted
			return res, nil
		}
		if err := in.checkWorktree(ctx); err != nil {
			return res, err
		}
		if !fresh {
			if err := syncMain(ctx, in.Worktree, in.MainBranch); err != nil {
				return res, err
			}
		}
		it, tail, madeCommits, err := iterate(ctx, budget, in, n, fresh, &res, streak, retryContext)
		if err != nil || res.Ending == EndInterrupted {
			return res, err
		}
		retryContext = streak.next(it, in)
		it.data.Next = retryContext
		res.Iterations = n
		if err := in.Emit(it.data); err != nil {
			return res, err
		}
		if in.TokenBudget > 0 && res.Tokens >= in.TokenBudget && res.Tokens-it.data.Tokens.Total() < in.TokenBudget {
			// Reaching the budget is a fact; what it does is the
			// sentinel's (the stdlib's over_budget rule pauses).
			if err := in.Emit(journal.BudgetExceededData{Budget: "tokens", Used: res.Tokens, Limit: in.TokenBudget, Field: in.TokenField}); err != nil {
				return res, err
			}
		}
		switch {
		case it.data.Result == "done":
			res.Ending = EndDone
			return res, nil
		case it.config:
			// Another iteration would fail the same way.
			res.Ending, res.Reason = EndAgentError, it.data.Error
			return res, nil
		case streak.errors >= maxConsecutiveErrors:
			res.Ending, res.Reason = EndAgentError, it.data.Error
			return res, nil
		case same.add(it.data, madeCommits) >= maxSameFailures:
			res.Ending = EndAgentError
			res.Reason = withLine(fmt.Sprintf("the agent exited %d in %d iterations in a row without a commit", it.data.ExitCode, same.count), lastLine(tail))
			return res, nil
		}
	}
}

// wait waits d on ctx and reports whether ctx is still live.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// streaks counts the iterations in a row that failed to run (errors),
// and remembers whether the sentinel stopped the last one and, if so,
// whether it restarts the session; they decide whether the next
// iteration resumes the agent's session and when the change ends.
type streaks struct {
	errors    int
	stopped   bool
	restarted bool
}

// restart records the sentinel's restart: the next iteration resumes the
// session the stopped one had.
func (s *streaks) restart() { s.restarted = true }

// session decides whether iteration n resumes the agent's last session.
func (s streaks) session(sessionID string, n int) (decision, why string) {
	switch {
	case sessionID != "" && s.stopped && s.restarted:
		return "resume", "the sentinel restarted the previous iteration in its session"
	case sessionID != "" && s.errors == 0 && !s.stopped:
		return "resume", "the previous iteration's session ended normally"
	case sessionID != "":
		return "new", "the previous iteration was stopped or failed"
	case n > 1:
		return "new", "no session to resume"
	}
	return "new", "first iteration"
}

// next counts iteration it into the streaks and returns the retry context
// the next iteration's prompt carries.
func (s *streaks) next(it iteration, in LoopInput) string {
	s.restarted = false
	s.stopped = it.data.Result == "stopped"
	switch it.data.Result {
	case "error":
		s.errors++
		return fmt.Sprintf("The previous iteration failed to run: %s", it.data.Error)
	case "api-error":
		// Not counted with the errors: the sentinel's rules retry it
		// (the stdlib's api_error rule, with backoff).
		s.errors = 0
		return fmt.Sprintf("The previous iteration stopped because the model API failed: %s. Continue where it stopped.", it.data.Error)
	case "stopped":
		s.errors = 0
		return fmt.Sprintf("The previous iteration was stopped by set's supervision: %s. Keep working in small steps, with output.", it.data.Error)
	case "done":
		return ""
	}
	s.errors = 0
	switch {
	case it.inMerge:
		return fmt.Sprintf("The merge of %s into your branch is still in progress: conflict markers remain in %s. Resolve every marker, keeping both sides' intent, and commit.", in.MainBranch, strings.Join(it.unresolved, ", "))
	case it.data.Commits == 0:
		return "The previous iteration ended without any change on the branch: implement the requirements and commit."
	}
	return "The previous iteration ended before the agent reported success: " + it.summary
}

// iteration is one finished run of the agent: its AGENT_ITERATION event
// and what the next prompt needs to know.
type iteration struct {
	data journal.AgentIterationData
	// config: the agent failed on a configuration error (a model the
	// endpoint does not serve), which no further iteration can pass.
	config     bool
	inMerge    bool
	unresolved []string
	summary    string
}

// iterate runs iteration n (fresh: the first on a fresh branch, see
// LoopInput.Fresh): it writes the prompt, decides the session,
// runs the agent on the budget context, commits what the agent left, and
// records its model calls. It reports the iteration, the tail of the
// agent's output, and whether the agent added commits. When the budget
// ended during the run, res.Ending is EndInterrupted and the iteration is
// not recorded: a resumed run does it again.
func iterate(ctx, budget context.Context, in LoopInput, n int, fresh bool, res *LoopResult, streak streaks, retryContext string) (iteration, string, bool, error) {
	change := in.Prompt.Change.Name
	if in.Siblings != nil {
		in.Prompt.Siblings = in.Siblings(n) // in is this iteration's copy
	}
	text, files, err := writePrompt(in, n, retryContext)
	if err != nil {
		return iteration{}, "", false, err
	}
	before := 0 // a fresh branch has no work of the agent's
	if !fresh {
		if before, err = git.CountWork(ctx, in.Worktree, in.MainBranch, "HEAD", FolderTrailer, change); err != nil {
			return iteration{}, "", false, err
		}
	}
	session, err := openSession(in, n, res, streak, files.logRel)
	if err != nil {
		return iteration{}, "", false, err
	}
	ran, err := runAgent(budget, in, n, text, files, session)
	if err != nil {
		return iteration{}, "", false, err
	}
	if budget.Err() != nil {
		res.Ending = EndInterrupted
		return iteration{}, "", false, nil
	}

	// The agent may have broken the worktree (removed its .git file, or
	// switched branches): git must not commit through whatever repository
	// the directory now falls in.
	if err := in.checkWorktree(ctx); err != nil {
		return iteration{}, "", false, err
	}
	// Leftovers are committed, but a merge is never concluded while a
	// conflict marker remains: the agent has not resolved it yet.
	unresolved, _, err := git.CommitLeftovers(ctx, in.Worktree, fmt.Sprintf("%s: iteration %d (uncommitted work)", change, n))
	if err != nil {
		return iteration{}, "", false, err
	}
	commits, err := git.CountWork(ctx, in.Worktree, in.MainBranch, "HEAD", FolderTrailer, change)
	if err != nil {
		return iteration{}, "", false, err
	}
	out := ran.out
	tokens, err := recordCalls(in, n, out.Calls)
	if err != nil {
		return iteration{}, "", false, err
	}
	res.Tokens += tokens.Total()
	if out.SessionID != "" {
		res.SessionID = out.SessionID
	}
	it := iteration{
		data: journal.AgentIterationData{
			Iteration: n, ExitCode: out.ExitCode, Signal: out.Signal, DurationMS: out.Duration.Milliseconds(), Commits: commits,
			Head: git.Head(ctx, in.Worktree), Tokens: tokens, SessionID: out.SessionID, Prompt: files.promptRel, Log: files.logRel,
		},
		inMerge: git.InMerge(ctx, in.Worktree), unresolved: unresolved, summary: out.Summary,
	}
	it.judge(in, ran)
	return it, ran.tail, commits > before, nil
}

// iterationFiles are where an iteration's prompt and the agent's log are
// written: absolute, and relative to the run directory as events name
// them.
type iterationFiles struct {
	prompt, promptRel string
	log, logRel       string
}

// writePrompt writes the prompt of iteration n, redacted, and returns it
// with the iteration's files.
func writePrompt(in LoopInput, n int, retryContext string) (string, iterationFiles, error) {
	change := in.Prompt.Change.Name
	pin := in.Prompt
	pin.Iteration = n
	pin.RetryContext = retryContext
	text := in.Redact.String(Prompt(pin))
	var f iterationFiles
	f.prompt, f.promptRel = in.Layout.Prompt(change, n)
	f.log, f.logRel = in.Layout.AgentLog(change, n)
	for _, dir := range []string{filepath.Dir(f.prompt), filepath.Dir(f.log)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", iterationFiles{}, err
		}
	}
	if err := os.WriteFile(f.prompt, []byte(text), 0o644); err != nil {
		return "", iterationFiles{}, err
	}
	return text, f, nil
}

// openSession decides whether iteration n resumes the agent's session or
// starts a new one, journals the decision (AGENT_SESSION_DECISION, with
// what the agent may do on the run's first iteration), and returns the
// session to resume, "" for a new one.
func openSession(in LoopInput, n int, res *LoopResult, streak streaks, logRel string) (string, error) {
	decision, why := streak.session(res.SessionID, n)
	session := ""
	if decision == "resume" {
		session = res.SessionID
	}
	opened := journal.AgentSessionDecisionData{
		Decision: decision, SessionID: session, Reason: why,
		Iteration: n, Adapter: in.Adapter.Name(), Model: in.Model, Log: logRel,
		Learnings: config.Names(in.Prompt.Learnings()),
	}
	for _, s := range in.Prompt.Siblings {
		opened.Siblings = append(opened.Siblings, s.Signature)
	}
	if p, ok := in.Adapter.(PermissionReporter); ok && n == in.Done+1 {
		// The first iteration of the run says what the agent may do.
		perm, err := p.PermissionMode(in.Env)
		opened.Permissions = perm.String()
		if err != nil {
			opened.Permissions = err.Error()
		}
	}
	return session, in.Emit(opened)
}

// agentRun is what one run of the agent gave.
type agentRun struct {
	out     Result
	err     error  // the adapter's
	stopped *Stop  // the sentinel's stop, when it stopped the agent
	tail    string // the tail of the output, for the last line of a failing agent
}

// runAgent runs the agent for iteration n on the budget context, its
// output redacted into the iteration's log. The error is only the log
// file's; the adapter's is the agentRun's.
func runAgent(budget context.Context, in LoopInput, n int, text string, f iterationFiles, session string) (agentRun, error) {
	log, err := os.Create(f.log)
	if err != nil {
		return agentRun{}, err
	}
	tail := &tailWriter{max: 4 * maxLastLine}
	logw := in.Redact.Writer(log)
	run, ended := in.Steer.Iteration(budget, n)
	out, runErr := in.Adapter.Run(run, Request{
		Change: in.Prompt.Change.Name, Worktree: in.Worktree, Iteration: n, Prompt: text, PromptFile: f.prompt,
		Model: in.Model, SessionID: session, Env: in.Env, Log: io.MultiWriter(logw, tail),
		OnActivity: in.Steer.Output, OnCommand: in.Steer.Command,
	})
	ended()
	logw.Close()
	log.Close()
	return agentRun{out: out, err: runErr, stopped: StopOf(run), tail: tail.String()}, nil
}

// judge sets the iteration's result from what the agent did: done (a
// success it reported, with commits and no merge in progress, kept even
// when the sentinel stopped the process that lingered after it), stopped,
// error, api-error or not-done; and marks a configuration error, which no
// further iteration can pass.
func (it *iteration) judge(in LoopInput, ran agentRun) {
	out, runErr := ran.out, ran.err
	var ce *llm.ConfigError
	if errors.As(runErr, &ce) {
		if ce.Field == "" && ce.Model != "" {
			ce.Field = cmp.Or(in.ModelField, "project.agent.models.implement")
		}
		it.config = true
	}
	switch {
	case out.Done && it.data.Commits > 0 && !it.inMerge:
		it.data.Result = "done"
	case ran.stopped != nil:
		it.data.Result, it.data.Error = "stopped", ran.stopped.Reason
	case runErr != nil:
		it.data.Result, it.data.Error = "error", runErr.Error()
	case out.APIError != "":
		it.data.Result, it.data.Error = "api-error", out.APIError
	default:
		it.data.Result = "not-done"
		if out.ExitCode != 0 {
			it.data.Error = withLine(fmt.Sprintf("exit %d", out.ExitCode), lastLine(ran.tail))
		}
	}
}

// recordCalls journals the model calls of iteration n (LLM_CALL) and
// returns their tokens, added up.
func recordCalls(in LoopInput, n int, calls []CallUsage) (usage.Tokens, error) {
	var tokens usage.Tokens
	for _, c := range calls {
		tokens = tokens.Add(c.Tokens)
		model := c.Model
		if model == "" {
			model = in.Model
		}
		if err := in.Emit(journal.LLMCallData{Role: "implement", Model: model, Iteration: n, Tokens: c.Tokens, CostUSD: c.CostUSD}); err != nil {
			return tokens, err
		}
	}
	return tokens, nil
}

// sameFailure counts the iterations in a row that exited non-zero with the
// same error (exit code and last line) and added no commit.
type sameFailure struct {
	err   string
	count int
}

// add records it, which added commits when committed is set, and returns
// the length of the run it continues, 0 when it is no failure of the kind.
func (s *sameFailure) add(it journal.AgentIterationData, committed bool) int {
	if it.Result != "not-done" || it.ExitCode == 0 || committed {
		*s = sameFailure{}
		return 0
	}
	if it.Error != s.err {
		*s = sameFailure{err: it.Error}
	}
	s.count++
	return s.count
}

// withLine is msg, followed by ": line" when line is not empty.
func withLine(msg, line string) string {
	if line == "" {
		return msg
	}
	return msg + ": " + line
}

// lastLine is the last line of output that is not blank, trimmed and cut
// to maxLastLine bytes.
func lastLine(output string) string {
	lines := strings.FieldsFunc(output, func(r rune) bool { return r == '\n' || r == '\r' })
	for i := len(lines) - 1; i >= 0; i-- {
		if line := strings.TrimSpace(lines[i]); line != "" {
			return truncate(line, maxLastLine)
		}
	}
	return ""
}

// checkWorktree proves that in.Worktree is the change's worktree of the
// repository at in.Layout.Root(), on branch set/<change>, before git
// changes it (see git.CheckWorktree).
func (in LoopInput) checkWorktree(ctx context.Context) error {
	return git.CheckWorktree(ctx, in.Layout.Root(), in.Worktree, git.ChangeBranch(in.Prompt.Change.Name))
}

// commitLeftovers commits what an interrupted iteration (a run killed or
// stopped while the agent worked) left uncommitted in the worktree, as a
// finished iteration's leftovers are, so that the iteration boundary's
// merge of main never meets a dirty worktree (git refuses to merge over
// local edits of a file main changed). A merge with conflict markers left
// is not concluded: syncMain skips it and the agent resumes it.
// (A fresh dispatch's clean worktree takes one git call.)
func commitLeftovers(ctx context.Context, in LoopInput) error {
	_, _, err := git.CommitLeftovers(ctx, in.Worktree, fmt.Sprintf("%s: uncommitted work of interrupted iteration %d", in.Prompt.Change.Name, in.Done+1))
	return err
}

// syncMain merges main into the branch at an iteration boundary when main
// moved and the merge is clean; a conflicting merge is undone and left for
// the merge queue, which hands the conflict to the agent.
func syncMain(ctx context.Context, worktree, mainBranch string) error {
	if git.InMerge(ctx, worktree) {
		return nil
	}
	main, err := git.RevParse(ctx, worktree, "refs/heads/"+mainBranch)
	if err != nil {
		return err
	}
	if ok, err := git.IsAncestor(ctx, worktree, main, "HEAD"); err != nil || ok {
		return err
	}
	res, err := git.Merge(ctx, worktree, main, "Merge "+mainBranch+" (iteration boundary)")
	if err != nil {
		return err
	}
	if !res.Clean {
		return git.AbortMerge(ctx, worktree)
	}
	return nil
}

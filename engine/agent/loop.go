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

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm"
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
	Done          int
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
	StallAfter  time.Duration
	Env         []string
	// Redact masks secrets in the prompts and the agent's logs (nil: none
	// are masked).
	Redact *redact.Redactor
	// Emit records an event of the change.
	Emit func(journal.Payload) error
	// Budget, derived from Loop's context, ends the agent's work (the
	// change's wall-time budget): the agent is stopped and the loop ends
	// as interrupted. Git and the journal run on Loop's context, so a
	// budget ending mid-call never turns into a run error. Nil means
	// Loop's context.
	Budget context.Context
}

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
	EndTokens      Ending = "tokens"      // the token budget is spent
	EndStalled     Ending = "stalled"     // every remaining iteration stalled
	EndAgentError  Ending = "agent-error" // the agent failed to run twice in a row, or failed the same way three times (see sameFailure)
	EndInterrupted Ending = "interrupted" // the context ended
)

// LoopResult is how the loop ended and where it left the change.
type LoopResult struct {
	Ending     Ending
	Reason     string
	Iterations int // iterations recorded, in total
	Tokens     int64
	SessionID  string
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
	res := LoopResult{Iterations: in.Done, Tokens: in.TokensUsed, SessionID: in.SessionID}
	var streak streaks
	var same sameFailure
	retryContext := in.Prompt.RetryContext
	// Leftovers are committed only in the change's own worktree: git in
	// any other directory could commit onto main.
	if err := in.checkWorktree(ctx); err != nil {
		return res, err
	}
	if err := commitLeftovers(ctx, in); err != nil {
		return res, err
	}
	for n := in.Done + 1; ; n++ {
		if n > in.MaxIterations {
			res.Ending, res.Reason = iterationsEnding(in, streak.stalls, n-1-in.Done)
			return res, in.Emit(journal.BudgetExceededData{Budget: "iterations", Used: int64(n - 1), Limit: int64(in.MaxIterations)})
		}
		if budget.Err() != nil {
			res.Ending = EndInterrupted
			return res, nil
		}
		if err := in.checkWorktree(ctx); err != nil {
			return res, err
		}
		if err := syncMain(ctx, in.Worktree, in.MainBranch); err != nil {
			return res, err
		}
		it, tail, madeCommits, err := iterate(ctx, budget, in, n, &res, streak, retryContext)
		if err != nil || res.Ending == EndInterrupted {
			return res, err
		}
		retryContext = streak.next(it, in)
		res.Iterations = n
		if err := in.Emit(it.data); err != nil {
			return res, err
		}
		if in.TokenBudget > 0 && res.Tokens > in.TokenBudget {
			res.Ending, res.Reason = EndTokens, fmt.Sprintf("%d tokens used, budget %d", res.Tokens, in.TokenBudget)
			return res, in.Emit(journal.BudgetExceededData{Budget: "tokens", Used: res.Tokens, Limit: in.TokenBudget})
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

// iterationsEnding is why a change whose iteration budget is spent ends:
// stalled, when every iteration of this run stalled, or out of iterations.
func iterationsEnding(in LoopInput, stalls, ran int) (Ending, string) {
	switch {
	case stalls == 1 && stalls == ran:
		return EndStalled, "the agent stalled in its last iteration"
	case stalls > 0 && stalls == ran:
		return EndStalled, fmt.Sprintf("the agent stalled in each of its last %d iterations", stalls)
	}
	return EndIterations, english.Plural(in.MaxIterations, "iteration") + " without finishing"
}

// streaks counts the iterations in a row that failed to run (errors) and
// that stalled; they decide whether the next iteration resumes the
// agent's session and when the change ends.
type streaks struct{ errors, stalls int }

// session decides whether iteration n resumes the agent's last session.
func (s streaks) session(sessionID string, n int) (decision, why string) {
	switch {
	case sessionID != "" && s.errors == 0 && s.stalls == 0:
		return "resume", "the previous iteration's session ended normally"
	case sessionID != "":
		return "new", "the previous iteration stalled or failed"
	case n > 1:
		return "new", "no session to resume"
	}
	return "new", "first iteration"
}

// next counts iteration it into the streaks and returns the retry context
// the next iteration's prompt carries.
func (s *streaks) next(it iteration, in LoopInput) string {
	switch it.data.Result {
	case "error":
		s.errors++
		s.stalls = 0
		return fmt.Sprintf("The previous iteration failed to run: %s", it.data.Error)
	case "api-error":
		// Counted with the errors until the sentinel's rules retry it.
		s.errors++
		s.stalls = 0
		return fmt.Sprintf("The previous iteration stopped because the model API failed: %s. Continue where it stopped.", it.data.Error)
	case "stalled":
		s.stalls++
		s.errors = 0
		return fmt.Sprintf("The previous iteration produced no output for %s and was stopped. Keep working in small steps.", in.StallAfter)
	case "done":
		return ""
	}
	s.errors, s.stalls = 0, 0
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

// iterate runs iteration n: it writes the prompt, decides the session,
// runs the agent on the budget context, commits what the agent left, and
// records its model calls. It reports the iteration, the tail of the
// agent's output, and whether the agent added commits. When the budget
// ended during the run, res.Ending is EndInterrupted and the iteration is
// not recorded: a resumed run does it again.
func iterate(ctx, budget context.Context, in LoopInput, n int, res *LoopResult, streak streaks, retryContext string) (iteration, string, bool, error) {
	change := in.Prompt.Change.Name
	pin := in.Prompt
	pin.Iteration = n
	pin.RetryContext = retryContext
	text := in.Redact.String(Prompt(pin))
	promptPath, promptRel := in.Layout.Prompt(change, n)
	logPath, logRel := in.Layout.AgentLog(change, n)
	for _, dir := range []string{filepath.Dir(promptPath), filepath.Dir(logPath)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return iteration{}, "", false, err
		}
	}
	if err := os.WriteFile(promptPath, []byte(text), 0o644); err != nil {
		return iteration{}, "", false, err
	}
	before, err := git.CountWork(ctx, in.Worktree, in.MainBranch, "HEAD", FolderTrailer, change)
	if err != nil {
		return iteration{}, "", false, err
	}
	decision, why := streak.session(res.SessionID, n)
	session := ""
	if decision == "resume" {
		session = res.SessionID
	}
	opened := journal.AgentSessionDecisionData{
		Decision: decision, SessionID: session, Reason: why,
		Iteration: n, Adapter: in.Adapter.Name(), Model: in.Model, Log: logRel,
	}
	if p, ok := in.Adapter.(PermissionReporter); ok && n == in.Done+1 {
		// The first iteration of the run says what the agent may do.
		perm, err := p.PermissionMode(in.Env)
		opened.Permissions = perm.String()
		if err != nil {
			opened.Permissions = err.Error()
		}
	}
	if err := in.Emit(opened); err != nil {
		return iteration{}, "", false, err
	}

	log, err := os.Create(logPath)
	if err != nil {
		return iteration{}, "", false, err
	}
	// The tail of the output, for the last line of a failing agent.
	tail := &tailWriter{max: 4 * maxLastLine}
	logw := in.Redact.Writer(log)
	out, runErr := in.Adapter.Run(budget, Request{
		Change: change, Worktree: in.Worktree, Iteration: n, Prompt: text, PromptFile: promptPath,
		Model: in.Model, SessionID: session, Env: in.Env, StallAfter: in.StallAfter, Log: io.MultiWriter(logw, tail),
	})
	logw.Close()
	log.Close()
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
	unresolved, err := git.UnresolvedConflicts(ctx, in.Worktree)
	if err != nil {
		return iteration{}, "", false, err
	}
	if len(unresolved) == 0 {
		if _, err := git.CommitAll(ctx, in.Worktree, fmt.Sprintf("%s: iteration %d (uncommitted work)", change, n)); err != nil {
			return iteration{}, "", false, err
		}
	}
	commits, err := git.CountWork(ctx, in.Worktree, in.MainBranch, "HEAD", FolderTrailer, change)
	if err != nil {
		return iteration{}, "", false, err
	}
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
			Tokens: tokens, SessionID: out.SessionID, Prompt: promptRel, Log: logRel,
		},
		inMerge: git.InMerge(ctx, in.Worktree), unresolved: unresolved, summary: out.Summary,
	}
	var ce *llm.ConfigError
	if errors.As(runErr, &ce) {
		if ce.Field == "" && ce.Model != "" {
			ce.Field = cmp.Or(in.ModelField, "project.agent.models.implement")
		}
		it.config = true
	}
	switch {
	case runErr != nil:
		it.data.Result, it.data.Error = "error", runErr.Error()
	case out.Done && commits > 0 && !it.inMerge:
		// A success the agent reported is kept, even when its process
		// stalled afterwards (waiting for a background command).
		it.data.Result = "done"
	case out.APIError != "":
		it.data.Result, it.data.Error = "api-error", out.APIError
	case out.Stalled:
		it.data.Result = "stalled"
	default:
		it.data.Result = "not-done"
		if out.ExitCode != 0 {
			it.data.Error = withLine(fmt.Sprintf("exit %d", out.ExitCode), lastLine(tail.String()))
		}
	}
	return it, tail.String(), commits > before, nil
}

// recordCalls journals the model calls of iteration n (LLM_CALL) and
// returns their tokens, added up.
func recordCalls(in LoopInput, n int, calls []Call) (journal.Tokens, error) {
	var tokens journal.Tokens
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
	return git.CheckWorktree(ctx, in.Layout.Root(), in.Worktree, "set/"+in.Prompt.Change.Name)
}

// commitLeftovers commits what an interrupted iteration (a run killed or
// stopped while the agent worked) left uncommitted in the worktree, as a
// finished iteration's leftovers are, so that the iteration boundary's
// merge of main never meets a dirty worktree (git refuses to merge over
// local edits of a file main changed). A merge with conflict markers left
// is not concluded: syncMain skips it and the agent resumes it.
func commitLeftovers(ctx context.Context, in LoopInput) error {
	unresolved, err := git.UnresolvedConflicts(ctx, in.Worktree)
	if err != nil || len(unresolved) > 0 {
		return err
	}
	_, err = git.CommitAll(ctx, in.Worktree, fmt.Sprintf("%s: uncommitted work of interrupted iteration %d", in.Prompt.Change.Name, in.Done+1))
	return err
}

// syncMain merges main into the branch at an iteration boundary when main
// moved and the merge is clean; a conflicting merge is undone and left for
// the merge queue, which hands the conflict to the agent.
func syncMain(ctx context.Context, worktree, mainBranch string) error {
	if git.InMerge(ctx, worktree) {
		return nil
	}
	main, err := git.RevParse(ctx, worktree, mainBranch)
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

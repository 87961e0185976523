package merge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/set-engine/set/engine/forge"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/journal"
)

// Proposal is what Propose needs beyond the change's Input: the forge,
// what set pushed before, and what the pull request says.
type Proposal struct {
	Forge forge.Forge
	// Pushed are the commits set pushed to the change's remote branch
	// before (state.Change.Pushed): the branch is set's to replace only
	// while it holds one of them.
	Pushed []string
	// Previous is the change's pull request opened before (a change
	// the forge sent back to its agent, or a resumed run's), nil for
	// none: Propose looks at it first.
	Previous *forge.PullRequest
	// Verdicts are the change's gate verdicts that the pull request
	// reports: its last verify round's, then its candidate's integration
	// stack's (whose verdicts go up as commit statuses).
	Verdicts []journal.VerifyGateData
	// Run names the run (its ID) and RunURL links to it ("" when the run
	// has no page, outside CI).
	Run, RunURL string
}

// BranchTakenError is a change's remote branch that holds a commit set
// did not push there: someone else's work, which set does not replace.
type BranchTakenError struct {
	Remote, Branch, Commit string
	// PullRequest is the change's pull request from the branch, open (0
	// for none), and Pushed set's last push there: deleting the branch
	// would close that pull request, so the way out is putting the
	// branch back at Pushed.
	PullRequest int
	Pushed      string
}

func (e *BranchTakenError) Error() string {
	msg := fmt.Sprintf("%s's branch %s is at %.10s, a commit set did not push: set replaces only its own pushes there; ", e.Remote, e.Branch, e.Commit)
	if e.PullRequest != 0 && e.Pushed != "" {
		return msg + fmt.Sprintf("move that work elsewhere and put the branch back at set's last push (git push --force-with-lease=refs/heads/%s:%s %s %s:refs/heads/%s; deleting the branch would close pull request #%d), then run setctl apply again",
			e.Branch, e.Commit, e.Remote, e.Pushed, e.Branch, e.PullRequest)
	}
	return msg + fmt.Sprintf("move that work elsewhere (or delete the branch: git push %s --delete %s), then run setctl apply again", e.Remote, e.Branch)
}

// Propose is Land's counterpart in pull-request mode: the candidate,
// whose integration stack passed on exactly its tree, is pushed to the
// remote as the branch set/<change> (leased on what set pushed there
// last, or on its absence: never over someone else's work), the pull
// request from it into main is opened (or, when one is open, updated:
// forge.Forge.Open), each gate's verdict is posted as the commit status
// set/<gate> on the candidate (see statuses), and with forge.autoMerge the
// pull request is handed to the forge's merge queue or auto-merge. Main
// does not move: the forge merges. PUSHING is journaled before the push,
// PULL_REQUEST_OPENED once the forge has the pull request. The branch
// then goes back to the merge without the fold, as Reject leaves it, for
// the agent to build on should the pull request come back to it.
//
// A change whose pull request (p.Previous) the forge merged, or a person
// closed, while the change was back with its agent is what the forge
// decided: Propose then pushes and opens nothing (a new pull request
// would undo the close, or merge the change a second time) and returns
// that pull request; the watch of the pull requests in review finds what
// became of it.
//
// A *forge.ConfigError, a *BranchTakenError or a refused push is a run
// error, never the change's: nothing was judged. A merge request the
// forge did not take otherwise is recorded (MergeRefused), and the pull
// request watched as any other: a check that failed comes back as such.
func Propose(ctx context.Context, in Input, cand Candidate, p Proposal) (forge.PullRequest, error) {
	dl := in.Project.Delivery
	fc := dl.Forge
	branch := git.ChangeBranch(in.Change.Name)
	open := 0 // the number of the change's pull request, open
	if prev := p.Previous; prev != nil {
		look, err := p.Forge.Look(ctx, *prev)
		if err != nil {
			return forge.PullRequest{}, err
		}
		if look.State != forge.Open {
			if cand.merged != "" {
				if err := resetKeep(ctx, in.Worktree, cand.merged); err != nil {
					return forge.PullRequest{}, err
				}
			}
			return *prev, nil
		}
		open = prev.Number
	}
	theirs, err := git.LsRemoteBranch(ctx, in.Layout.Root(), dl.Remote, branch, git.RemoteTimeout)
	if err != nil {
		return forge.PullRequest{}, err
	}
	if theirs != cand.Commit {
		if theirs != "" && !slices.Contains(p.Pushed, theirs) {
			taken := &BranchTakenError{Remote: dl.Remote, Branch: branch, Commit: theirs, PullRequest: open}
			if n := len(p.Pushed); n > 0 {
				taken.Pushed = p.Pushed[n-1]
			}
			return forge.PullRequest{}, taken
		}
		if err := in.Emit(journal.PushingData{Remote: dl.Remote, Branch: branch, Commit: cand.Commit, Previous: theirs, Attempt: in.Attempt}); err != nil {
			return forge.PullRequest{}, err
		}
		in.checkpoint("before-push")
		if err := git.PushBranch(context.WithoutCancel(ctx), in.Layout.Root(), dl.Remote, branch, cand.Commit, theirs, git.RemoteTimeout); err != nil {
			return forge.PullRequest{}, err
		}
		in.checkpoint("pushed")
	}
	pr, err := p.Forge.Open(ctx, forge.NewPullRequest{Head: branch, Base: in.Project.MainBranch, Title: prTitle(in), Body: prBody(in, p)})
	if err != nil {
		return forge.PullRequest{}, err
	}
	var posted []string
	for _, s := range statuses(p.Verdicts, in.Attempt) {
		if err := p.Forge.SetStatus(ctx, cand.Commit, s); err != nil {
			return forge.PullRequest{}, err
		}
		posted = append(posted, s.Context)
	}
	opened := journal.PullRequestOpenedData{
		Number: pr.Number, ID: pr.ID, URL: pr.URL, Branch: branch, Head: cand.Commit, Base: in.Project.MainBranch,
		Attempt: in.Attempt, Statuses: posted, BranchTip: cand.merged,
	}
	if fc.AutoMerge {
		mr, err := p.Forge.RequestMerge(ctx, pr, cand.Commit, fc.MergeMethod, squashMessage(in))
		var ce *forge.ConfigError
		switch {
		case errors.As(err, &ce) || ctx.Err() != nil:
			return forge.PullRequest{}, err
		case err != nil:
			// The forge did not take it (a check failed at once, the
			// queue refused it): the pull request is open all the same,
			// and watching it tells what became of it.
			opened.MergeRefused = err.Error()
		default:
			opened.Way, opened.QueueState, opened.Position = string(mr.Way), mr.QueueState, mr.Position
		}
	}
	if err := in.Emit(opened); err != nil {
		return forge.PullRequest{}, err
	}
	if cand.merged != "" {
		if err := resetKeep(ctx, in.Worktree, cand.merged); err != nil {
			return forge.PullRequest{}, err
		}
	}
	return pr, nil
}

// StatusContext names the commit status of a gate's verdict, set/<gate>,
// which branch protection can require (a status's name, not a branch:
// git.ChangeBranch names those).
func StatusContext(gate string) string { return fmt.Sprintf("set/%s", gate) }

// statuses are the commit statuses of the candidate of integration
// attempt: its integration gates' verdicts, which judged exactly its
// tree, then the verdicts of the last verify round's gates that the
// integration stack does not run (they judged the change's branch),
// each gate once.
func statuses(verdicts []journal.VerifyGateData, attempt int) []forge.Status {
	var out []forge.Status
	seen := map[string]bool{}
	for _, stage := range []string{journal.StageIntegration, journal.StageVerify} {
		for _, v := range verdicts {
			if v.Stage != stage || seen[v.Gate] || (stage == journal.StageIntegration && v.Attempt != attempt) {
				continue
			}
			seen[v.Gate] = true
			s := gateStatus(v)
			if stage == journal.StageVerify {
				s.Description = "verify: " + s.Description
			}
			out = append(out, s)
		}
	}
	return out
}

// gateStatus is a gate's verdict as the commit status set/<gate>. A gate
// that failed without blocking (warn) or checked nothing (skip) did not
// stop the change: success, saying so.
func gateStatus(v journal.VerifyGateData) forge.Status {
	took := (time.Duration(v.DurationMS) * time.Millisecond).Round(100 * time.Millisecond)
	s := forge.Status{Context: StatusContext(v.Gate), State: forge.StatusSuccess}
	switch v.Result {
	case "pass":
		s.Description = fmt.Sprintf("passed in %s", took)
	case "warn":
		s.Description = fmt.Sprintf("failed in %s, not blocking", took)
	case "skip":
		s.Description = "skipped: " + v.Reason
	default:
		s.State, s.Description = forge.StatusFailure, v.Result
	}
	// GitHub takes 140 characters; "verify: " may come before.
	if r := []rune(s.Description); len(r) > 130 {
		s.Description = string(r[:127]) + "..."
	}
	return s
}

// prTitle is the pull request's title: the subject of the change's
// commit.
func prTitle(in Input) string {
	subject, _, _ := strings.Cut(squashMessage(in), "\n")
	return subject
}

// prBody is the pull request's body, markdown: the change's requirements
// with their scenarios, the gates it passed with their durations, and
// the run.
func prBody(in Input, p Proposal) string {
	var b strings.Builder
	if in.Change.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", in.Change.Description)
	}
	if len(in.Reqs) > 0 {
		b.WriteString("## Requirements\n")
		for _, r := range in.Reqs {
			fmt.Fprintf(&b, "\n### %s: %s\n", r.ID, r.Title)
			if r.Text != "" {
				fmt.Fprintf(&b, "\n%s\n", r.Text)
			}
			for _, sc := range r.Scenarios {
				fmt.Fprintf(&b, "\n- **Scenario: %s**", sc.Name)
				for _, part := range []struct {
					word  string
					steps []string
				}{{"GIVEN", sc.Given}, {"WHEN", sc.When}, {"THEN", sc.Then}} {
					for _, step := range part.steps {
						fmt.Fprintf(&b, "\n  - %s %s", part.word, step)
					}
				}
				b.WriteString("\n")
			}
		}
		b.WriteString("\n")
	}
	if len(p.Verdicts) > 0 {
		b.WriteString("## Gates\n\n| stage | gate | result | took |\n| --- | --- | --- | --- |\n")
		for _, v := range p.Verdicts {
			took := (time.Duration(v.DurationMS) * time.Millisecond).Round(100 * time.Millisecond)
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", v.Stage, v.Gate, v.Result, took)
		}
		b.WriteString("\n")
	}
	run := "set run " + p.Run
	if p.RunURL != "" {
		run = fmt.Sprintf("[set run %s](%s)", p.Run, p.RunURL)
	}
	fmt.Fprintf(&b, "Opened by %s for the change `%s` (`setctl explain %s`).\n", run, in.Change.Name, in.Change.Name)
	return b.String()
}

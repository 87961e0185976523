package orchestrator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/sourcegraph/conc/panics"

	"github.com/set-engine/set/engine/delivery"
	"github.com/set-engine/set/engine/forge"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/merge"
	"github.com/set-engine/set/engine/state"
)

// reviews watches the pull requests of the changes in review
// (pull-request mode): it asks the forge what became of each (Look),
// every delay: at once when a change went in review, then after
// firstLook, doubling up to lastLook while nothing changes. Its fields are the loop goroutine's
// own; a look runs in a goroutine of its own, which reads only the
// forge, and reports on done.
//
// What it finds is acted on by the loop (see run.reviewed): a merged
// pull request is landed once the merge queue is idle (the local main
// follows the remote's, which the queue merges onto by name); a closed
// one fails its change as rejected; a new review that requests changes
// or a new failed check sends the change back to its agent; one that
// conflicts with its base, which moved, queues the change again, to be
// integrated onto the remote's main (no retry budget spent). Which
// reviews and checks were sent is the journal's (PULL_REQUEST_FEEDBACK),
// so that a resumed run neither repeats nor misses one.
type reviews struct {
	forge forge.Forge
	after func(time.Duration) <-chan time.Time
	// delay is the wait before the next look; timer fires then (nil
	// while a look runs, or no change is in review).
	delay time.Duration
	timer <-chan time.Time
	// looking: a look is under way. unseen: a change went in review
	// since the last look started: the next one comes at once.
	looking, unseen bool
	done            chan []lookResult
	// merged are the changes whose pull request the forge merged, with
	// what it said, waiting for the queue to be idle to land; landing
	// is set while one lands.
	merged  []lookResult
	landing bool
	landed  chan landResult
	// openUntil is, once nothing but pull requests in review is left to
	// wait for, when the run stops waiting for them (forge.wait); zero
	// otherwise. lookedSince: a look ended since it was set; the run
	// ends with pull requests open only after one did.
	openUntil   time.Time
	lookedSince bool
	// reintegrated is, for each change whose pull request conflicted
	// with its moved base, the head it had then: a change is integrated
	// again once per head.
	reintegrated map[string]string
	// mergeAsked is, for each change whose merge request the forge did
	// not take, the head it was asked again for (once per head).
	mergeAsked map[string]string
	// failures counts the looks in a row the forge answered with an
	// error (past the client's own retries); maxLookFailures of them
	// end the run.
	failures int
}

// maxLookFailures is how many looks in a row may fail before the run
// stops with the forge's error (the waits between them, growing, span
// more than a minute): a forge that does not answer is said, never
// waited on in silence.
const maxLookFailures = 4

// The delays between two looks at the pull requests in review.
const (
	firstLook = 5 * time.Second
	lastLook  = 2 * time.Minute
)

// lookResult is what the forge said of one change's pull request.
type lookResult struct {
	change string
	pr     state.PullRequest
	look   forge.Look
	err    error
	// askMerge: the merge request of pr's head was not taken (autoMerge,
	// and no way recorded): ask again if the look finds it open and
	// unjudged. asked: it was, with merge and mergeErr its answer.
	askMerge, asked bool
	merge           forge.MergeRequest
	mergeErr        error
}

// landResult is how the landing of a merged pull request went.
type landResult struct {
	change string
	err    error
}

func newReviews(f forge.Forge, after func(time.Duration) <-chan time.Time) *reviews {
	if after == nil {
		after = time.After
	}
	return &reviews{forge: f, after: after, delay: 0, done: make(chan []lookResult, 1), landed: make(chan landResult, 1), reintegrated: map[string]string{}, mergeAsked: map[string]string{}}
}

// busy reports whether a look or a landing is under way.
func (v *reviews) busy() bool { return v != nil && (v.looking || v.landing) }

// soon makes the next look come after firstLook: something changed.
func (v *reviews) soon() {
	v.delay, v.timer = firstLook, nil
}

// entered makes the next look come at once: a change went in review,
// and a forge whose checks are green may have merged it already.
func (v *reviews) entered() {
	if v != nil {
		v.delay, v.timer, v.unseen = 0, nil, true
	}
}

// inReview are the changes whose pull request is open, in the state's
// order: the plan's and those of earlier plans (a resumed run's).
func (r *run) inReview() []string {
	var names []string
	for _, name := range r.rec.names() {
		if r.rec.status(name) == state.InReview {
			names = append(names, name)
		}
	}
	return names
}

// watchReviews arms the next look when changes are in review and none
// is under way, and starts it when its time came (due).
func (r *run) watchReviews(ctx context.Context, due bool) {
	v := r.reviews
	if v == nil || v.looking {
		return
	}
	names := r.inReview()
	names = slices.DeleteFunc(names, func(n string) bool {
		return slices.ContainsFunc(v.merged, func(m lookResult) bool { return m.change == n })
	})
	if len(names) == 0 {
		v.timer = nil
		return
	}
	if !due {
		if v.timer == nil {
			d := v.delay
			if !v.openUntil.IsZero() {
				d = max(min(d, v.openUntil.Sub(r.opts.Now())), 0)
			}
			v.timer = v.after(d)
		}
		return
	}
	v.timer, v.looking, v.unseen = nil, true, false
	var prs []lookResult
	fc := r.project.Delivery.Forge
	for _, n := range names {
		if pr, ok := r.rec.pullRequest(n); ok {
			ask := fc.AutoMerge && pr.Way == "" && v.mergeAsked[n] != pr.Head
			prs = append(prs, lookResult{change: n, pr: pr, askMerge: ask})
		}
	}
	go func() {
		var pc panics.Catcher
		pc.Try(func() {
			for i := range prs {
				res := &prs[i]
				pr := forge.PullRequest{Number: res.pr.Number, ID: res.pr.ID, URL: res.pr.URL, Head: res.pr.Head}
				res.look, res.err = v.forge.Look(ctx, pr)
				l := res.look
				if res.err == nil && res.askMerge && l.State == forge.Open && !l.Queued && !l.Conflicts && l.Head == res.pr.Head && !res.judged() {
					res.asked = true
					// The merge commit says what the candidate says.
					var msg string
					if msg, res.mergeErr = git.CommitMessage(ctx, r.root, res.pr.Head); res.mergeErr == nil {
						res.merge, res.mergeErr = v.forge.RequestMerge(ctx, pr, res.pr.Head, fc.MergeMethod, msg)
					}
				}
			}
		})
		if rec := pc.Recovered(); rec != nil {
			prs = []lookResult{{err: errors.New("internal error looking at pull requests: " + rec.String())}}
		}
		v.done <- prs
	}()
}

// reviewed acts on what the forge said of the pull requests in review.
// A *forge.ConfigError is a run error; a forge that did not answer is
// asked again at the next look, up to maxLookFailures looks in a row.
func (r *run) reviewed(ctx context.Context, results []lookResult) error {
	v := r.reviews
	v.looking, v.lookedSince = false, !v.openUntil.IsZero()
	changed := false
	var failed error
	for _, res := range results {
		var ce *forge.ConfigError
		switch {
		case errors.As(res.err, &ce):
			return ce
		case res.err != nil && ctx.Err() != nil:
			return nil
		case res.err != nil:
			if res.change == "" { // a panic
				return res.err
			}
			failed = fmt.Errorf("pull request #%d of %s: %w", res.pr.Number, res.change, res.err)
			continue // asked again next time
		case r.rec.status(res.change) != state.InReview || slices.ContainsFunc(v.merged, func(m lookResult) bool { return m.change == res.change }):
			continue // it moved on while the forge was asked
		}
		if res.asked {
			if err := r.mergeAskedAgain(ctx, res); err != nil {
				return err
			}
		}
		switch res.look.State {
		case forge.Merged:
			v.merged = append(v.merged, res)
			changed = true
		case forge.Closed:
			by := cmp.Or(res.look.ClosedBy, "someone")
			reason := fmt.Sprintf("pull request #%d was closed by %s without being merged", res.pr.Number, by)
			if w := strings.TrimSpace(res.look.Words); w != "" {
				reason += ": " + w
			}
			if err := r.fail(res.change, state.FailedRejected, reason); err != nil {
				return err
			}
			changed = true
		default:
			sent, err := r.sendFeedback(res)
			if err != nil {
				return err
			}
			if !sent && res.look.Conflicts && v.reintegrated[res.change] != res.pr.Head {
				// The base moved under the pull request: no one's
				// mistake, no retry budget spent. Once per head: a
				// change integrated again onto a main that had not
				// moved is the same candidate.
				v.reintegrated[res.change] = res.pr.Head
				why := fmt.Sprintf("pull request #%d conflicts with %s, which moved; integrated again onto it", res.pr.Number, r.project.MainBranch)
				if err := r.rec.transition(res.change, state.Queued, why); err != nil {
					return err
				}
				r.mq.enqueue(res.change)
				sent = true
			}
			changed = changed || sent
		}
	}
	if failed == nil {
		v.failures = 0
	} else if v.failures++; v.failures >= maxLookFailures {
		return fmt.Errorf("the forge failed %d looks in a row at the pull requests in review: %w", v.failures, failed)
	}
	switch {
	case v.unseen:
		v.delay = 0
	case changed:
		v.soon()
	default:
		v.delay = min(max(2*v.delay, firstLook), lastLook)
	}
	return nil
}

// judged reports whether the look found a review or a failed check of
// the agent's work that the agent has not had: it goes back to the agent
// rather than to the forge's merge.
func (res *lookResult) judged() bool {
	had := func(id string) bool { return slices.Contains(res.pr.Sent, id) && !slices.Contains(res.pr.Sending, id) }
	return slices.ContainsFunc(res.look.ChangesRequested, func(rv forge.Review) bool { return !had(rv.ID) }) ||
		slices.ContainsFunc(res.look.FailedChecks, func(ck forge.Check) bool { return agentsCheck(ck) && !had(ck.ID) })
}

// mergeAskedAgain records what came of a merge request asked again of a
// pull request whose first one the forge did not take (see lookResult):
// taken, PULL_REQUEST_OPENED again with the way the forge merges it;
// not taken, nothing, and it is not asked again for that head in this
// run (a person may merge it). A *forge.ConfigError is the run's.
func (r *run) mergeAskedAgain(ctx context.Context, res lookResult) error {
	r.reviews.mergeAsked[res.change] = res.pr.Head
	var ce *forge.ConfigError
	switch {
	case errors.As(res.mergeErr, &ce):
		return ce
	case res.mergeErr != nil || ctx.Err() != nil:
		return nil
	}
	pr := res.pr
	return r.rec.emit(res.change, journal.PullRequestOpenedData{
		Number: pr.Number, ID: pr.ID, URL: pr.URL, Branch: pr.Branch, Head: pr.Head, Base: r.project.MainBranch, Attempt: pr.Attempt,
		Way: string(res.merge.Way), QueueState: res.merge.QueueState, Position: res.merge.Position,
	})
}

// sendFeedback sends the reviews that requested changes and the failed
// checks of res (save cancelled ones: agentsCheck) the agent has not had
// yet back to it, on the
// integration retry budget (it is the agent's work the forge judged):
// each is journaled (PULL_REQUEST_FEEDBACK), then the change goes
// integration-failed with all of them as its retry context.
func (r *run) sendFeedback(res lookResult) (bool, error) {
	// sent: the agent had it. One journaled by a run stopped before the
	// change went back to the agent (Sending) it had not.
	sent := slices.DeleteFunc(slices.Clone(res.pr.Sent), func(id string) bool { return slices.Contains(res.pr.Sending, id) })
	var b strings.Builder
	reason := ""
	var events []journal.PullRequestFeedbackData
	for _, rv := range res.look.ChangesRequested {
		if slices.Contains(sent, rv.ID) {
			continue
		}
		events = append(events, journal.PullRequestFeedbackData{Number: res.pr.Number, Kind: journal.FeedbackReview, ID: rv.ID, By: rv.Author, Commit: rv.Commit})
		reason = journal.ReasonReview
		fmt.Fprintf(&b, "%s requested changes on your pull request #%d", cmp.Or(rv.Author, "A reviewer"), res.pr.Number)
		if rv.Commit != "" {
			fmt.Fprintf(&b, " (at %s)", shortCommit(rv.Commit))
		}
		b.WriteString(":\n")
		if body := strings.TrimSpace(rv.Body); body != "" {
			b.WriteString(body + "\n")
		}
		for _, c := range rv.Comments {
			fmt.Fprintf(&b, "\n%s:%d:\n%s\n", c.Path, c.Line, strings.TrimSpace(c.Body))
		}
		b.WriteString("\n")
	}
	for _, ck := range res.look.FailedChecks {
		if slices.Contains(sent, ck.ID) || !agentsCheck(ck) {
			continue
		}
		events = append(events, journal.PullRequestFeedbackData{Number: res.pr.Number, Kind: journal.FeedbackCheck, ID: ck.ID, By: ck.Name, Commit: ck.Commit, URL: ck.URL})
		if reason == "" {
			reason = journal.ReasonCheck
		}
		fmt.Fprintf(&b, "The check %s of your pull request #%d failed (%s)", ck.Name, res.pr.Number, cmp.Or(ck.Conclusion, "failure"))
		if ck.Commit != "" && ck.Commit != res.pr.Head {
			fmt.Fprintf(&b, " on the merge queue's commit %s, your change merged with the changes ahead of it", shortCommit(ck.Commit))
		}
		b.WriteString(":\n")
		if out := strings.TrimSpace(ck.Output); out != "" {
			b.WriteString(out + "\n")
		}
		if ck.URL != "" {
			b.WriteString(ck.URL + "\n")
		}
		b.WriteString("\n")
	}
	if len(events) == 0 {
		return false, nil
	}
	for _, e := range events {
		if slices.Contains(res.pr.Sending, e.ID) {
			continue // journaled already
		}
		if err := r.rec.emit(res.change, e); err != nil {
			return false, err
		}
	}
	b.WriteString("Change your work so that it answers this; set tests it again and updates the same pull request.")
	return true, r.mq.integrationFailed(res.change, merge.Outcome{Failed: true, Reason: reason, RetryContext: b.String()})
}

// agentsCheck reports whether a failed check judged the change, so that
// it goes back to the agent on its budget: a check the forge cancelled
// (GitHub cancels the checks of a merge group it dropped because a pull
// request ahead of it failed or left the queue, and a run superseded by
// a newer one) judged nothing, and the agent's budget pays only for the
// agent's mistakes.
func agentsCheck(ck forge.Check) bool { return ck.Conclusion != "cancelled" }

// landMerged lands the first change whose pull request the forge merged,
// once the merge queue is idle: the local main follows the remote's
// (delivery.Follow), then MERGED (the forge's commit), ARCHIVED (the fold
// the candidate holds) and the change's retirement.
func (r *run) landMerged(ctx context.Context) {
	v := r.reviews
	if v == nil || v.landing || len(v.merged) == 0 || !r.mq.idle() {
		return
	}
	res := v.merged[0] // it stays there, not looked at again, until it landed
	v.landing = true
	go func() {
		var err error
		var pc panics.Catcher
		pc.Try(func() { err = r.landPullRequest(context.WithoutCancel(ctx), res) })
		if rec := pc.Recovered(); rec != nil {
			err = errors.New("internal error landing a merged pull request: " + rec.String())
		}
		v.landed <- landResult{change: res.change, err: err}
	}()
}

// landPullRequest records a change whose pull request the forge merged.
func (s *services) landPullRequest(ctx context.Context, res lookResult) error {
	var synced delivery.Synced
	var err error
	s.pool.still(func() { synced, err = delivery.Follow(ctx, s.root, s.project, s.layout.FastForward()) })
	if err != nil {
		return err
	}
	commit := res.look.MergeCommit
	if commit == "" {
		commit = synced.To
	}
	// The main the forge merged onto is its commit's first parent (a
	// squash, a merge or the candidate rebased: one commit, as set's
	// candidate is); the local main may have followed the remote's past
	// it before this run looked.
	previous, err := git.RevParse(ctx, s.root, commit+"^")
	if err != nil {
		return err
	}
	if err := s.rec.emit(res.change, journal.MergedData{Commit: commit, Previous: previous, Attempt: res.pr.Attempt, PullRequest: res.pr.Number}); err != nil {
		return err
	}
	// The candidate holds the change's fold, whatever commit the forge
	// made of it. A checkout that never held the candidate (a CI job's
	// fresh clone, after the forge deleted the merged branch set/<change>:
	// no ref it fetches leads to it) reads the fold from the forge's
	// commit, which holds the pull request's changes over its first
	// parent.
	from := res.pr.Head
	if !git.HasCommit(ctx, s.root, from) {
		from = commit
	}
	archived, err := merge.Archived(ctx, s.root, res.change, from)
	if err != nil {
		return err
	}
	archived.Commit = commit
	if err := s.rec.emit(res.change, archived); err != nil {
		return err
	}
	return s.archive(res.change, fmt.Sprintf("pull request #%d merged by the forge", res.pr.Number))
}

// landedPullRequest takes the report of a landing: the change is
// retired, as one the merge queue landed.
func (r *run) landedPullRequest(ctx context.Context, d landResult) error {
	v := r.reviews
	v.landing = false
	v.merged = slices.DeleteFunc(v.merged, func(m lookResult) bool { return m.change == d.change })
	if d.err != nil {
		return fmt.Errorf("%s: %w", d.change, d.err)
	}
	r.retireLater(ctx, d.change)
	return nil
}

// waitForReviews reports whether the loop, with nothing else to wait for,
// waits for pull requests in review: until forge.wait has passed since it
// first had nothing else to wait for. Then the run ends, leaving them
// open for the next setctl apply.
func (r *run) waitForReviews() bool {
	v := r.reviews
	if v == nil {
		return false
	}
	if len(v.merged) > 0 || v.busy() {
		return true
	}
	if len(r.inReview()) == 0 {
		v.openUntil = time.Time{}
		return false
	}
	now := r.opts.Now()
	if v.openUntil.IsZero() {
		v.openUntil, v.lookedSince = now.Add(r.project.Delivery.Forge.Wait.D()), false
	}
	return !v.lookedSince || now.Before(v.openUntil)
}

// proposal is what the pull request of the change says beyond the
// change: the gates it passed (its journal's latest verify round and the
// candidate's integration stack) and the run.
func (q *mergeQueue) proposal(a *attempt) (merge.Proposal, error) {
	p := merge.Proposal{Forge: q.forge, Pushed: q.rec.change(a.change.Name).Pushed, Run: q.rec.runID(), RunURL: runURL(q.env)}
	if pr, ok := q.rec.pullRequest(a.change.Name); ok {
		p.Previous = &forge.PullRequest{Number: pr.Number, ID: pr.ID, URL: pr.URL, Head: pr.Head}
	}
	events, err := journal.ReadFile(journal.ChangeJournal(q.layout.Dir(), a.change.Name))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return p, err
	}
	var verify []journal.VerifyGateData
	round := 0
	for _, e := range events {
		if e.Type != journal.VerifyGate {
			continue
		}
		d, err := journal.Decode[journal.VerifyGateData](e)
		if err != nil {
			return p, err
		}
		switch {
		case d.Stage == journal.StageVerify && d.Attempt > round:
			round, verify = d.Attempt, []journal.VerifyGateData{d}
		case d.Stage == journal.StageVerify && d.Attempt == round:
			verify = append(verify, d)
		case d.Stage == journal.StageIntegration && d.Attempt == a.in.Attempt:
			p.Verdicts = append(p.Verdicts, d)
		}
	}
	p.Verdicts = append(verify, p.Verdicts...)
	return p, nil
}

// runURL is the page of the run when it runs in GitHub Actions (its
// GITHUB_SERVER_URL, GITHUB_REPOSITORY and GITHUB_RUN_ID), else "".
func runURL(env []string) string {
	get := func(k string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	server, repo, id := get("GITHUB_SERVER_URL"), get("GITHUB_REPOSITORY"), get("GITHUB_RUN_ID")
	if server == "" || repo == "" || id == "" {
		return ""
	}
	return server + "/" + repo + "/actions/runs/" + id
}

// newReviewsOf is the watch of the run's pull requests in pull-request
// mode, nil in the others.
func newReviewsOf(opts Options) *reviews {
	if !opts.Project.Delivery.ProposesPullRequests() {
		return nil
	}
	return newReviews(opts.Forge, opts.after)
}

// landingNow reports whether a merged pull request is being landed.
func (v *reviews) landingNow() bool { return v != nil && v.landing }

// next fires when the next look is due; nil (never) outside
// pull-request mode or while no look is armed.
func (v *reviews) next() <-chan time.Time {
	if v == nil {
		return nil
	}
	return v.timer
}

// looked reports the looks; nil outside pull-request mode.
func (v *reviews) looked() <-chan []lookResult {
	if v == nil {
		return nil
	}
	return v.done
}

// landedOne reports the landings; nil outside pull-request mode.
func (v *reviews) landedOne() <-chan landResult {
	if v == nil {
		return nil
	}
	return v.landed
}

// stopWaiting: the run has more to wait for than pull requests in
// review; forge.wait counts again from when it has not.
func (v *reviews) stopWaiting() {
	if v != nil {
		v.openUntil, v.lookedSince = time.Time{}, false
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/forge"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/learn"
	"github.com/set-engine/set/engine/learn/learncue"
	"github.com/set-engine/set/engine/markdown"
)

// LearningsBranch is the branch setctl learn --write pushes its proposals
// to in pull-request delivery, the head of their pull request.
const LearningsBranch = "set/learnings"

// learnPullRequest is setctl learn --write's pull request, in
// pull-request delivery.
type learnPullRequest struct {
	Number int    `json:"number"`
	URL    string `json:"url"`
	Branch string `json:"branch"`
	Commit string `json:"commit"`
}

// proposeLearnings opens the proposals as a pull request of their own
// (pull-request delivery): learnings.cue as the remote's main holds it,
// with the proposals it lacks appended (learncue.AppendCUE), committed on
// top of that main and pushed as LearningsBranch. The user's checkout is
// left as it is. A LearningsBranch the remote has already (a proposal
// not merged or closed yet) is refused rather than replaced: it may hold
// a reviewer's edits. Nothing to add opens nothing (the pull request is
// then nil).
func proposeLearnings(ctx context.Context, e *env, ws *workspace, proposals []learn.Proposal) (*learnWritten, error) {
	cfg := ws.cfg
	dl := cfg.Delivery
	fg, err := forgeOf(ctx, ws.root, cfg, e.getenv)
	if err != nil {
		return nil, err
	}
	main, err := git.FetchBranch(ctx, ws.root, dl.Remote, cfg.MainBranch, git.RemoteTimeout)
	if err != nil {
		return nil, err
	}
	prefix, err := git.Prefix(ctx, ws.root)
	if err != nil {
		return nil, err
	}
	file := path.Join(prefix, learncue.LearningsFile)
	w := &learnWritten{Path: learncue.LearningsFile}
	pkg, err := learncue.Package(ws.root)
	if err != nil {
		return nil, err
	}
	src, err := git.FileAt(ctx, ws.root, main, file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		src = nil
	case err != nil:
		return nil, err
	}
	out, added, err := learncue.AppendCUE(src, pkg, proposals)
	if err != nil {
		return nil, err
	}
	w.Added, w.Present = nonNil(added.Added), nonNil(added.Present)
	if len(added.Added) == 0 {
		return w, nil
	}
	theirs, err := git.LsRemoteBranch(ctx, ws.root, dl.Remote, LearningsBranch, git.RemoteTimeout)
	if err != nil {
		return nil, err
	}
	if theirs != "" {
		return nil, fmt.Errorf("the remote %s has a branch %s already, the head of learnings proposed before: merge or close its pull request and delete the branch, then run setctl learn --write again", dl.Remote, LearningsBranch)
	}
	title := "learnings: " + english.Plural(len(added.Added), "learning") + " proposed by setctl learn"
	commit, err := git.CommitFile(ctx, ws.root, main, learncue.LearningsFile, out, title+"\n\n"+strings.Join(added.Added, "\n"))
	if err != nil {
		return nil, err
	}
	if err := git.PushBranch(ctx, ws.root, dl.Remote, LearningsBranch, commit, "", git.RemoteTimeout); err != nil {
		return nil, err
	}
	pr, err := fg.Open(ctx, forge.NewPullRequest{Head: LearningsBranch, Base: cfg.MainBranch, Title: title, Body: learningsBody(proposals, added.Added)})
	if err != nil {
		return nil, err
	}
	w.PullRequest = &learnPullRequest{Number: pr.Number, URL: pr.URL, Branch: LearningsBranch, Commit: commit}
	return w, nil
}

// learningsBody is the markdown of the learnings pull request: each
// added proposal with its evidence, and how adoption works.
func learningsBody(proposals []learn.Proposal, added []string) string {
	var b strings.Builder
	b.WriteString("setctl learn found these failures recurring in the kept runs and proposes a learning for each. " +
		"Nothing is adopted until this pull request is merged: edit or delete what you disagree with first.\n")
	for _, p := range proposals {
		if !slices.Contains(added, p.Name) {
			continue
		}
		fmt.Fprintf(&b, "\n### %s (%s, %s)\n\n%s\n\nSeen in %s and %s:\n\n", p.Name, p.Kind, p.ID, p.Text,
			english.Plural(p.Changes, "change"), english.Plural(p.Runs, "run"))
		for _, ev := range p.Evidence {
			round := ""
			if ev.Round > 0 {
				round = fmt.Sprintf(" round %d", ev.Round)
			}
			fmt.Fprintf(&b, "- %s %s%s: %s\n", ev.Run, ev.Change, round, markdown.Code(ev.Line))
		}
	}
	return b.String()
}

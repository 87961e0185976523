package project

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/delivery"
	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/load"
	"github.com/set-engine/set/engine/rundir"
)

// RemoteTimeout bounds how long setctl doctor waits for the remote of push
// mode to answer.
const RemoteTimeout = 10 * time.Second

// CheckDelivery checks project.delivery against the repository at root:
// in push and pull-request modes the remote it names must be one of the repository's
// remotes (an error at delivery.remote otherwise). With reach set, the
// remote is asked for its main too (git ls-remote, within RemoteTimeout),
// and the summary says where it is. ok is false when d is an error; in
// local mode there is nothing to check and d is the zero Diagnostic.
func CheckDelivery(ctx context.Context, root string, cfg *config.Project, reach bool) (d diag.Diagnostic, ok bool) {
	dl := cfg.Delivery
	if !dl.FollowsRemote() {
		return diag.Diagnostic{Summary: "local: changes land on the local " + cfg.MainBranch + " only"}, true
	}
	verb := "push to"
	if dl.ProposesPullRequests() {
		verb = "pull requests through"
	}
	if !git.InRepository(ctx, root) {
		// CheckMainBranch says so; the remote is the repository's.
		return diag.Diagnostic{Summary: verb + " " + dl.Remote + ", once the project is in a git repository"}, true
	}
	if !git.HasRemote(ctx, root, dl.Remote) {
		return load.Diagnostics(NoRemoteError(cfg))[0], false
	}
	url := git.RemoteURL(ctx, root, dl.Remote)
	if !reach {
		return diag.Diagnostic{Summary: fmt.Sprintf("%s %s (%s)", verb, dl.Remote, url)}, true
	}
	head, err := git.LsRemoteBranch(ctx, root, dl.Remote, cfg.MainBranch, RemoteTimeout)
	var re *git.RemoteRefError
	switch {
	case errors.As(err, &re) && re.Auth:
		return diag.Diagnostic{Severity: diag.Error, Summary: fmt.Sprintf("%s %s (%s): %v", verb, dl.Remote, url, err)}, false
	case err != nil:
		return diag.Diagnostic{Severity: diag.Error, Summary: fmt.Sprintf("%s %s (%s), which does not answer: %v", verb, dl.Remote, url, err)}, false
	case head == "":
		return diag.Diagnostic{Severity: diag.Error, Summary: fmt.Sprintf("%s %s (%s), which has no branch %s: push it once yourself (git push %s %s)", verb, dl.Remote, url, cfg.MainBranch, dl.Remote, cfg.MainBranch)}, false
	}
	d = diag.Diagnostic{Summary: fmt.Sprintf("%s %s (%s), whose %s is at %.7s", verb, dl.Remote, url, cfg.MainBranch, head)}
	local, err := git.BranchHead(ctx, root, cfg.MainBranch)
	switch {
	case err != nil || local == head:
	case !git.HasCommit(ctx, root, head):
		d.Summary += "; apply fetches it first"
	default:
		// The repository holds the remote's main: whether the local one
		// can follow it is what apply will find.
		var nf *delivery.NotFollowingError
		if err := delivery.Behind(ctx, root, dl.Remote, cfg.MainBranch, local, head); errors.As(err, &nf) {
			return diag.Diagnostic{Severity: diag.Error, Summary: d.Summary + ": " + nf.Error()}, false
		}
		d.Summary += fmt.Sprintf(", ahead of the local %s (%.7s): apply fast-forwards it first", cfg.MainBranch, local)
	}
	return d, true
}

// followRemote brings the local main to the remote's in push and
// pull-request modes, before
// the plan is made: the plan is of what the remote's main lacks (see
// delivery.Follow). A local main that cannot follow it is an error, and
// nothing moves. In local mode it does nothing.
//
// A killed run that left a move of main's checkout half done (its record,
// git.FastForward) is not followed here: the run finishes that move
// first (its repair, as in local mode), then follows the remote's main
// (orchestrator's begin). Following it before would find the move's
// half-written files in the way, and stop every apply there.
func (p *Project) followRemote(ctx context.Context) (d diag.Diagnostic, ok bool) {
	if !p.Config.Delivery.FollowsRemote() {
		return diag.Diagnostic{}, true
	}
	if !git.HasRemote(ctx, p.Root, p.Config.Delivery.Remote) {
		return load.Diagnostics(NoRemoteError(p.Config))[0], false
	}
	record := rundir.New(p.Root).FastForward()
	if _, err := os.Stat(record); err == nil {
		return diag.Diagnostic{}, true
	}
	if _, err := delivery.Follow(ctx, p.Root, p.Config, record); err != nil {
		return diag.Diagnostic{Severity: diag.Error, Summary: err.Error()}, false
	}
	return diag.Diagnostic{}, true
}

// NoRemoteError is a push mode whose remote the repository lacks, as an
// error at set.cue's delivery.remote.
func NoRemoteError(cfg *config.Project) *config.FieldError {
	r := cfg.Delivery.Remote
	return cfg.FieldError([]string{"delivery", "remote"}, "remote %q does not exist in this repository; add it (git remote add %s URL) or name one of git remote's", r, r)
}

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/delivery"
	"github.com/set-engine/set/engine/forge"
	"github.com/set-engine/set/engine/forge/github"
	"github.com/set-engine/set/engine/git"
)

// forgeOf is the forge of pull-request delivery (project.delivery.forge):
// the project's repository on it (forge.repository, or the one the
// remote's URL names), reached with the token of the variable
// forge.tokenEnv names. nil in the other modes. A token not set, a
// repository that cannot be named or a forge set does not know is an
// error at its set.cue field, and a forge that refuses the token or does
// not show the repository writable (Reach) a *forge.ConfigError: all
// found before any work.
func forgeOf(ctx context.Context, root string, cfg *config.Project, getenv func(string) string) (forge.Forge, error) {
	dl := cfg.Delivery
	if !dl.ProposesPullRequests() {
		return nil, nil
	}
	token, err := delivery.Token(cfg, func(k string) (string, bool) { v := getenv(k); return v, v != "" })
	if err != nil {
		return nil, err
	}
	f := dl.Forge
	if f.Kind != "github" {
		return nil, cfg.FieldError([]string{"delivery", "forge", "kind"}, "set knows no forge %q; it knows github", f.Kind)
	}
	repo := f.Repository
	if repo == "" {
		url := git.RemoteURL(ctx, root, dl.Remote)
		var ok bool
		if repo, ok = github.RepositoryOf(url); !ok {
			return nil, cfg.FieldError([]string{"delivery", "forge", "repository"},
				"the remote %s's URL (%q) names no GitHub repository; set repository to its owner/name", dl.Remote, url)
		}
	}
	fg, err := github.New(github.Options{APIURL: f.APIURL, Repository: repo, Token: token, TokenEnv: f.TokenEnv})
	if err != nil {
		return nil, err
	}
	reach, cancel := context.WithTimeout(ctx, reachTimeout)
	defer cancel()
	if err := fg.Reach(reach); err != nil {
		if reach.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("the forge %s did not answer within %s (%w); check project.delivery.forge.apiURL", f.APIURL, reachTimeout, err)
		}
		return nil, err
	}
	return fg, nil
}

// reachTimeout bounds forgeOf's question to the forge, rate limits
// waited out included: a run that cannot reach its forge stops before
// any agent works.
const reachTimeout = time.Minute

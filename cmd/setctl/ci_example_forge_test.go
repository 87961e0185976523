package main

import (
	"testing"

	"github.com/set-engine/set/engine/forge/githubtest"
)

// startGitHub is the fakeGitHub of TestCIExampleRuns: githubtest's
// stand-in GitHub, merging by itself what is handed to it once its
// head is green.
func startGitHub(t *testing.T, repository, remote, token string) ciForge {
	srv := githubtest.NewServer(githubtest.Options{Token: token, Repository: repository, Remote: remote, AutoMerge: true})
	t.Cleanup(srv.Close)
	return ciForge{
		apiURL: srv.URL(),
		check: func(t *testing.T) {
			prs := srv.PRs()
			if len(prs) != 1 {
				t.Fatalf("the forge holds %d pull requests, want 1: %+v", len(prs), prs)
			}
			pr := prs[0]
			if pr.Head != "set/a" || pr.Base != "main" || !pr.Merged {
				t.Errorf("the pull request: %+v, want set/a into main, merged", pr)
			}
			if len(srv.Statuses(pr.HeadSHA)) == 0 {
				t.Errorf("no commit status on the pull request's head %s", pr.HeadSHA)
			}
		},
	}
}

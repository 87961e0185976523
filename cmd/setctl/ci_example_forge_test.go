package main

import (
	"testing"

	"github.com/set-engine/set/engine/forge/githubtest"
)

// startGitHub is the fakeGitHub of TestCIExampleRuns: githubtest's
// stand-in GitHub, merging by itself what is handed to it once its
// head is green when merges is true; else branch protection requires a
// review nobody gives (the status ci/review): auto-merge is armed, and
// the pull request waits for a person.
func startGitHub(t *testing.T, repository, remote, token string, merges bool) ciForge {
	opts := githubtest.Options{Token: token, Repository: repository, Remote: remote, AutoMerge: merges}
	if !merges {
		opts.Required = []string{"ci/review"}
	}
	srv := githubtest.NewServer(opts)
	t.Cleanup(srv.Close)
	return ciForge{
		apiURL: srv.URL(),
		check: func(t *testing.T, merged bool) {
			prs := srv.PRs()
			if len(prs) != 1 {
				t.Fatalf("the forge holds %d pull requests, want 1: %+v", len(prs), prs)
			}
			pr := prs[0]
			if pr.Head != "set/a" || pr.Base != "main" || pr.Merged != merged {
				t.Errorf("the pull request: %+v, want set/a into main, merged %v", pr, merged)
			}
			if len(srv.Statuses(pr.HeadSHA)) == 0 {
				t.Errorf("no commit status on the pull request's head %s", pr.HeadSHA)
			}
		},
		merge: func(t *testing.T, number int) {
			if _, err := srv.Merge(number); err != nil {
				t.Fatal(err)
			}
		},
	}
}

package main

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/set-engine/set/engine/forge/githubtest"
)

// githubKey keys, in a script's Values, the stand-in GitHub its github
// command started (a *githubSlot).
type githubKey struct{}

type githubSlot struct {
	srv *githubtest.Server
	// reactions are what the forge does, in order, each time a pull
	// request is handed to its merge (see github start).
	mu        sync.Mutex
	reactions []string
	// errs are the reactions that failed, which github prs prints.
	errs []string
}

// setupGitHub gives a script the slot of its stand-in GitHub, closed when
// the script ends.
func setupGitHub(env *testscript.Env) {
	slot := &githubSlot{}
	env.Values[githubKey{}] = slot
	env.Defer(func() {
		if slot.srv != nil {
			slot.srv.Close()
		}
	})
}

// githubRepository is the repository the stand-in GitHub serves.
const githubRepository = "octo/hello"

// gitHub is the script command `github`, a stand-in GitHub
// (engine/forge/githubtest) over a bare repository, in the test process:
//
//	github start [-merge-queue] [-require CONTEXT] REMOTE [REACTION...]
//	    starts it for the repository octo/hello, whose git side is the
//	    bare repository REMOTE, taking only the token in $GH_TOKEN, and
//	    sets $GITHUB_API to its REST API's URL. Each time a pull request
//	    is handed to the forge's merge (enqueued, or auto-merge armed),
//	    the next REACTION happens to it: merge; close:WORDS (closed by
//	    octocat, who says WORDS); changes:BODY (octocat requests
//	    changes, saying BODY); fail:NAME:OUTPUT (the check NAME fails,
//	    printing OUTPUT); none. With no reaction left, none. With
//	    -require, branch protection requires the status CONTEXT, which
//	    nobody posts: a pull request with nothing else left to wait for
//	    is armed for auto-merge rather than merged at once.
//	github prs
//	    prints the reactions that failed, then each pull request:
//	    number, head, state, title, and the commit statuses on its head.
//	github merge N [MESSAGE] | github close N WORDS | github changes N BODY
//	    merges pull request N (its commit on main saying MESSAGE, as a
//	    person who edited it; else GitHub's default), closes it as
//	    octocat saying WORDS, or has octocat request changes on it,
//	    saying BODY.
//	github refuse STATUS
//	    answers every request with STATUS (401, 403), as a token GitHub
//	    refuses; 0 stops it.
func gitHub(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: github start|prs|merge|close ...")
	}
	slot := ts.Value(githubKey{}).(*githubSlot)
	if args[0] != "start" && slot.srv == nil {
		ts.Fatalf("github %s: no github start before", args[0])
	}
	switch args[0] {
	case "start":
		args = args[1:]
		var queue bool
		var required []string
		for len(args) > 0 && strings.HasPrefix(args[0], "-") {
			switch {
			case args[0] == "-merge-queue":
				queue, args = true, args[1:]
			case args[0] == "-require" && len(args) > 1:
				required, args = append(required, args[1]), args[2:]
			default:
				ts.Fatalf("github start: unknown flag %s", args[0])
			}
		}
		if len(args) == 0 {
			ts.Fatalf("usage: github start [-merge-queue] [-require CONTEXT] REMOTE [REACTION...]")
		}
		token := ts.Getenv("GH_TOKEN")
		if token == "" {
			ts.Fatalf("github start: $GH_TOKEN is empty")
		}
		srv := githubtest.NewServer(githubtest.Options{Token: token, Repository: githubRepository, Remote: ts.MkAbs(args[0]), MergeQueue: queue, Required: required})
		slot.srv, slot.reactions = srv, args[1:]
		srv.OnRequestMerge(slot.react)
		ts.Setenv("GITHUB_API", srv.URL())
	case "prs":
		slot.mu.Lock()
		for _, e := range slot.errs {
			fmt.Fprintf(ts.Stdout(), "error: %s\n", e)
		}
		slot.mu.Unlock()
		for _, pr := range slot.srv.PRs() {
			state := pr.State
			if pr.Merged {
				state = "merged"
			}
			fmt.Fprintf(ts.Stdout(), "#%d %s %s: %s\n", pr.Number, pr.Head, state, pr.Title)
			for _, st := range slot.srv.Statuses(pr.HeadSHA) {
				fmt.Fprintf(ts.Stdout(), "  %s %s: %s\n", st.Context, st.State, st.Description)
			}
		}
	case "refuse":
		if len(args) != 2 {
			ts.Fatalf("usage: github refuse STATUS")
		}
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		slot.srv.Refuse(n)
	case "merge", "close", "changes":
		if len(args) < 2 {
			ts.Fatalf("usage: github merge N [MESSAGE] | github close N WORDS | github changes N BODY")
		}
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		switch words := strings.Join(args[2:], " "); args[0] {
		case "merge":
			_, err = slot.srv.MergeWith(n, words)
		case "close":
			err = slot.srv.ClosePR(n, "octocat", words)
		default:
			_, err = slot.srv.RequestChanges(n, "octocat", words)
		}
		ts.Check(err)
	default:
		ts.Fatalf("github: unknown %q", args[0])
	}
}

// react does the next reaction to pr, handed to the forge's merge.
func (slot *githubSlot) react(pr githubtest.PR) {
	slot.mu.Lock()
	next := "none"
	if len(slot.reactions) > 0 {
		next, slot.reactions = slot.reactions[0], slot.reactions[1:]
	}
	slot.mu.Unlock()
	what, rest, _ := strings.Cut(next, ":")
	var err error
	switch what {
	case "none":
	case "merge":
		_, err = slot.srv.Merge(pr.Number)
	case "close":
		err = slot.srv.ClosePR(pr.Number, "octocat", rest)
	case "changes":
		_, err = slot.srv.RequestChanges(pr.Number, "octocat", rest)
	case "fail":
		name, output, _ := strings.Cut(rest, ":")
		_, err = slot.srv.FailCheck(pr.Number, name, output)
	default:
		err = fmt.Errorf("unknown reaction %q", next)
	}
	if err != nil {
		slot.mu.Lock()
		slot.errs = append(slot.errs, fmt.Sprintf("%s on #%d: %v", next, pr.Number, err))
		slot.mu.Unlock()
	}
}

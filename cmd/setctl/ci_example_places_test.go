package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The places the jobs of the CI example run in (ci_example_test.go):
// a repository as actions/checkout leaves it, with a bare remote, an exec
// agent, and what the job expects once its steps ran.

// ciProjectCUE is the set.cue of the jobs' projects: an exec agent
// (ciAgentScript: it writes a file per change, and prints the agent's
// key, which set must mask), the gate check running checkArgv (a JSON
// list) in verify and integration, and delivery.
func ciProjectCUE(delivery, checkArgv string) string {
	return `package hello

project: {
	profile: "shell"
	name:    "hello"
	spec: ["docs/spec.md"]
	maxParallel: 1
	` + delivery + `
	agent: {
		adapter: "exec"
		argv: ["sh", "agent.sh", "{change}"]
	}
	gates: check: run: ` + checkArgv + `
	_stack: check: {}
	stacks: {
		feature:        _stack
		fix:            _stack
		refactor:       _stack
		infrastructure: _stack
		schema:         _stack
		docs:           _stack
		test:           _stack
		cleanup:        _stack
	}
	integration: check: {}
}
`
}

const (
	ciModuleCUE   = "module: \"example.com/hello@v0\"\nlanguage: version: \"v0.17.0\"\ndeps: \"github.com/set-engine/set@v0\": v: \"v0.1.0\"\n"
	ciAgentScript = "echo \"agent key: $ANTHROPIC_API_KEY\"\necho \"$1\" > \"$1.txt\"\n"
	ciSpecAlpha   = "# Hello\n\n### REQ-A-01: Alpha\nThe system SHALL write alpha.txt.\n\n#### Scenario: alpha\n- **WHEN** alpha.txt is read\n- **THEN** it says \"alpha\"\n"
	ciSpecBravo   = "\n### REQ-B-01: Bravo\nThe system SHALL write bravo.txt.\n\n#### Scenario: bravo\n- **WHEN** bravo.txt is read\n- **THEN** it says \"bravo\"\n"
	// ciAgentKey stands for the ANTHROPIC_API_KEY secret.
	ciAgentKey = "sk-ant-ci-example-0123456789abcdef"
)

// ciRemote makes a bare repository, remote.git under root, whose main
// holds a job's project (set.cue setCUE, its module, the agent's script,
// the spec of REQ-A-01), made in root/seed: the repository a job checks
// out.
func ciRemote(t *testing.T, root, setCUE string) string {
	seed, remote := filepath.Join(root, "seed"), filepath.Join(root, "remote.git")
	writeFiles(t, seed, map[string]string{
		"set.cue":            setCUE,
		"cue.mod/module.cue": ciModuleCUE,
		"agent.sh":           ciAgentScript,
		".gitignore":         ".set/\n",
		"docs/spec.md":       ciSpecAlpha,
	})
	gitIn(t, root, "init", "-q", "-b", "main", "seed")
	gitIn(t, seed, "add", "-A")
	gitIn(t, seed, "commit", "-qm", "skeleton")
	gitIn(t, root, "init", "-q", "--bare", "-b", "main", "remote.git")
	gitIn(t, seed, "push", "-q", remote, "main")
	return remote
}

// ciSummaryHas fails unless the job's summary holds each of wants.
func ciSummaryHas(t *testing.T, summary string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(summary, want) {
			t.Errorf("the job summary lacks %q:\n%s", want, summary)
		}
	}
}

// ciStepsPassed fails unless each of the job's steps named exited 0.
func ciStepsPassed(t *testing.T, steps map[string]int, names ...string) {
	t.Helper()
	for _, step := range names {
		if steps[step] != 0 {
			t.Errorf("step %s exited %d", step, steps[step])
		}
	}
}

// ciRunsPassed fails unless every setctl command the job ran exited 0.
func ciRunsPassed(t *testing.T, ran []setctlRun) {
	t.Helper()
	for _, r := range ran {
		if r.exit != 0 {
			t.Errorf("%s exited %d, want 0", r.command, r.exit)
		}
	}
}

// ciGitEnv gives the test's own git commands an identity and no global
// or system configuration.
func ciGitEnv(t *testing.T) {
	t.Setenv("GIT_AUTHOR_NAME", "set test")
	t.Setenv("GIT_AUTHOR_EMAIL", "test@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "set test")
	t.Setenv("GIT_COMMITTER_EMAIL", "test@example.com")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
}

// setupPushJob is the place of apply-push: a clone of a bare remote on
// main, as actions/checkout gives it on a push to main, whose set.cue
// is in push mode and whose spec asks for one change. The job passes
// when the change is on the remote's main, the summary shows the run,
// and the agent's key is in no file under .set/.
func setupPushJob(t *testing.T) *ciPlace {
	ciGitEnv(t)
	root := t.TempDir()
	remote := ciRemote(t, root, ciProjectCUE(`delivery: mode: "push"`, `["true"]`))
	dir := filepath.Join(root, "workspace")
	gitIn(t, root, "clone", "-q", remote, dir)
	return &ciPlace{
		name:        "passes",
		dir:         dir,
		expressions: map[string]string{"secrets.ANTHROPIC_API_KEY": ciAgentKey},
		check: func(t *testing.T, steps map[string]int, ran []setctlRun, summary string) {
			ciStepsPassed(t, steps, "Apply", "Summary")
			ciRunsPassed(t, ran)
			if log := gitIn(t, remote, "log", "--format=%s", "main"); log != "a: Alpha\nskeleton" {
				t.Errorf("the remote's main:\n%s\nwant the change a on skeleton", log)
			}
			if !strings.HasPrefix(summary, "### setctl status\n```\n") || !strings.Contains(summary, ": finished: success in ") {
				t.Errorf("the job summary:\n%s", summary)
			}
			// The agent printed its key; set kept its log, masked.
			if log, err := os.ReadFile(filepath.Join(dir, ".set", "logs", "a", "agent-1.log")); err != nil || !strings.Contains(string(log), "agent key: [REDACTED]") {
				t.Errorf("the agent's log, %v:\n%s", err, log)
			}
			ciNoSecretUnder(t, filepath.Join(dir, ".set"), ciAgentKey)
		},
	}
}

// setupPlanJob is a place of plan: a pull request adds a requirement
// to a spec main implements nothing of, checked out as actions/checkout
// gives a pull_request event (ciPullRequestCheckout). setctl plan exits 2 (a
// change to run), the step passes, and the summary holds the plan as
// markdown.
func setupPlanJob(t *testing.T) *ciPlace {
	ciGitEnv(t)
	root := t.TempDir()
	remote := ciRemote(t, root, ciProjectCUE("", `["true"]`))
	dir := ciPullRequestCheckout(t, root, remote, map[string]string{"docs/spec.md": ciSpecAlpha + ciSpecBravo})
	return &ciPlace{
		name:        "spec edited",
		dir:         dir,
		expressions: map[string]string{"github.base_ref": "main", "secrets.ANTHROPIC_API_KEY": ciAgentKey},
		check: func(t *testing.T, steps map[string]int, ran []setctlRun, summary string) {
			if steps["Plan"] != 0 {
				t.Errorf("step Plan exited %d, want 0 (changes to run pass the job)", steps["Plan"])
			}
			if len(ran) != 1 || ran[0].exit != exitPending {
				t.Errorf("setctl ran %v, want one plan that exits %d", ran, exitPending)
			}
			ciSummaryHas(t, summary,
				"### Plan for hello: 2 changes, 2 requirements\n",
				"| Change | Level | Type | Size | Agent | Requirements | After |\n",
				"#### Requirements: 2 new\n",
				"| REQ-B-01 | Bravo | new | planned in ",
			)
		},
	}
}

// setupPushJobFailing is a place of apply-push where the change fails
// for good: its gate fails in the change's worktree (not on main, so
// the baseline passes) and budgets.retries.verify is 0. setctl apply
// exits 1, so the Apply step fails the job with an error annotation,
// and the steps that run always() still run: the summary shows the
// failed change, and .set/ is kept. The remote's main is untouched.
func setupPushJobFailing(t *testing.T) *ciPlace {
	ciGitEnv(t)
	root := t.TempDir()
	remote := ciRemote(t, root, ciProjectCUE("delivery: mode: \"push\"\n\tbudgets: retries: verify: 0", `["sh", "-c", "test ! -e a.txt"]`))
	dir := filepath.Join(root, "workspace")
	gitIn(t, root, "clone", "-q", remote, dir)
	return &ciPlace{
		name:        "a gate fails",
		dir:         dir,
		expressions: map[string]string{"secrets.ANTHROPIC_API_KEY": ciAgentKey},
		check: func(t *testing.T, steps map[string]int, ran []setctlRun, summary string) {
			if steps["Apply"] != exitError {
				t.Errorf("step Apply exited %d, want %d", steps["Apply"], exitError)
			}
			ciStepsPassed(t, steps, "Summary")
			want := []setctlRun{{"setctl apply --yes --json", exitError}, {"setctl status", exitOK}}
			if !slices.Equal(ran, want) {
				t.Errorf("setctl ran %v, want %v", ran, want)
			}
			if log := gitIn(t, remote, "log", "--format=%s", "main"); log != "skeleton" {
				t.Errorf("the remote's main:\n%s\nwant skeleton alone", log)
			}
			if !strings.Contains(summary, "failed:retry_budget_exhausted") {
				t.Errorf("the job summary does not show the failed change:\n%s", summary)
			}
			// The artifact, unpacked into .set/ of a fresh checkout of the
			// same commit, tells the change's story.
			again := filepath.Join(root, "again")
			gitIn(t, root, "clone", "-q", remote, again)
			ciCopyTree(t, filepath.Join(dir, ".set"), filepath.Join(again, ".set"), "worktrees")
			t.Setenv("CUE_CACHE_DIR", t.TempDir())
			t.Setenv("CUE_REGISTRY", "none")
			var stdout, stderr strings.Builder
			if code := Main([]string{"-C", again, "explain", "a"}, testProcess(&stdout, &stderr)); code != exitOK || !strings.Contains(stdout.String(), "failed:retry_budget_exhausted") {
				t.Errorf("setctl explain a on the artifact exited %d:\n%s%s", code, stdout.String(), stderr.String())
			}
		},
	}
}

// ciForgeRepository is the repository the pull-request places' fake
// GitHub serves, and ciForgeToken the one token it takes (GITHUB_TOKEN).
const ciForgeRepository, ciForgeToken = "acme/hello", "ghs_ciexample0123456789abcdefABCDEF"

// ciPullRequestExpressions are the secrets of the pull-request places'
// jobs.
func ciPullRequestExpressions() map[string]string {
	return map[string]string{
		"secrets.ANTHROPIC_API_KEY": ciAgentKey,
		"secrets.GITHUB_TOKEN":      ciForgeToken,
	}
}

// ciPullRequestRemote starts github over remote.git under root, merging
// by itself when merges, and makes that remote (ciRemote) with set.cue in
// pull-request mode against it, with auto-merge and forge.wait wait. It
// returns the forge and the remote.
func ciPullRequestRemote(t *testing.T, root string, github fakeGitHub, merges bool, wait string) (ciForge, string) {
	forge := github(t, ciForgeRepository, filepath.Join(root, "remote.git"), ciForgeToken, merges)
	delivery := fmt.Sprintf("delivery: {mode: \"pull-request\", forge: {repository: %q, apiURL: %q, autoMerge: true, wait: %q}}", ciForgeRepository, forge.apiURL, wait)
	return forge, ciRemote(t, root, ciProjectCUE(delivery, `["true"]`))
}

// setupPullRequestJob is the place of apply-pull-request: a clone of a
// bare remote on main, as actions/checkout gives it, whose set.cue is in
// pull-request mode with auto-merge, its forge a fake GitHub serving
// acme/hello over that remote (github) that merges what is handed to it
// once its statuses are green, and GITHUB_TOKEN the token it takes. The
// job passes when the change reached the remote's main through its
// pull request, the forge saw what check says, and neither the agent's
// key nor the token is in a file under .set/.
func setupPullRequestJob(t *testing.T, github fakeGitHub) *ciPlace {
	ciGitEnv(t)
	root := t.TempDir()
	forge, remote := ciPullRequestRemote(t, root, github, true, "2m")
	dir := filepath.Join(root, "workspace")
	gitIn(t, root, "clone", "-q", remote, dir)
	return &ciPlace{
		name:        "merged by the forge",
		dir:         dir,
		expressions: ciPullRequestExpressions(),
		check: func(t *testing.T, steps map[string]int, ran []setctlRun, summary string) {
			ciStepsPassed(t, steps, "Apply", "Summary")
			ciRunsPassed(t, ran)
			if got := gitIn(t, remote, "show", "main:a.txt"); got != "a" {
				t.Errorf("a.txt on the remote's main holds %q, want a", got)
			}
			if !strings.Contains(summary, ": finished: success in ") {
				t.Errorf("the job summary:\n%s", summary)
			}
			forge.check(t, true)
			ciNoSecretUnder(t, filepath.Join(dir, ".set"), ciAgentKey)
			ciNoSecretUnder(t, filepath.Join(dir, ".set"), ciForgeToken)
		},
	}
}

// setupPullRequestJobLeftOpen is the place of apply-pull-request where
// the forge does not merge by itself (a repository that allows no
// auto-merge: the pull request waits for a person): setctl apply exits 3
// once forge.wait passed, with the pull request open, and the job passes
// with a notice. Its then is the next run of the job, once someone
// merged the pull request: a fresh checkout with .set/ restored as
// actions/cache/restore restores it (without .set/worktrees/). That run
// picks the pull request up: no second one, no agent run again, the
// change merged, setctl apply exits 0, and the remote's main holds it.
func setupPullRequestJobLeftOpen(t *testing.T, github fakeGitHub) *ciPlace {
	ciGitEnv(t)
	root := t.TempDir()
	forge, remote := ciPullRequestRemote(t, root, github, false, "0s")
	first := filepath.Join(root, "workspace")
	gitIn(t, root, "clone", "-q", remote, first)
	expressions := ciPullRequestExpressions()
	return &ciPlace{
		name:        "left open",
		dir:         first,
		expressions: expressions,
		check: func(t *testing.T, steps map[string]int, ran []setctlRun, summary string) {
			ciStepsPassed(t, steps, "Apply", "Summary")
			if len(ran) == 0 || ran[0].exit != exitOpen {
				t.Errorf("setctl ran %v, want apply exiting %d first", ran, exitOpen)
			}
			if log := gitIn(t, remote, "log", "--format=%s", "main"); log != "skeleton" {
				t.Errorf("the remote's main:\n%s\nwant skeleton alone", log)
			}
			forge.check(t, false)
		},
		then: func(t *testing.T) *ciPlace {
			forge.merge(t, 1)
			second := filepath.Join(root, "workspace-2")
			gitIn(t, root, "clone", "-q", remote, second)
			ciCopyTree(t, filepath.Join(first, ".set"), filepath.Join(second, ".set"), "worktrees")
			return &ciPlace{
				name:        "merged meanwhile",
				dir:         second,
				expressions: expressions,
				check: func(t *testing.T, steps map[string]int, ran []setctlRun, summary string) {
					ciStepsPassed(t, steps, "Apply", "Summary")
					ciRunsPassed(t, ran)
					if got := gitIn(t, remote, "show", "main:a.txt"); got != "a" {
						t.Errorf("a.txt on the remote's main holds %q, want a", got)
					}
					if got := gitIn(t, second, "rev-parse", "main"); got != gitIn(t, remote, "rev-parse", "main") {
						t.Errorf("the local main is at %s, not at the remote's", got)
					}
					forge.check(t, true)
					if branches := gitIn(t, second, "branch", "--list", "set/*"); branches != "" {
						t.Errorf("local branches left: %s", branches)
					}
					events, err := os.ReadFile(filepath.Join(second, ".set", "events.jsonl"))
					if err != nil {
						t.Fatal(err)
					}
					for typ, want := range map[string]int{"DISPATCH": 1, "PULL_REQUEST_OPENED": 1, "MERGED": 1} {
						if n := strings.Count(string(events), `"type":"`+typ+`"`); n != want {
							t.Errorf("%d %s events, want %d", n, typ, want)
						}
					}
					ciNoSecretUnder(t, filepath.Join(second, ".set"), ciForgeToken)
				},
			}
		},
	}
}

// ciCopyTree copies the files under from to to, but the top-level
// directory skip: what upload-artifact keeps of .set/ without its
// worktrees, and a download unpacks.
func ciCopyTree(t *testing.T, from, to, skip string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		switch {
		case rel == skip && d.IsDir():
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// setupPlanJobUpToDate is a place of plan where main implements the
// whole spec (an apply ran on it) and the pull request only tunes
// set.cue: setctl plan exits 0, the step passes, and the summary says
// there is nothing to run.
func setupPlanJobUpToDate(t *testing.T) *ciPlace {
	ciGitEnv(t)
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	t.Setenv("CUE_REGISTRY", "none")
	root := t.TempDir()
	remote := ciRemote(t, root, ciProjectCUE("", `["true"]`))
	seed := filepath.Join(root, "seed")
	var stdout, stderr strings.Builder
	if code := Main([]string{"-C", seed, "apply", "--yes"}, testProcess(&stdout, &stderr)); code != exitOK {
		t.Fatalf("setctl apply in the seed exited %d:\n%s%s", code, stdout.String(), stderr.String())
	}
	gitIn(t, seed, "push", "-q", remote, "main")
	dir := ciPullRequestCheckout(t, root, remote, map[string]string{"set.cue": strings.Replace(ciProjectCUE("", `["true"]`), "maxParallel: 1", "maxParallel: 2", 1)})
	return &ciPlace{
		name:        "nothing to do",
		dir:         dir,
		expressions: map[string]string{"github.base_ref": "main", "secrets.ANTHROPIC_API_KEY": ciAgentKey},
		check: func(t *testing.T, steps map[string]int, ran []setctlRun, summary string) {
			if steps["Plan"] != 0 {
				t.Errorf("step Plan exited %d, want 0", steps["Plan"])
			}
			if len(ran) != 1 || ran[0].exit != exitOK {
				t.Errorf("setctl ran %v, want one plan that exits %d", ran, exitOK)
			}
			ciSummaryHas(t, summary,
				"### Plan for hello: 0 changes, 0 requirements\n",
				"No changes: `main` implements every requirement of the spec.\n",
				"#### Requirements: 1 implemented\n",
				"| REQ-A-01 | Alpha | implemented | by a in ",
			)
		},
	}
}

// ciPullRequestCheckout pushes a pull request to remote whose branch
// changes files on the main of root/seed, with its merge commit as
// refs/pull/1/merge, and checks it out as actions/checkout does for a
// pull_request event with fetch-depth 0: every branch as a remote one,
// no local branch, the merge commit on a detached HEAD. It returns the
// checkout.
func ciPullRequestCheckout(t *testing.T, root, remote string, files map[string]string) string {
	seed := filepath.Join(root, "seed")
	gitIn(t, seed, "switch", "-q", "-c", "edit")
	writeFiles(t, seed, files)
	gitIn(t, seed, "commit", "-qam", "an edit of set's inputs")
	gitIn(t, seed, "switch", "-q", "main")
	gitIn(t, seed, "switch", "-q", "-c", "merge")
	gitIn(t, seed, "merge", "-q", "--no-ff", "-m", "Merge edit into main", "edit")
	gitIn(t, seed, "push", "-q", remote, "edit", "merge:refs/pull/1/merge")

	dir := filepath.Join(root, "workspace")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "remote", "add", "origin", remote)
	gitIn(t, dir, "fetch", "-q", "origin", "+refs/heads/*:refs/remotes/origin/*", "+refs/pull/1/merge:refs/remotes/pull/1/merge")
	gitIn(t, dir, "checkout", "-q", "--detach", "refs/remotes/pull/1/merge")
	return dir
}

// ciNoSecretUnder fails when a file under dir holds secret.
func ciNoSecretUnder(t *testing.T, dir, secret string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(data), secret) {
			t.Errorf("%s holds the agent's key", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

package main

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"golang.org/x/mod/modfile"

	set "github.com/set-engine/set"
	"github.com/set-engine/set/internal/modeltest"
)

// ciExample is the GitHub Actions workflow the README shows, relative to
// this package.
const ciExample = "../../examples/ci/github-actions.yml"

// ciWorkflow is what the test reads of a GitHub Actions workflow.
type ciWorkflow struct {
	Permissions map[string]string `yaml:"permissions"`
	Defaults    struct {
		Run struct {
			Shell string `yaml:"shell"`
		} `yaml:"run"`
	} `yaml:"defaults"`
	Env  map[string]string `yaml:"env"`
	Jobs map[string]ciJob  `yaml:"jobs"`
}

// ciJob is one job of a ciWorkflow.
type ciJob struct {
	If          string            `yaml:"if"`
	RunsOn      string            `yaml:"runs-on"`
	Permissions map[string]string `yaml:"permissions"`
	Concurrency *struct {
		Group            string `yaml:"group"`
		CancelInProgress bool   `yaml:"cancel-in-progress"`
	} `yaml:"concurrency"`
	Steps []ciStep `yaml:"steps"`
}

// ciStep is one step of a ciJob: an action (Uses, With) or a script (Run).
type ciStep struct {
	Name string            `yaml:"name"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	With map[string]any    `yaml:"with"`
	Run  string            `yaml:"run"`
	Env  map[string]string `yaml:"env"`
}

// label names the step in a failure.
func (s ciStep) label(i int) string {
	switch {
	case s.Name != "":
		return fmt.Sprintf("step %d (%s)", i+1, s.Name)
	case s.Uses != "":
		return fmt.Sprintf("step %d (%s)", i+1, s.Uses)
	}
	return fmt.Sprintf("step %d", i+1)
}

// readCIExample parses the example workflow.
func readCIExample(t *testing.T) ciWorkflow {
	t.Helper()
	data, err := os.ReadFile(ciExample)
	if err != nil {
		t.Fatal(err)
	}
	var w ciWorkflow
	if err := yaml.Unmarshal(data, &w); err != nil {
		t.Fatalf("%s: %v", ciExample, err)
	}
	return w
}

// setctlCommand is one `setctl …` of a run: script where the shell runs
// a command (at the start of a line, or after ;, |, &&, || or an opening
// parenthesis), up to the shell's next operator (a pipe, a redirection,
// || or &&): "setctl plan --detailed-exitcode --format markdown". A
// setctl inside a quoted string or a comment is not one.
var setctlCommand = regexp.MustCompile(`(?m)(?:^|[;|&(])[ \t]*(setctl(?:[ \t]+[^\s|&;<>()'"#]+)*)`)

// setctlCommands are the setctl commands of a run: script, in order.
func setctlCommands(script string) []string {
	var out []string
	var code strings.Builder
	for line := range strings.Lines(script) {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			code.WriteString(line)
		}
	}
	text := code.String()
	for _, m := range setctlCommand.FindAllStringSubmatchIndex(unquoted(text), -1) {
		out = append(out, text[m[2]:m[3]])
	}
	return out
}

// unquoted is script with the text of every quoted string ('…' or "…")
// replaced by x, quotes kept, so that a setctl a string mentions is not
// read as a command; it has script's length, offsets in it are script's.
func unquoted(script string) string {
	b := []byte(script)
	var quote byte
	for i, c := range b {
		switch {
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			b[i] = 'x'
		}
	}
	return string(b)
}

// TestCIExampleStructure: the GitHub Actions example is valid YAML with
// the jobs the README describes: a plan job on pull requests, and an
// apply job per delivery mode, chosen by the repository variable
// SET_DELIVERY; each installs setctl from this module at this build's
// version, runs setctl apply --yes --json with the agent's key from a
// secret, keeps .set/ as an artifact whatever the outcome, and holds the
// permissions its mode needs. Both run one at a time, a second run
// waiting rather than cancelling the first: in push mode not for
// correctness (two runs at once are safe) but so that two runs do not pay
// agents for the same changes; in pull-request mode because the next run
// picks up the pull requests of the last from its .set/.
func TestCIExampleStructure(t *testing.T) {
	w := readCIExample(t)
	if got := slices.Sorted(maps.Keys(w.Jobs)); !slices.Equal(got, []string{"apply-pull-request", "apply-push", "plan"}) {
		t.Fatalf("jobs %v, want apply-pull-request, apply-push, plan", got)
	}
	if w.Defaults.Run.Shell != "bash" {
		t.Errorf("defaults.run.shell is %q, want bash (GitHub's bash runs with -o pipefail, so `setctl … | tee` fails the step with setctl)", w.Defaults.Run.Shell)
	}
	if len(w.Permissions) != 0 {
		t.Errorf("the workflow grants %v to every job; each job names its own", w.Permissions)
	}
	data, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	install := fmt.Sprintf(`go install "%s/cmd/setctl@${SETCTL_VERSION}"`, modfile.ModulePath(data))
	if w.Env["SETCTL_VERSION"] != set.ModuleVersion {
		t.Errorf("SETCTL_VERSION is %q; setctl version says %s", w.Env["SETCTL_VERSION"], set.ModuleVersion)
	}
	if w.Env["CLAUDE_CODE_VERSION"] != modeltest.ClaudeCodeVersion {
		t.Errorf("CLAUDE_CODE_VERSION is %q; set is tested with Claude Code %s", w.Env["CLAUDE_CODE_VERSION"], modeltest.ClaudeCodeVersion)
	}

	want := map[string]struct {
		cond        string
		permissions map[string]string
		concurrency bool
		secrets     []string
	}{
		"plan":               {"github.event_name == 'pull_request'", map[string]string{"contents": "read"}, false, []string{"ANTHROPIC_API_KEY"}},
		"apply-push":         {"github.event_name != 'pull_request' && vars.SET_DELIVERY == 'push'", map[string]string{"contents": "write"}, true, []string{"ANTHROPIC_API_KEY"}},
		"apply-pull-request": {"github.event_name != 'pull_request' && vars.SET_DELIVERY == 'pull-request'", map[string]string{"contents": "write", "pull-requests": "write", "statuses": "write", "checks": "read"}, true, []string{"ANTHROPIC_API_KEY", "GITHUB_TOKEN"}},
	}
	secretRef := regexp.MustCompile(`\$\{\{\s*secrets\.([A-Za-z0-9_]+)\s*\}\}`)
	for name, job := range w.Jobs {
		wj := want[name]
		if job.If != wj.cond {
			t.Errorf("%s: if: %q, want %q", name, job.If, wj.cond)
		}
		if job.RunsOn != "ubuntu-latest" {
			t.Errorf("%s: runs-on %q", name, job.RunsOn)
		}
		if !maps.Equal(job.Permissions, wj.permissions) {
			t.Errorf("%s: permissions %v, want %v", name, job.Permissions, wj.permissions)
		}
		if got := job.Concurrency != nil; got != wj.concurrency {
			t.Errorf("%s: a concurrency group: %v, want %v", name, got, wj.concurrency)
		} else if got && job.Concurrency.CancelInProgress {
			t.Errorf("%s: cancel-in-progress: a run that waits is not cancelled", name)
		}
		var secrets []string
		var installs, applies, uploads int
		for i, s := range job.Steps {
			if strings.Contains(s.Run, "${{") {
				t.Errorf("%s: %s: an expression in run: (script injection); pass it through env:", name, s.label(i))
			}
			for k, v := range s.Env {
				for _, m := range secretRef.FindAllStringSubmatch(v, -1) {
					secrets = append(secrets, m[1])
					if k != m[1] {
						t.Errorf("%s: %s: env %s holds secret %s", name, s.label(i), k, m[1])
					}
				}
			}
			if strings.Contains(s.Run, install) {
				installs++
			}
			for _, c := range setctlCommands(s.Run) {
				if c == "setctl apply --yes --json" {
					applies++
					if s.Env["ANTHROPIC_API_KEY"] == "" {
						t.Errorf("%s: %s runs %s without the agent's key", name, s.label(i), c)
					}
				}
			}
			switch {
			case strings.HasPrefix(s.Uses, "actions/checkout@"):
				if fmt.Sprint(s.With["fetch-depth"]) != "0" {
					t.Errorf("%s: %s: fetch-depth %v; set reads main's whole history", name, s.label(i), s.With["fetch-depth"])
				}
			case strings.HasPrefix(s.Uses, "actions/upload-artifact@"):
				uploads++
				if s.If != "always()" {
					t.Errorf("%s: %s: if: %q; .set/ is kept whatever the outcome (always())", name, s.label(i), s.If)
				}
				if path := fmt.Sprint(s.With["path"]); !slices.Contains(strings.Fields(path), ".set/") {
					t.Errorf("%s: %s keeps %q, not .set/", name, s.label(i), path)
				}
				if s.With["include-hidden-files"] != true {
					t.Errorf("%s: %s: upload-artifact leaves out hidden files (.set/) unless include-hidden-files: true", name, s.label(i))
				}
			}
		}
		if installs != 1 {
			t.Errorf("%s: %d steps run %s, want 1", name, installs, install)
		}
		slices.Sort(secrets)
		if secrets = slices.Compact(secrets); !slices.Equal(secrets, wj.secrets) {
			t.Errorf("%s: secrets %v, want %v", name, secrets, wj.secrets)
		}
		if name != "plan" && (applies != 1 || uploads != 1) {
			t.Errorf("%s: %d setctl apply --yes --json and %d artifact uploads, want 1 of each", name, applies, uploads)
		}
	}
}

// ciJobSetup prepares the place a job of the example runs in: the
// repository its checkout step gives, with the remote it pushes to, and
// what GitHub's runner and the job's expressions would give it.
type ciJobSetup func(t *testing.T) *ciPlace

// ciPlace is where a job's steps run, and what to check once they ran.
type ciPlace struct {
	// name says what the place is for ("passes", "a gate fails").
	name string
	// dir is the checkout, GITHUB_WORKSPACE.
	dir string
	// expressions are the values of the ${{ … }} the job's env: holds.
	expressions map[string]string
	// check checks the outcome: each step's exit status by name, the
	// commands setctl ran with theirs, and the job summary.
	check func(t *testing.T, steps map[string]int, ran []setctlRun, summary string)
	// then, when not nil, makes the place of the job's next run, once
	// this one ran (a fresh checkout, with what the run kept restored).
	then func(t *testing.T) *ciPlace
}

// setctlRun is one setctl process a step started: its arguments as the
// shell gave them, and its exit status.
type setctlRun struct {
	command string
	exit    int
}

// ciJobSetups are the jobs of the example the test knows how to run,
// each in one place or more (a run that passes, one that fails). Every
// setctl command of a job runs in each of its places; a job whose setctl
// commands have no place here fails TestCIExampleRuns.
var ciJobSetups = map[string][]ciJobSetup{
	"plan":       {setupPlanJob, setupPlanJobUpToDate},
	"apply-push": {setupPushJob, setupPushJobFailing},
}

// ciForgeJobSetups are the jobs whose place talks to a forge: each takes
// the fake GitHub its set.cue points at.
var ciForgeJobSetups = map[string][]func(t *testing.T, github fakeGitHub) *ciPlace{
	"apply-pull-request": {setupPullRequestJob, setupPullRequestJobLeftOpen},
}

// fakeGitHub starts a stand-in GitHub on 127.0.0.1 whose repository is
// owner/name with the bare git repository remote as its git side,
// taking token only, and, when merges is true, merging a pull request by
// itself once it is enqueued or has auto-merge armed and its head is
// green (else the pull request waits for a person).
type fakeGitHub func(t *testing.T, repository, remote, token string, merges bool) ciForge

// ciForge is a running fake GitHub, as a job's place sees it.
type ciForge struct {
	// apiURL is its REST API, the project's forge.apiURL.
	apiURL string
	// check checks what the forge saw once the job ran: a pull request
	// per change, opened from set/<change>, with the gates' statuses on
	// its head, merged or not.
	check func(t *testing.T, merged bool)
	// merge merges pull request number, as a person would.
	merge func(t *testing.T, number int)
}

// TestCIExampleRuns runs every job of the example in a place set up as
// GitHub's runner gives it (a checkout of a repository with a bare
// remote, an exec agent, the job's env with stand-in secrets): every
// run: step that runs setctl runs as written, under GitHub's bash, with
// the setctl of this build on PATH; an action step is one the test
// knows (checkout and setup-go are the place itself, upload-artifact
// and cache/save find .set/ to keep, cache/restore has nothing to restore
// in a fresh place); the install step's go install and npm install are
// not run (no network): the build's setctl and the place's exec agent
// stand for what they install. A setctl command the test cannot run
// fails it: each must have run, with the exit status its place expects.
func TestCIExampleRuns(t *testing.T) {
	real, err := exec.LookPath("setctl") // the test binary, as testscript.Main installs it
	if err != nil {
		t.Fatal(err)
	}
	w := readCIExample(t)
	for _, name := range slices.Sorted(maps.Keys(w.Jobs)) {
		job := w.Jobs[name]
		t.Run(name, func(t *testing.T) {
			setups, ok := ciJobSetups[name]
			if forgeSetups, forge := ciForgeJobSetups[name]; forge {
				setups, ok = nil, true
				for _, setup := range forgeSetups {
					setups = append(setups, func(t *testing.T) *ciPlace { return setup(t, startGitHub) })
				}
			}
			if !ok {
				t.Fatalf("no place to run job %s, so its setctl commands ran nowhere: %s", name, strings.Join(jobCommands(job), "; "))
			}
			for _, setup := range setups {
				for place := setup(t); place != nil; {
					t.Run(place.name, func(t *testing.T) { runCIJob(t, w, name, job, place, real) })
					if place.then == nil {
						break
					}
					place = place.then(t)
				}
			}
		})
	}
}

// jobCommands are the setctl commands of job's steps, in order.
func jobCommands(job ciJob) []string {
	var out []string
	for _, s := range job.Steps {
		out = append(out, setctlCommands(s.Run)...)
	}
	return out
}

// runCIJob runs the steps of job in place, as GitHub's runner would, and
// checks that every setctl command of the job ran.
func runCIJob(t *testing.T, w ciWorkflow, name string, job ciJob, place *ciPlace, real string) {
	tmp := t.TempDir()
	bin, log := filepath.Join(tmp, "bin"), filepath.Join(tmp, "setctl.log")
	summary := filepath.Join(tmp, "step_summary.md")
	writeFiles(t, bin, map[string]string{
		// setctl on PATH: this build, each run logged with its status.
		"setctl": fmt.Sprintf("#!/bin/sh\n%q \"$@\"\nstatus=$?\nprintf '%%s\\t%%s\\n' \"$status\" \"setctl $*\" >> %q\nexit $status\n", real, log),
	})
	if err := os.Chmod(filepath.Join(bin, "setctl"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := ciEnviron(t, tmp, bin, place.dir, summary)
	for k, v := range w.Env {
		env = append(env, k+"="+v)
	}
	expand := func(where, v string) string {
		return regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`).ReplaceAllStringFunc(v, func(e string) string {
			key := strings.TrimSpace(e[3 : len(e)-2])
			val, ok := place.expressions[key]
			if !ok {
				t.Fatalf("%s: %s: the job's place has no value for ${{ %s }}", name, where, key)
			}
			return val
		})
	}
	var commands []string
	steps := map[string]int{}
	failed := false
	for i, s := range job.Steps {
		switch {
		case s.Uses != "":
			ciAction(t, name, s, i, place.dir, failed)
			continue
		case s.If == "" && failed:
			continue
		case s.If != "" && s.If != "always()":
			t.Fatalf("%s: %s: the test does not know if: %s", name, s.label(i), s.If)
		}
		if ciInstallStep(s.Run) {
			continue
		}
		commands = append(commands, setctlCommands(s.Run)...)
		script := filepath.Join(tmp, fmt.Sprintf("step-%d.sh", i+1))
		writeFiles(t, tmp, map[string]string{filepath.Base(script): s.Run})
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
		cmd.Dir = place.dir
		cmd.Env = slices.Clone(env)
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+expand(s.label(i)+" env "+k, v))
		}
		out, err := cmd.CombinedOutput()
		status := cmd.ProcessState.ExitCode()
		if err != nil && status < 0 {
			t.Fatalf("%s: %s: %v", name, s.label(i), err)
		}
		t.Logf("%s: %s exited %d:\n%s", name, s.label(i), status, out)
		steps[s.Name] = status
		failed = failed || status != 0
	}
	var ran []setctlRun
	if data, err := os.ReadFile(log); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			code, command, _ := strings.Cut(line, "\t")
			var exit int
			fmt.Sscan(code, &exit)
			ran = append(ran, setctlRun{command, exit})
		}
	}
	var got []string
	for _, r := range ran {
		got = append(got, r.command)
	}
	if !slices.Equal(got, commands) {
		t.Errorf("%s: setctl ran\n\t%s\nwhere the job's steps say\n\t%s", name, strings.Join(got, "\n\t"), strings.Join(commands, "\n\t"))
	}
	data, _ := os.ReadFile(summary)
	place.check(t, steps, ran, string(data))
}

// ciEnviron is the environment of a job's steps: GitHub's runner's
// variables (GITHUB_WORKSPACE, GITHUB_STEP_SUMMARY, RUNNER_TEMP, CI),
// a HOME and git configuration of the test's own (the job's
// `git config --global` writes there), and bin, holding setctl, first on
// PATH.
func ciEnviron(t *testing.T, tmp, bin, workspace, summary string) []string {
	home := filepath.Join(tmp, "home")
	runnerTemp := filepath.Join(tmp, "runner-temp")
	for _, d := range []string{home, runnerTemp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + filepath.Join(home, ".gitconfig"),
		"CUE_CACHE_DIR=" + filepath.Join(tmp, "cue-cache"),
		"CUE_REGISTRY=none",
		"NO_COLOR=1",
		"CI=true",
		"GITHUB_ACTIONS=true",
		"GITHUB_WORKSPACE=" + workspace,
		"GITHUB_STEP_SUMMARY=" + summary,
		"RUNNER_TEMP=" + runnerTemp,
	}
}

// ciInstallStep reports whether script is the step that installs setctl
// and the agent's CLI, which the test does not run: it needs the network,
// and the build's setctl on PATH and the place's exec agent stand for
// what it installs. TestCIExampleStructure checks what it installs.
func ciInstallStep(script string) bool {
	for _, line := range strings.Split(strings.TrimSpace(script), "\n") {
		if !strings.HasPrefix(line, "go install ") && !strings.HasPrefix(line, "npm install ") {
			return false
		}
	}
	return true
}

// ciAction does what the test stands in for an action step: checkout
// and setup-go are the place itself (the repository checked out, the
// test's Go), cache/restore has nothing to restore in a fresh place,
// upload-artifact and cache/save find the .set/ they keep. Any other
// action fails the test: it does not know what it does.
func ciAction(t *testing.T, job string, s ciStep, i int, dir string, failed bool) {
	t.Helper()
	action, _, _ := strings.Cut(s.Uses, "@")
	switch action {
	case "actions/checkout", "actions/setup-go", "actions/cache/restore":
	case "actions/upload-artifact", "actions/cache/save":
		if failed && s.If != "always()" {
			return
		}
		if !dirExists(filepath.Join(dir, ".set")) {
			t.Errorf("%s: %s: no .set/ to keep", job, s.label(i))
		}
	default:
		t.Fatalf("%s: %s: the test does not know the action %s", job, s.label(i), s.Uses)
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/state"
	"github.com/set-engine/set/internal/gittest"
)

// The profile tests each make a small real project of one profile's type
// (its dependencies from the package registries this machine reaches,
// through the tools' own download caches, so that a rerun is fast), with a
// spec of one requirement, and run `setctl apply` on it with an exec agent
// scripted as a shell script: its first iteration adds the feature and its
// test with a bug, the test gate fails and sends the failure back, and the
// second iteration (whose prompt carries the failure) fixes it. The
// change must merge with every gate of the profile's verify stack run.
//
// They run the real toolchains, so they are skipped with -short; without a
// toolchain a test is skipped with the reason, and fails under CI=true,
// where .ci/run installs every one. They run in parallel (a minute or
// more each): each sample's commands, setctl among them, get the
// sample's environment, and none of them changes the process's.

// requireToolchain skips t under -short, and when check (a command line
// run in dir, "" for the test's directory) fails: then missing says what
// to install. Under CI=true a missing toolchain fails t instead.
func requireToolchain(t *testing.T, missing string, check ...string) {
	t.Helper()
	skipShort(t)
	if out, err := exec.Command(check[0], check[1:]...).CombinedOutput(); err != nil {
		why := missing + " (`" + strings.Join(check, " ") + "`: " + strings.TrimSpace(err.Error()+" "+lastLine(string(out))) + ")"
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %s", why)
		}
		t.Skip(why)
	}
}

// skipShort skips t under -short.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the profiles' sample projects run their real toolchains")
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// sampleProject is a real project in a temporary git repository.
type sampleProject struct {
	t   *testing.T
	dir string
	// env is the environment of every command run for the project
	// (setctl, git, npm, ...; setctl's gates and agent inherit it): the
	// process's, with the sample's own CUE cache, no CUE registry, git's
	// hermetic settings and what setenv adds, each overriding the
	// process's value. The process's environment is never changed.
	env []string
}

// newSample writes files (path → content) into a new directory, with an
// agent script at agent/agent.sh outside the project that set.cue's exec
// agent runs as `sh AGENT PROMPT_FILE` in the change's worktree (its path
// replaces AGENT in files).
func newSample(t *testing.T, agent string, files map[string]string) *sampleProject {
	t.Helper()
	env := append(os.Environ(), "CUE_CACHE_DIR="+t.TempDir(), "CUE_REGISTRY=none")
	env = append(env, gittest.Env(t, "")...)
	agentPath := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(agentPath, []byte(agent), 0o755); err != nil {
		t.Fatal(err)
	}
	p := &sampleProject{t: t, dir: t.TempDir(), env: env}
	for name, content := range files {
		p.write(name, strings.ReplaceAll(content, "AGENT", agentPath))
	}
	return p
}

// setenv sets key to value in the environment of the project's commands.
func (p *sampleProject) setenv(key, value string) {
	p.env = append(p.env, key+"="+value)
}

func (p *sampleProject) write(name, content string) {
	p.t.Helper()
	writeFiles(p.t, p.dir, map[string]string{name: content})
}

// baselineLog is the name of the log of gate in the baseline of the
// project's latest run (rundir.Layout.BaselineLog).
func (p *sampleProject) baselineLog(gate string) string {
	p.t.Helper()
	st, err := state.Read(rundir.New(p.dir).Dir())
	if err != nil {
		p.t.Fatal(err)
	}
	_, rel := rundir.New(p.dir).BaselineLog(st.Run, gate)
	return rel
}

func (p *sampleProject) read(name string) string {
	p.t.Helper()
	data, err := os.ReadFile(filepath.Join(p.dir, filepath.FromSlash(name)))
	if err != nil {
		p.t.Fatal(err)
	}
	return string(data)
}

// run runs a command in the project, with its environment, and returns
// its combined output. (exec finds name on the process's PATH.)
func (p *sampleProject) run(name string, args ...string) string {
	p.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = p.dir
	cmd.Env = p.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// commit makes the project's first commit, on main.
func (p *sampleProject) commit() {
	p.t.Helper()
	p.run("git", "init", "-q", "-b", "main")
	p.run("git", "add", "-A")
	p.run("git", "commit", "-q", "-m", "skeleton")
}

// apply runs `setctl apply --yes` on the project, which must succeed, and
// checks that the change merged after its verify stack ran every gate in
// gates, the test gate failing once first. It returns apply's output.
func (p *sampleProject) apply(change string, gates ...string) string {
	p.t.Helper()
	return p.applyFailing(change, "test", gates...)
}

// applyFailing is apply with the gate that fails once first named.
func (p *sampleProject) applyFailing(change, failing string, gates ...string) string {
	p.t.Helper()
	// A process of its own, not Main in this one: setctl reads its
	// configuration from the environment, which is the sample's.
	setctl, err := exec.LookPath("setctl") // the test binary, as testscript.Main installs it
	if err != nil {
		p.t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	cmd := exec.Command(setctl, "-C", p.dir, "apply", "--yes")
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Whatever of the run outlives setctl and holds its output fails
	// the test instead of hanging it.
	cmd.WaitDelay = 10 * time.Second
	err = cmd.Run()
	out := stdout.String()
	p.t.Log(out)
	if err != nil {
		p.t.Fatalf("setctl apply: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	wants := []string{change + " +verify " + failing + ": FAIL", change + " +iteration 2: done"}
	for _, g := range gates {
		wants = append(wants, change+" +verify "+g+": pass")
	}
	wants = append(wants, change+" +merged", "Run success")
	for _, want := range wants {
		if !matchLine(out, want) {
			p.t.Errorf("apply's output has no line matching %q:\n%s", want, out)
		}
	}
	return out
}

// matchLine reports whether a line of out holds a match of the regular
// expression re (apply pads its columns: " +" matches the padding).
func matchLine(out, re string) bool {
	return regexp.MustCompile(`(?m)` + re).MatchString(out)
}

// gitShow is a file's content on main.
func (p *sampleProject) gitShow(path string) string {
	p.t.Helper()
	return p.run("git", "show", "main:"+path)
}

// fixedOnMain checks that main's path holds fixed, the second iteration's
// fix, and that the second prompt handed the agent each of failures.
func (p *sampleProject) fixedOnMain(path, fixed string, failures ...string) {
	p.t.Helper()
	if got := p.gitShow(path); !strings.Contains(got, fixed) {
		p.t.Errorf("main's %s is not the fixed one:\n%s", path, got)
	}
	prompt := p.read(".set/changes/greet/prompt-2.md")
	for _, f := range failures {
		if !strings.Contains(prompt, f) {
			p.t.Errorf("the second prompt does not hand the agent %q:\n%s", f, prompt)
		}
	}
}

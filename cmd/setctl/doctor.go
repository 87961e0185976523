package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/set-engine/set/engine/agent"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/gate"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/load"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/project"
	"github.com/set-engine/set/engine/runner/dagger"
)

func doctorCommand() command {
	return command{
		name:    "doctor",
		summary: "check that this machine can run the project",
		usage: `Usage: setctl doctor [--json]

Doctor checks what a run of this project needs on this machine: git and
the main branch set.cue names, the configured agent's CLI, the model of
each role (a warning for one the pinned CLI's own table marks deprecated,
retired or superseded), the permission mode of a claude or codex agent
(agent.permissions, and for claude the user and IS_SANDBOX), every
runner the gates use (for dagger: a CLI or
session, an engine, or each engine of runner.dagger.hosts, that opens a
session and says its version within 7 s,
the versions of the engine and the CLI against the one set's Dagger SDK
expects, the base, that every mount's source is a directory here, and,
for a rootfs base, a C compiler for a gate that runs go with -race), and
the program of every gate that runs on the host (on PATH, or a
path relative to the project), the program that rebuilds each generated
file the project holds (npm for package-lock.json; no pnpm or yarn for a
project without their lockfiles), and what each gate with a describe command
will run in this tree and why (the node profile's: npm install without a
lockfile, xo already run by the test script; the python profile's: mypy
as [tool.mypy] configures it), failing for a gate whose describe says it
cannot run here (uv.lock without uv), and the test files the test
runners' configuration names (testRunners: jest's testMatch, vitest's
test.include, ava's files, mocha's spec), warning about what of it set
cannot read. Each line says ok, warn or FAIL and what to do about it.

Doctor runs each gate's describe command from set.cue (and the profiles
it uses) in the project's root, on the host, with the environment the
gate gets: it runs the project's code. Run doctor only on a project whose
set.cue you trust, as you would apply.

Exit status: 0 when the project can run here, 1 otherwise.

Examples:
  setctl doctor
  setctl doctor --json | jq '.checks[] | select(.status == "fail")'
`,
		run: runDoctor,
	}
}

// check is one line of the doctor's report.
type check struct {
	Name   string `json:"name"`
	Status string `json:"status"` // "ok", "warn" or "fail"
	Detail string `json:"detail"`
}

func runDoctor(e *env, args []string) int {
	c := doctorCommand()
	fs := c.flagSet(e)
	asJSON := fs.Bool("json", false, "print the checks as JSON")
	if code, done := c.parse(e, fs, args); done {
		return code
	}
	ctx := context.Background()
	var checks []check
	add := func(name, status, format string, a ...any) {
		checks = append(checks, check{Name: name, Status: status, Detail: fmt.Sprintf(format, a...)})
	}

	if out, err := commandOutput(ctx, "git", "--version"); err != nil {
		add("git", "fail", "git is not installed: set drives git for worktrees and merges")
	} else {
		add("git", "ok", "%s", out)
	}

	ws, err := loadWorkspace(e.dir)
	if err != nil {
		add("project", "fail", "%s", strings.TrimSpace(strings.ReplaceAll(load.Details(err, ws.root), "\n", " ")))
	} else {
		plans := english.Plural(len(ws.spec.Requirements), "requirement")
		if ws.cfg.Planner.FromFolders() {
			plans = changeFolders(ws.proj) + " under openspec/changes/"
		}
		add("project", "ok", "%s (%s profile): %s", ws.cfg.Name, ws.cfg.Profile, plans)
		status, d := checkMainBranch(ctx, ws)
		add("branch", status, "%s", d.Text(ws.root))
		if ws.cfg.Delivery.FollowsRemote() {
			status := statusOK
			d, ok := project.CheckDelivery(ctx, ws.root, ws.cfg, true)
			if !ok {
				status = statusFail
			}
			add("delivery", status, "%s", d.Text(ws.root))
		}
		if ws.cfg.Delivery.ProposesPullRequests() {
			// What apply checks before any work: the token's variable,
			// the repository on the forge, and the forge's answer to the
			// token (forgeOf asks it for the repository).
			if _, err := forgeOf(ctx, ws.root, ws.cfg, e.getenv); err != nil {
				add("forge", statusFail, "%s", strings.TrimSpace(strings.ReplaceAll(load.Details(err, ws.root), "\n", " ")))
			} else {
				f := ws.cfg.Delivery.Forge
				add("forge", statusOK, "%s at %s, its token in $%s may push", f.Kind, f.APIURL, f.TokenEnv)
			}
		}
		checks = append(checks, agentChecks(ctx, ws, e.environ)...)
		checks = append(checks, modelChecks(ws)...)
		checks = append(checks, runnerChecks(ctx, ws, e.getenv)...)
		checks = append(checks, programChecks(ctx, ws, doctorGraph(ctx, ws), e.environ)...)
		checks = append(checks, testConfigChecks(ws)...)
	}

	failed := 0
	for _, ch := range checks {
		if ch.Status == "fail" {
			failed++
		}
	}
	if *asJSON {
		data, _ := json.MarshalIndent(struct {
			OK     bool    `json:"ok"`
			Checks []check `json:"checks"`
		}{failed == 0, checks}, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", data)
	} else {
		for _, ch := range checks {
			fmt.Fprintf(e.stdout, "%-5s %-8s %s\n", map[string]string{"ok": "ok", "warn": "warn", "fail": "FAIL"}[ch.Status], ch.Name, ch.Detail)
		}
		if failed == 0 {
			fmt.Fprintln(e.stdout, "\nThis project can run here.")
		} else {
			fmt.Fprintf(e.stdout, "\nThis project cannot run here: %s.\n", english.Plural(failed, "problem"))
		}
	}
	if failed > 0 {
		return exitError
	}
	return exitOK
}

// agentChecks checks the configured agent, started under the environment
// environ.
func agentChecks(ctx context.Context, ws *workspace, environ []string) []check {
	a := ws.cfg.Agent
	switch a.Adapter {
	case "replay":
		dir := a.Recordings
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(ws.root, dir)
		}
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			return []check{{"agent", "fail", fmt.Sprintf("replay: the recordings directory %s does not exist", a.Recordings)}}
		}
		return []check{{"agent", "ok", "replay: recordings in " + a.Recordings}}
	case "exec":
		if _, err := exec.LookPath(a.Argv[0]); err != nil && !strings.Contains(a.Argv[0], "/") {
			return []check{{"agent", "fail", fmt.Sprintf("exec: %s is not on PATH", a.Argv[0])}}
		}
		return []check{{"agent", "ok", "exec: " + strings.Join(a.Argv, " ")}}
	}
	bin := agentProgram(a)
	install := map[string]string{"claude": "npm install -g @anthropic-ai/claude-code", "codex": "npm install -g @openai/codex"}[a.Adapter]
	path, err := exec.LookPath(bin)
	if err != nil {
		return []check{{"agent", "fail", fmt.Sprintf("%s: %s is not on PATH (%s)", a.Adapter, bin, install)}}
	}
	version, err := commandOutput(ctx, path, "--version")
	if err != nil {
		return []check{{"agent", "fail", fmt.Sprintf("%s: %s --version failed: %v", a.Adapter, path, err)}}
	}
	out := []check{{"agent", "ok", fmt.Sprintf("%s %s (%s)", a.Adapter, version, path)}}
	childEnv := slices.Clone(environ) // then the agent's env, as setctl apply gives it
	for k, v := range a.Env {
		childEnv = append(childEnv, k+"="+v)
	}
	return append(out, permissionsCheck(a, os.Geteuid(), childEnv))
}

// agentProgram is the program the claude or codex agent a runs: its
// argv's first word, or the adapter's own CLI.
func agentProgram(a config.Agent) string {
	if len(a.Argv) > 0 {
		return a.Argv[0]
	}
	return a.Adapter
}

// permissionsCheck says which permission mode the claude or codex agent a
// runs with, as effective user euid with the child environment env, and
// why: it fails when claude would refuse the mode, and warns when claude
// falls back to one that denies Bash without agent.permissions asking
// for it.
func permissionsCheck(a config.Agent, euid int, env []string) check {
	if a.Adapter == "codex" {
		return check{"agent", statusOK, "codex permissions: " + agent.CodexPermissions(a.Permissions).String()}
	}
	perm, err := agent.ClaudePermissions(a.Permissions, euid, env)
	switch {
	case err != nil:
		return check{"agent", statusFail, "claude permissions: " + err.Error()}
	case perm.Fix != "":
		return check{"agent", statusWarn, "claude permissions: " + perm.String()}
	}
	return check{"agent", statusOK, "claude permissions: " + perm.String()}
}

// runnerChecks checks every runner the project's gates use, under the
// environment getenv reads: for dagger, the environment's engine, or each
// engine of runner.dagger.hosts.
func runnerChecks(ctx context.Context, ws *workspace, getenv func(string) string) []check {
	used := map[string]bool{}
	for _, g := range ws.cfg.Gates {
		if g.Kind != config.KindExec {
			continue
		}
		r := g.Runner
		if r == "" {
			r = ws.cfg.Runner.Kind
		}
		used[r] = true
	}
	var out []check
	if used[config.RunnerHost] {
		out = append(out, check{"runner", "ok", "host: gates run as processes in the change's worktree"})
	}
	switch {
	case used[config.RunnerDagger] && ws.cfg.Runner.Dagger != nil && len(ws.cfg.Runner.Dagger.Hosts) > 0:
		// Every engine of runner.dagger.hosts: one that does not answer
		// stops the run only when none does.
		hosts := ws.cfg.Runner.Dagger.Hosts
		proofs := dagger.PreflightHosts(ctx, ws.cfg.Runner.Dagger.HostURLs(), getenv)
		answering := 0
		for _, pr := range proofs {
			if pr.Err == nil {
				answering++
			}
		}
		for _, pr := range proofs {
			if pr.Err != nil {
				status, then := "fail", "and no other engine does"
				if answering > 0 {
					status, then = "warn", "so its gates go to the others until it does"
				}
				out = append(out, check{"runner", status, fmt.Sprintf("dagger: %s does not answer, %s: %s", pr.Host, then, strings.ReplaceAll(pr.Err.Error(), "\n  ", "; "))})
				continue
			}
			out = append(out, check{"runner", "ok", fmt.Sprintf("dagger: %s answers: %s; up to %d gates at once", pr.Host, pr.Engine.Versions(), hosts[pr.Host].Parallelism)})
			for _, w := range pr.Engine.Warnings() {
				out = append(out, check{"runner", "warn", "dagger: " + pr.Host + ": " + w})
			}
		}
	case used[config.RunnerDagger]:
		eng, err := dagger.Preflight(ctx, getenv)
		if err != nil {
			out = append(out, check{"runner", "fail", "dagger: " + strings.ReplaceAll(err.Error(), "\n  ", "; ")})
		} else {
			out = append(out, check{"runner", "ok", "dagger: " + eng.String() + " answers: " + eng.Versions()})
			for _, w := range eng.Warnings() {
				out = append(out, check{"runner", "warn", "dagger: " + w})
			}
		}
	}
	if used[config.RunnerDagger] {
		out = append(out, baseCheck(ws)...)
	}
	return out
}

// doctorGraph is the execution graph of the project's current plan, or
// nil when no plan can be made here; doctor asks no model for one (a
// model's plan is the run's, when there is one: plan.Reuse).
func doctorGraph(ctx context.Context, ws *workspace) *graph.Graph {
	p, err := ws.proj.PlanWithoutModel(ctx)
	if err != nil {
		return nil
	}
	g, err := graph.Build(p, ws.cfg)
	if err != nil {
		return nil
	}
	return g
}

// programChecks checks that the program (argv[0]) of every exec gate a
// stack runs on the host can be started: found on PATH, or, for a path
// with a slash, an executable file relative to the project. Which gates a
// stack runs is graph.ResolveStack's answer, `when` conditions included:
// for the current plan (g), the gates its changes run; for every stack,
// the gates it runs for a change of its type. A missing program fails
// when a change of the plan runs the gate, or when there is no plan to
// tell; it warns when only stacks the plan does not use run it.
// Regeneration commands, needed only when a merge conflicts in a
// generated file, warn, and only for the generated files the project
// holds: the node profile knows how to rebuild package-lock.json,
// pnpm-lock.yaml and yarn.lock, but an npm project has only the first,
// and pnpm or yarn missing cannot stop its merges. Then each such gate whose program is found and
// that has a describe command says what it will run in this tree (see
// describeCheck).
func programChecks(ctx context.Context, ws *workspace, g *graph.Graph, environ []string) []check {
	cfg := ws.cfg
	onHost := func(runner string) bool {
		return cmp.Or(runner, cfg.Runner.Kind, config.RunnerHost) == config.RunnerHost
	}
	usedBy := map[string][]string{} // gate → stacks that run it
	inPlan := map[string]bool{}
	use := func(stack string, steps []graph.GateStep, planned bool) {
		for _, s := range steps {
			if s.Kind != config.KindExec || !onHost(s.Runner) || len(cfg.Gates[s.Gate].Run) == 0 {
				continue
			}
			if !slices.Contains(usedBy[s.Gate], stack) {
				usedBy[s.Gate] = append(usedBy[s.Gate], stack)
			}
			inPlan[s.Gate] = inPlan[s.Gate] || planned
		}
	}
	for _, t := range sortedNames(cfg.Stacks) {
		if steps, _, err := graph.ResolveStack(cfg, cfg.Stacks[t], &plan.Change{Type: t}); err == nil {
			use(t, steps, false)
		}
		if steps, _, err := graph.ResolveStack(cfg, cfg.Integration, &plan.Change{Type: t}); err == nil {
			use("integration", steps, false)
		}
	}
	if g != nil {
		for _, c := range g.Changes {
			use(c.Type, c.Verify, true)
			use("integration", c.Integration, true)
		}
	}
	var out []check
	var described []string // gates whose program is found and that describe themselves
	found := map[string]bool{}
	for _, gate := range sortedNames(usedBy) {
		slices.SortFunc(usedBy[gate], func(a, b string) int { // the integration stack last
			last := func(s string) int { return map[bool]int{true: 1}[s == "integration"] }
			return cmp.Or(cmp.Compare(last(a), last(b)), cmp.Compare(a, b))
		})
		program := cfg.Gates[gate].Run[0]
		if err := findProgram(ws.root, program); err != nil {
			status, note := statusFail, ""
			if g != nil && !inPlan[gate] {
				status, note = statusWarn, "; no change of the current plan runs it"
			}
			out = append(out, check{"gates", status, fmt.Sprintf("gate %s: %v (used by %s%s)", gate, err, stackList(usedBy[gate]), note)})
			continue
		}
		// A gate that describes itself names what it runs in its own
		// line, and its program is a shell that picks it: not one to list.
		if len(cfg.Gates[gate].Describe) > 0 {
			described = append(described, gate)
		} else {
			found[program] = true
		}
	}
	for _, path := range sortedNames(cfg.Generated) {
		gen := cfg.Generated[path]
		if len(gen.Regenerate) == 0 || !onHost(gen.Runner) || !fileExists(filepath.Join(ws.root, path)) {
			continue
		}
		if err := findProgram(ws.root, gen.Regenerate[0]); err != nil {
			out = append(out, check{"gates", statusWarn, fmt.Sprintf("regenerating %s: %v (a merge that conflicts in %s will stop the run)", path, err, path)})
			continue
		}
		found[gen.Regenerate[0]] = true
	}
	if len(out) == 0 && len(found) > 0 {
		out = append(out, check{"gates", statusOK, "programs found: " + strings.Join(sortedNames(found), ", ")})
	}
	// Described in the order they run.
	slices.SortStableFunc(described, func(a, b string) int { return cmp.Compare(cfg.Gates[a].Order, cfg.Gates[b].Order) })
	for _, gate := range described {
		ch, warnings := describeCheck(ctx, ws, gate, environ)
		if ch.Status == statusFail {
			ch.Detail += " (used by " + stackList(usedBy[gate])
			if g != nil && !inPlan[gate] {
				ch.Status, ch.Detail = statusWarn, ch.Detail+"; no change of the current plan runs it"
			}
			ch.Detail += ")"
		}
		out = append(out, ch)
		out = append(out, warnings...)
	}
	return out
}

// describeCheck runs gate's describe command in the project's root, with
// the environment the gate gets on the host, and shows the last line it
// prints: what the gate will run here. A describe that exits non-zero
// says the gate cannot run here (a program it needs is missing, and the
// line says how to install it): it fails. One that cannot start, times
// out or prints nothing warns: the gate may still run. Each line it
// prints that starts with describeWarning is a warning of its own, about
// the project rather than the gate (python's: set's openspec/ will stop
// the user's own setuptools builds).
func describeCheck(ctx context.Context, ws *workspace, name string, environ []string) (check, []check) {
	g := ws.cfg.Gates[name]
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, g.Describe[0], g.Describe[1:]...)
	cmd.Dir = ws.root
	cmd.Env = gate.ExecEnv(environ, ws.cfg.Passed(), g.Env)
	out, err := cmd.CombinedOutput()
	line := gate.LastLine(string(out))
	// A describe that shares its gate's script says what the gate skips
	// as the gate does; doctor says it without the marker.
	line = strings.TrimPrefix(line, gate.SkipMarker)
	var warnings []check
	for _, l := range strings.Split(string(out), "\n") {
		if w, ok := strings.CutPrefix(strings.TrimSpace(l), describeWarning); ok {
			warnings = append(warnings, check{"gates", statusWarn, name + ": " + w})
		}
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && ctx.Err() == nil && line != "":
		return check{"gates", statusFail, name + ": " + line}, warnings
	case err != nil:
		return check{"gates", statusWarn, fmt.Sprintf("gate %s: its describe command failed (%v): %s", name, err, line)}, warnings
	case line == "":
		return check{"gates", statusWarn, fmt.Sprintf("gate %s: its describe command printed nothing", name)}, warnings
	}
	return check{"gates", statusOK, name + ": " + line}, warnings
}

// describeWarning starts a line of a gate's describe output that setctl
// doctor shows as a warning of its own.
const describeWarning = "[set] warn: "

// findProgram checks that program can be started as a gate starts it:
// looked up on PATH, or, when it holds a slash, as a file relative to the
// project root.
func findProgram(root, program string) error {
	if !strings.Contains(program, "/") {
		if _, err := exec.LookPath(program); err != nil {
			return fmt.Errorf("%s is not on PATH", program)
		}
		return nil
	}
	path := program
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	info, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Errorf("%s does not exist", program)
	case info.IsDir() || info.Mode()&0o111 == 0:
		return fmt.Errorf("%s is not an executable file", program)
	}
	return nil
}

// stackList is "stacks feature, fix and integration", at most four names.
func stackList(names []string) string {
	noun := "stacks "
	if len(names) == 1 {
		noun = "stack "
	}
	if len(names) > 4 {
		names = append(names[:3:3], fmt.Sprintf("%d more", len(names)-3))
	}
	return noun + english.List(names)
}

// baseCheck checks what the dagger runner's containers are made of, where
// the host can see it: the base (a rootfs directory or a tarball; an
// image the engine pulls is not looked at), and every mount's source,
// which the engine reads from the host when a gate starts: a missing one
// would stop the first gate, so it fails here. A rootfs base is also
// searched for the C compiler a gate's `go test -race` needs (see
// raceCheck).
func baseCheck(ws *workspace) []check {
	d := ws.cfg.Runner.Dagger
	if d == nil {
		return []check{{"base", "fail", "runner.dagger is not configured"}}
	}
	var out []check
	switch {
	case d.Rootfs != "":
		if info, err := os.Stat(d.HostPath(ws.root, d.Rootfs)); err != nil || !info.IsDir() {
			out = append(out, check{"base", "fail", "rootfs " + d.Rootfs + " is not a directory"})
		} else {
			out = append(out, check{"base", "ok", "rootfs " + d.Rootfs})
		}
	case d.Tarball != "":
		if _, err := os.Stat(d.HostPath(ws.root, d.Tarball)); err != nil {
			out = append(out, check{"base", "fail", "tarball " + d.Tarball + " does not exist"})
		} else {
			out = append(out, check{"base", "ok", "tarball " + d.Tarball})
		}
	default:
		out = append(out, check{"base", "ok", "from " + d.From + " (pulled by the engine when a gate runs)"})
	}
	out = append(out, mountChecks(ws)...)
	if ch, ok := raceCheck(ws); ok {
		out = append(out, ch)
	}
	return out
}

// mountChecks checks that the source of every runner.dagger mount is a
// directory on this host, in the order of the container paths: a mount
// whose source is missing fails, naming the container path, the source
// and where the project declares it.
func mountChecks(ws *workspace) []check {
	d := ws.cfg.Runner.Dagger
	mounts := d.Mounts
	var out []check
	for _, p := range sortedNames(mounts) {
		src := mounts[p].Source
		info, err := os.Stat(d.HostPath(ws.root, src))
		var problem string
		switch {
		case err != nil:
			problem = "does not exist"
		case !info.IsDir():
			problem = "is not a directory"
		default:
			continue
		}
		where := ""
		if path := []string{"runner", "dagger", "mounts", p, "source"}; ws.cfg.Declares(path...) {
			where = " (" + ws.cfg.Pos(strings.Join(path, ".")) + ")"
		}
		out = append(out, check{"base", statusFail, fmt.Sprintf(
			"mount %s: its source %s %s on this machine%s: the engine reads it when a gate starts; fix the source or remove the mount",
			p, src, problem, where)})
	}
	if len(out) == 0 && len(mounts) > 0 {
		found := make([]string, 0, len(mounts))
		for _, p := range sortedNames(mounts) {
			found = append(found, p+" from "+mounts[p].Source)
		}
		out = append(out, check{"base", statusOK, "mounts: " + strings.Join(found, ", ")})
	}
	return out
}

// raceCheck warns when a gate that runs `go test -race` (or any go
// command with -race, in its argv or GOFLAGS) on the dagger runner cannot
// have the cgo that -race needs: its env or the runner's (the gate's
// variables win, as in the container) turns cgo off, or the
// base is a rootfs directory with no C compiler (the runner's CC, or gcc,
// in a directory of the runner's PATH, looked up in the rootfs or in the
// mount that covers it). The go command turns cgo off by itself when it
// finds no C compiler, and the gate then fails on main with "go: -race
// requires cgo": the baseline stops the run on it (and, as the gate
// passes on the host, says the base lacks something). An image (from) or
// a tarball is not looked into: that would take the engine, so nothing
// is said about them, nor about a rootfs that is not there (baseCheck
// fails on it). ok is false when there is nothing to say.
func raceCheck(ws *workspace) (_ check, ok bool) {
	d := ws.cfg.Runner.Dagger
	// gates run go with -race and cgo on, cgoOff with cgo off; a gate's own
	// variables win over the runner's, as in the container.
	var gates, cgoOff []string
	cgoOffBy := "runner.dagger.env"
	for _, name := range sortedNames(ws.cfg.Gates) {
		g := ws.cfg.Gates[name]
		if g.Kind != config.KindExec || cmp.Or(g.Runner, ws.cfg.Runner.Kind, config.RunnerHost) != config.RunnerDagger {
			continue
		}
		env := func(k string) string {
			if v, ok := g.Env[k]; ok {
				return v
			}
			return d.Env[k]
		}
		switch {
		case !slices.ContainsFunc(append(slices.Clone(g.Run), env("GOFLAGS")), hasRaceFlag):
		case env("CGO_ENABLED") == "0":
			cgoOff = append(cgoOff, name)
			if _, own := g.Env["CGO_ENABLED"]; own {
				cgoOffBy = "the gate's env"
			}
		default:
			gates = append(gates, name)
		}
	}
	runs := func(gates []string) (which, it string) {
		if len(gates) > 1 {
			return "gates " + english.List(gates) + " run", "they"
		}
		return "gate " + gates[0] + " runs", "it"
	}
	if len(cgoOff) > 0 {
		which, it := runs(cgoOff)
		return check{"base", statusWarn, fmt.Sprintf("%s go with -race, which needs cgo, but %s sets CGO_ENABLED to \"0\": %s will fail with \"go: -race requires cgo\"; remove CGO_ENABLED from the env, or -race from the gate", which, cgoOffBy, it)}, true
	}
	if len(gates) == 0 {
		return check{}, false
	}
	which, it := runs(gates)
	if info, err := os.Stat(d.HostPath(ws.root, d.Rootfs)); d.Rootfs == "" || err != nil || !info.IsDir() {
		return check{}, false
	}
	cc := cmp.Or(d.Env["CC"], "gcc")
	if cc, _, _ = strings.Cut(cc, " "); strings.Contains(cc, "/") {
		if containerFileExists(ws.root, d, cc) {
			return check{}, false
		}
	} else {
		for _, dir := range filepath.SplitList(cmp.Or(d.Env["PATH"], defaultContainerPath)) {
			if filepath.IsAbs(dir) && containerFileExists(ws.root, d, filepath.Join(dir, cc)) {
				return check{}, false
			}
		}
	}
	return check{"base", statusWarn, fmt.Sprintf(
		"%s go with -race, which needs cgo and a C compiler, but rootfs %s has no %s on the runner's PATH: go turns cgo off without one and %s will fail with \"go: -race requires cgo\"; add gcc and the C library headers to the rootfs (debootstrap --include=gcc,libc6-dev), or drop -race from the gate",
		which, d.Rootfs, cc, it)}, true
}

// defaultContainerPath is the PATH a container is searched with when the
// dagger runner's env sets none (the usual one of a Debian image).
const defaultContainerPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// hasRaceFlag reports whether s, a gate's argument or a GOFLAGS value,
// holds the -race flag as a word of its own.
func hasRaceFlag(s string) bool {
	return slices.ContainsFunc(strings.Fields(s), func(w string) bool { return w == "-race" || w == "-race=true" || w == "--race" })
}

// containerFileExists reports whether the absolute container path p is
// there in the dagger runner's rootfs, or in the source of the mount that
// covers it (the longest container path that holds p). A symbolic link
// counts as there, not followed: an absolute one points into the
// container, not into this host.
func containerFileExists(root string, d *config.DaggerRunner, p string) bool {
	host := filepath.Join(d.HostPath(root, d.Rootfs), p)
	best := ""
	for mount := range d.Mounts {
		if (p == mount || strings.HasPrefix(p, strings.TrimSuffix(mount, "/")+"/")) && len(mount) > len(best) {
			best = mount
		}
	}
	if best != "" {
		rel, _ := filepath.Rel(best, p)
		host = filepath.Join(d.HostPath(root, d.Mounts[best].Source), rel)
	}
	_, err := os.Lstat(host)
	return err == nil
}

// commandOutput runs a short probe and returns its first line.
func commandOutput(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line, nil
}

// Verdicts of a check.
const (
	statusOK   = "ok"
	statusWarn = "warn"
	statusFail = "fail"
)

// checkMainBranch is project.CheckMainBranch of ws as a verdict of
// setctl doctor: ok when the branch exists, warn when committing fixes
// it, fail otherwise.
func checkMainBranch(ctx context.Context, ws *workspace) (status string, d diag.Diagnostic) {
	d, ok := project.CheckMainBranch(ctx, ws.root, ws.cfg)
	switch {
	case ok:
		return statusOK, d
	case d.Severity == diag.Warning:
		return statusWarn, d
	}
	return statusFail, d
}
